"""One process at a time in a run folder: a ``.lock`` file holding the owner's process id.

Two trainings writing one folder would overwrite each other's checkpoint and weights (each resumed from what the
other was still writing), so [`fit`][attention_core.training.loop.fit] holds the folder while it trains, and parallel
``zoo`` processes use the same lock to split the models between them. A lock whose process is gone is stale and taken
over; a process that already holds a folder's lock holds it again (the zoo holds a model's folder, then trains in
it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = ".lock"
"""The lock file inside a run folder."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def owner(run_dir: str | Path) -> int | None:
    """The id of the live process holding ``run_dir`` (``None`` when no live process does)."""
    try:
        text = (Path(run_dir) / LOCK).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and _alive(int(text)) else None


@contextmanager
def hold(run_dir: str | Path) -> Iterator[bool]:
    """Hold ``run_dir`` for this process while the ``with`` block runs.

    Yields:
        ``True`` if this process holds it (taken now, taken over from a dead process, or already held by this
        process, which then keeps it after the block); ``False`` if another live process holds it. A folder the
        block made and left empty is removed with the lock.
    """
    run_dir = Path(run_dir)
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = run_dir / LOCK
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            holder = owner(run_dir)
            if holder == os.getpid():
                yield True  # held by an outer block of this process, which releases it
                return
            if holder is not None:
                yield False
                return
            lock.unlink(missing_ok=True)  # stale: its process is gone
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        try:
            yield True
        finally:
            lock.unlink(missing_ok=True)
            if created and not any(run_dir.iterdir()):  # nothing was written: leave no trace
                run_dir.rmdir()
        return
    yield False
