"""The reader's notes: a poor output explained (too long, words without attention, unknown tokens), never invented."""

from test_paragraphs import _translator

from attention_core.analysis.notes import notes
from attention_core.data.tasks import get_task


def test_notes_explain_long_and_unknown_inputs():
    translator = _translator()
    plain = translator.translate(["我喜欢猫"])[0]
    assert notes(translator, plain) == []
    long_ = translator.translate(["我喜欢猫今天很好你呢"])[0]
    assert [n.kind for n in notes(translator, long_)] == ["long"]
    assert "99 %" in notes(translator, long_)[0].en and "8" in notes(translator, long_)[0].en
    odd = translator.translate(["我爱狗狗龙"])[0]
    assert [n.kind for n in notes(translator, odd)] == ["unknown"]
    del translator.meta["source_lengths"]
    assert notes(translator, long_) == []  # no recorded lengths, no length claim
    couplets = _translator()
    couplets.task = get_task("couplet")  # a couplet's note speaks of 上联 and 下联, not of translation and BLEU
    (note,) = notes(couplets, couplets.translate(["我喜欢猫今天很好你呢"])[0])
    assert "上联" in note.zh and "下联" in note.en and "BLEU" not in note.en + note.zh and "译文" not in note.zh


def test_the_unknown_note_needs_more_than_a_fifth_of_the_tokens_unknown():
    translator = _translator()
    del translator.meta["source_lengths"]
    one_in_five = translator.translate(["我喜欢猫狗"])[0]  # 狗 unknown: 1 of 5, not more than a fifth
    assert one_in_five.unknown.count("狗") == 1 and notes(translator, one_in_five) == []
    two_in_five = translator.translate(["我喜欢狗龙"])[0]
    (note,) = notes(translator, two_in_five)
    assert note.kind == "unknown" and "2 of 5" in note.en and "狗 龙" in note.en and "2 个" in note.zh
