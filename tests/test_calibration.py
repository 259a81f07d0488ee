"""The cliché calibration: it measures over-production against the references and stores it for the penalty."""

import torch

from attention_core.analysis.calibration import calibrate_overproduction
from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def test_overproduced_characters_are_measured_and_stored() -> None:
    torch.manual_seed(0)
    vocab = Vocab(list("两个黄鹂鸣翠柳一行白鹭上青天风"))
    cfg = ModelConfig(len(vocab), len(vocab), hidden_size=8, emb_size=8, share_embeddings=True)
    model = build_model(cfg).eval()
    with torch.no_grad():  # a model that writes 风 wherever it can
        model.generator.bias.zero_()
        model.generator.bias[vocab.stoi["风"]] = 20.0
    translator = Translator(model, vocab, vocab, get_task("couplet"))
    pairs = [("两个黄鹂", "一行白鹭"), ("鸣翠柳", "上青天")]
    table = calibrate_overproduction(translator, pairs, rounds=1, beam_size=1)
    assert table["风"] > 0  # never in a reference, written by the model: over-produced
    assert translator.meta["overproduction"] is table
    assert all(v > 0 for v in table.values())
