import itertools

import pytest
import torch
from torch.testing import assert_close

from attention_core.model.attention import (
    CENTRES,
    Attention,
    MonotonicCentre,
    PredictiveCentre,
    Window,
    attention,
)
from attention_core.model.scores import SCORES, build_score

B, T, S, H = 3, 4, 9, 8
LENGTHS = torch.tensor([9, 5, 1])


def _mask():
    return torch.arange(S).unsqueeze(0) < LENGTHS.unsqueeze(1)


def _run(score_name, mode, hard, window):
    att = Attention(build_score(score_name, H, H), mode, window if mode != "global" else None)
    keys = torch.randn(B, S, H)
    query = torch.randn(B, T, H)
    steps = torch.arange(T)
    tgt_lengths = torch.tensor([6.0, 4.0, 2.0])
    context, weights, centre = att(query, att.prepare(keys), keys, _mask(), steps, tgt_lengths, window, hard)
    return context, weights, centre, keys


CASES = list(itertools.product(SCORES, ["global", "local-m", "local-p"], [False, True], [None, 1, 2]))


@pytest.mark.parametrize("score_name,mode,hard,window", CASES)
def test_every_score_and_mode(score_name, mode, hard, window):
    context, weights, centre, keys = _run(score_name, mode, hard, window)
    assert context.shape == (B, T, H) and weights.shape == (B, T, S)
    assert torch.isfinite(weights).all() and torch.isfinite(context).all()
    assert_close(weights.sum(-1), torch.ones(B, T))
    # exactly zero on padding
    assert (weights[~_mask().unsqueeze(1).expand(B, T, S)] == 0).all()
    if hard:
        assert ((weights == 0) | (weights == 1)).all()
        assert (weights.sum(-1) == 1).all()
    assert_close(context, weights @ keys)
    if window is None:
        assert centre is None
    else:
        assert centre.shape == (B, T)
        # centres inside [0, S_b) for every sentence
        assert (centre >= 0).all() and (centre < LENGTHS.unsqueeze(1)).all()
        positions = torch.arange(S).view(1, 1, S)
        outside = (positions - centre.unsqueeze(-1)).abs() > window
        assert (weights[outside] == 0).all()


def test_unknown_mode_lists_valid_modes():
    with pytest.raises(ValueError) as err:
        Attention(build_score("dot", 4, 4), "local-x", 2)
    for mode in CENTRES:
        assert mode in str(err.value)


def test_window_keeps_a_valid_key_even_at_the_edges():
    # one real key, window D=1 centred at the far end of a padded row: still a distribution
    scores = torch.randn(1, 2, 6)
    mask = torch.tensor([[True, False, False, False, False, False]])
    centre = torch.tensor([[0.0, 0.0]])
    _, weights = attention(scores, torch.randn(1, 6, 3), mask, Window(centre, 1))
    assert_close(weights, torch.tensor([[[1.0, 0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0, 0]]]))


def test_window_must_be_positive():
    with pytest.raises(ValueError):
        Window(torch.zeros(1, 1), 0)


def test_monotonic_centre_is_t_times_s_over_t():
    centre = MonotonicCentre(4)(
        torch.zeros(2, 3, 4), torch.arange(3), torch.tensor([10, 4]), torch.tensor([5.0, 8.0])
    )
    assert_close(centre, torch.tensor([[0.0, 2.0, 4.0], [0.0, 0.5, 1.0]]))


def test_local_p_gaussian_matches_luong_eq_10_renormalised():
    torch.manual_seed(1)
    scores = torch.randn(1, 1, 7)
    mask = torch.ones(1, 7, dtype=torch.bool)
    centre = torch.tensor([[3.3]])
    D = 2
    _, weights = attention(scores, torch.randn(1, 7, 2), mask, Window(centre, D, gaussian=True))
    s = torch.arange(7.0)
    inside = (s - 3.3).abs() <= D
    align = torch.softmax(scores[0, 0].masked_fill(~inside, float("-inf")), -1)
    expected = align * torch.exp(-((s - 3.3) ** 2) / (2 * (D / 2) ** 2))
    assert_close(weights[0, 0], expected / expected.sum())


def test_predictive_centre_is_s_times_sigmoid():
    pc = PredictiveCentre(4)
    query = torch.randn(2, 3, 4)
    lengths = torch.tensor([7, 3])
    gate = torch.sigmoid(pc.v_p(torch.tanh(pc.W_p(query))).squeeze(-1))
    expected = torch.minimum(lengths.unsqueeze(1) * gate, lengths.unsqueeze(1) - 1.0)
    assert_close(pc(query, torch.arange(3), lengths, lengths.float()), expected)


def test_gradient_flows_to_local_p_predictor():
    att = Attention(build_score("general", H, H), "local-p", 2)
    keys = torch.randn(B, S, H)
    context, _, _ = att(
        torch.randn(B, T, H), att.prepare(keys), keys, _mask(), torch.arange(T), torch.ones(B) * T, 2
    )
    context.sum().backward()
    assert att.centre.W_p.weight.grad.abs().sum() > 0
