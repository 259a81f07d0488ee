"""Source words an output may have left untranslated, judged by the attention they received (coverage).

An output of ``T`` tokens hands out ``T`` units of attention; a source token's *coverage* is the share it received
([`Output.coverage`][attention_core.decoding.translator.Output.coverage]; Tu et al. 2016). Read per character, low
coverage mostly marks particles (的, 了) and the second character of a word (错误's 误): the first measurement flagged
such characters, and a reader found only 8 of 50 flagged characters really missing from the output; flagging every
content word still found only 14 of 50, most of the rest light single-character words (是, 事, 请, 让) rendered by
the grammar (``results/coverage_reading.md``). So the flag works on **content words of two or more characters**:
the Chinese source is cut into words with their part of speech by jieba (``jieba.posseg``), a word's coverage is the
sum over its characters, and only nouns, verbs, adjectives, names, idioms, place and time words (the tags in
[`CONTENT_TAGS`][attention_core.decoding.coverage.CONTENT_TAGS]) below
[`THRESHOLD`][attention_core.decoding.coverage.THRESHOLD] are flagged. How often a flag is right is measured by
``python benchmarks/coverage.py`` and by reading: on the bundled default a reader found 40 of its 74 dev and test
flags really missing, most wrong flags a word English says with its neighbour (什么【时候】 → *when*). The app's info
line and the CLI's ``note:`` name the flagged words.

Examples:
    >>> [(w.text, w.tag, w.tokens) for w in source_words(list("我的朋友张伟"))]
    [('我', 'r', [0]), ('的', 'uj', [1]), ('朋友', 'n', [2, 3]), ('张伟', 'nr', [4, 5])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attention_core.data.text import posseg

CONTENT_TAGS = ("n", "v", "a", "i", "l", "j", "s", "t", "eng")
"""jieba part-of-speech tags (prefixes) of the words a flag may name: nouns (``nr`` person and ``ns`` place names
included), verbs, adjectives, idioms, fixed expressions, abbreviations, places, times, and Latin words. Pronouns,
particles, prepositions, conjunctions, adverbs, numerals, classifiers and descriptive morphemes (``zg``: 很, 啊) are
never flagged, nor is a content word of one character (see
[`Word.content`][attention_core.decoding.coverage.Word.content])."""

THRESHOLD = 0.4
"""A content word whose characters received less attention than this in total is flagged (chosen on dev by
``benchmarks/coverage.py``: the highest precision among thresholds that catch at least 10 % of the words an
aligner finds unrendered; on the retrained default the aligner's choice moves between 0.3 and 0.4 from run to run,
and by reading every flag 0.3 was better on test and worse on dev, speaking half as often, so it stays 0.4)."""


@dataclass
class Word:
    """One source word.

    Attributes:
        text: The word.
        tag: jieba's part-of-speech tag.
        tokens: The positions of the model's source tokens that make it up.
    """

    text: str
    tag: str
    tokens: list[int]

    @property
    def content(self) -> bool:
        """Whether a flag may name the word: a content tag and at least two characters.

        Single characters with a content tag ([`CONTENT_TAGS`][attention_core.decoding.coverage.CONTENT_TAGS]) were
        mostly light words in the reading (是, 事, 请, 让, 到, 来), rendered through the sentence's grammar without
        attention of their own.
        """
        return self.tag.startswith(CONTENT_TAGS) and len(self.text) > 1


def source_words(tokens: Sequence[str]) -> list[Word]:
    """Cut the source (the model's tokens, joined) into tagged words, each with the tokens it covers.

    A token belongs to the word in which its first character stands, so a Latin run read as one token stays in one
    word.

    Args:
        tokens: The source tokens, as the model read them (unknown ones in their original text).
    """
    owner: list[int] = []  # token index of each character
    for i, token in enumerate(tokens):
        owner += [i] * len(token)
    words, start = [], 0
    for piece in posseg().cut("".join(tokens)):
        end = start + len(piece.word)
        members = sorted({owner[c] for c in range(start, end) if c == 0 or owner[c] != owner[c - 1]})
        if members:
            words.append(Word(piece.word, piece.flag, members))
        start = end
    return words


def low_coverage(tokens: Sequence[str], coverage: Sequence[float], threshold: float = THRESHOLD) -> list[Word]:
    """The content words whose tokens received less than ``threshold`` attention in total.

    Args:
        tokens: The source tokens (original text for unknown ones).
        coverage: Each token's coverage, as long as ``tokens``.
        threshold: The flag's threshold.

    Raises:
        ValueError: If ``coverage`` does not match ``tokens``.
    """
    if len(coverage) != len(tokens):
        raise ValueError(f"{len(tokens)} tokens but {len(coverage)} coverage values")
    return [w for w in source_words(tokens) if w.content and sum(coverage[i] for i in w.tokens) < threshold]
