"""What one decoding step returns, shared by the RNN models and the Transformer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from torch import Tensor

WindowArg = int | None | Literal["config"]
"""A window override: a half-width ``D``, ``None`` for global attention, or ``"config"``."""


@dataclass
class ModelStep:
    """One decoding step of a model.

    Returned by [`Seq2Seq.step`][attention_core.model.seq2seq.Seq2Seq.step] and
    [`Transformer.step`][attention_core.model.transformer.Transformer.step].

    Attributes:
        logits: Vocabulary scores, shape ``(B, V)``.
        state: New decoder state (``DecoderState`` or ``TransformerState``: both reorder beams with
            ``index_select``).
        weights: Attention weights over the source, shape ``(B, S)``.
        centre: Window centres ``(B,)`` or ``None``.
    """

    logits: Tensor
    state: Any
    weights: Tensor
    centre: Tensor | None
