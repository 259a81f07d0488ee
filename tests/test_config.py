"""Model configs: every bad field named in its message, and a round trip through JSON."""

import json

import pytest

from attention_core.model.config import ModelConfig


def config(**fields) -> ModelConfig:
    return ModelConfig(**{"src_vocab_size": 20, "tgt_vocab_size": 20, **fields})


@pytest.mark.parametrize(("fields", "message"), [
    ({"score": "cosine"}, "score"),
    ({"attention": "local"}, "attention mode"),
    ({"rnn": "rnn"}, "rnn"),
    ({"window": 3}, "a global model takes no window"),
    ({"attention": "local-p"}, "needs a window"),
    ({"dropout": 1.0}, "dropout"),
    ({"hidden_size": "8"}, "hidden_size must be an integer"),
    ({"tie_embeddings": 1}, "tie_embeddings must be true or false"),
    ({"share_embeddings": True, "tgt_vocab_size": 21}, "share_embeddings"),
    ({"eos_id": 0}, "must differ"),
    ({"pad_id": 25}, "pad_id must be a token id"),
    ({"decoder": "transformer", "score": "general"}, "scaled_dot"),
    ({"decoder": "transformer", "score": "scaled_dot", "emb_size": 8, "hidden_size": 16}, "emb_size == hidden_size"),
    ({"decoder": "transformer", "score": "scaled_dot", "emb_size": 18, "hidden_size": 18, "heads": 4},
     "heads"),
])
def test_validate_names_the_bad_field(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        config(**fields).validate()


def test_valid_configs_pass() -> None:
    assert config(attention="local-p", window=2).validate().window == 2
    assert config(decoder="transformer", score="scaled_dot", emb_size=16, hidden_size=16).validate()


def test_to_dict_from_dict_round_trip() -> None:
    cfg = config(decoder="bahdanau", score="concat", tie_embeddings=True, length_ratio=0.96)
    assert ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
