"""Vocabularies: specials first, frequency order, unknowns, round trips through JSON, and what a bad file says."""

import json

import pytest

from attention_core.data.vocab import SPECIALS, Vocab


def test_build_orders_by_frequency_then_token_and_drops_rare() -> None:
    vocab = Vocab.build([["b", "a", "c"], ["a", "b", "d"], ["a"]], min_freq=2)
    assert vocab.itos == [*SPECIALS, "a", "b"]  # a: 3, b: 2; c and d seen once
    assert vocab.counts == [0, 0, 0, 0, 3, 2]
    assert "c" not in vocab and len(vocab) == 6


def test_a_corpus_unk_token_is_not_a_second_unk() -> None:
    vocab = Vocab.build([["<unk>", "x"]])
    assert vocab.itos.count("<unk>") == 1 and vocab.encode(["<unk>"]) == [vocab.unk_id]


def test_encode_and_decode() -> None:
    vocab = Vocab(["x", "y"])
    assert vocab.encode(["y", "z"]) == [5, vocab.unk_id]
    assert vocab.decode([vocab.bos_id, 4, vocab.pad_id, 5, vocab.eos_id, 4]) == ["x", "y"]  # stops at <eos>


def test_save_load_round_trip(tmp_path) -> None:
    vocab = Vocab.build([["你", "好", "你"]], min_freq=1)
    vocab.save(tmp_path / "v.json")
    back = Vocab.load(tmp_path / "v.json")
    assert back.itos == vocab.itos and back.counts == vocab.counts and back.min_freq == 1


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not valid UTF-8 JSON"),
    (json.dumps({"tokens": ["a", "b"]}), "specials"),
    (json.dumps({"tokens": [*SPECIALS, "a", "a"]}), "unique"),
    (json.dumps({"tokens": [*SPECIALS, ""]}), "non-empty strings"),
    (json.dumps({"tokens": [*SPECIALS, "a"], "counts": [1]}), "counts"),
    (json.dumps({"tokens": [*SPECIALS, "a"], "min_freq": -1}), "min_freq"),
])
def test_a_bad_file_is_named(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "v.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as err:
        Vocab.load(path)
    assert str(path) in str(err.value)
