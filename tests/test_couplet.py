"""Couplet rules while decoding: every rule holds for any 上联 shape, beams included, and the
rules relax (never emitting <pad>/<unk>) when a row has no allowed token."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_core.analysis.calibration import calibrate_overproduction
from attention_core.analysis.metrics import couplet_metrics
from attention_core.data.text import repetition_pattern, tone_class
from attention_core.data.vocab import Vocab, is_punctuation
from attention_core.decoding.couplet import (
    NO_RULES,
    CoupletConstraint,
    CoupletRules,
    cliche_penalties,
)
from attention_core.decoding.search import beam_search, beam_search_nbest, greedy
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

SOURCE_CHARS = list("风声雨读书家国天下事山水")  # what the 上联s are made of
LEVEL = list("东西南冬来花云烟霞飞兰香春光秋")  # 平
OBLIQUE = list("北夏去草月雪柳鸟树叶玉酒路梦雁")  # 仄
PUNCT = list("，。；")


def _vocab(with_punct: bool = True) -> Vocab:
    return Vocab(SOURCE_CHARS + LEVEL + OBLIQUE + (PUNCT if with_punct else []))


def _model(vocab: Vocab, seed: int = 0):
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), hidden_size=16, emb_size=8,
                      dropout=0.0)
    return build_model(cfg).eval()


def _decode(model, vocab, sources, beam, rules=None, max_len=None, nbest=False):
    ids = [vocab.encode(s) for s in sources]
    S = max(map(len, ids))
    src = torch.tensor([x + [0] * (S - len(x)) for x in ids])
    lengths = torch.tensor([len(x) for x in ids])
    constraint = CoupletConstraint(sources, vocab, rules)
    if beam == 1:
        hyps = greedy(model, src, lengths, constraint=constraint, max_len=max_len)
        return [[h] for h in hyps] if nbest else hyps
    search = beam_search_nbest if nbest else beam_search
    return search(model, src, lengths, beam_size=beam, constraint=constraint, max_len=max_len)


def test_vocabulary_tones_are_what_the_rules_assume():
    assert all(tone_class(c) == "平" for c in LEVEL)
    assert all(tone_class(c) == "仄" for c in OBLIQUE)


def _line(draw) -> list[str]:
    """A random 上联 shape: characters with repetitions (AA, ABAB …) and punctuation between clauses."""
    clauses = draw(st.lists(st.lists(st.sampled_from(SOURCE_CHARS), min_size=1, max_size=6), min_size=1,
                            max_size=3))
    line: list[str] = []
    for i, clause in enumerate(clauses):
        if i:
            line.append(draw(st.sampled_from(PUNCT)))
        line += clause
    return line


lines = st.composite(lambda draw: _line(draw))()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources=st.lists(lines, min_size=1, max_size=4), beam=st.sampled_from([1, 3]),
       seed=st.integers(0, 3), tone=st.sampled_from(["classical", "opposite"]))
def test_every_rule_holds_for_any_couplet_shape(sources, beam, seed, tone):
    vocab = _vocab()
    model = _model(vocab, seed)  # untrained: it never follows the rules by habit
    decoded = _decode(model, vocab, sources, beam, CoupletRules(tone=tone), nbest=True)
    for source, hyp in ((s, h) for s, hyps in zip(sources, decoded) for h in hyps):  # every beam output
        out = vocab.decode(hyp.tokens)
        assert hyp.finished and len(out) == len(source)
        assert vocab.unk_id not in hyp.tokens and vocab.pad_id not in hyp.tokens
        for a, b in zip(source, out):
            assert (a == b) if is_punctuation(a) else not is_punctuation(b)
        assert repetition_pattern(out) == repetition_pattern(source)  # mirrored, nothing more
        assert not set(source) & set(out) - set(PUNCT)  # no 重字
        last = max(i for i, ch in enumerate(source) if not is_punctuation(ch))
        if repetition_pattern(source)[last] == last:  # a mirrored repeat at the end takes precedence
            expected = {"仄": "平", "平": "仄"}[tone_class(source[last])] if tone == "opposite" else "平"
            if tone == "opposite" or tone_class(source[last]) == "仄":
                assert tone_class(out[last]) == expected


@pytest.mark.parametrize("rules", [CoupletRules(), NO_RULES, CoupletRules(tone="opposite", cliche_penalty=0.0)])
def test_beam_one_equals_greedy_under_the_rules(rules):
    vocab = _vocab()
    model = _model(vocab)
    sources = [list("风声雨声读书声"), list("天下，家国"), list("山水山水")]
    g = _decode(model, vocab, sources, 1, rules)
    ids = [vocab.encode(s) for s in sources]
    S = max(map(len, ids))
    src = torch.tensor([x + [0] * (S - len(x)) for x in ids])
    lengths = torch.tensor([len(x) for x in ids])
    b = beam_search(model, src, lengths, beam_size=1, constraint=CoupletConstraint(sources, vocab, rules))
    for x, y in zip(g, b):
        assert x.tokens == y.tokens
        assert x.score == pytest.approx(y.score, abs=1e-4)


def test_mirror_follows_the_beams_when_they_are_reordered():
    """At the repeated position every beam must repeat *its own* earlier character."""
    vocab = _vocab()
    model = _model(vocab, seed=3)
    source = list("风雨风雨风雨")
    ids = torch.tensor([vocab.encode(source)])
    constraint = CoupletConstraint([source], vocab).expand(torch.zeros(4, dtype=torch.long))
    prefix = torch.tensor([[vocab.stoi[a], vocab.stoi[b]] for a, b in ("东西", "南北", "花草", "云月")])
    allowed = constraint.allowed(2, prefix)  # position 2 repeats position 0
    for row in range(4):
        assert allowed[row].nonzero().flatten().tolist() == [prefix[row, 0].item()]
    hyps = beam_search(model, ids, torch.tensor([6]), beam_size=4, constraint=CoupletConstraint([source], vocab))
    out = vocab.decode(hyps[0].tokens)
    assert out[0] == out[2] == out[4] and out[1] == out[3] == out[5] and out[0] != out[1]


def test_rules_relax_instead_of_emitting_pad_or_unk():
    # two characters only, both in the 上联: no_reuse and the tone rule cannot hold
    vocab = Vocab(list("天地"))
    model = _model(vocab)
    for source in (list("天地天地"), list("天，地"), list("天天天天天")):
        for beam in (1, 3):
            hyp = _decode(model, vocab, [source], beam)[0]
            out = vocab.decode(hyp.tokens)
            assert hyp.finished and len(out) == len(source)
            assert all(t >= 4 for t in hyp.tokens), hyp.tokens  # no special token, never <unk>
            assert hyp.score > float("-inf")


def test_punctuation_missing_from_the_vocabulary_falls_back_to_characters():
    vocab = _vocab(with_punct=False)
    hyp = _decode(_model(vocab), vocab, [list("风声，雨声")], 3)[0]
    assert len(hyp.tokens) == 5 and all(t >= 4 for t in hyp.tokens)


def test_each_rule_is_a_switch():
    vocab = _vocab()
    source = list("风风雨雨")
    constraint = CoupletConstraint([source], vocab, NO_RULES)
    prefix = torch.tensor([[vocab.stoi["东"]]])
    allowed = constraint.allowed(1, prefix)
    assert allowed[0, vocab.stoi["风"]] and allowed[0, vocab.stoi["西"]]  # no mirror, reuse allowed
    mirrored = CoupletConstraint([source], vocab, CoupletRules(no_reuse=False, tone="off")).allowed(1, prefix)
    assert mirrored[0].nonzero().flatten().tolist() == [vocab.stoi["东"]]

    def ends(line: str, tone: str) -> set[str]:
        rules = CoupletRules(mirror=False, no_reuse=False, tone=tone)
        allowed = CoupletConstraint([list(line)], vocab, rules).allowed(1, prefix)
        return {tone_class(vocab.itos[i]) for i in allowed[0].nonzero().flatten().tolist()}

    assert ends("风雨", "classical") == ends("风雨", "opposite") == {"平"}  # 雨 is 仄
    assert ends("雨风", "opposite") == {"仄"}  # 风 is 平
    assert ends("雨风", "classical") == ends("雨风", "off") == {"平", "仄"}  # classical: a 平 ending is free
    with pytest.raises(ValueError, match="tone"):
        CoupletRules(tone="yes").validate()


def test_cliche_penalty_lowers_only_over_frequent_characters():
    tokens = ["春", "风", "鹤", "舟"]
    vocab = Vocab(tokens, counts=[0, 0, 0, 0, 700, 200, 60, 40])
    pen = cliche_penalties(vocab, 0.5)
    # shares .7 .2 .06 .04 of four seen characters: log(4 × share) → 1.03, −0.22, …
    assert pen[4].item() == pytest.approx(0.5 * torch.log(torch.tensor(2.8)).item(), rel=1e-5)
    assert pen[5:].tolist() == [0.0, 0.0, 0.0] and pen[:4].tolist() == [0.0] * 4
    assert cliche_penalties(vocab, 0.0) is None and cliche_penalties(Vocab(tokens), 0.5) is None
    rules = CoupletRules(mirror=False, no_reuse=False, tone="off", cliche_penalty=0.5)
    constraint = CoupletConstraint([list("山水")], vocab, rules)
    logprobs = constraint.apply(torch.zeros(1, len(vocab)), 0, torch.empty(1, 0, dtype=torch.long))
    assert logprobs[0, 4].item() == pytest.approx(-pen[4].item()) and logprobs[0, 6].item() == 0.0


def test_cliche_penalty_changes_the_choice_only_when_the_gap_is_small():
    vocab = Vocab(["春", "鹤"], counts=[0, 0, 0, 0, 900, 100])
    constraint = CoupletConstraint([list("山")], vocab, CoupletRules(mirror=False, no_reuse=False, tone="off"))
    prefix = torch.empty(1, 0, dtype=torch.long)
    close = torch.full((1, len(vocab)), -50.0)
    close[0, 4], close[0, 5] = -1.0, -1.2  # 春 slightly more probable
    assert constraint.apply(close, 0, prefix)[0].argmax().item() == 5  # the penalty prefers 鹤
    far = close.clone()
    far[0, 5] = -5.0
    assert constraint.apply(far, 0, prefix)[0].argmax().item() == 4  # a large gap still wins


def test_rules_validate():
    with pytest.raises(ValueError, match="cliche_penalty"):
        CoupletRules(cliche_penalty=-1).validate()
    with pytest.raises(ValueError, match="finite"):
        CoupletRules(cliche_penalty=float("nan")).validate()


def test_vocab_counts_round_trip_and_validate(tmp_path):
    vocab = Vocab.build([list("春风春雨"), list("春山")])
    assert vocab.counts[vocab.stoi["春"]] == 3 and vocab.counts[:4] == [0, 0, 0, 0]
    vocab.save(tmp_path / "v.json")
    assert Vocab.load(tmp_path / "v.json").counts == vocab.counts
    with pytest.raises(ValueError, match="counts"):
        Vocab(["a"], counts=[1, 2])


def test_metrics_see_raw_characters_and_count_each_rule():
    # three different characters unknown to a model must not count as one repeated character
    m = couplet_metrics([list("甲乙丙"), list("声声慢"), list("天高")], [list("东西南"), list("事事休"), list("地厚")])
    assert m["no_extra_repetition"] == 1.0 and m["repetition_mirrored"] == 1.0
    bad = couplet_metrics([list("声声慢"), list("天高"), list("山水")], [list("事情休"), list("高高"), list("水")])
    assert bad["repetition_mirrored"] == 0.0  # 事情 does not mirror 声声
    assert bad["no_extra_repetition"] == pytest.approx(2 / 3)  # 高高 repeats where 天高 does not
    assert bad["no_reuse"] == pytest.approx(1 / 3)  # 高 and 水 reused
    assert bad["length_match"] == pytest.approx(2 / 3)
    level = couplet_metrics([list("山水"), list("春风")], [list("云烟"), list("秋霜")])  # 风 平 → 霜 平
    assert level["tone_opposition_after_level"] == 0.0 and level["tone_opposition"] == 0.5


def _biased_translator(favourite: str):
    """An untrained couplet model whose output layer strongly prefers one character (a cliché)."""
    from attention_core.data.tasks import get_task
    from attention_core.decoding.translator import Translator

    vocab = _vocab()
    model = _model(vocab, seed=1)
    with torch.no_grad():
        model.generator.bias[vocab.stoi[favourite]] += 6.0
    return Translator(model, vocab, vocab, get_task("couplet"))


def test_calibration_finds_the_over_produced_character_and_the_penalty_removes_the_collapse():
    translator = _biased_translator("花")
    pairs = [("".join(random_line), "".join(reversed(LEVEL[: len(random_line)])))
             for random_line in ([SOURCE_CHARS[i % 12], SOURCE_CHARS[(i * 5 + 1) % 12], SOURCE_CHARS[(i * 7 + 3) % 12]]
                                 for i in range(40))]
    sources = [s for s, _ in pairs]

    def share(outputs):  # share of outputs containing 花
        return sum("花" in o.tokens for o in outputs) / len(outputs)

    translator.meta["overproduction"] = {}  # measure the model without any penalty first
    before = share(translator.translate(sources, beam_size=3, rules=CoupletRules(cliche_penalty=1.0)))
    table = calibrate_overproduction(translator, pairs, rounds=2, beam_size=3)
    assert translator.meta["overproduction"] is table
    assert table["花"] == max(table.values()) > 1.0  # in nats
    after = share(translator.translate(sources, beam_size=3, rules=CoupletRules(cliche_penalty=1.0)))
    assert before > 0.9 and after < 0.5
    assert share(translator.translate(sources, beam_size=3, rules=CoupletRules(cliche_penalty=0.0))) == before


def test_a_mark_the_vocabulary_lacks_comes_back_as_the_visitor_typed_it():
    from attention_core.data.tasks import get_task
    from attention_core.decoding.translator import Translator

    vocab = Vocab(SOURCE_CHARS + LEVEL + OBLIQUE + ["，"])  # like the couplet corpora: no 。
    translator = Translator(_model(vocab), vocab, vocab, get_task("couplet"))
    for beam in (1, 3):
        out = translator.translate(["风声，雨声。"], beam_size=beam)[0]
        assert out.text[2] == "，" and out.text[5] == "。", out.text  # 。 not turned into ，
        assert out.tokens[5] == "。" and all(alt[5] == "。" for alt, _ in out.alternatives)
        assert not any(is_punctuation(ch) for ch in out.text[:2] + out.text[3:5])
