"""Flags for possibly untranslated source words (``attention_core.decoding.coverage``): content words only, coverage
summed
over each word's tokens, tokens mapped back to words exactly."""

import pytest

from attention_core.analysis.notes import notes
from attention_core.decoding.coverage import THRESHOLD, Word, low_coverage, source_words

TOKENS = ["我", "的", "朋", "友", "张", "伟", "是", "一", "名", "麻", "醉", "师", "。"]


def test_words_cover_every_token_once_in_order():
    words = source_words(TOKENS)
    assert [w.text for w in words] == ["我", "的", "朋友", "张伟", "是", "一名", "麻醉师", "。"]
    assert [i for w in words for i in w.tokens] == list(range(len(TOKENS)))
    latin = source_words(["tom", "没", "有", "花", "费", "3", "0", "0", "元"])
    assert [i for w in latin for i in w.tokens] == list(range(9))
    assert latin[0].text == "tom" and latin[0].tokens == [0]


def test_only_content_words_below_the_threshold_are_flagged_and_coverage_is_summed_per_word():
    coverage = [0.9, 0.01, 0.6, 0.5, 0.1, 0.1, 0.05, 0.2, 0.0, 1.7, 0.02, 0.02, 0.0]
    flagged = low_coverage(TOKENS, coverage, threshold=0.25)
    # 的 (particle), 一名 (numeral) and 。 get little attention but are never flagged, nor 是 (one character, 0.05);
    # 张伟 sums to 0.2 < 0.25; 麻醉师 sums to 1.74 (麻 took it all): not flagged though 醉 and 师 are near 0
    assert [w.text for w in flagged] == ["张伟"]
    assert low_coverage(TOKENS, coverage, threshold=0.15) == []
    with pytest.raises(ValueError, match="13 tokens but 2 coverage values"):
        low_coverage(TOKENS, [0.1, 0.2])


def test_the_content_tags():
    assert Word("张伟", "nr", [0]).content and Word("分发", "v", [0]).content and Word("有趣", "a", [0]).content
    assert not any(Word(t, tag, [0]).content for t, tag in (("的", "uj"), ("我", "r"), ("给", "p"), ("一名", "m"),
                                                            ("是", "v"), ("事", "n"), ("很", "zg")))
    assert 0 < THRESHOLD < 1


def test_the_translator_names_flagged_words_in_a_note_and_never_for_the_baseline_or_couplets():
    import torch
    from app_fixtures import small_registry

    registry = small_registry()
    translator = registry.get("translation", "luong-dot")
    out = translator.translate(["我喜欢自然语言处理。"])[0]
    out.tokens = ["i", "like", "it"]  # a fixed output of 3 tokens and <eos>, whatever the untrained model wrote
    out.weights = torch.zeros(4, len(out.source_tokens))
    out.weights[:, 0] = 1.0  # all attention on 我: 喜欢, 自然, 语言, 处理 received none
    words = [w.text for w in translator.untranslated(out)]
    assert words and set(words) <= {"喜欢", "自然语言", "自然", "语言", "处理"}
    note = next(n for n in notes(translator, out) if n.kind == "untranslated")
    assert all(w in note.en and w in note.zh for w in words) and "0.4" in note.en
    out.weights[:] = 1 / 3  # every character 1.0 in total: every word well above the threshold
    assert translator.untranslated(out) == []
    for task, variant in (("translation", "none"), ("couplet", "luong-dot")):
        other = registry.get(task, variant)
        assert other.untranslated(other.translate(["我喜欢自然语言处理。"])[0]) == []
