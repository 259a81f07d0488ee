"""Typed configuration of a sequence-to-sequence model, validated once and saved beside its weights."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from attention_core.model.attention import CENTRES
from attention_core.model.scores import SCORES

RNN_TYPES = ("lstm", "gru")

TRANSFORMER = "transformer"
"""The ``decoder`` value that builds a Transformer (``attention_core.model.transformer``) instead of an RNN model."""

LIMITS: dict[str, tuple[float, float]] = {
    "src_vocab_size": (4, 2_000_000),
    "tgt_vocab_size": (4, 2_000_000),
    "emb_size": (1, 8192),
    "hidden_size": (1, 8192),
    "num_layers": (1, 16),
    "heads": (1, 64),
    "ff_size": (1, 65536),
    "window": (1, 1024),
    "max_source_len": (1, 100_000),
    "length_ratio": (1e-3, 100.0),
}
"""Inclusive ``(low, high)`` bounds of the numeric fields. They are generous for training but keep a
config from an untrusted model folder from asking for absurd sizes (the hub also checks the total
size of the weights before allocating them)."""

_INTS = ("src_vocab_size", "tgt_vocab_size", "emb_size", "hidden_size", "num_layers", "heads", "ff_size",
         "pad_id", "unk_id", "bos_id", "eos_id")
_OPTIONAL_INTS = ("window", "max_source_len")
_STRS = ("decoder", "score", "attention", "rnn")
_BOOLS = ("tie_embeddings", "share_embeddings")
_SPECIAL_IDS = ("pad_id", "unk_id", "bos_id", "eos_id")


def check_choice(name: str, value: str, valid: Iterable[str]) -> None:
    """Raise ``ValueError("unknown {name} {value!r}; valid: ...")`` unless ``value`` is one of ``valid``."""
    valid = list(valid)
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")


@dataclass
class ModelConfig:
    """Everything needed to rebuild a model.

    Attributes:
        src_vocab_size: Source vocabulary size.
        tgt_vocab_size: Target vocabulary size.
        decoder: ``bahdanau``, ``luong`` or ``none`` (see ``attention_core.model.decoder.DECODERS``), or
            ``transformer`` for a Transformer encoder–decoder
            ([`attention_core.model.transformer`][attention_core.model.transformer]), which then uses
            ``score="scaled_dot"``, global attention, ``emb_size == hidden_size`` (``d_model``),
            ``heads`` and ``ff_size``; ``rnn`` does not apply to it.
        score: ``dot``, ``scaled_dot``, ``general``, ``concat`` or ``location``
            (``attention_core.model.scores.SCORES``).
        attention: ``global``, ``local-m`` or ``local-p`` (``attention_core.model.attention.CENTRES``).
        window: Half-width ``D`` of the local window; required for local modes, ``None`` for global.
        max_source_len: Source positions the ``location`` score has a row of its own for (longer sources
            reuse the last one; see [`LocationScore`][attention_core.model.scores.LocationScore]); the trainer
            sets it to its ``max_len``. ``None``: the score's default; the other scores ignore it.
        emb_size: Embedding size (source and target).
        hidden_size: Hidden size of the decoder and of each encoder direction; the encoder's
            concatenated ``2 · hidden_size`` outputs are projected back to ``hidden_size``.
        num_layers: RNN layers (or Transformer layers) in encoder and decoder.
        heads: Transformer attention heads (must divide ``hidden_size``).
        ff_size: Inner size of the Transformer's feed-forward sublayers.
        rnn: ``lstm`` or ``gru``.
        dropout: Dropout on embeddings, between RNN layers and on decoder outputs.
        length_ratio: Mean target/source length ratio, used to place local-m windows at decode time.
        tie_embeddings: The output projection reuses the target embedding matrix (Press & Wolf 2017),
            after a ``hidden_size → emb_size`` projection when the sizes differ.
        share_embeddings: Source and target share one embedding matrix (needs one shared vocabulary,
            as for couplets).
        pad_id: Padding index (shared by both vocabularies).
        unk_id: Unknown-token index.
        bos_id: Begin-of-sentence index.
        eos_id: End-of-sentence index.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    decoder: str = "luong"
    score: str = "general"
    attention: str = "global"
    window: int | None = None
    max_source_len: int | None = None
    emb_size: int = 256
    hidden_size: int = 256
    num_layers: int = 1
    heads: int = 4
    ff_size: int = 1024
    rnn: str = "lstm"
    dropout: float = 0.2
    length_ratio: float = 1.0
    tie_embeddings: bool = False
    share_embeddings: bool = False
    pad_id: int = 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3

    def validate(self) -> ModelConfig:
        """Check every field; raise ``ValueError`` with a readable message if one is wrong.

        The decoder's name is checked where the decoders are built
        ([`build_model`][attention_core.model.seq2seq.build_model]): the registry of decoders depends on this config.

        Returns:
            ``self``, so calls can be chained.
        """
        self._check_types()
        check_choice("score", self.score, SCORES)
        check_choice("attention mode", self.attention, CENTRES)
        check_choice("rnn", self.rnn, RNN_TYPES)
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.attention == "global":
            if self.window is not None:
                raise ValueError("a global model takes no window; use attention='local-m' or 'local-p'")
        elif self.window is None:
            raise ValueError(f"attention={self.attention!r} needs a window D >= 1, got {self.window}")
        if self.decoder == TRANSFORMER:
            self._check_transformer()
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError("share_embeddings needs one vocabulary (equal source and target sizes)")
        smallest = min(self.src_vocab_size, self.tgt_vocab_size)
        for name in _SPECIAL_IDS:
            if not 0 <= getattr(self, name) < smallest:
                raise ValueError(f"{name} must be a token id in [0, {smallest}), got {getattr(self, name)}")
        if len({getattr(self, name) for name in _SPECIAL_IDS}) != len(_SPECIAL_IDS):
            raise ValueError(f"pad_id, unk_id, bos_id and eos_id must differ, got "
                             f"{[getattr(self, name) for name in _SPECIAL_IDS]}")
        return self

    def _check_transformer(self) -> None:
        """The fields a Transformer fixes: scaled-dot global attention, ``d_model`` split into heads."""
        if self.score != "scaled_dot" or self.attention != "global":
            raise ValueError("a Transformer attends with score='scaled_dot' and attention='global', got "
                             f"score={self.score!r}, attention={self.attention!r}")
        if self.emb_size != self.hidden_size:
            raise ValueError(f"a Transformer needs emb_size == hidden_size (d_model), got {self.emb_size} "
                             f"and {self.hidden_size}")
        if self.hidden_size % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide hidden_size ({self.hidden_size})")

    def _check_types(self) -> None:
        """Raise ``ValueError`` naming the first field whose JSON type is wrong (``"8"``, ``8.7``, ``true``)."""

        def fail(name: str, kind: str) -> None:
            value = getattr(self, name)
            raise ValueError(f"{name} must be {kind}, got {value!r} ({type(value).__name__})")

        for name in _INTS:
            if type(getattr(self, name)) is not int:  # bool is an int subclass: rejected too
                fail(name, "an integer")
        for name in _OPTIONAL_INTS:
            if getattr(self, name) is not None and type(getattr(self, name)) is not int:
                fail(name, "an integer or null")
        for name in _STRS:
            if not isinstance(getattr(self, name), str):
                fail(name, "a string")
        for name in _BOOLS:
            if type(getattr(self, name)) is not bool:
                fail(name, "true or false")
        for name in ("dropout", "length_ratio"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not math.isfinite(value):
                fail(name, "a finite number")

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Rebuild and validate a config, naming any unknown or missing field.

        Args:
            data: A dict as written by [`to_dict`][attention_core.model.config.ModelConfig.to_dict].

        Raises:
            ValueError: On unknown or missing fields, or invalid values.
        """
        if not isinstance(data, dict):
            raise ValueError(f"the model config must be a JSON object, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(map(str, set(data) - names))
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}")
        try:
            cfg = cls(**data)
        except TypeError as err:
            raise ValueError(f"incomplete model config: {err}") from None
        return cfg.validate()
