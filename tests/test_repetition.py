"""The loop guard: what it masks (against a plain reading of its two rules), and a looping search it ends."""

from itertools import groupby

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_search import _model

from attention_core.decoding.repetition import LoopGuard
from attention_core.decoding.search import Chain, beam_search_nbest, greedy


def _forbidden(prefix: list[int], max_run: int, ngram: int) -> set[int]:
    """The tokens the guard's rules forbid after ``prefix``, read off the rules one candidate at a time."""
    out = set()
    for token in set(prefix):
        longer = prefix + [token]
        if len(longer) > max_run and len(set(longer[-max_run - 1 :])) == 1:
            out.add(token)
        grams = [tuple(longer[i : i + ngram]) for i in range(len(longer) - ngram + 1)]
        if grams and grams[-1] in grams[:-1]:
            out.add(token)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=6, max_size=6), min_size=1, max_size=4),
       st.integers(1, 4), st.integers(2, 5), st.integers(0, 6))
def test_the_guard_masks_exactly_what_its_rules_forbid(rows, max_run, ngram, t):
    prefix = torch.tensor(rows)[:, :t]
    masked = LoopGuard(max_run, ngram).apply(torch.zeros(len(rows), 6), t, prefix)
    for row, tokens in zip(masked, prefix.tolist()):
        assert {i for i, v in enumerate(row.tolist()) if v == float("-inf")} == _forbidden(tokens, max_run, ngram)


def test_limits_below_their_minimum_are_refused():
    with pytest.raises(ValueError, match="max_run >= 1 and ngram >= 2"):
        LoopGuard(max_run=0)
    with pytest.raises(ValueError, match="max_run >= 1 and ngram >= 2"):
        LoopGuard(ngram=1)


class _Loops:
    """A model stand-in: at every step token 5 is likely, then 6, 7 and 8; ``<eos>`` is less likely than all four
    (never among a beam of four's best) and far more likely than the rest."""

    def expand(self, index):
        return self

    def apply(self, logprobs, t, prefix):
        out = torch.full_like(logprobs, -20.0)
        out[:, 5:9] = torch.tensor([-0.01, -1.0, -2.0, -3.0])
        out[:, 3] = -6.0  # eos_id
        return out


@pytest.mark.parametrize("beam", [1, 4])
def test_a_search_that_loops_to_its_limit_ends_with_the_guard(beam):
    model = _model(decoder="luong")
    assert model.cfg.eos_id == 3
    src, lengths = torch.tensor([[4, 5, 6, 7]]), torch.tensor([4])

    def search(*constraints):
        chain = Chain(_Loops(), *constraints)  # the stand-in first, the guard masks what it says
        if beam == 1:
            return greedy(model, src, lengths, max_len=30, constraint=chain)[0]
        return beam_search_nbest(model, src, lengths, beam_size=beam, max_len=30, constraint=chain)[0][0]

    stuck = search()
    assert not stuck.finished and stuck.tokens == [5] * 30
    guarded = search(LoopGuard(max_run=3, ngram=2))  # four tokens make 16 bigrams: the output must end
    assert guarded.finished and 0 < len(guarded.tokens) <= 17
    pairs = list(zip(guarded.tokens, guarded.tokens[1:]))
    assert len(pairs) == len(set(pairs))


def test_translation_guards_by_default_couplets_do_not_and_a_caller_can_choose():
    from test_names import tiny

    translator = tiny("translation")
    doctor = translator.tgt_vocab.stoi["doctor"]
    with torch.no_grad():
        translator.model.generator.bias[doctor] += 20.0  # the model now says "doctor" for ever
    text = "我的朋友是医生。"
    stuck, = translator.translate([text], loop_guard=False, max_len=20)
    assert stuck.tokens == ["doctor"] * 20
    for guard, run in ((None, 3), (True, 3), (LoopGuard(max_run=1, ngram=2), 1)):
        out, = translator.translate([text], beam_size=3, loop_guard=guard, max_len=20)
        longest = max(len(list(g)) for _, g in groupby(out.tokens))
        assert longest == run
    assert translator.task.loop_guard and not tiny("couplet").task.loop_guard


def test_cli_loop_guard_flag(tmp_path, capsys):
    from test_names import tiny

    from attention_core.cli import main
    from attention_core.decoding.folder import save_pretrained

    translator = tiny("translation")
    with torch.no_grad():
        translator.model.generator.bias[translator.tgt_vocab.stoi["doctor"]] += 20.0
    save_pretrained(translator, tmp_path / "m", half=False)
    said = {}
    for flag in ("on", "off"):
        assert main(["translate", "--model", str(tmp_path / "m"), "--loop-guard", flag, "我的朋友是医生。"]) == 0
        said[flag] = capsys.readouterr().out
    assert "doctor doctor doctor doctor" in said["off"] and "doctor doctor doctor doctor" not in said["on"]
    with pytest.raises(SystemExit):
        main(["translate", "--model", str(tmp_path / "m"), "--loop-guard", "maybe", "我"])
    assert "invalid choice: 'maybe'" in capsys.readouterr().err
