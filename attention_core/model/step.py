"""What one decoding step returns, and the lengths every model reads: shared by the RNN models and the Transformer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch
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


def padding_mask(lengths: Tensor, width: int, device: torch.device) -> Tensor:
    """``True`` at each row's real positions, ``(B, width)``, from lengths ``(B,)`` that may be on the host.

    A batch keeps its lengths on the host (``Batch.to``); they are copied to ``device`` without waiting
    (``non_blocking``), so no step makes the host wait for a GPU.
    """
    return torch.arange(width, device=device).unsqueeze(0) < lengths.to(device, non_blocking=True).unsqueeze(1)


def target_lengths(src_lengths: Tensor, tgt_lengths: Tensor | None, ratio: float, device: torch.device) -> Tensor:
    """Target lengths ``(B,)`` as floats on ``device``: the given ones (teacher forcing), or the expected ``S · ratio``.

    Either may be on the host; copied as [`padding_mask`][attention_core.model.step.padding_mask] copies.
    """
    if tgt_lengths is None:
        tgt_lengths = src_lengths.to(device, non_blocking=True).float() * ratio
    return tgt_lengths.to(device, non_blocking=True).float()
