"""Training: the loop, its settings, checkpoints and resume, run locks, precision, allocator, loss."""


def __getattr__(name: str):
    """The names of the flat module this package replaced, for one release.

    ``from attention_core.training import …`` as before the subpackages.
    """
    if not name.startswith("_"):
        import importlib

        for module in ("attention_core.training.loop",):
            found = getattr(importlib.import_module(module), name, _MISSING)
            if found is not _MISSING:
                return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MISSING = object()
