"""Rare common words: the nouns a model could not translate, carried through it with the dictionary's English.

A character-level model meets a word it has seen a few times (花生 "peanut", 登机牌 "boarding pass", 火锅 "hotpot")
and guesses from its characters: "I'm allergic to flower", "Please show your camera", "Let's go to the fire". This is
the rare-word problem of Luong et al. 2015 for common words: the names switch
([`attention_core.editing.names`][attention_core.editing.names]) already carries names and numbers; here the same
carrier machinery carries nouns, with the English of CC-CEDICT.

Unlike a name, a common word is usually translated well, so a word is carried only when the model *left it out*:

1. **Find** ([`find_words`][attention_core.editing.words.find_words]): the nouns of the sentence (jieba tags ``n``,
   ``nz``, ``ns``, ``ng``; not names, which the names switch has; not among the most frequent words,
   [`COMMON`][attention_core.editing.words.COMMON]) that CC-CEDICT lists as a common word of two or more characters with
   a short English (``花生`` → peanut, ``海关`` "customs (i.e. border crossing inspection)" → customs);
   a noun jieba glued to a verb (``吃火锅``) is found by its longest listed ending (``火锅``).
2. **Check** ([`left_out`][attention_core.editing.words.left_out]): the model's output mentions it fewer times than the
   sentence says it — an English word of any of the dictionary's senses, whole, with its singular, plural or
   ``-ed``/``-ing`` forms ([`mentions`][attention_core.editing.words.mentions]); a second 花生 written "flower" is left
   out.
3. **Carry**: the sentence is translated again with each left-out word (every occurrence) replaced by a carrier noun
   the model translates reliably (苹果 → apple, 自行车 → bicycle, 雨伞 → umbrella); in the output the carrier's word
   is replaced by the dictionary's (plural when the carrier came out plural, with ``a``/``an`` made to agree) —
   [`names.prepare`][attention_core.editing.names.prepare] and [`names.restore`][attention_core.editing.names.restore],
   as for names. When the model drops a carrier too (a common word placed by attention lands between the wrong words
   more often than a name does), or writes one twice ([`overstated`][attention_core.editing.words.overstated]: in
   another word's place as well), the second translation is not used.

It is part of the names switch ([`switch.translate`][attention_core.editing.switch.translate]; the app's *names, numbers
& rare words* box, on by default). ``python benchmarks/words.py`` measures what it fixes and breaks
(``results/words.md``).

Examples:
    >>> [(w.text, w.english) for w in find_words("我对花生过敏，晚上我们一起去吃火锅吧。")]
    [('花生', 'peanut'), ('火锅', 'hotpot')]
    >>> mentions(find_words("我对花生过敏。")[0], "I'm allergic to flowers.")
    0
    >>> mentions(find_words("我对花生过敏。")[0], "I'm allergic to peanuts.")
    1
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from attention_core.data.text import normalize_chinese, plural, posseg
from attention_core.editing.names import dictionary, listed_name
from attention_core.editing.rare import RareWord

WORD_TAGS = ("n", "nz", "ns", "ng")
"""jieba tags of the words checked (nouns; ``nr`` names are the names switch's)."""

GLUED_TAGS = ("l", "v", "vn", "i")
"""Tags of longer tokens whose listed ending may be a noun jieba glued to a verb (``吃火锅`` is tagged ``l``)."""

COMMON = 1000
"""A word more frequent than this in jieba's dictionary (时候 31,521, 妈妈 4,525, 有点 3,706; 花生 950, 火锅 459) is
left to the model: it has seen it, and an output without the dictionary's English has most likely said it another way
(的时候 → when, 妈妈 → Mom). Set on the dev sets, whose carried words at 5,000 included 妈妈 → mama, 医生, 电视 and
有点 → a little (``results/words.md``)."""

MAX_WORDS = 3
"""The longest English (in words) written for a carried word."""

STOPWORDS = frozenset({"the", "and", "for", "with", "etc", "old", "see", "variant", "abbr", "used", "also",
                       "one", "who", "that", "are", "from", "not", "into", "its", "any", "has", "was"})
"""Words of a definition that say nothing about its meaning, left out of the check."""

_PARENTHESES = re.compile(r"\s*\([^)]*\)\s*")
_USABLE = re.compile(r"[A-Za-z][A-Za-z' -]*")


def english(definition: str) -> str | None:
    """The short English of one CC-CEDICT definition, or ``None`` if it is not a plain noun phrase.

    Parentheses are dropped (``customs (i.e. …)`` → ``customs``), the first of several ``;`` variants is taken;
    a classifier line (``CL:…``), a cross-reference (``variant of``, ``see``, ``abbr. for``), a verb (``to …``), an
    adverb phrase (``a little``), a choice (``nun or sister``) or anything longer than
    [`MAX_WORDS`][attention_core.editing.words.MAX_WORDS] words is not.
    """
    text = _PARENTHESES.sub(" ", definition).split(";")[0].strip()
    lowered = text.lower()
    if (not _USABLE.fullmatch(text) or len(text.split()) > MAX_WORDS or " or " in f" {lowered} "
            or lowered.startswith(("to ", "a ", "an ", "variant", "see ", "abbr", "old ", "cl:", "used "))):
        return None
    return text


@lru_cache(maxsize=4096)
def lookup(word: str) -> tuple[str, frozenset[str]] | None:
    """The English written for a common word and every content word of its senses, or ``None`` if it has none.

    Only common entries count (lower-case pinyin); the first usable definition is the English.
    """
    entries = [entry for entry in dictionary().get(word, []) if not entry.proper]
    written = next((e for entry in entries for d in entry.definitions if (e := english(d))), None)
    if written is None:
        return None
    senses = frozenset(w for entry in entries for d in entry.definitions for w in re.findall(r"[a-z]+", d.lower())
                       if len(w) >= 3 and w not in STOPWORDS)
    return written, senses


def frequency(word: str) -> int:
    """How often jieba's dictionary counts ``word`` (0 if it does not list it)."""
    import jieba

    posseg()  # quiet
    jieba.dt.check_initialized()  # the dictionary is read at its first use
    return jieba.get_FREQ(word) or 0


def _noun(word: str) -> bool:
    """Whether jieba tags ``word`` alone as a noun (not a name)."""
    pieces = list(posseg().cut(word))
    return len(pieces) == 1 and pieces[0].flag in WORD_TAGS


def find_words(text: str) -> list[RareWord]:
    """The nouns of a Chinese text with a short English in CC-CEDICT, in order (``kind="word"``).

    Args:
        text: A source text; offsets are in its normalised form
            ([`normalize_chinese`][attention_core.data.text.normalize_chinese]), the text the model reads.
    """
    text = normalize_chinese(text)
    found, start = [], 0
    for piece in posseg().cut(text):
        word, at = piece.word, start
        start += len(piece.word)
        tag = piece.flag
        if tag.startswith("nr") or listed_name(word):
            continue
        if tag not in WORD_TAGS:
            if not (tag.startswith(GLUED_TAGS) and len(word) >= 3):
                continue
            ending = next((word[cut:] for cut in range(1, len(word) - 1)
                           if lookup(word[cut:]) and _noun(word[cut:])), None)
            if ending is None:
                continue
            word, at = ending, at + len(piece.word) - len(ending)
        if len(word) < 2 or not re.fullmatch(r"[\u3400-\u9fff]+", word) or frequency(word) > COMMON:
            continue
        entry = lookup(word)
        if entry:
            found.append(RareWord(word, at, entry[0], "dictionary", kind="word"))
    return found


def mentions(word: RareWord, output: str) -> int:
    """How many times an output says the English of any sense of ``word`` (whole words; plural, -ed, -ing forms).

    Neighbouring words of its senses are one mention: "customs inspection" for 海关 counts once, as does "boarding
    pass" for 登机牌; punctuation between them makes two ("Customs. Customs is busy.").
    """
    entry = lookup(word.text)
    if entry is None:
        return 0
    forms = {f for w in entry[1] for f in (w, w + "s", w + "es", w[:-1] + "ies", w + "ed", w + "d", w + "ing",
                                           w[:-1] if w.endswith("s") else w, plural(w))}  # knives, children
    lowered, count, last = output.lower(), 0, None  # ``last``: where the previous mention's last word ended
    for match in re.finditer(r"[a-z]+", lowered):
        if match[0] not in forms:
            last = None
            continue
        if last is None or not re.fullmatch(r"[\s'-]*", lowered[last : match.start()]):
            count += 1  # a new mention: not joined to the previous one by a space, an apostrophe or a hyphen
        last = match.end()
    return count


def left_out(words: Sequence[RareWord], output: str) -> list[RareWord]:
    """The words of a sentence its output leaves out, each with every one of its occurrences.

    A word is left out when the output mentions it fewer times than the sentence says it:
    我对花生过敏，这道菜里有花生吗？ → "I'm allergic to peanuts. Is there a flower in this food?" leaves
    out the second 花生, so both are carried (one carrier, translated twice). A word without a dictionary English is
    never left out.

    Args:
        words: The sentence's words, in order ([`find_words`][attention_core.editing.words.find_words]).
        output: The model's output for the sentence.

    Examples:
        >>> words = find_words("我对花生过敏，这道菜里有花生吗？")
        >>> [w.start for w in left_out(words, "I'm allergic to peanuts. Is there a flower in this food?")]
        [2, 12]
        >>> left_out(words, "I'm allergic to peanuts. Are there peanuts in this dish?")
        []
    """
    said = Counter(w.text for w in words)
    first = {w.text: w for w in reversed(words)}
    short = {text for text, n in said.items() if lookup(text) is not None and mentions(first[text], output) < n}
    return [w for w in words if w.text in short]


def overstated(words: Sequence[RareWord], output: str) -> bool:
    """Whether an output writes one of the carried ``words`` more often than the sentence says it.

    The model then wrote the carrier in the place of another word as well: 安娜下个月要和她的男朋友结婚了, 男朋友
    carried as 苹果, came out "The apple will marry her apples next month." — "The boyfriend will marry her
    boyfriends", with Anna gone. Such a second translation is not used. The English is counted as written (singular
    or plural), not by its senses: "customs … for inspection" says 海关 once.

    Args:
        words: The carried words, each occurrence.
        output: The second translation, restored.

    Examples:
        >>> boyfriend = find_words("安娜下个月要和她的男朋友结婚了。")
        >>> overstated(boyfriend, "The boyfriend will marry her boyfriends next month.")
        True
        >>> overstated(boyfriend, "Anna will marry her boyfriend next month.")
        False
        >>> overstated([], "Anna will marry her boyfriend next month.")
        False
    """
    if not words:
        return False
    said = Counter(w.english for w in words)
    forms = {form.lower(): english for english in said for form in (english, plural(english))}
    longest_first = sorted(forms, key=len, reverse=True)  # "peanut butter" (花生酱) is not also a "peanut" (花生)
    pattern = r"(?<![a-z])(?:" + "|".join(re.escape(f) for f in longest_first) + r")(?![a-z])"
    written = Counter(forms[match[0]] for match in re.finditer(pattern, output.lower()))
    return any(written[english] > n for english, n in said.items())
