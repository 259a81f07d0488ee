"""Padded batches of (source, target) id sequences, with the lengths that make the masks."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
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
        """The ids on ``device``; the lengths stay where they are (on the host, as ``make_batch`` makes them).

        The encoder packs a batch by its lengths on the host, and the model copies them to the device for
        its masks without waiting (``non_blocking``): kept on the host, no step reads them back from a GPU.
        The ids are copied without waiting too.
        """
        return Batch(
            src=self.src.to(device, non_blocking=True),
            src_lengths=self.src_lengths,
            tgt_in=self.tgt_in.to(device, non_blocking=True),
            tgt_out=self.tgt_out.to(device, non_blocking=True),
            tgt_lengths=self.tgt_lengths,
        )

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


@dataclass(frozen=True)
class IdArrays:
    """Id sequences laid end to end in one array: many padded batches cut from it without a Python loop per pair.

    Attributes:
        ids: Every sequence's ids, one after another, ``(Σ lengths,)``.
        starts: Where each sequence begins in ``ids``, ``(n,)``.
        lengths: Each sequence's length, ``(n,)``.
    """

    ids: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, sequences: Sequence[Sequence[int]]) -> IdArrays:
        """Lay ``sequences`` end to end."""
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        ids = np.fromiter(itertools.chain.from_iterable(sequences), dtype=np.int64, count=int(lengths.sum()))
        starts = np.zeros_like(lengths)
        np.cumsum(lengths[:-1], out=starts[1:])
        return cls(ids, starts, lengths)

    def padded(self, rows: np.ndarray, width: int, pad_id: int, offset: int = 0) -> np.ndarray:
        """Sequences ``rows`` as one ``(len(rows), width)`` array from column ``offset`` on, padded with ``pad_id``."""
        lengths = self.lengths[rows]
        columns = np.arange(width) - offset  # (width,): position in the sequence
        inside = (columns >= 0) & (columns < lengths[:, None])  # (B, width)
        if not self.ids.size:  # every sequence empty (targets may be)
            return np.full((len(rows), width), pad_id, dtype=np.int64)
        where = np.where(inside, self.starts[rows, None] + columns, 0)
        return np.where(inside, self.ids[where], pad_id)


def make_batches(
    sources: IdArrays, targets: IdArrays, groups: Sequence[np.ndarray], pad_id: int = 0, bos_id: int = 2,
    eos_id: int = 3,
) -> Iterator[Batch]:
    """The padded batch of each group of pair indices: what [`make_batch`][attention_core.data.batch.make_batch] makes.

    Args:
        sources: Source ids of every pair (each non-empty).
        targets: Target ids of every pair, without special tokens.
        groups: Pair indices of each batch, in order.
        pad_id: Padding id.
        bos_id: Begin-of-sentence id.
        eos_id: End-of-sentence id.

    Yields:
        One batch per group.
    """
    for rows in groups:
        src_lengths, tgt_lengths = sources.lengths[rows], targets.lengths[rows]
        T = int(tgt_lengths.max()) + 1
        tgt_in = targets.padded(rows, T, pad_id, offset=1)
        tgt_in[:, 0] = bos_id
        tgt_out = targets.padded(rows, T, pad_id)
        tgt_out[np.arange(len(rows)), tgt_lengths] = eos_id
        yield Batch(
            src=torch.from_numpy(sources.padded(rows, int(src_lengths.max()), pad_id)),
            src_lengths=torch.from_numpy(src_lengths),
            tgt_in=torch.from_numpy(tgt_in),
            tgt_out=torch.from_numpy(tgt_out),
            tgt_lengths=torch.from_numpy(tgt_lengths + 1),
        )
