"""Numbers, prices, clock times, dates and years in a Chinese source: found and written as an English reader expects.

A number is a rare word like a name. A model trained on everyday sentences translates 三 ("three") and 五 ("five"),
but 三十二, 九十九块钱, 九点四十五分, 五月十日 or 1998年 are each seen a few times or never, and it drops or
replaces them (这件衬衫打完折才九十九块钱。 → "This shirt is a lot of money in the shirt."). The names switch
([`attention_core.editing.names`][attention_core.editing.names]) carries them the way it carries names: each expression
found here is replaced in the source by a carrier the model translates reliably (三 → "three", 三块 → "three dollars",
三点 → "three o'clock", 明天 → "tomorrow", 去年 → "last year"), and in the output the carrier's words are
replaced by the expression's English, or, when the model dropped them, the English is placed by attention.

What is found ([`find_numbers`][attention_core.editing.numbers.find_numbers]), in this order, never overlapping:

| kind | source | English |
|---|---|---|
| ``date`` | 五月十日, 10月23号 | May 10th, October 23rd |
| ``time`` | 九点四十五分, 两点半, 八点一刻; 十二点, 3点 (an hour over ten, or digits) | 9:45, 2:30, 8:15; 12 o'clock |
| ``year`` | 1998年, 一九九八年 (four digits) | 1998 ("in 1998" where the output has no preposition) |
| ``money`` | 九十九块(钱), 三百八十元, 三块五 | 99 yuan, 380 yuan, 3.5 yuan |
| ``percent`` | 百分之五十 | 50% |
| ``number`` | 三十二, 两千五百, 3.5, 1998, 5 (from 11 up, digits, a decimal point; not 第十一) | 32, 2,500, 3.5, 5 |

Small numbers in Chinese numerals (一 … 十, 三点) are left to the model, which knows them (in Arabic digits, 5 and 3点,
it does not: they are carried), and so are the words that only look like
numbers: 一点 ("a little"), 一起 ("together"), 十分 ("very"), 千万 ("by all means"), 万一 ("in case"), 一块儿,
and approximations (三四个 "three or four", 一两天 "a day or two").
The numerals' values come from ``cn2an`` (MIT).

Examples:
    >>> [(n.text, n.english, n.kind) for n in find_numbers("这个房间一个晚上三百八十元，九点四十五分到。")]
    [('三百八十元', '380 yuan', 'money'), ('九点四十五分', '9:45', 'time')]
"""

from __future__ import annotations

import re
from collections.abc import Callable

from attention_core.editing.rare import RareWord

DIGITS = "零〇一二两三四五六七八九"
NUMERAL = f"(?:\\d+(?:\\.\\d+)?|[{DIGITS}十百千万亿]+(?:点[{DIGITS}]+)?)"
"""A number in Arabic digits or in Chinese numerals, with a decimal point (3.5, 三点五)."""
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("date", re.compile(rf"({NUMERAL})月({NUMERAL})[日号]")),
    ("time", re.compile(rf"(早上|早晨|上午|凌晨|下午|傍晚|晚上|夜里)?([{DIGITS}十\d]+)点"
                        rf"(?:(半)|(一刻)|(三刻)|零?([{DIGITS}十\d]+)分|(?![{DIGITS}十\d]))")),
    ("year", re.compile(rf"(?<![\d{DIGITS}十百千万])(\d{{4}}|[{DIGITS}]{{4}})年")),
    ("money", re.compile(rf"({NUMERAL})[块元](?:(?=钱)|([一二三四五六七八九\d])(?![\d{DIGITS}十百千万]))?")),
    ("percent", re.compile(rf"百分之({NUMERAL})")),
    ("number", re.compile(NUMERAL)),
)
"""Each kind's pattern, tried in this order; an expression found by an earlier one is not looked at again."""

PERIODS = {"早上": "a.m.", "早晨": "a.m.", "上午": "a.m.", "凌晨": "a.m.",
           "下午": "p.m.", "傍晚": "p.m.", "晚上": "p.m.", "夜里": "p.m."}
