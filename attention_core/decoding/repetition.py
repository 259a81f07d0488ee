"""The loop guard: a search constraint that keeps an output out of a loop.

A model that has not learnt where a sentence ends can fall into a loop whose every token is likely
("a.m. . . . . . .", "just just just just", "a. a. a. a."). Beam search with length normalisation then *prefers*
the loop: its tokens cost almost nothing, so its score per token keeps improving, and every beam can reach the
length limit without an ``<eos>``. The translation model retrained on TV dialogue (issue #29) wrote a loop for 189 of
the 1,320 held-out TV utterances of ``tv4dialog-dev`` (beam 5; 90 of them reached the limit).

The guard masks, at each step, the tokens that would

* make a run of one token longer than ``max_run`` (``3`` lets an ellipsis through: ``...`` is three ``.``), or
* complete an n-gram of ``ngram`` tokens that the output already holds (the remedy of fairseq's and Hugging Face's
  ``no_repeat_ngram_size``; a long n-gram, because short ones occur twice in good sentences, and subword pieces
  make a word several tokens).

Measured on dev (``results/loop_guard.md``) before it became the translation task's default.

Examples:
    >>> import torch
    >>> guard = LoopGuard(max_run=2, ngram=3)
    >>> guard.apply(torch.zeros(1, 8), 2, torch.tensor([[5, 5]]))[0].tolist()  # a third 5 in a row
    [0.0, 0.0, 0.0, 0.0, 0.0, -inf, 0.0, 0.0]
    >>> guard.apply(torch.zeros(1, 8), 6, torch.tensor([[1, 2, 3, 4, 1, 2]]))[0].tolist()  # (1, 2, 3) again
    [0.0, 0.0, 0.0, -inf, 0.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True)
class LoopGuard:
    """Forbid long runs of one token and repeated long n-grams.

    A [`Constraint`][attention_core.decoding.search.Constraint].

    Attributes:
        max_run: The most times one token may follow itself (at least 1).
        ngram: No n-gram of this many tokens occurs twice in an output (at least 2).
    """

    max_run: int = 3
    ngram: int = 6

    def __post_init__(self) -> None:
        if self.max_run < 1 or self.ngram < 2:
            raise ValueError(f"the loop guard needs max_run >= 1 and ngram >= 2, got {self.max_run} and {self.ngram}")

    def expand(self, index: Tensor) -> LoopGuard:
        """The same guard for any rows: it reads only each row's own prefix."""
        return self

    def apply(self, logprobs: Tensor, t: int, prefix: Tensor) -> Tensor:
        """Mask the tokens that would lengthen a run past ``max_run`` or repeat an n-gram of the prefix.

        Args:
            logprobs: Log-probabilities ``(B, V)`` of output position ``t``.
            t: The output position (``prefix`` holds ``t`` tokens).
            prefix: The tokens generated so far ``(B, t)``.

        Returns:
            ``logprobs`` with the forbidden tokens at ``-inf`` (the same tensor, changed in place).
        """
        if t >= self.max_run:
            tail = prefix[:, t - self.max_run :]  # (B, max_run)
            rows = (tail == tail[:, -1:]).all(dim=1).nonzero().flatten()
            logprobs[rows, tail[rows, -1]] = float("-inf")
        n = self.ngram
        if t >= n:
            windows = prefix.unfold(1, n, 1)  # (B, t - n + 1, n): every n-gram of the prefix
            last = prefix[:, t - n + 1 :]  # (B, n - 1): the start of the n-gram being completed
            rows, starts = (windows[:, :, :-1] == last.unsqueeze(1)).all(dim=2).nonzero(as_tuple=True)
            logprobs[rows, windows[rows, starts, -1]] = float("-inf")
        return logprobs
