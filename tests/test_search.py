import pytest
import torch

from attention_core.decoding.search import beam_search, beam_search_nbest, greedy
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def _model(**kw):
    cfg = dict(src_vocab_size=20, tgt_vocab_size=20, hidden_size=16, emb_size=8, dropout=0.0)
    cfg.update(kw)
    return build_model(ModelConfig(**cfg)).eval()


def _src():
    src = torch.randint(4, 20, (4, 7))
    lengths = torch.tensor([7, 4, 2, 6])
    for b, n in enumerate(lengths.tolist()):
        src[b, n:] = 0
    return src, lengths


@pytest.mark.parametrize(
    "decoder,mode,window", [("luong", "global", None), ("bahdanau", "local-p", 2), ("none", "global", None)]
)
def test_beam_size_one_equals_greedy(decoder, mode, window):
    model = _model(decoder=decoder, attention=mode, window=window)
    src, lengths = _src()
    g = greedy(model, src, lengths, max_len=12)
    b = beam_search(model, src, lengths, beam_size=1, max_len=12)
    for x, y in zip(g, b):
        assert x.tokens == y.tokens
        assert x.finished == y.finished
        torch.testing.assert_close(x.weights, y.weights)
        assert x.score == pytest.approx(y.score, abs=1e-4)
        if x.centres is not None:
            torch.testing.assert_close(x.centres, y.centres)


def test_greedy_attention_matrix_shape_and_rows():
    model = _model(decoder="luong")
    src, lengths = _src()
    for hyp, n in zip(greedy(model, src, lengths, max_len=10), lengths.tolist()):
        rows = len(hyp.tokens) + int(hyp.finished)
        assert hyp.weights.shape == (rows, n)
        torch.testing.assert_close(hyp.weights.sum(-1), torch.ones(rows))


def test_beam_finds_at_least_as_good_a_normalised_score_as_greedy():
    model = _model(decoder="luong", score="concat")
    src, lengths = _src()
    g = greedy(model, src, lengths, max_len=12)
    b = beam_search(model, src, lengths, beam_size=5, max_len=12, alpha=0.0)
    for x, y in zip(g, b):
        if x.finished:
            assert y.score >= x.score - 1e-4


def test_batched_equals_one_by_one():
    model = _model(decoder="bahdanau", score="general")
    src, lengths = _src()
    batched = beam_search(model, src, lengths, beam_size=3, max_len=10)
    for b in range(4):
        n = int(lengths[b])
        single = beam_search(model, src[b : b + 1, :n], lengths[b : b + 1], beam_size=3, max_len=10)[0]
        assert single.tokens == batched[b].tokens
        torch.testing.assert_close(single.weights, batched[b].weights, atol=1e-5, rtol=1e-4)


def test_hard_attention_rows_are_one_hot():
    model = _model(decoder="luong")
    src, lengths = _src()
    for hyp in greedy(model, src, lengths, max_len=8, hard=True):
        assert ((hyp.weights == 0) | (hyp.weights == 1)).all()
        assert (hyp.weights.sum(-1) == 1).all()


def test_beam_size_must_be_positive():
    model = _model()
    src, lengths = _src()
    with pytest.raises(ValueError, match="beam size"):
        beam_search(model, src, lengths, beam_size=0)


def test_beam_search_returns_a_hypothesis_for_every_row_even_when_all_scores_are_minus_infinity():
    class MaskAll:
        def expand(self, index):
            return self

        def apply(self, logprobs, t, prefix):
            return torch.full_like(logprobs, float("-inf"))

    model = _model(decoder="luong")
    src, lengths = _src()
    hyps = beam_search(model, src, lengths, beam_size=3, max_len=4, constraint=MaskAll())
    assert len(hyps) == src.size(0) and all(not h.finished for h in hyps)


