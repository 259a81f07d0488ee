"""The live-training toy tasks: targets follow their rule, batches are reproducible, the alignment is scored."""

import pytest
import torch

from attention_core.data.toy import alignment_hits, expected_alignment, sample_batch, toy_vocab


@pytest.mark.parametrize(("task", "rule"), [("reverse", lambda s: s[::-1]), ("copy", list), ("sort", sorted)])
def test_targets_follow_the_rule(task: str, rule) -> None:
    batch = sample_batch(task, 16, 2, 6, 5, torch.Generator().manual_seed(0))
    for b in range(batch.size):
        n = int(batch.src_lengths[b])
        target = batch.tgt_out[b, : int(batch.tgt_lengths[b]) - 1].tolist()
        assert target == rule(batch.src[b, :n].tolist())
        assert 2 <= n <= 6 and all(4 <= s < 9 for s in batch.src[b, :n].tolist())  # symbols after the specials


def test_batches_are_reproducible() -> None:
    a = sample_batch("copy", 8, 1, 5, 7, torch.Generator().manual_seed(3))
    b = sample_batch("copy", 8, 1, 5, 7, torch.Generator().manual_seed(3))
    assert torch.equal(a.src, b.src)


def test_alignment_hits_counts_rows_at_the_expected_position() -> None:
    assert expected_alignment("reverse", 3) == [2, 1, 0] and expected_alignment("sort", 2) == [-1, -1]
    perfect = torch.eye(3).flip(0)  # row i peaks at 2 - i
    assert alignment_hits("reverse", perfect, 3) == 3 and alignment_hits("copy", perfect, 3) == 1
    assert alignment_hits("sort", perfect, 3) == 0


@pytest.mark.parametrize(("task", "lengths", "message"), [("shuffle", (1, 2), "unknown toy task"),
                                                          ("copy", (3, 2), "min_len <= max_len")])
def test_bad_settings(task: str, lengths: tuple[int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_batch(task, 2, *lengths, 5, torch.Generator())


def test_toy_vocab() -> None:
    assert toy_vocab(3).encode(["0", "2"]) == [4, 6]
