"""Capital letters back in a lower-cased model's English: each word in the case the training targets give it.

The translation models read and write lower-cased English (fewer pieces to learn, and BLEU is scored lower-cased), so
their output says "i speak english and french" until the detokeniser capitalises the first letter and the pronoun
*I*. A reader expects "English", "French", "Paris", "Monday". [`learn`][attention_core.data.truecase.learn] counts, over
the training targets, how each word is written where its case is its own (not first in a sentence or after a quote,
not after a capitalised word as in "United States"); a word written capitalised in at least 60 % of at least five
such places gets that form, and [`apply`][attention_core.data.truecase.apply]
writes it into an output. Training saves the table with a Chinese → English model (``meta["truecase"]``), and
[`Translator.translate`][attention_core.decoding.translator.Translator.translate] applies it. Words written both ways
keep the lower case ("may": the verb outnumbers the month).

Examples:
    >>> table = learn(["We speak English.", "Is English hard?", "I like English.", "Say it in English!",
    ...                "Learn English.", "He is here."])
    >>> table
    {'english': 'English'}
    >>> apply("I speak english and he is here.", table)
    'I speak English and he is here.'
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

_WORD = re.compile(r"[A-Za-z]+|[.!?\"“”:;]")
_SENTENCE_START = set('.!?"“”:;')
_LOWER_WORD = re.compile(r"(?<![A-Za-z'])[a-z]+(?![A-Za-z])")
"""A lower-case word, not the clitic of a contraction (the ``t`` of ``don't``): ``tom's`` → ``Tom's``."""

MIN_COUNT = 5
"""Places (not first in a sentence) a word must be seen in for its case to be learnt."""
MIN_SHARE = 0.6
"""Share of those places that must write the word with a capital for the capital to be kept."""
VETO_COUNT = 3
"""Places in one corpus, mostly lower case, that keep a word lower case whatever the other corpora do."""


def _forms(texts: Iterable[str]) -> dict[str, Counter]:
    """How each word is written where its case is its own, ``lower → Counter(form)``."""
    forms: dict[str, Counter] = defaultdict(Counter)
    for text in texts:
        start, after_capital = True, False
        for token in _WORD.findall(unicodedata.normalize("NFKC", text)):
            if token in _SENTENCE_START:
                start, after_capital = token in '.!?"“”', False  # a quote may open a quoted sentence
                continue
            if not start and not after_capital:  # "United States": the second word's case is the phrase's
                forms[token.lower()][token] += 1
            after_capital = not start and token[:1].isupper() and token != "I"  # a first word's capital says nothing
            start = False
    return forms


def learn(*sources: Iterable[str], min_count: int = MIN_COUNT, min_share: float = MIN_SHARE) -> dict[str, str]:
    """The words whose usual written form is not all lower case, ``lower → form`` (see the module docstring).

    Args:
        *sources: English sentences as written (the training targets), one iterable per corpus. A word that one
            corpus writes in lower case most of the time (in at least ``VETO_COUNT`` places) keeps the lower case,
            however another corpus writes it: "castle" stays lower case although TV subtitles call a detective
            Castle.
        min_count: Places a word must be seen in, first words of sentences not counted.
        min_share: Share of those places written with a capital.
    """
    each = [_forms(texts) for texts in sources]
    pooled: dict[str, Counter] = defaultdict(Counter)
    for forms in each:
        for lower, counts in forms.items():
            pooled[lower].update(counts)
    table = {}
    for lower, counts in pooled.items():
        total = sum(counts.values())
        form, count = counts.most_common(1)[0]
        vetoed = any(sum(f[lower].values()) >= VETO_COUNT and f[lower][lower] / sum(f[lower].values()) > 1 - min_share
                     for f in each if lower in f)
        if total >= min_count and form != lower and count / total >= min_share and lower != "i" and not vetoed:
            table[lower] = form
    return dict(sorted(table.items()))


def apply(text: str, table: Mapping[str, str] | None) -> str:
    """Write each lower-case word of ``text`` in the form ``table`` gives it (other words unchanged)."""
    if not table:
        return text
    return _LOWER_WORD.sub(lambda m: table.get(m.group(0), m.group(0)), text)
