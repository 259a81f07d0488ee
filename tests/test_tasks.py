import random

import pytest
import torch

from attention_core.data.batch import make_batch
from attention_core.data.tasks import (
    DataError,
    Example,
    bucketed_batches,
    encode_pairs,
    get_task,
    read_cmn_eng,
    read_couplets,
    split_couplet,
    split_translation,
)
from attention_core.data.text import (
    detokenize_chinese,
    detokenize_english,
    normalize_chinese,
    tokenize_chinese,
    tokenize_english,
)
from attention_core.data.vocab import Vocab


def _write_cmn(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\ufeff" + "\n".join(lines) + "\n\n", encoding="utf-8")


def test_cmn_eng_reader_handles_bom_blank_and_malformed_lines(tmp_path):
    _write_cmn(
        tmp_path / "cmn-eng" / "cmn.txt",
        [
            "Hi.\t嗨。\tCC-BY 2.0 (France) Attribution: tatoeba.org #1",
            "only english",
            "\t空的英语\tx",
            "Run!\t跑！\tCC",
        ],
    )
    corpus = read_cmn_eng(tmp_path)
    assert corpus.pairs == [("嗨。", "Hi."), ("跑！", "Run!")]
    assert corpus.skipped == 2


def test_couplet_reader_counts_empty_and_unpaired_lines(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "in.txt").write_text("春 风 \n\n秋 月 \n多 余 \n", encoding="utf-8")
    (tmp_path / "train" / "out.txt").write_text("夏 雨 \n冬 雪 \n\n", encoding="utf-8")
    corpus = read_couplets(tmp_path, "train")
    assert corpus.pairs == [("春风", "夏雨")]
    assert corpus.skipped == 3  # one unpaired line, one empty 上联, one empty 下联


def test_missing_corpus_gives_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="--data"):
        read_cmn_eng(tmp_path)


def test_traditional_and_simplified_are_one_token():
    assert tokenize_chinese("這個") == tokenize_chinese("这个") == ["这", "个"]
    assert normalize_chinese("你好,世界!") == "你好，世界！"


def test_english_tokenizer_and_detokenizer_round_trip():
    text = "Don't worry, I'm here! It costs $3.50 (really)."
    tokens = tokenize_english(text)
    assert tokens[:3] == ["don", "'t", "worry"]
    assert "3.50" in tokens
    assert detokenize_english(tokens) == "Don't worry, I'm here! It costs $3.50 (really)."
    assert detokenize_chinese(["tom", "和", "我"]) == "tom和我"


def test_unknown_tokens_become_unk():
    vocab = Vocab.build([["我", "你"]])
    assert vocab.encode(["我", "他"]) == [vocab.stoi["我"], vocab.unk_id]


def _fake_cmn(tmp_path, n=3000):
    lines = [f"Sentence {i}.\t句子{i}号。\tCC" for i in range(n)]
    lines += [lines[0], "Another for 0.\t句子0号。\tCC"]  # a duplicate pair and a second translation
    _write_cmn(tmp_path / "cmn-eng" / "cmn.txt", lines)


def test_translation_split_is_deterministic_sized_and_disjoint(tmp_path):
    _fake_cmn(tmp_path)
    a, b = split_translation(tmp_path, seed=7), split_translation(tmp_path, seed=7)
    assert (a.train, a.dev, a.test) == (b.train, b.dev, b.test)
    assert len(a.test) == 1000 and len(a.dev) == 1000
    assert a.info["duplicates_dropped"] == 1
    sources = [{s for s, _ in part} for part in (a.train, a.dev, a.test)]
    assert not (sources[0] & sources[1]) and not (sources[0] & sources[2]) and not (sources[1] & sources[2])
    c = split_translation(tmp_path, seed=8)
    assert c.test != a.test


def test_couplet_split_uses_the_given_test_set(tmp_path):
    for split, n in (("train", 1500), ("test", 20)):
        folder = tmp_path / "couplet" / split
        folder.mkdir(parents=True)
        (folder / "in.txt").write_text("".join(f"上 {i} \n" for i in range(n)), encoding="utf-8")
        (folder / "out.txt").write_text("".join(f"下 {i} \n" for i in range(n)), encoding="utf-8")
    splits = split_couplet(tmp_path, seed=3)
    assert len(splits.test) == 20 and len(splits.dev) == 1000 and len(splits.train) == 500
    assert not set(splits.dev) & set(splits.train)