"""The part of the day before a clock time, as English writes it after an hour from 1 to 11 (晚上九点四十五分 →
9:45 p.m.). A whole hour up to ten (晚上八点) is left to the model, which knows it, with its part of the day."""
HALF_DAYS = (("a", ".", "m", "."), ("p", ".", "m", "."), ("am",), ("pm",), ("in", "the", "morning"),
             ("in", "the", "afternoon"), ("in", "the", "evening"), ("at", "night"), ("tonight",))
"""Words a model may write after a carrier's hour that a clock time with its part of the day says already."""

MAGNITUDES = (("hundred",), ("thousand",), ("million",), ("billion",))
"""Words a model may write after a carrier's number (三 → "three thousand"): the number's English says its value."""
CURRENCY_WORDS = tuple((unit,) for unit in ("dollars", "dollar", "bucks", "buck", "yuan", "kuai", "rmb"))
"""Words a model writes after a price's number; the price's English (99 yuan) replaces them."""
PREPOSITIONS = frozenset({"in", "since", "by", "until", "till", "from", "of", "before", "after", "around", "to"})
"""A year after one of these output words is written bare (1998), otherwise with "in" (in 1998)."""


def value(numeral: str) -> float | None:
    """The value of a numeral in digits or Chinese numerals (``None`` when it is not a well-formed number).

    Examples:
        >>> value("两千五百"), value("三十二"), value("3.5"), value("一九九八"), value("千万")
        (2500, 32, 3.5, 1998, None)
    """
    if re.fullmatch(r"\d+(?:\.\d+)?", numeral):
        number = float(numeral)
    else:
        import cn2an  # 0.17 s: imported by the first Chinese numeral, not by every start of the CLI or the app

        try:
            number = cn2an.cn2an(numeral, "normal")
        except (ValueError, KeyError, IndexError):  # cn2an's answer to a malformed numeral
            return None
    return int(number) if float(number).is_integer() else float(number)


def written(number: float) -> str:
    """A number in Chinese numerals as an English text writes it: thousands separated from 1,000 up.

    A number typed in Arabic digits keeps its digits as typed (a telephone number has no separators).

    Examples:
        >>> written(2500), written(32), written(3.5), written(120000)
        ('2,500', '32', '3.5', '120,000')
    """
    return f"{number:,}" if isinstance(number, int) and number >= 1000 else str(number)


