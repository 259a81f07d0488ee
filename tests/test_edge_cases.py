"""Edge cases of the public attention step and of beam search's stopping rule."""

import math
from types import SimpleNamespace

import torch

from attention_core.decoding.search import beam_search
from attention_core.model.attention import Window, attention


def test_a_window_past_the_source_attends_to_the_nearest_real_key_not_nan():
    scores = torch.randn(2, 3, 6)
    values = torch.randn(2, 6, 4)
    mask = torch.tensor([[True] * 6, [True, True, False, False, False, False]])
    centre = torch.tensor([[0.0, 2.0, 5.0], [0.0, 4.0, 5.0]])  # row 1: windows at 4 and 5 hold padding only
    context, weights = attention(scores, values, mask, Window(centre, 1))
    assert torch.isfinite(weights).all() and torch.isfinite(context).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    assert weights[1, 1].tolist() == [0, 1, 0, 0, 0, 0] and weights[1, 2].tolist() == [0, 1, 0, 0, 0, 0]
    torch.testing.assert_close(context[1, 2], values[1, 1])
    assert (weights[1, :, 2:] == 0).all()


class _ScriptedModel:
    """A stand-in for ``Seq2Seq`` whose step ``t`` gives every row the same scripted distribution."""

    cfg = SimpleNamespace(pad_id=0, unk_id=1, bos_id=2, eos_id=3, length_ratio=1.0)

    def __init__(self, steps: list[dict[int, float]], vocab: int = 6) -> None:
        self.logits = []
        for probs in steps:
            rest = (1.0 - sum(probs.values())) / (vocab - len(probs) - 2)
            row = [-math.inf if i in (0, 2) else math.log(probs.get(i, rest)) for i in range(vocab)]
            self.logits.append(torch.tensor(row))

    def encode(self, src, lengths):
        state = SimpleNamespace(index_select=lambda index: state)
        memory = SimpleNamespace(index_select=lambda index: memory)
        return memory, state

    def step(self, y, state, memory, t, window, hard):
        n = y.size(0)
        return SimpleNamespace(logits=self.logits[min(t, len(self.logits) - 1)].expand(n, -1).clone(),
                               state=state, weights=torch.ones(n, 1), centre=None)


def test_beam_search_does_not_stop_at_an_empty_output_while_a_longer_one_scores_better():
    # step 0: <eos> 0.45, a 0.40 → the empty output finishes with -0.80 per token
    # step 1 after a: b 0.80 (live, -0.57 per token so far), <eos> 0.15 (finishes with -1.41)
    # step 2 after a b: <eos> 0.95 → "a b" finishes with -0.40 per token: the best output
    a, b, eos = 4, 5, 3
    model = _ScriptedModel([{eos: 0.45, a: 0.40}, {b: 0.80, eos: 0.15}, {eos: 0.95}])
    src, lengths = torch.tensor([[4]]), torch.tensor([1])
    hyp = beam_search(model, src, lengths, beam_size=2, max_len=6, alpha=1.0)[0]
    assert hyp.tokens == [a, b] and hyp.finished
    assert math.isclose(hyp.score, math.log(0.40 * 0.80 * 0.95), rel_tol=1e-5)


def test_the_registry_serves_a_placed_copy_and_keeps_the_loaded_model():
    from app_fixtures import small_registry

    registry = small_registry()
    loaded = registry.models["couplet"]["none"]
    assert registry.get("couplet", "none") is loaded  # no CUDA here: served where it was loaded
    registry.device = torch.device("meta")  # stands in for CUDA: a copy is placed once, then reused
    placed = registry.get("couplet", "none")
    assert placed.device.type == "meta" and loaded.device.type == "cpu"
    assert registry.get("couplet", "none") is placed
