"""Normalisation, tokenisers and detokenisers for Chinese and English.

* Chinese is converted to simplified characters with OpenCC (``t2s``), so 這 and 这 are one token,
  full-width and half-width forms are unified (NFKC, except that Chinese punctuation stays full
  width), and the text is split into characters; runs of Latin letters or digits stay one token.
* English is lower-cased and split into words and punctuation, with clitics split Moses-style
  (``don't`` → ``don 't``); [`detokenize_english`][attention_core.data.text.detokenize_english] undoes it.
* Subtitle Chinese, which marks pauses with spaces instead of punctuation, is punctuated like the rest
  ([`punctuate_subtitle`][attention_core.data.text.punctuate_subtitle]).

Examples:
    >>> tokenize_chinese("這是 Tom 的書，2013年。")
    ['这', '是', 'tom', '的', '书', '，', '2013', '年', '。']
    >>> tokenize_english("Don't worry, Tom's here!")
    ['don', "'t", 'worry', ',', 'tom', "'s", 'here', '!']
    >>> detokenize_english(['don', "'t", 'worry', ',', 'tom', "'s", 'here', '!'])
    "Don't worry, tom's here!"
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

import inflect
import opencc
from pypinyin import Style, pinyin

from attention_core.data.vocab import is_punctuation

# Chinese punctuation that NFKC would turn into ASCII; keep it full width.
_KEEP_FULL_WIDTH = "，。！？；：（）、“”‘’《》【】…—·"
_HALF_TO_FULL = str.maketrans({",": "，", "!": "！", "?": "？", ";": "；", ":": "："})
_CJK_TOKEN = re.compile(r"[A-Za-z0-9]+|\S")
_EN_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*|'[a-z]+|[^\sa-z0-9]")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CLOSERS = "”’」』）)》"
# sentence-final marks (a run of them, then closing quotes or brackets); an ASCII "." only right after a
# Chinese character or as "...", so numbers (3.5) and Latin abbreviations (U.S.A.) are never cut
_SENTENCE_END = re.compile(rf"(?:[。！？!?．｡]+|…+|\.{{3,}}|(?<=[^\x00-\x7f])\.(?!\.))[{re.escape(_CLOSERS)}]*")
_CLAUSE_END = re.compile(rf"[，,；;：:、][{re.escape(_CLOSERS)}]*")
_SPACED_PERIOD = re.compile(rf"(?<=[^\s\d.])\.[{re.escape(_CLOSERS)}]*(?=\s)")
"""A ``.`` after a letter and before a space: a sentence end in languages written with spaces."""
_PAUSE = re.compile(rf"(?<={_CJK_CHAR.pattern}) (?={_CJK_CHAR.pattern})")
"""A space between two Chinese characters: a pause or a sentence break in a subtitle."""
_FINAL_MARKS = {"?": "？", "!": "！"}
_ENGLISH_TRAILERS = "\"'”’»)]}*- \t"
"""What may follow an English line's last punctuation mark: closing quotes and brackets, song marks, dashes."""


_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u2060\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                   "\u2066\u2067\u2068\u2069\u00ad"))
"""Characters that show nothing and mean nothing to a translation: the byte-order mark a Windows editor puts before a
file's first line, the zero-width space, the word joiner, the direction marks, embeddings, overrides and isolates, the
soft hyphen. The zero-width non-joiner and joiner (U+200C, U+200D) only where they join nothing (``_LOOSE_JOINER``):
Persian and the Indian scripts spell words with them, and emoji sequences are joined by them. None of these is in a
dev or test set of the bundled corpora (five cmn-eng training sentences hold a zero-width space), so removing them
from what a model reads changes no score."""


_JOINERS = "\u200c\u200d"
_LOOSE_JOINER = re.compile(rf"(?<={_CJK_CHAR.pattern})[{_JOINERS}]+|[{_JOINERS}]+(?={_CJK_CHAR.pattern})"
                           rf"|(?:^|(?<=\s))[{_JOINERS}]+|[{_JOINERS}]+(?=\s|$)")
"""A zero-width (non-)joiner beside a Chinese character, a space or an end: it joins nothing there."""


