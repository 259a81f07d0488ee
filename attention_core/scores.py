"""Score functions: how well does a query match each key?

Every score function is a small ``nn.Module`` with the same two calls:

* ``prepare(keys)`` turns the encoder outputs ``(B, S, D_k)`` into whatever the score needs
  from the key side (a projection for ``general`` and ``concat``, the keys themselves for
  ``dot``). It runs **once per source sentence**; the result is passed back in at every
  decoder step, so nothing is cached on ``self``.
* ``forward(query, keys)`` takes queries ``(B, T, D_q)`` and the *prepared* keys and returns
  raw scores ``(B, T, S)``.

The registry [`SCORES`][attention_core.scores.SCORES] maps names to classes; it feeds the
command line and the app's drop-down.

Examples:
    >>> import torch
    >>> score = build_score("scaled_dot", query_size=4, key_size=4)
    >>> keys = torch.randn(2, 5, 4)                # (B, S, D_k)
    >>> query = torch.randn(2, 3, 4)               # (B, T, D_q)
    >>> score(query, score.prepare(keys)).shape    # (B, T, S)
    torch.Size([2, 3, 5])
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class Score(nn.Module):
    """Base class: the common signature of every score function.

    Args:
        query_size: Size ``D_q`` of a query vector (the decoder state).
        key_size: Size ``D_k`` of a key vector (the encoder output).
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__()
        self.query_size = query_size
        self.key_size = key_size

    def prepare(self, keys: Tensor) -> Tensor:
        """Key-side work done once per source sentence.

        Args:
            keys: Encoder outputs, shape ``(B, S, D_k)``.

        Returns:
            Prepared keys; the identity unless a subclass projects them.
        """
        return keys

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:
        """Score every query against every key.

        Args:
            query: Queries, shape ``(B, T, D_q)``.
            keys: Keys as returned by [`prepare`][attention_core.scores.Score.prepare].

        Returns:
            Raw (unnormalised) scores, shape ``(B, T, S)``.
        """
        raise NotImplementedError


class DotScore(Score):
    """Dot product ``score(h_t, h_s) = h_tᵀ h_s`` (Luong et al. 2015, Eq. 8, *dot*).

    No parameters; query and key sizes must be equal.
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        if query_size != key_size:
            raise ValueError(f"dot score needs query_size == key_size, got {query_size} and {key_size}")

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return torch.bmm(query, keys.transpose(1, 2))  # (B, T, S)


class ScaledDotScore(DotScore):
    """Scaled dot product ``h_tᵀ h_s / √d`` (Vaswani et al. 2017, Eq. 1).

    Dividing by ``√d`` keeps the variance of the scores at about 1 when the components of
    query and key have unit variance, so the softmax does not saturate as ``d`` grows.
    """

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return super().forward(query, keys) / math.sqrt(self.key_size)


class GeneralScore(Score):
    """Bilinear ``score(h_t, h_s) = h_tᵀ W_a h_s`` (Luong et al. 2015, Eq. 8, *general*).

    ``W_a`` has shape ``(D_q, D_k)``, so query and key sizes may differ. ``W_a h_s`` is the
    key-side projection done once per sentence in [`prepare`][attention_core.scores.Score.prepare].
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        self.W_a = nn.Linear(key_size, query_size, bias=False)

    def prepare(self, keys: Tensor) -> Tensor:  # noqa: D102
        return self.W_a(keys)  # (B, S, D_q)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return torch.bmm(query, keys.transpose(1, 2))  # (B, T, S)


class ConcatScore(Score):
    """Additive ``score(h_t, h_s) = v_aᵀ tanh(W_a h_t + U_a h_s)``.

    Bahdanau et al. 2014 (Eq. 6 and Appendix A.1.2) and Luong et al. 2015 (Eq. 8, *concat*,
    written there as ``v_aᵀ tanh(W_a[h_t; h_s])``, which is the same thing with ``W_a`` split
    into a query block and a key block). ``U_a h_s`` is computed once per sentence.

    Args:
        query_size: Size of a query vector.
        key_size: Size of a key vector.
        attention_size: Size of the hidden layer inside the score (defaults to ``key_size``).
    """

    def __init__(self, query_size: int, key_size: int, attention_size: int | None = None) -> None:
        super().__init__(query_size, key_size)
        attention_size = attention_size or key_size
        self.W_a = nn.Linear(query_size, attention_size, bias=False)
        self.U_a = nn.Linear(key_size, attention_size, bias=True)
        self.v_a = nn.Linear(attention_size, 1, bias=False)

    def prepare(self, keys: Tensor) -> Tensor:  # noqa: D102
        return self.U_a(keys)  # (B, S, A)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        q = self.W_a(query)  # (B, T, A)
        hidden = torch.tanh(q.unsqueeze(2) + keys.unsqueeze(1))  # (B, T, S, A)
        return self.v_a(hidden).squeeze(-1)  # (B, T, S)


SCORES: dict[str, type[Score]] = {
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "general": GeneralScore,
    "concat": ConcatScore,
}
"""Score functions by name."""


def build_score(name: str, query_size: int, key_size: int) -> Score:
    """Build a score function from its registry name.

    Args:
        name: One of the keys of [`SCORES`][attention_core.scores.SCORES].
        query_size: Size of a query vector.
        key_size: Size of a key vector.

    Returns:
        The score module.

    Raises:
        ValueError: If ``name`` is not registered; the message lists the valid names.
    """
    if name not in SCORES:
        raise ValueError(f"unknown score function {name!r}; valid names: {', '.join(SCORES)}")
    return SCORES[name](query_size, key_size)
