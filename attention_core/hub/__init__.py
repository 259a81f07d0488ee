"""The Hugging Face Hub: pull and push model folders, model cards, and the zoo of bundled models.

The entry points are importable from here: ``from attention_core.hub import from_pretrained`` (and ``pull``, ``push``,
and the folder's ``save_pretrained``, ``load_folder``, ``ModelLoadError``), as model cards write it; so is every name
the flat module ``attention_core.hub`` had, for one release.
"""

import importlib

_HOME = {
    **dict.fromkeys(("from_pretrained", "pull", "push", "HUB_PREFIX"), "attention_core.hub.pretrained"),
    **dict.fromkeys(("save_pretrained", "load_folder", "ModelLoadError", "read_config", "read_vocabularies",
                     "read_subwords", "expected_tensors", "check_weights", "FORMAT", "CONFIG", "WEIGHTS", "SUBWORDS",
                     "SRC_SUBWORDS", "SRC_VOCAB", "TGT_VOCAB", "FILES", "OPTIONAL_FILES", "MAX_JSON_BYTES",
                     "MAX_MODEL_BYTES", "WEIGHT_DTYPES"), "attention_core.decoding.folder"),
}
"""Where each name given here lives (imported when first asked for, so ``attention_core.hub.card`` stays light)."""

__all__ = sorted(_HOME)


def __getattr__(name: str):
    """A name of [`pretrained`][attention_core.hub.pretrained] or [`folder`][attention_core.decoding.folder]."""
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