def strip_invisible(text: str) -> str:
    """The text without characters that show nothing (a byte-order mark, direction marks …).

    An input pasted from a file saved by Notepad starts with a byte-order mark; without this the model reads it
    as a token it never saw.

    Examples:
        >>> strip_invisible("\ufeff我爱你。")
        '我爱你。'
        >>> strip_invisible("落霞\u200c与孤鹜") == "落霞与孤鹜", strip_invisible("می\u200cخواهم") == "می\u200cخواهم"
        (True, True)
    """
    return _LOOSE_JOINER.sub("", text.translate(_INVISIBLE))


@functools.cache
def _t2s() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


def normalize_chinese(text: str) -> str:
    """Simplified characters, unified character widths, no surrounding whitespace.

    Args:
        text: Any Chinese text (traditional, simplified or mixed).

    Returns:
        The normalised text.
    """
    text = "".join(ch if ch in _KEEP_FULL_WIDTH else unicodedata.normalize("NFKC", ch) for ch in text)
    text = _t2s().convert(text.strip())
    # ASCII punctuation between Chinese characters becomes the full-width mark used in the corpora
    return re.sub(
        r"(?<=[^\x00-\x7f])[,!?;:]|[,!?;:](?=[^\x00-\x7f])",
        lambda m: m.group(0).translate(_HALF_TO_FULL),
        text,
    )


def bare_chinese(text: str) -> str:
    """What a Chinese sentence says, for comparing sentences: normalised, no punctuation, symbols or spaces, lower case.

    Examples:
        >>> bare_chinese("你好， 張偉！") == bare_chinese("你好张伟")
        True
    """
    return "".join(ch for ch in normalize_chinese(text) if ch.isalnum()).lower()


@functools.cache
def posseg():
    """The part-of-speech tagger ``jieba.posseg``, imported once and quiet (no "Building prefix dict …")."""
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def punctuate_subtitle(chinese: str, english: str) -> str:
    """Punctuate a subtitle's Chinese the way people write it: pauses become ``，``, and the line gets a final mark.

    Subtitles (``tv4dialog``) have no punctuation: a space marks a pause or a sentence break
    (``少来了 你们都在约会了``), while the translation task's own corpus (Tatoeba) and the visitors write
    punctuated Chinese (``少来了，你们都在约会了。``). Of the two ways to make them meet, the subtitle side is
    brought to the visitor's form, once, when the corpus is read: the input then needs no rule of its own
    (it goes through [`normalize_chinese`][attention_core.data.text.normalize_chinese] as always, which turns the
    ASCII ``, ! ? ; :`` a visitor types next to Chinese into the full-width marks written here; an ASCII
    ``.`` it leaves as it is, so ``你好.`` reaches the model with ``.``, not ``。``). The rule, applied to
    the normalised line:

    1. whitespace runs become one space, and a space **between two Chinese characters** becomes ``，``
       (a space cannot tell a pause from a sentence break; a comma is right for the first and close for
       the second);
    2. every other space stays: beside a Latin word or a number (``我用 iPhone 手机``) it may just
       separate words, beside a mark the line already has (``什么？ 拜托``) nothing is missing; the
       tokeniser drops spaces, so they never reach the model;
    3. a line that ends in a character, letter or digit gets a final mark from the English's last
       punctuation mark (closing quotes, brackets, ``*`` and dashes after it skipped): ``?`` → ``？``,
       ``!`` → ``！``, anything else → ``。``. A line that already ends in a mark keeps it.

    Args:
        chinese: The subtitle's Chinese side.
        english: Its English side, whose final punctuation mark chooses the Chinese one.

    Returns:
        The punctuated, normalised Chinese; ``""`` for a blank line.

    Examples:
        >>> punctuate_subtitle("少来了 你们都在约会了", "Come on, you're dating.")
        '少来了，你们都在约会了。'
        >>> punctuate_subtitle("你是说 我用 iPhone 手机", "You mean I use an iPhone?")
        '你是说，我用 iPhone 手机？'
        >>> punctuate_subtitle("什么? 拜托", "What? Come on!")
        '什么？ 拜托！'
    """
    text = _PAUSE.sub("，", " ".join(normalize_chinese(chinese).split()))
    if not text or not text[-1].isalnum():
        return text
    last = unicodedata.normalize("NFKC", english).rstrip(_ENGLISH_TRAILERS)[-1:]
    return text + _FINAL_MARKS.get(last, "。")