def ordinal(day: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` … ``11th`` … ``23rd``."""
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _date_english(match: re.Match[str]) -> RareWord | None:
    """``五月十日`` → ``May 10th``: a month and a day that exist."""
    text, start = match.group(0), match.start()
    month, day = value(match.group(1)), value(match.group(2))
    if isinstance(month, int) and isinstance(day, int) and 1 <= month <= 12 and 1 <= day <= 31:
        return RareWord(text, start, f"{MONTHS[month - 1]} {ordinal(day)}", "number", "date")
    return None


def _time_english(match: re.Match[str]) -> RareWord | None:
    """``九点四十五分`` → ``9:45``, ``晚上九点`` → ``9 p.m.``.

    The carrier's own minutes and part of the day, written after it, are dropped (``drop_next``).
    """
    text, start = match.group(0), match.start()
    period, hour = match.group(1), value(match.group(2))
    half, quarter, three_quarters, minutes = match.group(3, 4, 5, 6)
    minute = 30 if half else 15 if quarter else 45 if three_quarters else value(minutes) if minutes else None
    clock = (("o", "'clock"), ("o'clock",), *((":", f"{m:02d}") for m in range(60)))  # the carrier's own minutes
    half_day = PERIODS.get(period or "") if isinstance(hour, int) and 1 <= hour <= 11 else None
    if period and not half_day:  # 晚上十二点: the part of the day is left to the model, the time is found alone
        text, start = text[len(period):], start + len(period)
    if half_day:  # 晚上九点四十五分 → 9:45 p.m.: the model reads the carrier's hour without the part of the day
        clock = tuple((*c, *h) for c in clock for h in HALF_DAYS) + clock + HALF_DAYS
    if isinstance(hour, int) and 0 <= hour <= 24 and isinstance(minute, int) and 0 <= minute < 60:
        english = f"{hour}:{minute:02d}" + (f" {half_day}" if half_day else "")
        return RareWord(text, start, english, "number", "time", drop_next=clock)
    arabic = match.group(2)[0].isdigit()  # 3点: the model knows 三点, not a digit
    if isinstance(hour, int) and (10 < hour or arabic) and 1 <= hour <= 24 and minute is None:  # 十二点, 3点
        english = f"{hour} {half_day}" if half_day else f"{hour} o'clock"
        return RareWord(text, start, english, "number", "time", drop_next=clock)
    return None


def _year_english(match: re.Match[str]) -> RareWord | None:
    """``2024年`` → ``in 2024`` (not ``两千``-style readings, which are amounts)."""
    text, start = match.group(0), match.start()
    year = value(match.group(1))
    if isinstance(year, int) and "两" not in match.group(1):
        return RareWord(text, start, f"in {year}", "number", "year", bare=str(year))
    return None


def _money_english(match: re.Match[str]) -> RareWord | None:
    """``九十九块钱`` → ``99 yuan`` (not ``一块``, which is also "together")."""
    text, start = match.group(0), match.start()
    amount, tenths = value(match.group(1)), match.group(2)
    together = amount == 1 and text.endswith("块") and not match.string.startswith("钱", match.end())
    if amount is None or together:  # 一块 is also "together"
        return None
    if tenths:
        amount = amount + (value(tenths) or 0) / 10
    return RareWord(text, start, f"{written(amount)} yuan", "number", "money",
                    drop_next=tuple((*m, *c) for m in MAGNITUDES for c in CURRENCY_WORDS) + CURRENCY_WORDS)


def _percent_english(match: re.Match[str]) -> RareWord | None:
    """``百分之五十`` → ``50%``."""
    text, start = match.group(0), match.start()
    amount = value(match.group(1))
    if amount is not None:
        return RareWord(text, start, f"{written(amount)}%", "number", "percent")
    return None


def _number_english(match: re.Match[str]) -> RareWord | None:
    """A plain number the model would misread: large, with digits or a unit.

    Not an ordinal (第十一课), a month (十二月) or part of a name (MP3): those are left to the model.
    """
    text, start = match.group(0), match.start()
    amount = value(text)
    large = amount is not None and (amount > 10 or isinstance(amount, float) or text[0].isdigit())  # or 5
    ordinal_ = match.string[max(0, start - 1) : start] == "第"  # 第十一课: an ordinal, left to the model
    digits = text[0].isdigit() or re.search("[十百千万亿点]", text)  # 三四, 一两: "three or four", "one or two"
    month = match.string.startswith("月", match.end())  # 十二月 "December": left to the model
    if text[0].isdigit() and re.search(r"[A-Za-z]", match.string[max(0, start - 1) : start] +
                                       match.string[match.end() : match.end() + 1]):
        return None  # A4, MP3, 5G, iPhone15: part of a name, left to the model
    if text[0].isdigit() and match.string.startswith("点", match.end()):
        return None  # 0点: an hour the time pattern left to the model
    if large and digits and not ordinal_ and not month and not text.startswith(("百", "千", "万", "亿")):
        english = text if text[0].isdigit() else written(amount)  # type: ignore[arg-type]
        return RareWord(text, start, english, "number", "number", drop_next=MAGNITUDES)  # not 千万 "by all means"
    return None


_ENGLISH: dict[str, Callable[[re.Match[str]], RareWord | None]] = {
    "date": _date_english,
    "time": _time_english,
    "year": _year_english,
    "money": _money_english,
    "percent": _percent_english,
    "number": _number_english,
}
"""Each kind's reading: the English of one match of its pattern, or ``None`` when it is not a number of that kind."""


def find_numbers(text: str) -> list[RareWord]:
    """The number expressions of a Chinese text, in order (see the module docstring for what is found).

    Args:
        text: A source sentence or paragraph, normalised as the model reads it.
    """
    found: list[RareWord] = []
    taken = [False] * len(text)
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            if any(taken[match.start() : match.end()]):
                continue
            number = _ENGLISH[kind](match)
            if number is not None:
                found.append(number)
                taken[match.start() : match.end()] = [True] * len(match.group(0))
    return sorted(found, key=lambda n: n.start)
