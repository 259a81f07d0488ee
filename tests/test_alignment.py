"""Gold alignments, attention turned into links, and AER, against hand-computed cases."""

import pytest
import torch

from attention_core.analysis.alignment import (
    Counts,
    Gold,
    argmax_links,
    count,
    diagonal_links,
    evaluate_links,
    force_decode,
    grow_diag_final_and,
    parse_links,
    pool,
    read_denero,
    read_gold,
    read_tsinghua,
    threshold_links,
)
from attention_core.data.batch import make_batch
from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def test_links_are_read_in_both_formats_and_possible_includes_sure():
    assert parse_links("1-1 2-3 3p2", one_based=True, possible_mark="p") == (
        frozenset({(0, 0), (1, 2)}), frozenset({(0, 0), (1, 2), (2, 1)}))
    assert parse_links("0-0 1-0 3-4-P", one_based=False, possible_mark="-P") == (
        frozenset({(0, 0), (1, 0)}), frozenset({(0, 0), (1, 0), (3, 4)}))
    with pytest.raises(ValueError):
        parse_links("0-1", one_based=True, possible_mark="p")  # 0 in a 1-based file


def test_gold_files_are_read_with_their_own_indexing(tmp_path):
    (tmp_path / "zhen.src-tgt").write_text("我 喜欢 猫 ||| i like cats\n你 好 ||| hello\n", encoding="utf-8")
    (tmp_path / "zhen.gold").write_text("1-1 2-2 3-3\n1p1 2-1\n", encoding="utf-8")
    first, second = read_tsinghua(tmp_path)
    assert first.source == ("我", "喜欢", "猫") and first.target == ("i", "like", "cats")
    assert first.sure == {(0, 0), (1, 1), (2, 2)} and second.sure == {(1, 0)} and second.possible == {(0, 0), (1, 0)}
    (tmp_path / "train.zh").write_text("印 尼\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("-LRB- Indonesia\n", encoding="utf-8")
    (tmp_path / "train.align").write_text("0-1 1-1-P\n", encoding="utf-8")
    [gold] = read_denero(tmp_path)
    assert gold.sure == {(0, 1)} and gold.possible == {(0, 1), (1, 1)}
    (tmp_path / "train.align").write_text("0-2\n", encoding="utf-8")  # target index 2 of a 2-token sentence
    with pytest.raises(ValueError, match="outside a 2 × 2 pair"):
        read_denero(tmp_path)
    (tmp_path / "zhen.gold").write_text("1-1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 sentence pairs but 1 link lines"):
        read_tsinghua(tmp_path)
    with pytest.raises(ValueError, match="unknown gold set"):
        read_gold(tmp_path, "other")


GOLD = Gold(("a", "b", "c"), ("x", "y", "z"), frozenset({(0, 0), (1, 2)}), frozenset({(0, 0), (1, 2), (1, 1)}))


def test_aer_precision_recall_by_hand():
    predicted = {(0, 0), (1, 1), (2, 2)}  # one sure hit, one possible-only hit, one miss
    assert count(predicted, GOLD) == Counts(predicted=3, sure=2, hit_sure=1, hit_possible=2)
    r = evaluate_links([predicted], [GOLD], samples=0)
    assert r == pytest.approx({"aer": 1 - (1 + 2) / (3 + 2), "precision": 2 / 3, "recall": 1 / 2})
    # corpus level: counts are summed before dividing (not a mean of sentence AERs)
    perfect = Gold(("a",), ("x",), frozenset({(0, 0)}), frozenset({(0, 0)}))
    both = evaluate_links([predicted, {(0, 0)}], [GOLD, perfect], samples=0)
    assert both["aer"] == pytest.approx(1 - (2 + 3) / (4 + 3))
    assert evaluate_links([set()], [GOLD], samples=0) == {"aer": 1.0, "precision": 0.0, "recall": 0.0}


def test_bootstrap_interval_brackets_the_corpus_score():
    sets = [GOLD] * 10 + [Gold(("a",), ("x",), frozenset({(0, 0)}), frozenset({(0, 0)}))] * 10
    predicted = [{(0, 0), (1, 1), (2, 2)}] * 10 + [{(0, 0)}] * 10
    r = evaluate_links(predicted, sets, samples=300)
    assert r["aer_low"] < r["aer"] < r["aer_high"]
    same = evaluate_links([{(0, 0)}] * 5, [sets[-1]] * 5, samples=50)
    assert same["aer_low"] == same["aer"] == same["aer_high"] == 0.0
    with pytest.raises(ValueError, match="2 predictions for 1 gold"):
        evaluate_links([set(), set()], [GOLD])


def test_pooling_averages_pieces_and_sums_characters():
    w = torch.tensor([[0.5, 0.3, 0.2],
                      [0.1, 0.1, 0.8],
                      [0.0, 1.0, 0.0]])  # 3 pieces × 3 characters
    pooled = pool(w, target_groups=[[0, 1], [], [2]], source_groups=[[0, 1], [2], []])
    torch.testing.assert_close(pooled, torch.tensor([[0.5, 0.5, 0.0],
                                                     [0.0, 0.0, 0.0],
                                                     [1.0, 0.0, 0.0]]))
    layered = pool(torch.stack([w, w.flip(-1)]), [[0], [1, 2]], [[0], [1, 2]])  # leading dims (layers) kept
    assert layered.shape == (2, 2, 2)
    torch.testing.assert_close(layered[1, 0], torch.tensor([0.2, 0.8]))


def test_link_rules_and_baselines():
    m = torch.tensor([[0.1, 0.9], [0.6, 0.4], [0.0, 0.0]])
    assert argmax_links(m) == {(1, 0), (0, 1)}  # the empty row links nowhere
    assert threshold_links(m, 0.4) == {(1, 0), (0, 1), (1, 1)}
    assert threshold_links(m, 0.95) == set()
    assert diagonal_links(3, 3) == {(0, 0), (1, 1), (2, 2)} and diagonal_links(0, 2) == set()
    assert diagonal_links(4, 2) == {(1, 0), (3, 1)}
    # grow-diag-final-and: the intersection, grown into neighbours of the union, then unaligned words
    forward, reverse = {(0, 0), (1, 1), (3, 3)}, {(0, 0), (1, 2), (2, 2)}
    assert grow_diag_final_and(forward, reverse) == {(0, 0), (1, 1), (1, 2), (2, 2), (3, 3)}
    assert grow_diag_final_and({(0, 0)}, {(5, 5)}) == {(0, 0), (5, 5)}


def test_force_decode_pools_the_models_own_attention_onto_gold_words():
    src = Vocab(list("我喜欢猫"))
    tgt = Vocab(["i", "like", "cats", "."])
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8,
                      decoder="luong", score="general")
    translator = Translator(build_model(cfg).eval(), src, tgt, get_task("translation"), {})
    gold = Gold(("我", "喜欢", "猫", "狗"), ("I", "like", "cats", "."), frozenset(), frozenset())
    forced = force_decode(translator, gold)
    assert forced.weights.shape == (4, 4) and forced.unknown_characters == 1  # 狗 is unknown
    torch.testing.assert_close(forced.weights.sum(dim=-1), torch.ones(4))  # each word's attention sums to 1
    batch = make_batch([(src.encode(list("我喜欢猫狗")), tgt.encode(["i", "like", "cats", "."]))])
    with torch.inference_mode():
        weights = translator.model(batch.src, batch.src_lengths, batch.tgt_in)[1][0]  # (T + 1, S)
    torch.testing.assert_close(forced.weights[:, 1], weights[:4, 1] + weights[:4, 2])  # 喜欢 = 喜 + 欢
    torch.testing.assert_close(forced.weights[:, 0], weights[:4, 0])


