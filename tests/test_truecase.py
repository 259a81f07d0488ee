"""Capital letters back in a lower-cased model's English (attention_core.data.truecase)."""

from __future__ import annotations

import torch

from attention_core.data.tasks import get_task
from attention_core.data.truecase import apply, learn
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def test_a_word_keeps_the_case_it_has_where_its_case_is_its_own():
    texts = ["We speak English.", "I like English.", "Say it in English!", "Is it English?", "Learn English now.",
             "He may come.", "It may rain.", "You may go.", "We meet in May.", "See you in May."]
    assert learn(texts) == {"english": "English"}  # "may": 3 lower, 2 capital
    assert learn(texts, min_count=6) == {}


def test_first_words_quoted_sentences_and_phrases_do_not_teach_a_capital():
    quoted = ['He asked "Yes?" and she said "Yes."'] * 6  # a quote opens a sentence
    phrase = ["We flew to the United States today."] * 6  # "States" after a capital is the phrase's case
    first = ["Yes, I do."] * 6
    assert learn(quoted + phrase + first) == {"united": "United"}  # not "yes", not "states"


def test_a_corpus_that_writes_a_word_in_lower_case_keeps_it_lower_case():
    tatoeba = ["I saw a castle.", "The castle is old.", "We visited the castle."]
    subtitles = ["Where is Castle?", "Talk to Castle now.", "I trust Castle."] * 3
    assert learn(subtitles) == {"castle": "Castle"}
    assert learn(tatoeba, subtitles) == {}


def test_apply_changes_whole_lower_case_words_only():
    table = {"english": "English", "tom": "Tom", "t": "T"}
    text = "tom's english isn't bad; TOM and English stay."
    assert apply(text, table) == "Tom's English isn't bad; TOM and English stay."
    assert apply("englishman", table) == "englishman" and apply("x", None) == "x"


def test_the_translator_writes_the_case_its_meta_gives():
    src, tgt = Vocab(list("我说英语")), Vocab("i speak english .".split())
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=8, emb_size=8)
    torch.manual_seed(0)
    translator = Translator(build_model(cfg).eval(), src, tgt, get_task("translation"))
    assert translator.detokenize(["i", "speak", "english", "."]) == "I speak english."
    translator.meta["truecase"] = {"english": "English"}
    assert translator.detokenize(["i", "speak", "english", "."]) == "I speak English."
    out, = translator.translate(["我说英语"])
    assert "english" not in out.text.split()
