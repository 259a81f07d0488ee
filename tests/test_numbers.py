"""Numbers in the names switch: found, written in English, carried through a model and written back (issue #29)."""

from __future__ import annotations

from dataclasses import replace

import cn2an
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_core.decoding.translator import Output
from attention_core.editing.names import Carried, Prepared, prepare, restore
from attention_core.editing.numbers import find_numbers, ordinal, value
from attention_core.editing.rare import RareWord


def found(text: str) -> list[tuple[str, str, str]]:
    return [(n.text, n.english, n.kind) for n in find_numbers(text)]


@pytest.mark.parametrize("text, numbers", [
    ("这件衬衫打完折才九十九块钱。", [("九十九块", "99 yuan", "money")]),
    ("我每个月的房租是两千五百块。", [("两千五百块", "2,500 yuan", "money")]),
    ("一块钱也不给。", [("一块", "1 yuan", "money")]),
    ("这瓶水三块五，那瓶五块。", [("三块五", "3.5 yuan", "money"), ("五块", "5 yuan", "money")]),
    ("我的生日是十月二十三号。", [("十月二十三号", "October 23rd", "date")]),
    ("请在5月1日之前交。", [("5月1日", "May 1st", "date")]),
    ("会议改到下午两点半了。", [("下午两点半", "2:30 p.m.", "time")]),  # with its part of the day
    ("火车早上八点一刻出发。", [("早上八点一刻", "8:15 a.m.", "time")]),
    ("航班晚上九点四十五分到。", [("晚上九点四十五分", "9:45 p.m.", "time")]),
    ("航班九点四十五分到。", [("九点四十五分", "9:45", "time")]),
    ("他加班到十二点。", [("十二点", "12 o'clock", "time")]),
    ("他晚上十二点才睡。", [("十二点", "12 o'clock", "time")]),  # 晚上 is left to the model after 11
    ("他晚上十一点才睡。", [("晚上十一点", "11 p.m.", "time")]),
    ("他1998年出生在广州。", [("1998年", "in 1998", "year")]),
    ("二〇二四年很热。", [("二〇二四年", "in 2024", "year")]),
    ("百分之五十的人同意。", [("百分之五十", "50%", "percent")]),
    ("我们班有三十二个学生，十五个是女生。", [("三十二", "32", "number"), ("十五", "15", "number")]),
    ("这座城市有十二万人。", [("十二万", "120,000", "number")]),
    ("还有三点五公里。", [("三点五", "3.5", "number")]),
    ("我的电话是13812345678。", [("13812345678", "13812345678", "number")]),  # digits as typed
    # a small number or hour in Arabic digits is carried: the model knows 五 and 三点, not 5 or 3点 (it dropped them)
    ("我有5本书，会议在下午3点开始。", [("5", "5", "number"), ("下午3点", "3 p.m.", "time")]),
    ("我3点到。", [("3点", "3 o'clock", "time")]),
])
def test_numbers_are_found_with_the_english_a_reader_expects(text, numbers):
    assert found(text) == numbers


@pytest.mark.parametrize("text", [
    "能便宜一点吗？",  # 一点 "a little"
    "我们一起去吧。",
    "十分感谢。",  # 十分 "very"
    "千万不要忘了。",  # "by all means"
    "万一下雨怎么办？",  # "in case"
    "我们一块去吧。",  # 一块 "together"
    "今天学第十一课。",  # an ordinal: left to the model
    "我三点到。",  # a small hour: the model knows 三点
    "药一天吃三次，每次两片。",  # small numbers: the model knows them
    "大概要四个半小时。",
    "我等了三四个小时。",  # "three or four"
    "过一两天再说。",  # "a day or two"
    "十二月有三十一天。",  # 十二月 is December (三十一 is found)
    "我们0点见。",  # no "0 o'clock"
    "这是A4纸。", "MP3坏了。", "5G很快。",  # digits that are part of a name
])
def test_words_that_only_look_like_numbers_and_small_numbers_are_left_to_the_model(text):
    assert [n for n in found(text) if n[0] != "三十一"] == []


@given(st.integers(min_value=11, max_value=99_999_999))
def test_any_number_written_in_chinese_numerals_is_found_with_its_value(n):
    numeral = cn2an.an2cn(n)
    assert value(numeral) == n
    (number,) = find_numbers(f"他买了{numeral}本书。")
    assert number.text == numeral and number.english == f"{n:,}"


def test_ordinals():
    assert [ordinal(d) for d in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]