def test_bucketed_batches_cover_every_example_once_with_masks():
    task = get_task("couplet")
    pairs = [("春" * n, "秋" * n) for n in range(1, 40)] * 3
    vocab = Vocab.build([["春", "秋"]])
    examples = encode_pairs(pairs, task, vocab, vocab)
    batches = list(bucketed_batches(examples, batch_size=8, seed=1, pool=4))
    assert sum(b.size for b in batches) == len(examples)
    for batch in batches:
        mask = torch.arange(batch.src.size(1)) < batch.src_lengths.unsqueeze(1)
        assert ((batch.src != 0) == mask).all()
        assert (batch.tgt_out.gather(1, (batch.tgt_lengths - 1).unsqueeze(1)) == vocab.eos_id).all()
    spread = [int(b.src_lengths.max() - b.src_lengths.min()) for b in batches]
    assert sum(spread) / len(spread) < 10  # bucketing keeps lengths together (random would be ~25)


def _batches_pair_by_pair(examples, batch_size, shuffle=True, seed=0, pool=50):
    """The batches as ``bucketed_batches`` made them with a Python sort and ``make_batch`` per batch (before #52)."""
    order = list(range(len(examples)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    chunks, span = [], batch_size * pool
    for start in range(0, len(order), span):
        chunk = order[start : start + span]
        if shuffle:
            chunk.sort(key=lambda i: (len(examples[i].src_ids), len(examples[i].tgt_ids)))
        chunks += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    if shuffle:
        rng.shuffle(chunks)
    return [make_batch([(examples[i].src_ids, examples[i].tgt_ids) for i in chunk]) for chunk in chunks]


@pytest.mark.parametrize("shuffle", [True, False])
def test_bucketed_batches_are_the_batches_made_pair_by_pair(shuffle):
    """Vectorised, the epoch's batches are still exactly the old ones: a run checkpointed within an epoch by the
    older code resumes at the same batch, and every seed gives the order it gave."""
    rng = random.Random(5)
    examples = [Example([], [], [rng.randrange(4, 90) for _ in range(rng.randint(1, 12))],
                        [rng.randrange(4, 90) for _ in range(rng.randint(1, 12))]) for _ in range(700)]
    for seed in (0, 3):
        new = list(bucketed_batches(examples, 16, shuffle=shuffle, seed=seed, pool=5))
        old = _batches_pair_by_pair(examples, 16, shuffle=shuffle, seed=seed, pool=5)
        assert len(new) == len(old) == 44
        for a, b in zip(new, old, strict=True):
            assert all(torch.equal(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)


def test_a_corpus_that_writes_a_special_token_builds_its_vocabulary():
    """A user's corpus may contain the text "<unk>" or "<pad>": it is the special token, not a second entry.

    Subword pieces of a character the pieces never saw are "<unk>" too. Counted as a regular token, it left the
    vocabulary's counts one longer than its tokens and the run stopped with a ValueError before its first batch.
    """
    vocab = Vocab.build([["a", "<unk>", "b"], ["<pad>", "a"]])
    assert vocab.itos == ["<pad>", "<unk>", "<bos>", "<eos>", "a", "b"]
    assert vocab.counts == [0, 0, 0, 0, 2, 1]
    assert vocab.encode(["<unk>", "a"]) == [vocab.unk_id, 4]


def test_english_detokeniser_writes_times_and_abbreviations_whole_and_starts_each_sentence_with_a_capital():
    assert detokenize_english(["6", ":", "00", "a", ".", "m", ".", "it", "'s", "early", "."]) == "6:00 a.m. it's early."
    assert detokenize_english(["no", ".", "it", "'s", "fine", "!", "well", ".", ".", ".", "ok", "."]) == \
        "No. It's fine! Well... ok."
    assert detokenize_english(["mr", ".", "smith", "said", "i", ".", "e", ".", "no", "."]) == "Mr. smith said i.e. no."
    assert detokenize_english(["it", "costs", "3.50", ".", "i", "paid", "."]) == "It costs 3.50. I paid."
    assert detokenize_english("so do i .".split()) == "So do I."
    assert detokenize_english("at 9 p . m . a friend came .".split()) == "At 9 p.m. a friend came."  # "a" is a word