def test_force_decode_of_a_subword_model_groups_each_words_pieces_once():
    """The task's tokeniser already gives pieces: a gold word's row is the mean of exactly its pieces' rows."""
    from attention_core.data.subword import Subwords

    task = get_task("translation")
    words = ["i", "like", "cats", "and", "dogs", "unbelievably"] * 3
    subwords = Subwords.train([words], vocab_size=40, min_frequency=1)
    task = task.with_subwords(subwords)
    pieces = {w: task.tokenize_tgt(w) for w in ("Unbelievably", "cats")}
    assert "<unk>" not in pieces["Unbelievably"] and len(pieces["Unbelievably"]) > 1  # split once, into known pieces
    src = Vocab(list("我喜欢猫"))
    tgt = Vocab(sorted({p for w in words for p in task.tokenize_tgt(w)}))
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8,
                      decoder="luong", score="dot")
    translator = Translator(build_model(cfg).eval(), src, tgt, task, {})
    forced = force_decode(translator, Gold(("我", "猫"), ("Unbelievably", "cats"), frozenset(), frozenset()))
    target = pieces["Unbelievably"] + pieces["cats"]
    batch = make_batch([(src.encode(list("我猫")), tgt.encode(target))])
    with torch.inference_mode():
        weights = translator.model(batch.src, batch.src_lengths, batch.tgt_in)[1][0]
    n = len(pieces["Unbelievably"])
    torch.testing.assert_close(forced.weights[0], weights[:n].mean(dim=0))
    torch.testing.assert_close(forced.weights[1], weights[n: len(target)].mean(dim=0))
