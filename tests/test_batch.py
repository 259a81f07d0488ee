"""Padded batches: ``<bos>``/``<eos>`` placed, padding after every sequence, lengths that make the masks."""

import torch

from attention_core.data.batch import make_batch


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


def test_to_moves_every_tensor() -> None:
    batch = make_batch([([4, 5], [6])]).to(torch.device("cpu"))
    assert all(getattr(batch, f).device.type == "cpu" for f in batch.__dataclass_fields__)
