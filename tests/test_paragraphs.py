"""Paragraphs, per-row output limits, notes on hard inputs, the no-Chinese error."""

import pytest
import torch

from attention_core.analysis.notes import notes
from attention_core.data.tasks import get_task
from attention_core.data.text import split_sentences
from attention_core.data.vocab import Vocab
from attention_core.decoding.search import beam_search, default_max_len, greedy
from attention_core.decoding.translator import InputError, Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


@pytest.mark.parametrize("text,sentences", [
    ("我喜欢猫。你呢？", ["我喜欢猫。", "你呢？"]),
    ("他说：“走吧！”我们走了……然后呢?", ["他说：“走吧！”", "我们走了……", "然后呢?"]),
    ("第一行\n第二行", ["第一行", "第二行"]),
    ("价格是3.5元。好.", ["价格是3.5元。", "好."]),
    ("他用的是 U.S.A. 护照。等等...然后呢", ["他用的是 U.S.A. 护照。", "等等...", "然后呢"]),
    ("你好．再见｡", ["你好．", "再见｡"]),
    ("没有标点", ["没有标点"]),
    ("  \n ", []),
])
def test_split_sentences_at_sentence_final_punctuation(text, sentences):
    assert split_sentences(text) == sentences


def test_long_sentences_are_cut_at_clauses_but_never_inside_one():
    text = "一二三四五，六七八九十，甲乙丙丁戊。"
    assert split_sentences(text, max_chars=12) == ["一二三四五，六七八九十，", "甲乙丙丁戊。"]
    assert split_sentences("一二三四五六七八九十", max_chars=4) == ["一二三四五六七八九十"]
    assert "".join(split_sentences(text, max_chars=6)) == text


def _random_model(**kw):
    cfg = ModelConfig(src_vocab_size=30, tgt_vocab_size=30, hidden_size=16, emb_size=8, dropout=0.0, **kw)
    return build_model(cfg).eval()


@pytest.mark.parametrize("beam", [1, 3])
def test_a_sentence_decodes_the_same_alone_and_in_a_batch_of_long_ones(beam):
    # an untrained model rarely emits <eos>: its outputs run to the length limit, which must be the row's own
    model = _random_model(length_ratio=1.3)
    short = torch.randint(4, 30, (1, 3))
    long_ = torch.randint(4, 30, (2, 25))
    src = torch.zeros(3, 25, dtype=torch.long)
    src[0, :3], src[1:] = short[0], long_
    lengths = torch.tensor([3, 25, 25])
    search = greedy if beam == 1 else lambda *a: beam_search(*a, beam_size=beam)
    alone = search(model, short, torch.tensor([3]))[0]
    batched = search(model, src, lengths)[0]
    assert alone.tokens == batched.tokens and alone.finished == batched.finished
    torch.testing.assert_close(alone.weights, batched.weights)
    limits = default_max_len(model, lengths).tolist()
    assert limits[0] < limits[1] and len(batched.tokens) <= limits[0]


def _translator():
    src = Vocab(list(dict.fromkeys("我喜欢猫今天很好你呢")))
    tgt = Vocab("i like cats today is good you ?".split())
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8)
    meta = {"source_lengths": {"p50": 4, "p95": 6, "p99": 8, "max": 9}}
    return Translator(build_model(cfg).eval(), src, tgt, get_task("translation"), meta)


def test_a_paragraph_translates_sentence_by_sentence_in_order():
    translator = _translator()
    outs = translator.translate_paragraph("我喜欢猫。今天很好！你呢？", beam_size=2)
    assert [o.source_tokens[0] for o in outs] == ["我", "今", "你"]
    singles = [translator.translate([s], beam_size=2)[0].tokens for s in ["我喜欢猫。", "今天很好！", "你呢？"]]
    assert [o.tokens for o in outs] == singles


@pytest.mark.parametrize("text", ["hello", "123", "¿qué?", "。。。"])
def test_input_without_chinese_is_refused_clearly(text):
    translator = _translator()
    with pytest.raises(InputError, match="no Chinese"):
        translator.translate([text])
    with pytest.raises(InputError, match="no Chinese|empty"):
        translator.translate_paragraph(text)


def test_an_unsplittable_sentence_over_the_limit_is_refused():
    with pytest.raises(InputError, match="the limit per sentence is 10"):
        _translator().translate_paragraph("我喜欢猫" * 5, max_sentence_tokens=10)


def test_a_fragment_without_chinese_joins_its_neighbour():
    translator = _translator()
    outs = translator.translate_paragraph("OK! 我喜欢猫。2013！你呢？")
    raw = ["".join(u or t for u, t in zip(o.unknown, o.source_tokens)) for o in outs]
    assert raw == ["ok！我喜欢猫。2013！", "你呢？"]  # "!" before Chinese is normalised to full width


def test_a_bad_source_lengths_record_gives_no_note_and_no_crash():
    translator = _translator()
    out = translator.translate(["我喜欢猫今天很好你呢"])[0]
    for bad in (None, [], {"p99": True}, {"p99": "8"}):
        translator.meta["source_lengths"] = bad
        assert notes(translator, out) == []
