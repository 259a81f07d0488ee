"""A rare word of a Chinese source: a name or a number expression, with the English an output writes for it.

Luong et al. 2015 ("Addressing the Rare Word Problem in Neural Machine Translation") call a *rare word* any source
word the model cannot translate because it saw it a few times or never. Names (张伟) and number expressions
(九十九块钱, 九点四十五分) are the rare words of everyday sentences. Both finders —
[`find_names`][attention_core.editing.names.find_names] and
[`find_numbers`][attention_core.editing.numbers.find_numbers] — return a
[`RareWord`][attention_core.editing.rare.RareWord], and the names switch
([`prepare`][attention_core.editing.names.prepare], [`restore`][attention_core.editing.names.restore]) carries every
rare word the same way.

Examples:
    >>> word = RareWord("张伟", 4, "Zhang Wei", "pinyin")
    >>> word.kind, word.end
    ('person', 6)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RareWord:
    """A name or a number expression found in a source text.

    Attributes:
        text: The expression as written in the source.
        start: Its character offset in the source text.
        english: What the output writes for it (``Zhang Wei``, ``9:45``, ``99 yuan``, ``in 1998``).
        how: How the English was found: ``dictionary`` (CC-CEDICT's English name), ``pinyin`` or ``number``.
        kind: ``person`` or ``place`` for a name; ``date``, ``time``, ``year``, ``money``, ``percent`` or ``number``
            for a number expression ([`attention_core.editing.numbers`][attention_core.editing.numbers]); ``word`` for a
            common word ([`attention_core.editing.words`][attention_core.editing.words]).
        drop_next: Word sequences of the model's output to drop right after the carrier's words (the carrier's
            "o'clock", "dollars"): the English says them already.
        bare: The English after a preposition the output already has (``1998`` for ``in 1998``), or ``None``.
    """

    text: str
    start: int
    english: str
    how: str
    kind: str = "person"
    drop_next: tuple[tuple[str, ...], ...] = ()
    bare: str | None = None

    @property
    def group(self) -> str:
        """``name`` (a person or a place), ``number`` (any number expression) or ``word`` (a common word)."""
        return "number" if self.how == "number" else "word" if self.kind == "word" else "name"

    @property
    def end(self) -> int:
        """The character offset just after the expression."""
        return self.start + len(self.text)
