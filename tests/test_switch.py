"""The names switch of the editing layer: off, it is the plain translation; on, only for Chinese → English."""

import pytest
import torch

from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.translator import InputError, Translator
from attention_core.editing import switch
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def tiny(task: str = "translation") -> Translator:
    src = Vocab(list(dict.fromkeys("我的朋友张伟汤姆是医生。他们在上海")))
    tgt = Vocab("my friend tom is a doctor they in shanghai .".split()) if task == "translation" else src
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8)
    torch.manual_seed(0)
    return Translator(build_model(cfg).eval(), src, tgt, get_task(task))


def test_off_it_is_the_plain_translation_on_it_reads_carriers():
    translator = tiny()
    texts = ["我的朋友张伟是医生。", "他们在上海。"]
    off = switch.translate(translator, texts, names=False, beam_size=2)
    plain = translator.translate(texts, beam_size=2)
    assert [o.tokens for o in off] == [o.tokens for o in plain] and all(o.names is None for o in off)
    on = switch.translate(translator, texts, config=DecodeConfig(beam_size=2))
    assert on[0].names is not None and "张" not in on[0].source_tokens  # the model read a carrier, not 张伟
    paragraph = switch.translate_paragraph(translator, "我的朋友张伟是医生。他们在上海。", 100, beam_size=2)
    assert [o.text for o in paragraph] == [o.text for o in on]


def test_the_switch_is_refused_where_it_does_not_apply_and_input_errors_speak_of_the_text():
    with pytest.raises(InputError, match="names switch is for models that translate Chinese into English"):
        switch.translate(tiny("couplet"), ["我的朋友"])
    assert switch.translate(tiny("couplet"), ["我的朋友"], names=False)  # off: a couplet model translates
    with pytest.raises(InputError, match="the input has 10 tokens; the limit is 4"):
        switch.translate(tiny(), ["我的朋友张伟是医生。"], max_tokens=4)
    with pytest.raises(TypeError, match="unknown decoding setting"):
        switch.translate(tiny(), ["我的朋友"], beam=2)