class _Scripted:
    """A constraint that replaces the model's log-probabilities with a fixed table by prefix."""

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]]):
        self.table = table

    def expand(self, index):
        return self

    def apply(self, logprobs, t, prefix):
        out = torch.full_like(logprobs, float("-inf"))
        for row, tokens in enumerate(prefix.tolist()):
            for token, logp in self.table.get(tuple(tokens), {}).items():
                out[row, token] = logp
        return out


def test_nbest_ranks_by_the_normalised_score_not_by_the_order_hypotheses_finish():
    model = _model(decoder="luong")
    eos, a, b, c, d = model.cfg.eos_id, 5, 6, 7, 8
    script = _Scripted({
        (): {a: -0.1, eos: -2.0, b: -3.0},  # the empty output finishes first: log p -2.0
        (a,): {c: -0.1, eos: -5.0},  # then "a": -5.1
        (a, c): {eos: -2.2, d: -1.0},  # then "a c": -2.4
        (a, c, d): {eos: -1.0},  # last, "a c d": -2.2
    })
    src, lengths = torch.tensor([[4, 5, 6]]), torch.tensor([3])

    def search(alpha, nbest=True):
        find = beam_search_nbest if nbest else beam_search
        return find(model, src, lengths, beam_size=2, max_len=6, constraint=script, alpha=alpha)[0]

    # log p / len: -2.2 / 4, -2.4 / 3, -2.0 / 1, -5.1 / 2 (len counts <eos>)
    assert [h.tokens for h in search(1.0)] == [[a, c, d], [a, c], [], [a]]
    assert [round(h.score, 4) for h in search(1.0)] == [-2.2, -2.4, -2.0, -5.1]
    assert search(1.0, nbest=False).tokens == [a, c, d]
    # raw log p: -2.0, -2.2, -2.4, -5.1
    assert [h.tokens for h in search(0.0)] == [[], [a, c, d], [a, c], [a]]
    assert search(0.0, nbest=False).tokens == []


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_nbest_is_ranked_by_the_normalised_score_and_starts_with_the_beam_result(alpha):
    torch.manual_seed(0)
    model = _model(decoder="luong", score="general")
    with torch.no_grad():
        model.generator.bias[model.cfg.eos_id] += 2.0  # hypotheses end at different lengths
    src, lengths = _src()
    best = beam_search(model, src, lengths, beam_size=4, max_len=12, alpha=alpha)
    nbest = beam_search_nbest(model, src, lengths, beam_size=4, max_len=12, alpha=alpha)
    assert all(len(hyps) >= 4 for hyps in nbest)  # a row is done only with beam_size finished hypotheses
    for top, hyps in zip(best, nbest):
        assert hyps[0].tokens == top.tokens and hyps[0].score == top.score
        assert all(h.finished for h in hyps)
        norm = [h.score / (len(h.tokens) + int(h.finished)) ** alpha for h in hyps]
        assert norm == sorted(norm, reverse=True)
        assert len({tuple(h.tokens) for h in hyps}) == len(hyps)


def test_the_coverage_penalty_reranks_finished_hypotheses_by_the_attention_they_left_out():
    """β > 0: finished hypotheses rank by log p / len + β Σ_j log min(coverage_j, 1); β = 0 is the plain search."""
    from attention_core.decoding.search import coverage_penalty

    torch.manual_seed(0)
    model = _model(decoder="luong", score="general")
    with torch.no_grad():
        model.generator.bias[model.cfg.eos_id] += 2.0  # hypotheses end at different lengths: coverage differs
    src, lengths = _src()
    plain = beam_search_nbest(model, src, lengths, beam_size=4, max_len=12)
    off = beam_search_nbest(model, src, lengths, beam_size=4, max_len=12, coverage=0.0)
    assert [[h.tokens for h in hyps] for hyps in off] == [[h.tokens for h in hyps] for hyps in plain]
    changed = False
    for beta in (0.5, 50.0):
        nbest = beam_search_nbest(model, src, lengths, beam_size=4, max_len=12, coverage=beta)
        for hyps, n in zip(nbest, lengths.tolist()):
            ranked = [h.score / (len(h.tokens) + 1) + beta * coverage_penalty(h.weights[:, :n]) for h in hyps]
            assert ranked == sorted(ranked, reverse=True)
        changed |= [h.tokens for h in nbest[0]] != [h.tokens for h in plain[0]]
    assert changed  # a heavy penalty prefers the outputs that attend to more of the source
    covered = [coverage_penalty(h.weights[:, : int(lengths[0])]) for h in nbest[0]]
    assert covered[0] == max(covered)  # at β = 50 the best-covering hypothesis wins
    with pytest.raises(ValueError, match="coverage"):
        beam_search_nbest(model, src, lengths, beam_size=2, coverage=-1.0)


