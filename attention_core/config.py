"""Typed configuration of a sequence-to-sequence model, validated once and saved beside its weights."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

RNN_TYPES = ("lstm", "gru")


@dataclass
class ModelConfig:
    """Everything needed to rebuild a model.

    Attributes:
        src_vocab_size: Source vocabulary size.
        tgt_vocab_size: Target vocabulary size.
        decoder: ``bahdanau``, ``luong`` or ``none`` (see ``attention_core.decoder.DECODERS``).
        score: ``dot``, ``scaled_dot``, ``general`` or ``concat`` (``attention_core.scores.SCORES``).
        attention: ``global``, ``local-m`` or ``local-p`` (``attention_core.attention.CENTRES``).
        window: Half-width ``D`` of the local window; required for local modes, ``None`` for global.
        emb_size: Embedding size (source and target).
        hidden_size: Hidden size of the decoder and of each encoder direction; the encoder's
            concatenated ``2 · hidden_size`` outputs are projected back to ``hidden_size``.
        num_layers: RNN layers in encoder and decoder.
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
    emb_size: int = 256
    hidden_size: int = 256
    num_layers: int = 1
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

        Returns:
            ``self``, so calls can be chained.
        """
        from attention_core.attention import CENTRES
        from attention_core.decoder import DECODERS
        from attention_core.scores import SCORES

        def check(name: str, value: str, valid: Any) -> None:
            if value not in valid:
                raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")

        check("decoder", self.decoder, DECODERS)
        check("score", self.score, SCORES)
        check("attention mode", self.attention, CENTRES)
        check("rnn", self.rnn, RNN_TYPES)
        for name in ("src_vocab_size", "tgt_vocab_size", "emb_size", "hidden_size", "num_layers"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.attention == "global":
            if self.window is not None:
                raise ValueError("a global model takes no window; use attention='local-m' or 'local-p'")
        elif self.window is None or self.window < 1:
            raise ValueError(f"attention={self.attention!r} needs a window D >= 1, got {self.window}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError("share_embeddings needs one vocabulary (equal source and target sizes)")
        if self.length_ratio <= 0:
            raise ValueError(f"length_ratio must be positive, got {self.length_ratio}")
        return self

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Rebuild and validate a config, naming any unknown or missing field.

        Args:
            data: A dict as written by [`to_dict`][attention_core.config.ModelConfig.to_dict].

        Raises:
            ValueError: On unknown or missing fields, or invalid values.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}")
        try:
            cfg = cls(**data)
        except TypeError as err:
            raise ValueError(f"incomplete model config: {err}") from None
        return cfg.validate()
