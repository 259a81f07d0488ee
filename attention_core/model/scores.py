"""Score functions: how well does a query match each key?

Every score function is a small ``nn.Module`` with the same two calls:

* ``prepare(keys)`` turns the encoder outputs ``(B, S, D_k)`` into whatever the score needs
  from the key side (a projection for ``general`` and ``concat``, the keys themselves for
  ``dot``). It runs **once per source sentence**; the result is passed back in at every
  decoder step, so nothing is cached on ``self``.
* ``forward(query, keys)`` takes queries ``(B, T, D_q)`` and the *prepared* keys and returns
  raw scores ``(B, T, S)``.

The registry [`SCORES`][attention_core.model.scores.SCORES] maps names to classes; it feeds the
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

    positional: bool = False
    """Whether the score needs ``max_source_len``.

    Only [`LocationScore`][attention_core.model.scores.LocationScore] does.
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
            keys: Keys as returned by [`prepare`][attention_core.model.scores.Score.prepare].

        Returns:
            Raw (unnormalised) scores, shape ``(B, T, S)``.
        """
        raise NotImplementedError


class DotScore(Score):
    """Dot product ``score(q_t, k_s) = q_tᵀ k_s`` (Luong et al. 2015, Eq. 8, *dot*: ``h_tᵀ h̄_s``).

    No parameters; query and key sizes must be equal; the keys are the encoder outputs ``h̄_s`` themselves.
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        if query_size != key_size:
            raise ValueError(f"dot score needs query_size == key_size, got {query_size} and {key_size}")

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return torch.bmm(query, keys.transpose(1, 2))  # (B, T, S)


class ScaledDotScore(DotScore):
    """Scaled dot product ``q_tᵀ k_s / √d`` (Vaswani et al. 2017, Eq. 1, there ``QKᵀ / √d_k``).

    Dividing by ``√d`` keeps the variance of the scores at about 1 when the components of
    query and key have unit variance, so the softmax does not saturate as ``d`` grows.
    """

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return super().forward(query, keys) / math.sqrt(self.key_size)


class GeneralScore(Score):
    """Bilinear ``score(q_t, k_s) = q_tᵀ W_a k_s`` (Luong et al. 2015, Eq. 8, *general*: ``h_tᵀ W_a h̄_s``).

    ``W_a`` has shape ``(D_q, D_k)``, so query and key sizes may differ. ``W_a k_s`` is the
    key-side projection done once per sentence in [`prepare`][attention_core.model.scores.Score.prepare].
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        self.W_a = nn.Linear(key_size, query_size, bias=False)

    def prepare(self, keys: Tensor) -> Tensor:  # noqa: D102
        return self.W_a(keys)  # (B, S, D_q)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        return torch.bmm(query, keys.transpose(1, 2))  # (B, T, S)


class ConcatScore(Score):
    """Additive ``score(q_t, k_s) = v_aᵀ tanh(W_a q_t + U_a k_s + b)``.

    Bahdanau et al. 2014: their Eq. 6 is the softmax ``α_ij = exp(e_ij) / Σ_k exp(e_ik)``; the sentence
    under it defines ``e_ij = a(s_{i−1}, h_j)`` (the alignment model), and Appendix A.1.2 gives the form
    ``a(s_{i−1}, h_j) = v_aᵀ tanh(W_a s_{i−1} + U_a h_j)``. Luong et al. 2015 (Eq. 8, *concat*) write
    ``v_aᵀ tanh(W_a[h_t; h̄_s])``, the same thing with ``W_a`` split into a query block and a key block.
    ``U_a k_s`` is computed once per sentence.

    The bias ``b`` (of ``U_a``) is in neither paper: it only shifts the tanh's input by a learned vector,
    and it is kept because the bundled models' weights were trained with it (they would not load without it).

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


class LocationScore(Score):
    """Location-based ``a_t = softmax(W_a h_t)`` (Luong et al. 2015, Eq. 9, *location*).

    The score ``e_{t,s}`` of source position ``s`` is entry ``s`` of ``W_a q_t``: it depends on the decoder state and
    the position only, never on the source words, so the model learns *where* to look (a positional
    prior, e.g. "near the diagonal") but cannot look for a word. ``W_a`` has one row per position up to
    ``max_source_len``; a longer source reuses the last row's score for every position at or beyond
    ``max_source_len − 1`` (the model still runs, but cannot tell those positions apart). Padding is masked
    afterwards like for every score. The keys are only used for their length ``S``.

    Args:
        query_size: Size of a query vector.
        key_size: Size of a key vector (unused: the score never reads the keys' values).
        max_source_len: Source positions with a row of their own (the trainer uses its ``max_len``).

    Examples:
        >>> score = LocationScore(query_size=4, key_size=4, max_source_len=3)
        >>> keys, query = torch.randn(1, 5, 4), torch.randn(1, 2, 4)
        >>> e = score(query, score.prepare(keys))          # (B, T, S) = (1, 2, 5)
        >>> bool((e[..., 3] == e[..., 2]).all() and (e[..., 4] == e[..., 2]).all())
        True
    """

    positional = True

    def __init__(self, query_size: int, key_size: int, max_source_len: int) -> None:
        super().__init__(query_size, key_size)
        if max_source_len < 1:
            raise ValueError(f"the location score needs max_source_len >= 1, got {max_source_len}")
        self.max_source_len = max_source_len
        self.W_a = nn.Linear(query_size, max_source_len, bias=False)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:  # noqa: D102
        scores = self.W_a(query)  # (B, T, L)
        S = keys.size(1)
        if S == self.max_source_len:
            return scores
        positions = torch.arange(S, device=scores.device).clamp(max=self.max_source_len - 1)  # (S,)
        return scores.index_select(-1, positions)  # (B, T, S)


SCORES: dict[str, type[Score]] = {
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "general": GeneralScore,
    "concat": ConcatScore,
    "location": LocationScore,
}
"""Score functions by name."""

DEFAULT_MAX_SOURCE_LEN = 100
"""Source positions of a location score built without an explicit ``max_source_len``."""


def build_score(name: str, query_size: int, key_size: int, max_source_len: int | None = None) -> Score:
    """Build a score function from its registry name.

    Args:
        name: One of the keys of [`SCORES`][attention_core.model.scores.SCORES].
        query_size: Size of a query vector.
        key_size: Size of a key vector.
        max_source_len: Source positions a positional score (``location``) tells apart; the other scores
            ignore it. ``None``: [`DEFAULT_MAX_SOURCE_LEN`][attention_core.model.scores.DEFAULT_MAX_SOURCE_LEN].

    Returns:
        The score module.

    Raises:
        ValueError: If ``name`` is not registered; the message lists the valid names.
    """
    if name not in SCORES:
        raise ValueError(f"unknown score function {name!r}; valid names: {', '.join(SCORES)}")
    cls = SCORES[name]
    if cls.positional:
        return cls(query_size, key_size, max_source_len or DEFAULT_MAX_SOURCE_LEN)
    return cls(query_size, key_size)
