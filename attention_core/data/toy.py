"""Synthetic tasks whose correct alignment is known: reverse, copy, sort.

Used by the tests (the bottleneck test) and by the app's live-training tab. Symbols are the
ids ``4 … 4 + n_symbols − 1`` (after the four special tokens), so one vocabulary size serves
source and target.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attention_core.data.batch import Batch, make_batch
from attention_core.data.vocab import SPECIALS, Vocab

TASKS: dict[str, Callable[[list[int]], list[int]]] = {
    "reverse": lambda seq: seq[::-1],
    "copy": lambda seq: list(seq),
    "sort": sorted,
}
"""Toy tasks by name: each maps a source sequence to its target."""


def expected_alignment(task: str, length: int) -> list[int]:
    """The source position each target position should attend to (``-1`` when it is not unique).

    Args:
        task: A key of ``TASKS``.
        length: Sequence length.

    Returns:
        One source index per target position.
    """
    if task == "reverse":
        return [length - 1 - i for i in range(length)]
    if task == "copy":
        return list(range(length))
    return [-1] * length


def alignment_hits(task: str, weights: Tensor, length: int) -> int:
    """How many of the first ``length`` rows of an attention matrix peak at the expected source position.

    Args:
        task: A key of ``TASKS`` (``sort`` has no unique alignment, so it never scores).
        weights: Attention matrix ``(T, S)``; missing rows count as misses.
        length: Sequence length.
    """
    argmax = weights[:length].argmax(dim=-1).tolist()
    return sum(a == e for a, e in zip(argmax, expected_alignment(task, length)))


def toy_vocab(n_symbols: int) -> Vocab:
    """A vocabulary whose regular tokens are the symbols ``0 … n_symbols − 1`` written as text."""
    return Vocab([str(i) for i in range(n_symbols)])


def sample_batch(
    task: str,
    batch_size: int,
    min_len: int,
    max_len: int,
    n_symbols: int,
    generator: torch.Generator,
) -> Batch:
    """Draw a random batch of a toy task.

    Args:
        task: A key of ``TASKS``.
        batch_size: Number of pairs.
        min_len: Shortest sequence (at least 1).
        max_len: Longest sequence.
        n_symbols: Alphabet size.
        generator: Seeded random generator (makes the data deterministic).

    Raises:
        ValueError: On an unknown task or impossible lengths.
    """
    if task not in TASKS:
        raise ValueError(f"unknown toy task {task!r}; valid tasks: {', '.join(TASKS)}")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got {min_len} and {max_len}")
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator).tolist()
    first = len(SPECIALS)
    pairs = []
    for n in lengths:
        seq = (torch.randint(0, n_symbols, (n,), generator=generator) + first).tolist()
        pairs.append((seq, TASKS[task](seq)))
    return make_batch(pairs)
