"""The decoders' hoisted teacher forcing gives the reference loop's loss, gradients and weights.

``Seq2Seq.forward`` trains through ``Decoder.teacher_force`` overrides that compute the per-sentence work once
(``hoisted=True``); ``hoisted=False`` steps ``Decoder.step`` once per position as decoding does. Dropout is off
here so that both see the same network; ``test_dropout_rate`` checks the hoisted loop's own dropout masks.
"""

import pytest
import torch

from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import sequence_loss

V = 40
VARIANTS = {
    "luong-general": {"decoder": "luong", "score": "general"},
    "luong-dot": {"decoder": "luong", "score": "dot"},
    "luong-scaled_dot": {"decoder": "luong", "score": "scaled_dot"},
    "luong-concat": {"decoder": "luong", "score": "concat"},
    "luong-location": {"decoder": "luong", "score": "location", "max_source_len": 12},
    "luong-local-p": {"decoder": "luong", "score": "general", "attention": "local-p", "window": 2},
    "luong-local-m": {"decoder": "luong", "score": "general", "attention": "local-m", "window": 2},
    "bahdanau": {"decoder": "bahdanau", "score": "concat"},
    "none": {"decoder": "none"},
}


def batch(seed: int = 0):
    """A padded batch of six pairs of mixed lengths (one source of length 1)."""
    g = torch.Generator().manual_seed(seed)
    src_lengths, tgt_lengths = torch.tensor([9, 9, 5, 3, 8, 1]), torch.tensor([7, 3, 5, 6, 2, 7])
    src = torch.randint(4, V, (6, 9), generator=g)
    tgt_in, tgt_out = torch.randint(4, V, (6, 7), generator=g), torch.randint(4, V, (6, 7), generator=g)
    src[torch.arange(9) >= src_lengths[:, None]] = 0
    tgt_in[torch.arange(7) >= tgt_lengths[:, None]] = 0
    tgt_out[torch.arange(7) >= tgt_lengths[:, None]] = 0
    return src, src_lengths, tgt_in, tgt_out, tgt_lengths


def loss_grads_weights(model, hoisted: bool, amp: torch.dtype | None):
    src, src_lengths, tgt_in, tgt_out, tgt_lengths = batch()
    model.zero_grad()
    with torch.autocast("cpu", dtype=amp or torch.bfloat16, enabled=amp is not None):
        real = tgt_out != 0
        logits, weights = model(src, src_lengths, tgt_in, tgt_lengths, select=real, hoisted=hoisted)
        loss = sequence_loss(logits, tgt_out[real], 0, label_smoothing=0.1)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return loss.item(), grads, weights.float()


def model_of(variant: str, rnn: str = "lstm", layers: int = 1):
    torch.manual_seed(1)
    cfg = ModelConfig(src_vocab_size=V, tgt_vocab_size=V, hidden_size=16, emb_size=8, dropout=0.0, rnn=rnn,
                      num_layers=layers, **VARIANTS[variant])
    return build_model(cfg).train()


@pytest.mark.parametrize("variant", VARIANTS)
def test_float32_same_as_reference(variant: str) -> None:
    model = model_of(variant)
    ref_loss, ref_grads, ref_weights = loss_grads_weights(model, False, None)
    loss, grads, weights = loss_grads_weights(model, True, None)
    assert loss == pytest.approx(ref_loss, abs=1e-6)
    assert grads.keys() == ref_grads.keys()
    for name, grad in grads.items():
        torch.testing.assert_close(grad, ref_grads[name], rtol=1e-4, atol=1e-6, msg=name)
    torch.testing.assert_close(weights, ref_weights, rtol=0, atol=1e-6)


@pytest.mark.parametrize("variant", ["luong-general", "bahdanau", "none"])
def test_float64_same_as_reference(variant: str) -> None:
    """A float64 model (the attribution tests differentiate one numerically) stays float64 throughout."""
    model = model_of(variant).double()
    ref_loss, ref_grads, _ = loss_grads_weights(model, False, None)
    loss, grads, _ = loss_grads_weights(model, True, None)
    assert loss == pytest.approx(ref_loss, abs=1e-12)
    for name, grad in grads.items():
        assert grad.dtype == torch.float64
        torch.testing.assert_close(grad, ref_grads[name], rtol=1e-9, atol=1e-12, msg=name)


@pytest.mark.parametrize("variant", VARIANTS)
def test_bfloat16_loss_within_tolerance(variant: str) -> None:
    """Under the trainer's mixed precision the loss agrees within 1e-2 (measured: within 1e-4)."""
    model = model_of(variant)
    ref_loss, _, ref_weights = loss_grads_weights(model, False, torch.bfloat16)
    loss, _, weights = loss_grads_weights(model, True, torch.bfloat16)
    assert loss == pytest.approx(ref_loss, abs=1e-2)
    assert (weights - ref_weights).abs().max() < 1e-2


@pytest.mark.parametrize(("rnn", "layers"), [("gru", 1), ("lstm", 2)])
def test_other_rnns_take_the_reference(rnn: str, layers: int) -> None:
    model = model_of("luong-general", rnn, layers)
    assert loss_grads_weights(model, True, None)[0] == loss_grads_weights(model, False, None)[0]


def test_dropout_rate() -> None:
    """The hoisted loop's dropout masks: zeros at rate p, kept units scaled by 1/(1 − p), a fresh mask each step."""
    model = model_of("luong-general")
    model.decoder.dropout.p = 0.3
    like = torch.ones(1)
    masks = model.decoder._step_dropout((50, 64, 256), like)
    assert masks.shape == (50, 64, 256)
    assert masks.unique().tolist() == pytest.approx([0.0, 1 / 0.7])
    assert (masks == 0).float().mean().item() == pytest.approx(0.3, abs=0.01)
    assert not torch.equal(masks[0], masks[1])
    model.eval()
    assert model.decoder._step_dropout((2, 3, 4), like) is None