def test_prepare_carries_numbers_by_ones_the_model_knows_and_never_by_one_in_the_sentence():
    p = prepare("我们班有三十二个学生，三个老师，十五个是女生。")
    # 三 is in the sentence (三个老师): the numbers ride on 五 and 七 (五 of 十五 is replaced, so it is free)
    assert p.text == "我们班有五个学生，三个老师，七个是女生。"
    assert [(c.name.text, c.carrier) for c in p.carried] == [("三十二", "五"), ("十五", "七")]
    money = prepare("这件衬衫才九十九块钱，我叫张伟。")
    assert money.text == "这件衬衫才三块钱，我叫汤姆。"  # 钱 stays: the carrier is a price as the model knows one
    assert [c.name.how for c in money.carried] == ["number", "pinyin"]


def test_no_two_carriers_of_one_sentence_write_the_same_word():
    """5 and 3点 leave neither 三/五 nor 三点/五点 free; the number took 七, so the time may not take 七点: the output's
    "seven" would be either of them (it was: "the meeting will start at 5 o'clock")."""
    p = prepare("我有5本书，会议在下午3点开始。")
    assert [(c.name.text, c.carrier) for c in p.carried] == [("5", "七"), ("下午3点", "九点")]
    words = [set(c.carrier_english.lower().split("|")) for c in p.carried]
    assert not words[0] & words[1]
    # nor the sentence's own small numeral: 三点 carrying 4点 beside 三本书 made "I have 4 p.m. books"
    assert prepare("我有三本书，下午4点见。").text == "我有三本书，五点见。"


def output(tokens: list[str], peaks: list[int], columns: int) -> Output:
    weights = torch.zeros(len(tokens), columns)
    weights[range(len(tokens)), peaks] = 1.0
    return Output(source_tokens=list("x" * columns), unknown=[None] * columns, tokens=tokens,
                  text=" ".join(tokens), weights=weights, centres=None, score=-1.0, finished=True)


def carried(text: str, english: str, kind: str, carrier: str, written: str, offset: int, **extra) -> Carried:
    return Carried(RareWord(text, offset, english, "number", kind, **extra), carrier, written, offset)


def test_the_carriers_words_and_what_follows_them_are_replaced_by_the_numbers_english():
    price = carried("九十九块", "99 yuan", "money", "三块", "three|3", 5,
                    drop_next=(("dollars",), ("dollar",)))
    p = Prepared("这件衬衫才九十九块钱", "这件衬衫才三块钱", [price])
    out = output(["this", "shirt", "is", "only", "three", "dollars", "."], [0, 1, 4, 4, 5, 6, 7], 9)
    assert restore(out, p, list).text == "this shirt is only 99 yuan ."
    clock = carried("九点四十五分", "9:45", "time", "三点", "three|3", 2, drop_next=(("o", "'clock"),))
    p = Prepared("航班九点四十五分到", "航班三点到", [clock])
    out = output(["the", "flight", "arrives", "at", "3", "o", "'clock", "."], [0, 1, 4, 2, 2, 3, 3, 4], 5)
    assert restore(out, p, list).text == "the flight arrives at 9:45 ."  # the form "3" is a carrier's too
    p = Prepared("学校八点三十分开始", "学校三点开始", [carried("八点三十分", "8:30", "time", "三点", "three|3", 2,
                                                      drop_next=find_numbers("八点三十分")[0].drop_next)])
    out = output(["school", "begins", "at", "three", ":", "30", "."], [0, 4, 2, 2, 2, 3, 4], 6)
    assert restore(out, p, list).text == "school begins at 8:30 ."  # not "8:30 : 30": the carrier's minutes go too
    big = carried("1000", "1000", "number", "三", "three|3", 0, drop_next=(("thousand",),))
    p = Prepared("1000日元够吗", "三日元够吗", [big])
    out = output(["is", "three", "thousand", "yen", "enough", "?"], [5, 0, 0, 1, 3, 4], 6)
    assert restore(out, p, list).text == "is 1000 yen enough ?"  # the carrier's "thousand" is not the number's


def test_a_year_is_written_bare_after_a_preposition_and_with_in_otherwise():
    def year(tokens):
        p = Prepared("他1998年出生", "他去年出生", [carried("1998年", "in 1998", "year", "去年", "last year", 1,
                                                        bare="1998")])
        return restore(output(tokens, [0] * len(tokens), 5), p, list).text

    assert year(["he", "was", "born", "last", "year", "."]) == "he was born in 1998 ."
    assert year(["he", "was", "born", "in", "last", "year", "."]) == "he was born in 1998 ."
    assert year(["since", "last", "year"]) == "since 1998"


