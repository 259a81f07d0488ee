"""A rare word's span and group, as the names switch and the app's labels read them."""

from attention_core.editing.rare import RareWord


def test_span_and_group() -> None:
    name = RareWord("张伟", 3, "Zhang Wei", "pinyin")
    number = RareWord("九点", 0, "9 o'clock", "number", "time")
    word = RareWord("麻醉师", 6, "anesthesiologist", "dictionary", "word")
    assert (name.end, number.end, word.end) == (5, 2, 9)
    assert (name.group, number.group, word.group) == ("name", "number", "word")
