"""A faster memory allocator for training on a CPU: tcmalloc, when the system has it, instead of glibc's malloc.

A training step allocates and frees tensors of many megabytes: a batch's logits ``(N, V)`` and their gradient,
each step's gates. glibc's ``malloc`` hands a freed block above its mmap threshold back to the kernel, so the next
step's block is fresh memory that faults in page by page; tcmalloc and jemalloc keep freed memory for reuse.
On this project's 2-core CPU, one torch thread, bfloat16, ``python benchmarks/allocator.py`` measured tcmalloc
faster than glibc on both long runs of the model zoo (``results/allocator.md``).

An allocator is chosen when a process starts (``LD_PRELOAD``). So ``attention-lab train`` and
``attention-lab zoo``, started from a shell on Linux, start themselves again under tcmalloc when it is installed
(Debian/Ubuntu: ``apt install libtcmalloc-minimal4``) and not loaded yet; the training's ``start`` event says
which allocator it runs with. The environment variable ``ATTENTION_LAB_ALLOCATOR`` chooses: ``tcmalloc`` (the
default), ``jemalloc``, or ``system`` (glibc's, no restart). Nothing changes but the speed: the same numbers
are computed in the same order.

Examples:
    >>> plan(["train", "--task", "couplet"], {"ATTENTION_LAB_ALLOCATOR": "system"}, "system") is None
    True
    >>> plan(["translate", "你好"], {}, "system") is None  # only the long commands
    True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ENV = "ATTENTION_LAB_ALLOCATOR"
"""The environment variable that chooses the allocator: ``tcmalloc`` (default), ``jemalloc`` or ``system``."""
SYSTEM = "system"
ALLOCATORS: dict[str, tuple[str, ...]] = {
    "tcmalloc": ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4"),
    "jemalloc": ("libjemalloc.so.2",),
}
"""Each allocator's shared libraries, in order of preference (Debian: ``libtcmalloc-minimal4``, ``libjemalloc2``)."""
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/usr/local/lib")
"""Where the libraries are looked for."""
COMMANDS = frozenset({"train", "zoo"})
"""The subcommands that train (hours on a CPU); the others start as they are."""
_STARTED = "_ATTENTION_LAB_ALLOCATOR_STARTED"
"""Set in the restarted process: never restart twice, even when the preload did not take."""


class AllocatorError(ValueError):
    """``ATTENTION_LAB_ALLOCATOR`` names no allocator, or one that is not installed."""


def find_allocator(name: str, dirs: Sequence[str | Path] = LIBRARY_DIRS) -> Path | None:
    """The shared library of an allocator, or ``None`` when it is not installed.

    Args:
        name: A key of [`ALLOCATORS`][attention_core.training.allocator.ALLOCATORS].
        dirs: The directories to look in.
    """
    for library in ALLOCATORS[name]:
        for folder in dirs:
            path = Path(folder) / library
            if path.is_file():
                return path
    return None


def loaded(maps: str | Path = "/proc/self/maps") -> str:
    """The allocator this process runs with: a key of ``ALLOCATORS`` when one is mapped, else ``system``.

    Args:
        maps: The process's memory map (Linux).
    """
    try:
        text = Path(maps).read_text()
    except OSError:  # not Linux
        return SYSTEM
    for name, libraries in ALLOCATORS.items():
        if any(library.split(".so")[0] + ".so" in text for library in libraries):
            return name
    return SYSTEM


def plan(argv: Sequence[str], env: Mapping[str, str], running: str,
         dirs: Sequence[str | Path] = LIBRARY_DIRS) -> dict[str, str] | None:
    """The environment to start the command again with, or ``None`` to go on in this process.

    Args:
        argv: The command's arguments (``sys.argv[1:]``).
        env: The environment.
        running: The allocator this process runs with ([`loaded`][attention_core.training.allocator.loaded]).
        dirs: Where the libraries are looked for.

    Raises:
        AllocatorError: If ``ATTENTION_LAB_ALLOCATOR`` names no allocator, or names one that is not installed.
    """
    wanted = env.get(ENV, "tcmalloc").strip().lower() or "tcmalloc"
    if wanted != SYSTEM and wanted not in ALLOCATORS:
        raise AllocatorError(f"{ENV}={env[ENV]!r}: choose one of {SYSTEM}, {', '.join(ALLOCATORS)}")
    if not argv or argv[0] not in COMMANDS or wanted == SYSTEM or running == wanted:
        return None
    if env.get(_STARTED):
        return None
    library = find_allocator(wanted, dirs)
    if library is None:
        if ENV in env:  # asked for by name: say so; the default quietly keeps glibc's
            raise AllocatorError(f"{ENV}={wanted}: its library ({' or '.join(ALLOCATORS[wanted])}) is not installed "
                                 f"in {', '.join(str(d) for d in dirs)}")
        return None
    preload = " ".join(p for p in (str(library), env.get("LD_PRELOAD", "")) if p)
    return {**env, "LD_PRELOAD": preload, _STARTED: wanted}


def restart_if_faster(argv: Sequence[str]) -> None:
    """Start ``attention-lab`` again under the chosen allocator when that is needed (see the module docstring).

    Replaces this process (``os.execve``: the same process id, so a shell, ``nohup`` or ``torchrun`` sees no
    difference); returns when nothing is to be done.

    Args:
        argv: The command's arguments (``sys.argv[1:]``).

    Raises:
        AllocatorError: As [`plan`][attention_core.training.allocator.plan].
    """
    if not sys.platform.startswith("linux"):
        return
    env = plan(argv, os.environ, loaded())
    if env is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "attention_core.cli", *argv], env)