def test_a_dropped_number_is_placed_by_attention_and_the_beams_other_outputs_are_rewritten():
    p = Prepared("房租两千五百块", "房租三块", [carried("两千五百块", "2,500 yuan", "money", "三块", "three|3", 2,
                                                  drop_next=(("dollars",),))])
    out = output(["the", "rent", "is", "expensive", "."], [0, 1, 2, 3, 3], 4)
    out = Output(**{**out.__dict__, "alternatives": [("The rent is three dollars.", -3.0), ("Rent: 3.", -4.0)]})
    restored = restore(out, p, list)
    assert restored.text == "the rent 2,500 yuan is expensive ." and p.placed == ["attention"]
    assert restored.alternatives == [("The rent is 2,500 yuan.", -3.0), ("Rent: 2,500 yuan.", -4.0)]


def test_cli_and_app_say_what_happened_to_each_number(tmp_path, capsys):
    from app_fixtures import small_registry
    from test_names import tiny

    from attention_core.cli import main
    from attention_core.decoding.folder import save_pretrained
    from demo.handlers import Settings, run

    save_pretrained(tiny("translation"), tmp_path / "m")
    assert main(["translate", "--model", str(tmp_path / "m"), "--names", "张伟有三十二本书。"]) == 0
    err = capsys.readouterr().err
    assert "name: 张伟 → Zhang Wei (pinyin;" in err and "number: 三十二 → 32 (number; the model read 三" in err
    on = run(small_registry(), "translation", "我有三十二本书。", Settings("luong-dot"))
    assert "numbers 数字: 三十二 → 32 (number;" in on.state["info"] and "names 人名" not in on.state["info"]


def test_beam_outputs_that_differ_only_in_the_carriers_form_are_one_and_the_picker_shows_the_typed_sentence():
    from app_fixtures import small_registry

    from demo.handlers import Settings, run, sentence_labels

    clock = carried("九点四十五分", "9:45", "time", "三点", "three|3", 0, drop_next=(("o", "'clock"),))
    p = Prepared("九点四十五分到", "三点到", [clock])
    out = output(["arrives", "at", "three", "."], [3, 0, 0, 3], 4)
    alternatives = [("Arrives at 3.", -2.0), ("arrives at three .", -2.5), ("At three o 'clock.", -3.0),
                    ("At 3 o 'clock.", -3.5)]
    out = Output(**{**out.__dict__, "alternatives": alternatives})
    restored = restore(out, p, list)
    assert restored.text == "arrives at 9:45 ."
    assert restored.alternatives == [("Arrives at 9:45.", -2.0), ("At 9:45.", -3.0)]  # the text itself is not one
    state = run(small_registry(), "translation", "张伟来了。我有三十二本书。", Settings("luong-dot")).state
    assert [label for label, _ in sentence_labels(state)] == ["1. 张伟来了。", "2. 我有三十二本书。"]


def test_a_whole_hour_with_its_part_of_the_day_is_left_to_the_model():
    assert find_numbers("晚上八点见。") == []


def test_a_time_with_its_part_of_the_day_replaces_the_models_and_ends_the_sentence_once():
    """The model read 三点 for 晚上九点四十五分 and wrote "3 p.m.": one time, one full stop."""
    name = find_numbers("航班晚上九点四十五分到。")[0]
    p = Prepared("航班晚上九点四十五分到。", "航班三点到。", [Carried(name, "三点", "three|3", 2)])
    out = output(["the", "flight", "is", "3", "p", ".", "m", ".", "."], [0, 1, 2, 2, 2, 2, 2, 2, 3], 6)
    assert restore(out, p, list).text == "the flight is 9:45 p.m."


def test_the_beams_other_outputs_get_the_time_with_its_part_of_the_day_once():
    name = find_numbers("航班晚上九点四十五分到。")[0]
    p = Prepared("航班晚上九点四十五分到。", "航班三点到。", [Carried(name, "三点", "three|3", 2)])
    out = output(["the", "flight", "is", "3", "."], [0, 1, 2, 2, 3], 6)
    others = [("The flight is 3 p.m.", -2.0), ("The flight is three o'clock in the evening.", -3.0)]
    restored = restore(replace(out, alternatives=others), p, list)
    assert restored.text == "the flight is 9:45 p.m."
    assert restored.alternatives == [("The flight is 9:45 p.m.", -2.0)]  # both say the same now: one


def test_the_sentence_after_a_time_that_took_its_full_stop_starts_with_a_capital():
    name = find_numbers("航班晚上九点四十五分到。它很快就走。")[0]
    text = "航班晚上九点四十五分到。它很快就走。"
    p = Prepared(text, "航班三点到。它很快就走。", [Carried(name, "三点", "three|3", 2)])
    out = output(["the", "flight", "is", "3", "p", ".", "m", ".", ".", "it", "leaves", "soon", "."],
                 [0, 1, 2, 2, 2, 2, 2, 2, 3, 7, 8, 9, 10], 12)
    assert restore(out, p, list).text == "the flight is 9:45 p.m. It leaves soon ."
