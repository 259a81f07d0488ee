"""Attention Lab's library: every classic attention mechanism for RNN sequence-to-sequence models.

Subpackages, each importing only from some of those listed before it (``tests/test_layout.py`` checks it):

* [`model`][attention_core.model] — scores, attention (masks, windows, soft or hard), encoder, decoders,
  the Transformer, ``build_model``;
* [`data`][attention_core.data] — tokenisers, vocabularies, subwords, corpora, tasks, batches;
* [`decoding`][attention_core.decoding] — greedy and beam search, couplet constraints, the
  [`Translator`][attention_core.decoding.translator.Translator] and its folder on disk;
* [`editing`][attention_core.editing] — names, numbers and rare words carried through a translation;
* [`analysis`][attention_core.analysis] — metrics, evaluation, alignment, attribution, calibration;
* [`training`][attention_core.training] — the loop, checkpoints and resume, precision;
* [`hub`][attention_core.hub] — the Hugging Face Hub, model cards, the zoo;
* [`cli`][attention_core.cli] — the ``attention-lab`` command.

The model and data are the two floors nothing else stands under: the model never imports the text heuristics of
``editing``, training, the Hub or the zoo.
"""

from attention_core.decoding.couplet import CoupletConstraint, CoupletRules
from attention_core.decoding.search import Hypothesis, beam_search, beam_search_nbest, greedy
from attention_core.model.attention import CENTRES, Attention, attention
from attention_core.model.config import ModelConfig
from attention_core.model.decoder import DECODERS
from attention_core.model.scores import SCORES, build_score
from attention_core.model.seq2seq import Seq2Seq, build_model

__all__ = [
    "CENTRES",
    "DECODERS",
    "SCORES",
    "Attention",
    "CoupletConstraint",
    "CoupletRules",
    "Hypothesis",
    "ModelConfig",
    "Seq2Seq",
    "attention",
    "beam_search",
    "beam_search_nbest",
    "build_model",
    "build_score",
    "greedy",
]

__version__ = "0.1.0"

MOVED = {
    **{m: f"model.{m}" for m in ("scores", "attention", "encoder", "decoder", "seq2seq", "transformer", "step",
                                 "config", "rnn_steps")},
    **{m: f"data.{m}" for m in ("text", "vocab", "subword", "batch", "corpora", "parallel", "encoded", "toy", "hubio",
                                "atomic", "truecase")},
    **{m: f"decoding.{m}" for m in ("search", "repetition", "coverage", "couplet")},
    "pipeline": "decoding.translator",
    **{m: f"editing.{m}" for m in ("names", "numbers", "words", "rare", "namecache")},
    **{m: f"analysis.{m}" for m in ("metrics", "alignment", "attribution", "calibration", "evaluation")},
    **{m: f"training.{m}" for m in ("trainconfig", "checkpoint", "runlock", "precision", "allocator", "loss")},
    **{m: f"hub.{m}" for m in ("card", "zoo")},
}
"""Where each module of the flat package went (``attention_core.pipeline`` → ``attention_core.decoding.translator``)."""


def __getattr__(name: str):
    """``from attention_core import pipeline`` and the like, for one release: the module at its new place, warned.

    ``attention_core.data``, ``.training`` and ``.hub`` kept their names as subpackages that still give the old
    modules' names.
    """
    if name in MOVED:
        import importlib
        import warnings

        warnings.warn(f"attention_core.{name} moved to attention_core.{MOVED[name]}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(f"attention_core.{MOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _MovedModules:
    """``import attention_core.pipeline`` and ``from attention_core.search import beam_search``, for one release.

    A finder on ``sys.meta_path`` that answers an old flat module's name with the module at its new place (the same
    module object, so there is one copy of its state), with a ``DeprecationWarning``.
    """

    @staticmethod
    def find_spec(fullname: str, path: object = None, target: object = None):  # noqa: D102
        import importlib.util

        old = fullname.removeprefix(f"{__name__}.")
        if fullname == old or old not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModules)

    @staticmethod
    def create_module(spec):  # noqa: D102
        import importlib
        import warnings

        new = f"{__name__}.{MOVED[spec.name.removeprefix(f'{__name__}.')]}"
        warnings.warn(f"{spec.name} moved to {new}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    @staticmethod
    def exec_module(module):  # noqa: D102
        """The module ran already, under its new name."""


import sys as _sys  # noqa: E402

if not any(finder is _MovedModules for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModules)
