"""The Translator: inputs checked with a message a reader understands, outputs in input order, batching invisible."""

import pytest
import torch

from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import InputError, Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

CHARS = "我喜欢自然语言处理今天气很好两个黄鹂鸣翠柳"


def translator(task: str = "translation") -> Translator:
    torch.manual_seed(0)
    src = Vocab(list(dict.fromkeys(CHARS)))
    tgt = src if task == "couplet" else Vocab("i like natural language processing the weather is nice today .".split())
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8,
                      share_embeddings=task == "couplet")
    return Translator(build_model(cfg).eval(), src, tgt, get_task(task))


@pytest.mark.parametrize(("task", "text", "message"), [
    ("translation", "", "the input is empty"),
    ("translation", "\u200b ", "the input is empty"),  # invisible characters only
    ("translation", "hello", "type a Chinese sentence"),
    ("couplet", "hello", "type a 上联"),
    ("couplet", "今天2024", "write numbers in characters"),
    ("couplet", "今天abc", "write it in Chinese"),
])
def test_bad_input_says_what_to_type(task: str, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        translator(task).tokenize(text)


def test_too_long_names_the_limit() -> None:
    with pytest.raises(InputError, match="the input has 9 tokens; the limit is 4"):
        translator().translate(["我喜欢自然语言处理"], max_tokens=4)


def test_outputs_come_in_input_order_whatever_the_batching() -> None:
    model = translator()
    texts = ["我喜欢自然语言处理", "今天", "天气很好", "我喜欢今天"]
    together = model.translate(texts, batch_size=64)
    one_by_one = [model.translate([t], batch_size=1)[0] for t in texts]
    assert [o.source_tokens for o in together] == [list(t) for t in texts]
    assert [o.tokens for o in together] == [o.tokens for o in one_by_one]
    for a, b in zip(together, one_by_one):
        torch.testing.assert_close(a.weights, b.weights, rtol=1e-4, atol=1e-5)  # padding changes nothing


def test_an_output_carries_its_attention() -> None:
    out = translator().translate(["我喜欢自然语言处理"], beam_size=3)[0]
    assert out.weights.shape == (len(out.tokens) + out.finished, len(out.source_tokens))
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(out.weights.size(0)))
