"""The encoder: the CPU's run over equal-length groups gives what a packed batch gives."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attention_core.model.encoder import Encoder


def packed_reference(encoder: Encoder, src: torch.Tensor, lengths: torch.Tensor):
    """The RNN over a packed batch (the path CUDA takes), outputs padded with zeros."""
    embedded = encoder.embedding(src)
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    out, state = encoder.rnn(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
    return out, state if isinstance(state, tuple) else (state,)


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("lengths", [[5, 2, 5, 1, 3, 2], [4, 4, 4], [1]])
def test_groups_equal_packed(rnn: str, layers: int, lengths: list[int]) -> None:
    torch.manual_seed(0)
    encoder = Encoder(30, 6, 8, num_layers=layers, rnn=rnn).eval()
    lengths = torch.tensor(lengths)
    src = torch.randint(4, 30, (len(lengths), int(lengths.max())))
    src[torch.arange(src.size(1)) >= lengths[:, None]] = 0
    out, state = encoder._run_by_length(encoder.embedding(src), lengths)
    ref_out, ref_state = packed_reference(encoder, src, lengths)
    torch.testing.assert_close(out, ref_out, rtol=0, atol=1e-6)
    for got, want in zip(state if isinstance(state, tuple) else (state,), ref_state, strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)
    assert not out[torch.arange(src.size(1)) >= lengths[:, None]].any()  # padding stays zero


def test_groups_gradients_equal_packed() -> None:
    torch.manual_seed(1)
    encoder = Encoder(30, 6, 8)
    lengths = torch.tensor([3, 1, 3, 2])
    src = torch.randint(4, 30, (4, 3))
    grads = []
    for run in (lambda: encoder._run_by_length(encoder.embedding(src), lengths),
                lambda: packed_reference(encoder, src, lengths)):
        encoder.zero_grad()
        out, (h, c) = run()
        (out.pow(2).sum() + h.sum() + c.sum()).backward()
        grads.append([p.grad.clone() for p in encoder.rnn.parameters()])
    for got, want in zip(*grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
