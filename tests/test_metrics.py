import math

import pytest
import torch

from attention_core.analysis.metrics import (
    attention_entropy,
    bleu,
    bleu_by_length,
    chrf,
    couplet_metrics,
    diagonality,
    uniform_entropy,
)
from attention_core.data.text import repetition_pattern, tone_class


def test_bleu_identical_is_100_and_disjoint_is_0():
    assert bleu(["the cat sat on the mat ."], ["the cat sat on the mat ."]) == pytest.approx(100.0)
    assert bleu(["a b c d"], ["w x y z"]) == pytest.approx(0.0)


def test_bleu_by_hand():
    # hypothesis "the cat sat on mat" vs reference "the cat sat on the mat":
    # p1 = 5/5, p2 = 3/4, p3 = 2/3, p4 = 1/2; brevity penalty exp(1 - 6/5)
    expected = (
        math.exp(1 - 6 / 5)
        * math.exp((math.log(1) + math.log(3 / 4) + math.log(2 / 3) + math.log(1 / 2)) / 4)
        * 100
    )
    assert bleu(["the cat sat on mat"], ["the cat sat on the mat"]) == pytest.approx(expected, abs=1e-6)


def test_bleu_lowercase_and_char_tokenisation():
    assert bleu(["The Cat sat on The mat"], ["the cat sat on the mat"], lowercase=True) == pytest.approx(
        100.0
    )
    assert bleu(["春风得意马蹄疾"], ["春风得意马蹄疾"], tokenize="char") == pytest.approx(100.0)
    assert chrf(["hello world"], ["hello world"]) == pytest.approx(100.0)


def test_bleu_by_length_buckets():
    out = bleu_by_length(
        [3, 12, 13], ["a b c d", "x", "e f g h"], ["a b c d", "y", "e f g h"], buckets=(0, 10, 20), min_count=1
    )
    assert [(b["min"], b["max"], b["n"]) for b in out] == [(1, 10, 1), (11, 20, 2)]
    assert out[0]["bleu"] == pytest.approx(100.0)


@pytest.mark.parametrize(
    "counts,expected",
    [
        ((40, 40, 40), [(1, 5, 40), (6, 10, 40), (11, 15, 40)]),
        ((40, 10, 40), [(1, 5, 40), (6, 15, 50)]),  # a small bucket joins the next longer one
        ((40, 40, 5), [(1, 5, 40), (6, 15, 45)]),  # the last joins the one before it
        ((10, 10, 5), [(1, 15, 25)]),  # never below one bucket
        ((5, 0, 40), [(1, 15, 45)]),  # an empty bucket is skipped, not counted
    ],
)
def test_small_buckets_are_merged_and_rescored(counts, expected):
    lengths = [length for length, n in zip((3, 8, 13), counts) for _ in range(n)]
    hyps = ["a b c d"] * len(lengths)
    out = bleu_by_length(lengths, hyps, hyps, buckets=(0, 5, 10, 15), min_count=30)
    assert [(b["min"], b["max"], b["n"]) for b in out] == expected
    assert sum(b["n"] for b in out) == len(lengths)
    assert all(b["bleu"] == pytest.approx(100.0) for b in out)


def test_tones():
    assert tone_class("天") == "平" and tone_class("地") == "仄" and tone_class("，") is None


def test_couplet_metrics_by_hand():
    sources = [list("声声慢，寻寻觅"), list("春眠不觉晓"), list("天")]
    outputs = [list("事事忙，去去来"), list("处处闻啼鸟"), list("地高")]
    m = couplet_metrics(sources, outputs)
    assert m["length_match"] == pytest.approx(2 / 3)
    assert m["punctuation_aligned"] == pytest.approx(2 / 3)
    # last characters: 觅(mi4)/来(lai2) opposite; 晓(xiao3)/鸟(niao3) same; 天(tian1)/高(gao1) same
    assert m["tone_opposition"] == pytest.approx(1 / 3)
    assert m["repetition_cases"] == 1 and m["repetition_mirrored"] == 1.0
    assert repetition_pattern("声声慢") == (0, 0, 2)


def test_alignment_statistics():
    uniform = torch.full((3, 4), 0.25)
    assert attention_entropy(uniform) == pytest.approx(math.log(4))
    assert attention_entropy(torch.eye(4)) == pytest.approx(0.0, abs=1e-6)
    assert diagonality(torch.eye(5)) == pytest.approx(1.0)
    assert diagonality(torch.eye(5).flip(1), width=0.5) == pytest.approx(1 / 5)


def test_uniform_entropy_is_the_ceiling_of_attention_entropy():
    weights = torch.softmax(torch.randn(5, 7, generator=torch.Generator().manual_seed(0)) * 3, dim=-1)
    assert uniform_entropy(weights) == pytest.approx(math.log(7))
    assert attention_entropy(weights) < uniform_entropy(weights)
    assert uniform_entropy(torch.zeros(0, 7)) == 0.0


def test_an_evaluation_report_sets_attention_entropy_beside_its_uniform_ceiling(model_dir):
    from attention_core.analysis.evaluation import evaluate
    from attention_core.decoding.folder import load_folder

    translator = load_folder(model_dir)
    pairs = [("我喜欢自然语言处理", "i like natural language processing"),
             ("今天天气很好", "the weather is nice today")]
    alignment = evaluate(translator, pairs)["alignment"]
    # the mean over outputs of log S, S each source's characters
    assert alignment["uniform_entropy"] == pytest.approx((math.log(9) + math.log(6)) / 2, abs=1e-6)
    assert 0.0 <= alignment["entropy"] <= alignment["uniform_entropy"] + 1e-6
