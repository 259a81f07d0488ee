"""One encoded corpus per task: written once, read back the same by every later run, checked when read."""

from __future__ import annotations

import json

import pytest

from attention_core.data import encoded
from attention_core.data.encoded import EncodedCorpusError, VocabularySettings, load_or_encode
from attention_core.data.subword import Subwords
from attention_core.data.tasks import Splits, get_task
from attention_core.decoding.folder import load_folder
from attention_core.training.loop import TrainConfig, fit

SETTINGS = VocabularySettings(subword_vocab=60, min_freq=1, max_len=20, shared=False)
WORDS = ["cat", "cats", "dog", "dogs", "sleeps", "sleeping", "runs", "running", "the", "a", "home", "house"]
HANZI = ["猫", "狗", "睡觉", "跑", "家", "房子", "这", "一只"]


def pairs(n: int = 120) -> list[tuple[str, str]]:
    """Synthetic Chinese → English pairs whose English words share many pieces (so BPE has ties to break)."""
    return [(f"{HANZI[i % 8]}{HANZI[(i // 8) % 8]}。", f"the {WORDS[i % 12]} {WORDS[(i * 5) % 12]} .")
            for i in range(n)]


def test_the_first_run_writes_the_corpus_and_a_later_one_reads_the_same(tmp_path):
    task, data = get_task("translation"), pairs()
    first, how = load_or_encode(tmp_path, task, data, 100, SETTINGS)
    assert how == "written"
    again, how = load_or_encode(tmp_path, task, data, 100, SETTINGS)
    assert how == "read" and again.key == first.key
    assert again.task.subwords.tokenizer.to_str() == first.task.subwords.tokenizer.to_str()
    assert again.src_vocab.itos == first.src_vocab.itos and again.tgt_vocab.itos == first.tgt_vocab.itos
    assert [(e.src_ids, e.tgt_ids) for e in again.own] == [(e.src_ids, e.tgt_ids) for e in first.own]
    assert (len(again.own), len(again.extra)) == (100, 20)
    assert any(t.startswith("##") for e in again.own for t in e.tgt)  # the pieces are on the task
    # other settings, or other data, are another corpus
    _, how = load_or_encode(tmp_path, task, data, 100, VocabularySettings(80, 1, 20, False))
    assert how == "written"
    _, how = load_or_encode(tmp_path, task, data[:-1], 100, SETTINGS)
    assert how == "written"
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("translation-")]) == 3


def test_a_damaged_file_is_an_error_that_names_it(tmp_path):
    task, data = get_task("translation"), pairs()
    corpus, _ = load_or_encode(tmp_path, task, data, 100, SETTINGS)
    folder = tmp_path / f"translation-{corpus.key}"
    whole = (folder / encoded.EXAMPLES).read_text(encoding="utf-8")
    lines = whole.splitlines()
    lines[3] = json.dumps([["猫"], ["the", "dog"]], ensure_ascii=False)
    (folder / encoded.EXAMPLES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(EncodedCorpusError, match=f"{encoded.EXAMPLES} differs from its checksum.*delete"):
        load_or_encode(tmp_path, task, data, 100, SETTINGS)
    (folder / encoded.EXAMPLES).write_text(whole, encoding="utf-8")
    assert load_or_encode(tmp_path, task, data, 100, SETTINGS)[1] == "read"
    (folder / "subwords.json").unlink()
    with pytest.raises(EncodedCorpusError, match="not a whole encoded corpus"):
        load_or_encode(tmp_path, task, data, 100, SETTINGS)


def test_a_write_that_fails_leaves_no_folder_and_a_resumed_run_keeps_its_pieces(tmp_path, monkeypatch):
    task, data = get_task("translation"), pairs()

    def broken(self, path):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(encoded.Vocab, "save", broken)
        with pytest.raises(OSError, match="disk full"):
            load_or_encode(tmp_path, task, data, 100, SETTINGS)
    assert list(tmp_path.iterdir()) == []  # no half folder, no temporary one
    saved, _ = load_or_encode(tmp_path, task, data, 100, SETTINGS)
    other = Subwords.train((task.tokenize_tgt(t) for _, t in data), 90)  # not the saved pieces
    mine, how = load_or_encode(tmp_path, task, data, 100, SETTINGS, subwords=other)
    assert how == "own pieces" and mine.task.subwords is other and len(mine.tgt_vocab) != len(saved.tgt_vocab)
    same, how = load_or_encode(tmp_path, task, data, 100, SETTINGS, subwords=saved.task.subwords)
    assert how == "read"


def test_two_variants_train_on_one_encoded_corpus(tmp_path, capsys):
    data = pairs(160)
    splits = Splits(data[:120], data[120:140], data[140:], {"task": "translation"}, main_train_size=100)
    cfg = TrainConfig(epochs=1, batch_size=16, min_freq=1, subword_vocab=60, max_len=20)
    runs = {}
    for variant, options in (("dot", dict(score="dot")), ("none", dict(decoder="none"))):
        fit(get_task("translation"), splits, tmp_path / variant, dict(hidden_size=16, emb_size=8, **options), cfg,
            progress=False, encoded=tmp_path / "encoded")
        runs[variant] = load_folder(tmp_path / variant)
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "encoded-corpus" in line]
    assert [e["how"] for e in events] == ["written", "read"]
    dot, none = runs["dot"], runs["none"]
    assert dot.task.subwords.tokenizer.to_str() == none.task.subwords.tokenizer.to_str()
    assert dot.src_vocab.itos == none.src_vocab.itos and dot.tgt_vocab.itos == none.tgt_vocab.itos
