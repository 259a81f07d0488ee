"""Padded batches: ``<bos>``/``<eos>`` placed, padding after every sequence, lengths that make the masks."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.data.batch import IdArrays, make_batch, make_batches


def test_make_batch_pads_and_marks() -> None:
    batch = make_batch([([5, 6, 7], [8]), ([9], [10, 11, 12])], pad_id=0, bos_id=2, eos_id=3)
    assert batch.src.tolist() == [[5, 6, 7], [9, 0, 0]]
    assert batch.src_lengths.tolist() == [3, 1]
    assert batch.tgt_in.tolist() == [[2, 8, 0, 0], [2, 10, 11, 12]]  # <bos> + target
    assert batch.tgt_out.tolist() == [[8, 3, 0, 0], [10, 11, 12, 3]]  # target + <eos>
    assert batch.tgt_lengths.tolist() == [2, 4]  # <eos> counted
    assert batch.size == 2


def test_decoder_inputs_are_the_outputs_shifted() -> None:
    """Teacher forcing reads y_{t-1} to predict y_t: tgt_in[t + 1] == tgt_out[t] on real positions."""
    batch = make_batch([([4], [5, 6, 7]), ([4, 4], [8])])
    for b, length in enumerate(batch.tgt_lengths.tolist()):
        assert batch.tgt_in[b, 1:length].tolist() == batch.tgt_out[b, : length - 1].tolist()


def test_to_moves_the_ids_and_keeps_the_lengths_on_the_host() -> None:
    """The encoder packs by the lengths on the host: a GPU batch must not make it read them back."""
    batch = make_batch([([4, 5], [6])])
    moved = batch.to(torch.device("meta"))
    assert {moved.src.device.type, moved.tgt_in.device.type, moved.tgt_out.device.type} == {"meta"}
    assert moved.src_lengths is batch.src_lengths and moved.tgt_lengths is batch.tgt_lengths


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(4, 40), min_size=1, max_size=9),
                          st.lists(st.integers(4, 40), min_size=0, max_size=9)), min_size=1, max_size=12))
def test_make_batches_pads_as_make_batch(pairs) -> None:
    """Cut from the arrays laid end to end, every batch equals the one padded pair by pair (ids, types, lengths)."""
    sources, targets = IdArrays.of([s for s, _ in pairs]), IdArrays.of([t for _, t in pairs])
    rows = np.arange(len(pairs))[::-1].copy()  # any order of any rows
    groups = [rows[: len(rows) // 2 + 1], rows[len(rows) // 2 + 1 :]]
    for group, batch in zip(groups, make_batches(sources, targets, [g for g in groups if len(g)]), strict=False):
        expected = make_batch([pairs[i] for i in group])
        for field in batch.__dataclass_fields__:
            got, want = getattr(batch, field), getattr(expected, field)
            assert got.dtype == want.dtype and torch.equal(got, want), field
