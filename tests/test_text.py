"""Text: what a reader pastes is read as the corpora wrote it, and what the model writes reads as English."""

import pytest

from attention_core.data.text import (
    detokenize_chinese,
    detokenize_english,
    has_chinese,
    normalize_chinese,
    split_sentences,
    strip_invisible,
    tokenize_chinese,
    tokenize_english,
)


def test_traditional_and_full_width_are_normalised() -> None:
    assert normalize_chinese(" 張偉說：ＡＢＣ１２３,好 ") == "张伟说：ABC123，好"


def test_chinese_tokens_are_characters_with_latin_and_digit_runs_whole() -> None:
    assert tokenize_chinese("我用iPhone15拍了3张照片") == ["我", "用", "iphone15", "拍", "了", "3", "张", "照", "片"]


def test_invisible_characters_do_not_reach_the_model() -> None:
    assert tokenize_chinese(strip_invisible("\ufeff我\u200b爱你\u200e")) == ["我", "爱", "你"]


@pytest.mark.parametrize("sentence", [
    "I'm Tom. It's late!",
    'He said, "Come here."',
    "I get up at 6:00 a.m. every day.",
    "Mr. Smith doesn't like it, does he?",
])
def test_english_round_trip(sentence: str) -> None:
    """Tokenised (lower case) and joined again: the sentence back, its first letters' case restored."""
    assert detokenize_english(tokenize_english(sentence)).lower() == sentence.lower()
    assert detokenize_english(tokenize_english(sentence))[0].isupper()


def test_chinese_output_is_joined_without_spaces() -> None:
    assert detokenize_chinese(["两", "个", "黄", "鹂"]) == "两个黄鹂"


def test_paragraphs_split_at_sentence_ends_only() -> None:
    assert split_sentences("我3.5岁。你呢？\n他…好") == ["我3.5岁。", "你呢？", "他…", "好"]
    assert split_sentences("   ") == []


def test_has_chinese() -> None:
    assert has_chinese("abc 中") and not has_chinese("abc 123 ！")