def has_chinese(text: str) -> bool:
    """Whether a text holds at least one Chinese character (CJK unified ideographs)."""
    return bool(_CJK_CHAR.search(text))


def _cut(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Cut after every match of ``pattern``; pieces are stripped, empty ones dropped."""
    pieces, start = [], 0
    for match in pattern.finditer(text):
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def split_sentences(text: str, max_chars: int | None = None, spaced: bool = False) -> list[str]:
    """Split a paragraph into sentences at line breaks and sentence-final punctuation.

    A sentence ends after ``。！？!?``, ``…``, ``...`` or a ``.`` that follows a Chinese character
    (not ``3.5`` or ``U.S.A.``), together with any closing quotes or brackets that follow; with ``spaced``
    (a language written with spaces, such as German), also after a ``.`` that follows a letter and
    comes before a space (``Hund. Die`` splits, ``3.5`` and ``z.B.`` inside a word do not). With
    ``max_chars``, a sentence longer than that is cut further after clause punctuation (``，；：、``),
    packing clauses greedily up to ``max_chars``; a clause that is longer on its own stays as it is
    (the caller decides).

    Args:
        text: One or more sentences.
        max_chars: Optional length above which sentences are cut at clause punctuation.
        spaced: Also end sentences at a ``.`` between a letter and a space.

    Returns:
        The sentences in order, stripped; ``[]`` for blank text.

    Examples:
        >>> split_sentences("你好！我叫汤姆。“你呢？”他问。")
        ['你好！', '我叫汤姆。', '“你呢？”', '他问。']
        >>> split_sentences("它花了3.5元")
        ['它花了3.5元']
        >>> split_sentences("第一句，第二句，第三句。", max_chars=8)
        ['第一句，第二句，', '第三句。']
        >>> split_sentences("Ich sehe den Hund. Er kostet 3.5 Euro! Gut", spaced=True)
        ['Ich sehe den Hund.', 'Er kostet 3.5 Euro!', 'Gut']
    """
    sentences = [s for line in text.splitlines() for s in _cut(line, _SENTENCE_END)]
    if spaced:
        sentences = [piece for sentence in sentences for piece in _cut(sentence, _SPACED_PERIOD)]
    if max_chars is None:
        return sentences
    out: list[str] = []
    for sentence in sentences:
        if len(sentence) <= max_chars:
            out.append(sentence)
            continue
        packed = ""
        for clause in _cut(sentence, _CLAUSE_END):
            if packed and len(packed) + len(clause) > max_chars:
                out.append(packed)
                packed = ""
            packed += clause
        out.append(packed)
    return out


def tokenize_chinese(text: str) -> list[str]:
    """Normalise, then split into characters (Latin-letter and digit runs stay together, lower-cased)."""
    return [tok.lower() for tok in _CJK_TOKEN.findall(normalize_chinese(text))]


def tokenize_english(text: str) -> list[str]:
    """Lower-case and split into words, clitics (``'s``, ``'t``) and punctuation marks."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    return _EN_TOKEN.findall(text)


TITLES = frozenset({"mr", "mrs", "ms", "dr", "st", "vs", "jr", "sr", "prof", "mt", "etc"})
"""Words written with a period that does not end a sentence (Mr. Smith): the next word keeps its case."""


def _capital_after(match: re.Match[str]) -> str:
    """A new sentence inside an output starts with a capital, not after an abbreviation or an ellipsis."""
    word, mark, space, letter = match.groups()
    if mark == "." and (word.endswith(".") or word.lower() in TITLES or re.fullmatch(r"(?:[a-z]\.)*[a-z]", word)):
        return match.group(0)
    return word + mark + space + letter.upper()


def detokenize_english(tokens: Sequence[str]) -> str:
    """Join English tokens into text: no space before punctuation or clitics, a capital at each sentence's start.

    A clock time and an abbreviation of single letters are written whole (``6:00``, ``a.m.``, ``U.S.`` stays
    ``u.s.``: only the case of a sentence's first letter and of the pronoun ``I`` is restored here).

    Examples:
        >>> detokenize_english(["i", "get", "up", "at", "6", ":", "00", "a", ".", "m", ".", "it", "'s", "early", "."])
        "I get up at 6:00 a.m. it's early."
        >>> detokenize_english(["i", "'m", "tom", ".", "it", "'s", "late", "!", "well", ".", ".", ".", "ok", "."])
        "I'm tom. It's late! Well... ok."
    """
    text = ""
    quote_open = False
    for i, tok in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok == '"':
            text += (" " if text and not quote_open else "") + tok if not quote_open else tok
            quote_open = not quote_open
            continue
        glue = (
            not text
            or tok in {".", ",", "!", "?", ";", ":", "%", ")", "]", "}", "..."}
            or tok.startswith("'")
            or text.endswith(("(", "[", "$", "#"))
            or (quote_open and text.endswith('"'))
            or (tok.isdigit() and re.search(r"\d:$", text) is not None)  # 6:00
            or (len(tok) == 1 and tok.isalpha() and after == "."  # a.m., u.s.: a letter between two full stops
                and re.search(r"(?:^|[\s.])[a-z]\.$", text) is not None)
        )
        text += tok if glue else " " + tok
    text = re.sub(r"(?<![\w.])i\b(?!\.\w)", "I", text)
    text = re.sub(r"(\S+?)([.!?])( +)([a-z])", _capital_after, text)
    return text[:1].upper() + text[1:]


def detokenize_chinese(tokens: Sequence[str]) -> str:
    """Join characters; Latin runs next to each other keep a space between them."""
    out = ""
    for tok in tokens:
        if out and out[-1].isascii() and out[-1].isalnum() and tok[:1].isascii() and tok[:1].isalnum():
            out += " "
        out += tok
    return out


@functools.cache
def _inflect() -> inflect.engine:
    """One ``inflect`` engine (its English plural and article rules)."""
    return inflect.engine()


def plural(text: str) -> str:
    """The plural of an English noun phrase's last word (``knife`` → ``knives``, ``boarding pass`` → ``…passes``).

    The rules are ``inflect``'s (irregular plurals, ``-es`` after a sibilant or an ``o``); a last word that already
    ends in a single ``s`` (``customs``, ``chopsticks``) is kept.

    Examples:
        >>> [plural(w) for w in ("peanut", "boarding pass", "knife", "customs", "hobby", "child", "tomato", "DVD")]
        ['peanuts', 'boarding passes', 'knives', 'customs', 'hobbies', 'children', 'tomatoes', 'DVDs']
    """
    head, _, last = text.rpartition(" ")
    if not last or (last.endswith("s") and not last.endswith("ss")):
        return text
    word = last + "s" if last.isupper() and len(last) > 1 else _inflect().plural_noun(last)  # DVDs, not DVDS
    return (head + " " if head else "") + word


def article(text: str) -> str:
    """``a`` or ``an`` before an English phrase, by its sound (``an hour``, ``a university``), as ``inflect`` says.

    Examples:
        >>> [article(w) for w in ("apple", "hour", "university", "umbrella", "one-way ticket", "FBI agent")]
        ['an', 'an', 'a', 'an', 'a', 'an']
    """
    return _inflect().a(text).split(" ", 1)[0] if text.strip() else "a"


def tone_class(char: str) -> str | None:
    """平 (level: tones 1, 2) or 仄 (oblique: tones 3, 4), by pypinyin; ``None`` if unknown.

    Examples:
        >>> tone_class("天"), tone_class("地"), tone_class("，")
        ('平', '仄', None)
    """
    if len(char) != 1 or is_punctuation(char):
        return None
    reading = pinyin(char, style=Style.TONE3, heteronym=False, errors="ignore")
    if not reading or not reading[0]:
        return None
    tone = reading[0][0][-1:]
    return "平" if tone in ("1", "2") else "仄" if tone in ("3", "4") else None


def repetition_pattern(chars: Sequence[str]) -> tuple[int, ...]:
    """Each position's first occurrence index: 声声慢 → (0, 0, 2); equal patterns mirror repetitions."""
    first: dict[str, int] = {}
    return tuple(first.setdefault(ch, i) for i, ch in enumerate(chars))
