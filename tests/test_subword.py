"""Subword targets: round trips, training and loading a subword model, no <unk> ever generated."""

import dataclasses
import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.data.subword import CONTINUE, Subwords, merge_pieces, word_spans
from attention_core.data.tasks import Splits, get_task
from attention_core.data.text import detokenize_english, tokenize_english
from attention_core.data.vocab import Vocab
from attention_core.decoding.folder import ModelLoadError, load_folder, save_pretrained
from attention_core.decoding.search import beam_search, greedy
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import TrainConfig, TrainError, fit

ENGLISH = [
    "I like natural language processing.",
    "The weather is nice today.",
    "Don't worry, Tom's here!",
    "She reads books every evening.",
    "We were walking along the river when it started raining.",
    "Unbelievable! The cats were sleeping on the keyboard.",
] * 3
LETTERS = "abcdefghijklmnopqrstuvwxyz'.,!?"


@pytest.fixture(scope="module")
def subwords():
    return Subwords.train([tokenize_english(s) for s in ENGLISH], vocab_size=60)


def test_sentences_round_trip_through_pieces(subwords):
    task = get_task("translation").with_subwords(subwords)
    for sentence in ENGLISH:
        pieces = task.tokenize_tgt(sentence)
        assert "<unk>" not in pieces
        assert any(p.startswith(CONTINUE) for p in pieces) or len(pieces) == len(tokenize_english(sentence))
        assert task.detokenize(pieces) == detokenize_english(tokenize_english(sentence))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=12), min_size=1, max_size=8))
def test_any_words_of_the_training_alphabet_round_trip(subwords, words):
    seen = set("".join(w for s in ENGLISH for w in tokenize_english(s)))
    words = [w for w in ("".join(c for c in word if c in seen) for word in words) if w]
    if not words:
        return
    pieces = subwords.encode(words)
    assert "<unk>" not in pieces
    assert merge_pieces(pieces) == words


def test_word_spans_group_pieces_and_keep_specials_apart():
    assert word_spans(["un", "##believ", "##able", "!", "<eos>"]) == [
        ("unbelievable", [0, 1, 2]), ("!", [3]), ("<eos>", [4])]
    assert word_spans(["##x", "y"]) == [("x", [0]), ("y", [1])]  # a stray continuation starts a word
    assert word_spans(["<eos>", "##a"]) == [("<eos>", [0]), ("a", [1])]


def test_couplets_refuse_subword_targets(subwords):
    with pytest.raises(ValueError, match="translation"):
        get_task("couplet").with_subwords(subwords)


def _pairs():
    zh = ["我喜欢自然语言处理。", "今天天气很好。", "别担心，汤姆在这里！",
          "她每天晚上看书。", "我们沿着河散步。", "猫在键盘上睡觉。"]
    return list(zip(zh, ENGLISH[:6])) * 4


def test_a_subword_model_trains_saves_and_loads_with_its_pieces(tmp_path):
    pairs = _pairs()
    splits = Splits(pairs, pairs[:6], pairs[:6], {"task": "translation"})
    cfg = TrainConfig(epochs=1, batch_size=8, subword_vocab=50, min_freq=1, max_len=30)
    fit(get_task("translation"), splits, tmp_path / "run", dict(hidden_size=16, emb_size=8, tie_embeddings=True),
        cfg, progress=False)
    translator = load_folder(tmp_path / "run")
    assert translator.task.subwords is not None and (tmp_path / "run" / "subwords.json").is_file()
    assert all(tok in translator.task.subwords.tokenizer.get_vocab() for tok in translator.tgt_vocab.itos)
    assert translator.meta["source_lengths"]["max"] == max(len(zh) for zh, _ in pairs)
    before = [o.text for o in translator.translate([zh for zh, _ in pairs[:6]], beam_size=3)]
    save_pretrained(translator, tmp_path / "copy")
    again = load_folder(tmp_path / "copy")
    assert [o.text for o in again.translate([zh for zh, _ in pairs[:6]], beam_size=3)] == before
    # resumed on other data, a run rereads its subword model instead of learning a new one, and is refused
    saved = (tmp_path / "run" / "subwords.json").read_bytes()
    fewer = Splits(pairs[:6], pairs[:6], pairs[:6], {"task": "translation"})
    with pytest.raises(TrainError, match="other data"):
        fit(get_task("translation"), fewer, tmp_path / "run", dict(hidden_size=16, emb_size=8, tie_embeddings=True),
            cfg, resume=True, progress=False)
    assert (tmp_path / "run" / "subwords.json").read_bytes() == saved
    # on its own data it goes on, with the same pieces
    result = fit(get_task("translation"), splits, tmp_path / "run",
                 dict(hidden_size=16, emb_size=8, tie_embeddings=True), dataclasses.replace(cfg, epochs=2),
                 resume=True, progress=False)
    assert result["epochs"] == 2 and (tmp_path / "run" / "subwords.json").read_bytes() == saved


def test_a_damaged_or_mismatched_subword_file_is_a_model_load_error(tmp_path, subwords):
    src = Vocab(list("我喜欢"))
    tgt = Vocab([p for p in subwords.tokenizer.get_vocab() if not p.startswith("<")])
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=8, emb_size=4)
    task = get_task("translation").with_subwords(subwords)
    folder = save_pretrained(Translator(build_model(cfg), src, tgt, task), tmp_path / "m")
    assert load_folder(folder).task.subwords is not None
    (folder / "subwords.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="subwords.json"):
        load_folder(folder)
    other = Subwords.train([["zzz", "qqq"]] * 3, vocab_size=12)
    other.save(folder / "subwords.json")
    with pytest.raises(ModelLoadError, match="not pieces"):
        load_folder(folder)
    data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    data["task"] = "couplet"
    (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    subwords.save(folder / "subwords.json")
    with pytest.raises(ModelLoadError):
        load_folder(folder)


def test_unk_is_never_generated_even_when_the_model_prefers_it():
    cfg = ModelConfig(src_vocab_size=12, tgt_vocab_size=12, hidden_size=16, emb_size=8, dropout=0.0)
    model = build_model(cfg).eval()
    with torch.no_grad():
        model.generator.bias[cfg.unk_id] = 50.0  # <unk> would win every step
    src = torch.randint(4, 12, (3, 6))
    lengths = torch.tensor([6, 4, 2])
    for hyp in greedy(model, src, lengths) + beam_search(model, src, lengths, beam_size=3):
        assert cfg.unk_id not in hyp.tokens
