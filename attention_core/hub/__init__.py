"""The Hugging Face Hub: pull and push model folders, model cards, and the zoo of bundled models.

The entry points are importable from here: ``from attention_core.hub import from_pretrained`` (and ``pull``, ``push``,
and the folder's ``save_pretrained``, ``load_folder``, ``ModelLoadError``), as model cards write it.
"""

import importlib

_HOME = {
    **dict.fromkeys(("from_pretrained", "pull", "push", "HUB_PREFIX"), "attention_core.hub.pretrained"),
    **dict.fromkeys(("save_pretrained", "load_folder", "ModelLoadError", "read_config", "CONFIG", "WEIGHTS",
                     "SUBWORDS", "SRC_VOCAB", "TGT_VOCAB", "FILES", "OPTIONAL_FILES"),
                    "attention_core.decoding.folder"),
}
"""Where each name given here lives (imported when first asked for, so ``attention_core.hub.card`` stays light)."""

__all__ = sorted(_HOME)


def __getattr__(name: str):
    """A name of [`pretrained`][attention_core.hub.pretrained] or [`folder`][attention_core.decoding.folder]."""
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
