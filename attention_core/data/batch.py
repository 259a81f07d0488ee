"""Padded batches of (source, target) id sequences, with the lengths that make the masks."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class Batch:
    """A padded batch of (source, target) pairs.

    Attributes:
        src: Source ids ``(B, S)``.
        src_lengths: Real source lengths ``(B,)``.
        tgt_in: ``<bos>`` + target, ``(B, T)``.
        tgt_out: target + ``<eos>``, ``(B, T)``.
        tgt_lengths: Real target lengths including ``<eos>``, ``(B,)``.
    """

    src: Tensor
    src_lengths: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    tgt_lengths: Tensor

    def to(self, device: torch.device | str) -> Batch:
        """Move every tensor to ``device``."""
        return Batch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))

    @property
    def size(self) -> int:
        """Number of pairs."""
        return self.src.size(0)


def make_batch(
    pairs: list[tuple[list[int], list[int]]], pad_id: int = 0, bos_id: int = 2, eos_id: int = 3
) -> Batch:
    """Pad id sequences into a [`Batch`][attention_core.data.batch.Batch].

    Args:
        pairs: ``(source_ids, target_ids)`` without special tokens; sources must be non-empty.
        pad_id: Padding id.
        bos_id: Begin-of-sentence id.
        eos_id: End-of-sentence id.
    """
    B = len(pairs)
    S = max(len(s) for s, _ in pairs)
    T = max(len(t) for _, t in pairs) + 1
    src = torch.full((B, S), pad_id, dtype=torch.long)
    tgt_in = torch.full((B, T), pad_id, dtype=torch.long)
    tgt_out = torch.full((B, T), pad_id, dtype=torch.long)
    for b, (s, t) in enumerate(pairs):
        src[b, : len(s)] = torch.tensor(s, dtype=torch.long)
        tgt_in[b, : len(t) + 1] = torch.tensor([bos_id, *t], dtype=torch.long)
        tgt_out[b, : len(t) + 1] = torch.tensor([*t, eos_id], dtype=torch.long)
    return Batch(
        src=src,
        src_lengths=torch.tensor([len(s) for s, _ in pairs]),
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        tgt_lengths=torch.tensor([len(t) + 1 for _, t in pairs]),
    )
