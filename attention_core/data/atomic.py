"""Files written whole or not at all: a temporary file beside the destination, then one rename.

Model folders, checkpoints, reports and caches are written this way, so that an interrupted run never
leaves a half-written file where a reader (the app, a resumed run, a test) would take it for a whole one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _file_mode() -> int:
    """The mode ``open()`` gives a new file under this process's umask (``0o644`` under the usual ``022``)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _file_mode()


def atomic_write(path: str | Path, write: Callable[[str], object]) -> None:
    """Write a file atomically: ``write(tmp_path)`` fills a temporary file that then replaces ``path``.

    Args:
        path: Destination.
        write: A callable taking the temporary path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _FILE_MODE)  # mkstemp's 0600 would hide the file from other users and services
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