def test_a_model_without_attention_is_never_penalised(monkeypatch):
    import attention_core.decoding.search as search

    def never(*args, **kwargs):
        raise AssertionError("the baseline's attention was scored")

    monkeypatch.setattr(search, "_live_penalties", never)
    torch.manual_seed(0)
    model = _model(decoder="none")
    src, lengths = _src()
    assert [h.tokens for h in beam_search(model, src, lengths, beam_size=3, max_len=10, coverage=5.0)] == [
        h.tokens for h in beam_search(model, src, lengths, beam_size=3, max_len=10)]
    with pytest.raises(AssertionError, match="scored"):  # an attention model is scored
        beam_search(_model(decoder="luong", score="dot"), src, lengths, beam_size=3, max_len=10, coverage=5.0)


def test_live_penalties_leave_padding_out_and_match_one_output_at_a_time():
    from attention_core.decoding.search import _live_penalties, coverage_penalty

    torch.manual_seed(0)
    attn = torch.rand(4, 3, 5).softmax(dim=-1)  # 2 sentences × K = 2 live rows, 3 steps, 5 source positions
    lengths = torch.tensor([5, 2])
    attn[2:, :, 2:] = 0.0  # the second sentence's padding gets no attention: it must not count
    got = _live_penalties(attn, lengths, 1e-6)
    want = [coverage_penalty(attn[row, :, : int(lengths[row // 2])]) for row in range(4)]
    assert torch.allclose(got, torch.tensor(want)) and got[2:].gt(-30).all()


def test_translate_refuses_a_coverage_weight_that_is_not_a_finite_non_negative_number():
    from test_names import tiny

    translator = tiny("translation")
    for bad in (-0.1, float("nan"), float("inf")):
        for beam in (1, 3):
            with pytest.raises(ValueError, match="coverage"):
                translator.translate(["我的朋友是医生。"], beam_size=beam, coverage=bad)


def test_cli_coverage_flag_reaches_the_search_and_refuses_bad_values(tmp_path, capsys, monkeypatch):
    from test_names import tiny

    import attention_core.decoding.translator as pipeline
    from attention_core.cli import main
    from attention_core.decoding.folder import save_pretrained

    save_pretrained(tiny("translation"), tmp_path / "m", half=False)
    seen = []
    real = pipeline.beam_search_nbest
    monkeypatch.setattr(pipeline, "beam_search_nbest", lambda *a, **k: seen.append(a[3].coverage) or real(*a, **k))
    from attention_core.data.tasks import TASKS

    for given, used in (([], TASKS["translation"].coverage), (["--coverage", "0.3"], 0.3)):
        assert main(["translate", "--model", str(tmp_path / "m"), "--beam", "3", *given, "我的朋友是医生。"]) == 0
        assert seen.pop() == used
    assert main(["translate", "--model", str(tmp_path / "m"), "--coverage", "0.3", "我的朋友是医生。"]) == 0
    assert "greedy search ignores it" in capsys.readouterr().err  # --beam 1, the default
    for bad in ("-1", "nan", "lots"):
        with pytest.raises(SystemExit):
            main(["translate", "--model", str(tmp_path / "m"), "--coverage", bad, "我"])
        assert "the coverage penalty must" in capsys.readouterr().err
