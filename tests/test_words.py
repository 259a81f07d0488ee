"""Rare common words: found with the dictionary, checked against the output, carried like names (issue #29)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from app_fixtures import small_registry
from test_names import output, tiny

from attention_core.cli import main
from attention_core.decoding.folder import save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.editing import switch
from attention_core.editing.names import Carried, Prepared, prepare, restore
from attention_core.editing.rare import RareWord
from attention_core.editing.words import english, find_words, left_out, mentions, overstated
from demo.handlers import Settings, run


def found(text: str) -> list[tuple[str, int, str]]:
    return [(w.text, w.start, w.english) for w in find_words(text)]


@pytest.mark.parametrize("text, words", [
    ("我对花生过敏。", [("花生", 2, "peanut")]),
    ("晚上我们一起去吃火锅吧。", [("火锅", 8, "hotpot")]),  # jieba glues 吃火锅 (an idiom): its listed ending
    ("请出示您的登机牌和身份证。", [("登机牌", 5, "boarding pass"), ("身份证", 9, "identity card")]),
    ("過海關的時候。", [("海关", 1, "customs")]),  # traditional characters: offsets in the normalised text
])
def test_nouns_are_found_with_the_dictionarys_short_english(text, words):
    assert found(text) == words


@pytest.mark.parametrize("text", [
    "我的朋友张伟来了。",  # a name is the names switch's; 朋友 is a frequent word the model knows
    "我们什么时候走？",  # 时候 is among the most frequent words
    "他很聪明。",  # an adjective
    "我想去散步。",  # a verb
])
def test_names_frequent_words_and_other_parts_of_speech_are_not_found(text):
    assert found(text) == []


@pytest.mark.parametrize("definition, written", [
    ("customs (i.e. border crossing inspection)", "customs"),
    ("housing estate; community; neighborhood", "housing estate"),
    ("CL:個|个[ge4]", None),
    ("variant of 褲子|裤子, trousers", None),
    ("to take a walk", None),
    ("property management fee for the whole building", None),  # longer than three words
])
def test_the_english_of_a_definition(definition, written):
    assert english(definition) == written


def test_a_word_is_mentioned_by_any_sense_of_it_once_per_phrase():
    peanut = find_words("我对花生过敏。")[0]
    assert mentions(peanut, "I'm allergic to flowers.") == 0 and mentions(peanut, "I'm allergic to pean.") == 0
    assert mentions(peanut, "I'm allergic to peanuts.") == 1 and mentions(peanut, "Groundnut, please.") == 1
    assert mentions(peanut, "Peanuts? I love peanuts.") == 2
    suitcase = find_words("打开行李箱。")[0]
    assert mentions(suitcase, "Open the trunk.") == 1  # another sense of the same word counts
    customs = find_words("他在海关工作。")[0]
    assert mentions(customs, "He works at the customs inspection.") == 1  # neighbouring sense words: one mention
    assert mentions(customs, "Customs? He is in customs.") == 2
    assert mentions(customs, "He works in customs. Customs is busy.") == 2  # a full stop between: two mentions
    assert mentions(peanut, "Peanuts, peanuts!") == 2
    knife = find_words("把刀子递给我。")
    assert knife and mentions(knife[0], "Pass me the knives.") == 1  # an irregular plural


def test_a_carried_word_inside_another_carried_words_english_is_not_counted_twice():
    both = find_words("我对花生和花生酱过敏。")
    assert [w.english for w in both] == ["peanut", "peanut butter"]
    assert not overstated(both, "I'm allergic to peanuts and peanut butter.")
    assert overstated(both, "Peanuts, peanuts and peanut butter.")


def test_a_word_said_twice_and_written_once_is_left_out_with_both_occurrences():
    """v085 of the visitor set: the retrained model wrote the second 花生 as "flower"; both are carried, one carrier."""
    words = find_words("我对花生过敏，这道菜里有花生吗？")
    assert [w.start for w in left_out(words, "I'm allergic to peanuts. Is there a flower in this food?")] == [2, 12]
    assert left_out(words, "I'm allergic to peanuts. Are there peanuts in this dish?") == []
    assert [w.start for w in left_out(words, "I'm allergic to flowers.")] == [2, 12]
    one = find_words("我对花生过敏。")
    assert left_out(one, "I'm allergic to peanuts.") == [] and left_out(one, "I'm allergic.") == one


def test_prepare_carries_the_words_it_is_given_after_names_and_numbers():
    text = "张伟对花生过敏，这道菜里有三十二个花生。"
    p = prepare(text, words=find_words(text))
    assert p.text == "汤姆对苹果过敏，这道菜里有三个苹果。"
    assert [(c.name.text, c.carrier) for c in p.carried] == [("张伟", "汤姆"), ("花生", "苹果"), ("三十二", "三"),
                                                             ("花生", "苹果")]
    assert prepare(text).text == "汤姆对花生过敏，这道菜里有三个花生。"  # no words given: none carried


def _peanut(offset: int = 2) -> Carried:
    return Carried(RareWord("花生", offset, "peanut", "dictionary", kind="word"), "苹果", "apple|apples", offset)


def test_restore_writes_the_plural_and_makes_the_article_agree():
    p = Prepared("我对花生过敏", "我对苹果过敏", [_peanut()])
    out = output(["i", "'m", "allergic", "to", "apples", "."], [0, 0, 1, 1, 2, 5], 6)
    assert restore(out, p, list).text == "i 'm allergic to peanuts ."
    p = Prepared("有花生吗", "有苹果吗", [_peanut(1)])
    out = output(["is", "there", "an", "apple", "?"], [0, 0, 1, 1, 3], 4)
    assert restore(out, p, list).text == "is there a peanut ?"
    assert p.lines("word") == ["花生 → peanut (dictionary; the model read 苹果 and wrote apple)"]
    assert p.lines("name") == [] and p.lines("number") == []


def test_an_article_the_model_put_before_a_plural_goes():
    """The retrained model wrote "Is there a apples in this food?" for the carrier: not "a peanuts"."""
    p = Prepared("有花生吗", "有苹果吗", [_peanut(1)])
    out = output(["is", "there", "a", "apples", "in", "it", "?"], [0, 0, 1, 1, 3, 3, 4], 5)
    assert restore(out, p, list).text == "is there peanuts in it ?"
    p = Prepared("花生很好吃", "苹果很好吃", [_peanut(0)])
    out = output(["A", "apples", "are", "good", "."], [0, 0, 2, 3, 4], 5)
    assert restore(out, p, list).text == "Peanuts are good ."


def test_a_word_said_twice_with_one_carrier_is_written_where_the_carrier_is_and_nowhere_else():
    p = Prepared("花生和花生", "苹果和苹果", [_peanut(0), _peanut(3)])
    out = output(["apples", "and", "apples", "."], [0, 2, 3, 4], 5)
    assert restore(out, p, list).text == "peanuts and peanuts ."
    assert p.placed == ["carried", "carried"] and len(p.lines("word")) == 1  # one line for the word said twice


def _model_that_knows_apples(carrier: str = "written"):
    """A decoder stand-in: "flowers" for 花生 (it does not know the word), "apples" for its carrier 苹果 — or, with
    ``carrier="dropped"``, nothing for it; with ``"twice"``, "apples" for it and again for another word."""

    def decode(self, tokenised, *args, **options):
        outs = []
        for source in tokenised:
            read = "".join(source)
            said = {"written": ["apples"], "dropped": [], "twice": ["apples", "and", "apples"]}[carrier]
            words = ["i", "'m", "allergic", "to", *(["flowers"] if "花生" in read else said), "."]
            out = output(words, [min(k, len(source) - 1) for k in range(len(words))], len(source))
            outs.append(replace(out, text=" ".join(words)))
        return outs

    return decode


@pytest.mark.parametrize("carrier", ["written", "dropped", "twice"])
def test_the_translator_carries_a_word_the_model_left_out(monkeypatch, carrier):
    monkeypatch.setattr(Translator, "decode", _model_that_knows_apples(carrier))
    translator = tiny("translation")
    out, = switch.translate(translator, ["我对花生过敏。"])
    if carrier != "written":  # the carrier was dropped, or written for another word too: the first translation stays
        assert out.text == "i 'm allergic to flowers ." and out.names.lines("word") == []
    else:
        assert out.text == "I'm allergic to peanuts."  # the task's detokeniser writes the text again
        assert out.names.lines("word") == ["花生 → peanut (dictionary; the model read 苹果 and wrote apple)"]
    plain, = translator.translate(["我对花生过敏。"])
    assert plain.names is None and plain.text == "i 'm allergic to flowers ."


def test_cli_and_app_say_which_words_were_carried(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Translator, "decode", _model_that_knows_apples())
    save_pretrained(tiny("translation"), tmp_path / "m")
    assert main(["translate", "--model", str(tmp_path / "m"), "--names", "我对花生过敏。"]) == 0
    assert "word: 花生 → peanut (dictionary; the model read 苹果 and wrote apple)" in capsys.readouterr().err
    info = run(small_registry(), "translation", "我对花生过敏。", Settings("luong-dot")).state["info"]
    assert "words 词语: 花生 → peanut (dictionary; the model read 苹果 and wrote apple)" in info


def test_a_plural_carrier_gives_the_plural_of_a_phrase_ending_in_s():
    p = Prepared("登机牌", "苹果", [Carried(RareWord("登机牌", 0, "boarding pass", "dictionary", kind="word"), "苹果",
                                        "apple|apples", 0)])
    assert restore(output(["apples", "."], [0, 1], 2), p, list).text == "boarding passes ."


def test_a_carrier_in_any_case_is_replaced():
    p = Prepared("花生", "苹果", [_peanut(0)])
    out = output(["Apple", "."], [0, 1], 2)
    assert restore(out, p, list).text == "peanut ."


def _word(chinese: str, english: str) -> Prepared:
    return Prepared(chinese, "苹果", [Carried(RareWord(chinese, 0, english, "dictionary", kind="word"), "苹果",
                                             "apple|apples", 0)])


@pytest.mark.parametrize(("english", "words", "expected"), [
    ("hour", ["an", "apple", "."], "an hour ."),  # by sound, not spelling
    ("university", ["an", "apple", "."], "a university ."),
    ("knife", ["two", "apples", "."], "two knives ."),  # an irregular plural
    ("child", ["An", "apple", "."], "A child ."),  # the article keeps its capital
])
def test_the_article_goes_by_sound_and_irregular_plurals_are_written(english, words, expected):
    out = output(words, list(range(len(words))), len(words))
    assert restore(out, _word("词", english), list).text == expected


def test_the_beams_alternatives_get_the_plural_and_the_agreeing_article_too():
    out = replace(output(["an", "apple", "."], [0, 0, 1], 2),
                  alternatives=[("I want an apple.", -1.0), ("Two Apples.", -1.2), ("An apple a day.", -1.5)])
    restored = restore(out, _word("词", "umbrella stand"), list)
    assert restored.text == "an umbrella stand ."
    restored = restore(out, _word("词", "knife"), list)
    assert restored.text == "a knife ."
    assert restored.alternatives == [("I want a knife.", -1.0), ("Two knives.", -1.2), ("A knife a day.", -1.5)]
