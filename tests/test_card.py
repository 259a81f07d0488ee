"""A model card says the architecture it describes, and a model of your own's card its data and sides."""

from attention_core.data.parallel import Side, TaskSpec, make_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.hub.card import architecture, own_model_card
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def test_architecture_names_what_the_config_builds() -> None:
    rnn = architecture(ModelConfig(10, 10, decoder="luong", score="general", attention="local-p", window=4,
                                   hidden_size=32, emb_size=16))
    assert "decoder `luong`" in rnn and "score `general`" in rnn and "window D = 4" in rnn and "hidden 32" in rnn
    assert "no attention" in architecture(ModelConfig(10, 10, decoder="none"))
    assert "Transformer" in architecture(ModelConfig(10, 10, decoder="transformer", score="scaled_dot",
                                                     hidden_size=16, emb_size=16))


def test_own_model_card() -> None:
    spec = TaskSpec(source=Side(tokenizer="word", language="de"), target=Side(tokenizer="char", language="fr"))
    src, tgt = Vocab(["hallo", "welt"]), Vocab(list("bonjur"))
    cfg = ModelConfig(len(src), len(tgt), hidden_size=8, emb_size=8)
    translator = Translator(build_model(cfg), src, tgt, make_task(spec), {"data": {}})
    card = own_model_card(translator, "you/de-fr")
    assert "you/de-fr" in card and "(de)" in card and "(fr)" in card and "whitespace-separated words" in card
