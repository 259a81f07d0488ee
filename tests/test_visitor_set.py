"""The visitor set of issue #29 (results/visitor/): well-formed, as its README counts it, and in no corpus."""

import re
from collections import Counter
from pathlib import Path

import pytest
from corpus import data_dir

from attention_core.data.text import has_chinese, split_sentences
from benchmarks.visitor import (
    KINDS,
    SET,
    corpus_hits,
    keeps,
    match_key,
    names_in,
    read_set,
    reading_sample,
)

README = SET.with_name("README.md")
FROM_THE_ISSUE = (
    "虽然外面下着大雨，但是他还是决定骑自行车去火车站接他的奶奶。",
    "这个周末我们打算去公园野餐，如果不下雨的话。",
    "我的朋友张伟是一名麻醉师。",
)


@pytest.fixture(scope="module")
def rows():
    return read_set()


def test_hundred_rows_with_unique_ids(rows):
    assert len(rows) == 100
    assert len({r.id for r in rows}) == 100


def test_kind_counts_match_the_readme(rows):
    table = dict(re.findall(r"^\| (\w+) \| (\d+) \|", README.read_text(encoding="utf-8"), re.MULTILINE))
    assert {k: int(table[k]) for k in KINDS} == Counter(r.kind for r in rows)


def test_chinese_on_the_left_english_on_the_right(rows):
    for r in rows:
        assert has_chinese(r.chinese), r.id
        assert not has_chinese(r.english) and not re.search(r"[，。？！；：、（）“”]", r.english), r.id
        assert r.english[0].isupper() and r.english[-1] in ".?!", r.id


def test_the_issues_sentences_are_in_it(rows):
    assert set(FROM_THE_ISSUE) <= {r.chinese for r in rows}


def test_each_row_is_its_kind(rows):
    for r in rows:
        length = len(match_key(r.chinese))
        if r.kind == "short":
            assert length <= 8, r.id
        elif r.kind == "long":
            assert length >= 25, r.id
        elif r.kind == "name":
            assert names_in(r.chinese), r.id
        elif r.kind == "question":
            assert r.chinese.endswith("？") and r.english.endswith("?"), r.id
        elif r.kind == "paragraph":
            assert 2 <= len(split_sentences(r.chinese)) <= 3, r.id


def test_names_are_written_in_the_reference(rows):
    named = [r for r in rows if names_in(r.chinese)]
    assert len(named) >= 20
    for r in named:
        assert all(keeps(r.english, name) for name in names_in(r.chinese)), r.id


def test_name_match_is_whole_words_any_case():
    assert keeps("My friend zhang wei's car.", "Zhang Wei")
    assert not keeps("Mike is here.", "Michael")
    assert not keeps("Tomorrow.", "Tom")


def test_reading_sample_is_seeded(rows):
    sample = reading_sample(rows)
    assert len(sample) == 30 and sample == reading_sample(rows)
    assert [r.id for r in sample] == sorted(r.id for r in sample)


def test_read_set_names_the_bad_line(tmp_path: Path):
    path = tmp_path / "set.tsv"
    path.write_text("id\tkind\tchinese\tenglish\nv1\tshort\t你好。\n", encoding="utf-8")
    with pytest.raises(ValueError, match=":2: expected 4"):
        read_set(path)
    path.write_text("id\tkind\tchinese\tenglish\nv1\tpoem\t你好。\tHello.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown kind 'poem'"):
        read_set(path)


def test_no_sentence_is_in_a_corpus(rows):
    assert corpus_hits(rows, data_dir("cmn-eng", "cmn-eng-extra", "tv4dialog")) == []


def test_the_scores_table_names_each_models_data_while_the_zoo_is_retrained():
    from benchmarks.visitor import markdown

    entry = {"bleu": 10.0, "chrf": 30.0, "name_sentences_kept": 1, "names_kept": 1, "numbers_kept": 1,
             "unk_outputs": 0, "bleu_by_kind": dict.fromkeys(KINDS, 1.0)}
    report = {"n": 100, "name_sentences": 25, "names": 27, "numbers": 32, "kinds": {},
              "variants": {"none": dict(entry), "luong-dot": dict(entry, bleu=12.0,
                                                                 vs_none={"delta": 2.0, "low": 0.5, "high": 3.5})}}
    head = markdown(report).splitlines()[2]
    assert head.startswith("| variant | BLEU |")  # no data recorded: no column
    report["trained_on"] = {"none": "cmn-eng ×3 + cmn-eng-extra + tv4dialog", "luong-dot": "cmn-eng + cmn-eng-extra"}
    lines = markdown(report).splitlines()
    assert lines[2].startswith("| variant | trained on | BLEU |")
    assert lines[3].count("|---") == lines[2].count(" | ") + 1
    assert any(line.startswith("| luong-dot | cmn-eng + cmn-eng-extra | 12.00 | — |") for line in lines)
    assert any("not the attention's alone" in line for line in lines)
    report["trained_on"]["luong-dot"] = report["trained_on"]["none"]
    assert "trained on" not in markdown(report) and "| luong-dot | 12.00 | +2.00 [+0.50, +3.50] |" in markdown(report)
