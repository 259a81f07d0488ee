"""Gradient importance beside attention (``attention_core.analysis.attribution``): input × gradient is the change of the
output token's log-probability when a source embedding is scaled, and Kendall's τ-b is the textbook one."""

import math

import pytest
import torch
from app_fixtures import small_registry

from attention_core.analysis.attribution import input_x_gradient, kendall_tau

REGISTRY = small_registry()
TEXT = "我喜欢自然语言处理。"


def test_kendall_tau_b_by_hand_with_ties_and_a_row_without_pairs():
    a = torch.tensor([[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 2.0, 3.0], [4.0, 3.0, 2.0, 1.0]])
    b = torch.tensor([[1.0, 2.0, 4.0, 3.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])
    # row 0: 6 pairs, one discordant (3 vs 4) → (5 − 1) / 6; row 1: a ties one pair → 5 / √(5 · 6); row 2: reversed
    expected = torch.tensor([4 / 6, 5 / math.sqrt(30), -1.0])
    torch.testing.assert_close(kendall_tau(a, b), expected)
    assert torch.isnan(kendall_tau(torch.ones(1, 3), torch.rand(1, 3))).all()  # a constant row ranks nothing
    assert torch.isnan(kendall_tau(torch.rand(2, 1), torch.rand(2, 1))).all()  # one source token: no pair
    with pytest.raises(ValueError, match="one shape"):
        kendall_tau(torch.rand(2, 3), torch.rand(3, 2))


@pytest.mark.parametrize("variant", ["luong-dot", "bahdanau", "none", "luong-general-local-p"])
def test_input_x_gradient_is_the_derivative_of_scaling_each_source_embedding(variant):
    translator = REGISTRY.get("translation", variant)
    translator.model.double()
    try:
        out = translator.translate([TEXT])[0]
        importance = input_x_gradient(translator, out)
        T, S = out.weights.shape
        assert importance.gradient.shape == importance.signed.shape == (T, S) and importance.agreement.shape == (T,)
        torch.testing.assert_close(importance.gradient.sum(-1), torch.ones(T))
        table = translator.model.encoder.embedding.weight
        ids = translator.src_vocab.encode(out.source_tokens)
        tgt = translator.tgt_vocab.encode(out.tokens) + ([translator.tgt_vocab.eos_id] if out.finished else [])

        def log_probs(scale: float, s: int):
            from attention_core.data.batch import make_batch

            batch = make_batch([(ids, translator.tgt_vocab.encode(out.tokens))])
            saved = table.data[ids[s]].clone()
            table.data[ids[s]] = saved * (1 + scale)
            try:
                with torch.no_grad():
                    logits = translator.model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)[0][0]
            finally:
                table.data[ids[s]] = saved
            return torch.log_softmax(logits.double(), -1)[torch.arange(T), torch.tensor(tgt[:T])]

        for s in range(S):
            if ids.count(ids[s]) > 1:
                continue  # a repeated character's row scales every occurrence at once
            # small steps in float64: local-p's window edge moves with p_t, so a wide step can straddle it
            eps = 1e-7
            numeric = (log_probs(eps, s) - log_probs(-eps, s)) / (2 * eps)
            torch.testing.assert_close(importance.signed[:, s].double(), numeric, atol=1e-6, rtol=1e-4)
    finally:
        translator.model.float()


def test_the_agreement_is_kendall_tau_between_the_attention_and_gradient_rows():
    translator = REGISTRY.get("translation", "luong-dot")
    out = translator.translate([TEXT])[0]
    importance = input_x_gradient(translator, out)
    torch.testing.assert_close(importance.agreement, kendall_tau(out.weights, importance.gradient))
    assert not translator.model.training
    baseline = REGISTRY.get("translation", "none")
    none = input_x_gradient(baseline, baseline.translate([TEXT])[0])
    assert torch.isnan(none.agreement).all() and torch.isfinite(none.gradient).all()
