"""The attention step shared by every variant: scores → mask → window → softmax|argmax → context.

[`attention`][attention_core.model.attention.attention] is the one place where padding masks,
local windows, the local-p Gaussian, soft and hard weights and the weighted sum live
(the Annotated Transformer's ``attention()``). The variants differ only in *where the window
is centred* (``CENTRES``) and in the score function (``attention_core.model.scores``).

Modes (Luong et al. 2015, §3.1–3.2):

* ``global`` — every source position; a window ``D`` given at decode time turns it into local-m.
* ``local-m`` — monotonic alignment: the window of half-width ``D`` is centred at
  ``p_t = t · S / T`` (Luong's ``p_t = t`` generalised to sentences of different lengths; at decode
  time ``T`` is the expected target length ``S · length_ratio``).
* ``local-p`` — predictive alignment, Eq. 10: ``p_t = S · sigmoid(v_pᵀ tanh(W_p h_t))``, and Eq. 11:
  the weights are multiplied by ``exp(−(s − p_t)² / (2σ²))`` with ``σ = D / 2``. We renormalise the
  product so every row stays a distribution (adding the log-Gaussian before the softmax, which is the
  same thing); outside ``[p_t − D, p_t + D]`` the weights are exactly zero.

Mask convention: ``True`` marks a real token. Every row keeps at least one valid key, so no NaN is
ever produced or patched: the model's window centres are clamped to real source positions, and when a
caller's window holds no real key (a centre past the end of the source), the row attends to the real
key nearest the centre instead, decided before the softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention_core.model.scores import Score


@dataclass
class Window:
    """A local window for every query.

    Attributes:
        centre: Window centres ``p_t`` in source positions (0-based), shape ``(B, T)``.
        half_width: ``D``: keys with ``|s − p_t| ≤ D`` are kept. At least 1.
        gaussian: Multiply by ``exp(−(s − p_t)² / (2σ²))``, ``σ = D/2`` (local-p, Luong et al. 2015, Eq. 11).
    """

    centre: Tensor
    half_width: int
    gaussian: bool = False

    def __post_init__(self) -> None:
        if self.half_width < 1:
            raise ValueError(f"window half-width D must be at least 1, got {self.half_width}")


def attention(
    scores: Tensor,
    values: Tensor,
    mask: Tensor,
    window: Window | None = None,
    hard: bool = False,
) -> tuple[Tensor, Tensor]:
    """Turn raw scores into weights and a context vector.

    Args:
        scores: Raw scores, shape ``(B, T, S)``.
        values: Values to average (the encoder outputs), shape ``(B, S, H)``.
        mask: ``True`` for keys a query may attend to: shape ``(B, S)`` (real source tokens, the
            same for every query) or ``(B, T, S)`` (a mask per query, e.g. a causal one).
        window: Optional local window; ``None`` attends globally.
        hard: Replace the softmax by a one-hot vector at its argmax (argmax, or greedy, hard
            attention; not differentiable, so use it at decode time only). This is not Xu et al.'s
            (2015) stochastic hard attention, which samples a position and is trained with REINFORCE.

    Returns:
        ``(context, weights)``: context ``(B, T, H)`` and weights ``(B, T, S)``. Weights are
        exactly zero on padding and outside the window, and every row sums to 1. A window that holds
        no real key falls back to the one real key nearest its centre (weight 1); each row of
        ``mask`` must hold at least one real key.

    Examples:
        >>> import torch
        >>> scores = torch.tensor([[[1.0, 2.0, 9.0]]])           # (B=1, T=1, S=3)
        >>> values = torch.eye(3).unsqueeze(0)                   # (1, 3, 3)
        >>> mask = torch.tensor([[True, True, False]])           # last key is padding
        >>> context, weights = attention(scores, values, mask, hard=True)
        >>> weights.tolist()
        [[[0.0, 1.0, 0.0]]]
    """
    B, T, S = scores.shape
    allowed = mask[:, None, :].expand(B, T, S) if mask.dim() == 2 else mask  # (B, T, S)
    valid = allowed
    if window is not None:
        dtype = torch.promote_types(window.centre.dtype, torch.float32)  # float32, or float64 for a float64 model
        positions = torch.arange(S, device=scores.device, dtype=dtype)
        distance = positions.view(1, 1, S) - window.centre.to(dtype).unsqueeze(-1)  # (B, T, S)
        valid = valid & (distance.abs() <= window.half_width)
        # a window over padding only keeps the real key nearest its centre (no row is left empty)
        far = distance.abs().masked_fill(~allowed, float("inf"))  # (B, T, S)
        # (B, T, S), one-hot; F.one_hot would read its input's range back from the device
        nearest = torch.arange(S, device=scores.device) == far.argmin(dim=-1, keepdim=True)
        valid = torch.where(valid.any(dim=-1, keepdim=True), valid, nearest)
        if window.gaussian:
            sigma = window.half_width / 2
            scores = scores - (distance.pow(2) / (2 * sigma**2)).to(scores.dtype)
    scores = scores.masked_fill(~valid, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (B, T, S)
    if hard:
        weights = (torch.arange(S, device=scores.device) == weights.argmax(dim=-1, keepdim=True)).to(weights.dtype)
    context = torch.bmm(weights.to(values.dtype), values)  # (B, T, H)
    return context, weights


class MonotonicCentre(nn.Module):
    """Local-m centre ``p_t = t · S / T`` (Luong et al. 2015, §3.2, *monotonic alignment*).

    Has no parameters. Also used when a window is applied at decode time to a global model.
    """

    gaussian = False

    def __init__(self, query_size: int) -> None:
        super().__init__()

    def forward(self, query: Tensor, steps: Tensor, src_lengths: Tensor, tgt_lengths: Tensor) -> Tensor:
        """Compute window centres.

        Args:
            query: Decoder queries, shape ``(B, T, D_q)`` (unused: the rule is fixed).
            steps: Target positions ``t`` (0-based), shape ``(T,)``.
            src_lengths: Real source lengths ``S``, shape ``(B,)``.
            tgt_lengths: Real or expected target lengths ``T``, shape ``(B,)``.

        Returns:
            Centres, shape ``(B, T)``, inside ``[0, S − 1]``.
        """
        return self.place(steps, src_lengths, tgt_lengths)

    @staticmethod
    def place(steps: Tensor, src_lengths: Tensor, tgt_lengths: Tensor) -> Tensor:
        """``p_t = t · S / T`` for target positions ``steps`` ``(T,)``, as ``(B, T)`` in ``[0, S − 1]``."""
        S = src_lengths.float().unsqueeze(1)  # (B, 1)
        T = tgt_lengths.float().clamp(min=1).unsqueeze(1)  # (B, 1)
        centre = steps.float().unsqueeze(0) * S / T  # (B, T)
        return torch.minimum(centre, S - 1)


class PredictiveCentre(nn.Module):
    """Local-p centre ``p_t = S · sigmoid(v_pᵀ tanh(W_p h_t))`` (Luong et al. 2015, Eq. 10).

    The weights around it get the Gaussian factor of Eq. 11 in [`attention`][attention_core.model.attention.attention].

    Args:
        query_size: Size of the decoder state ``h_t``.
    """

    gaussian = True

    def __init__(self, query_size: int) -> None:
        super().__init__()
        self.W_p = nn.Linear(query_size, query_size, bias=False)
        self.v_p = nn.Linear(query_size, 1, bias=False)

    def forward(self, query: Tensor, steps: Tensor, src_lengths: Tensor, tgt_lengths: Tensor) -> Tensor:
        """Predict window centres from the decoder state.

        Args:
            query: Decoder states ``h_t``, shape ``(B, T, D_q)``.
            steps: Target positions (unused: the position is predicted).
            src_lengths: Real source lengths ``S``, shape ``(B,)``.
            tgt_lengths: Unused.

        Returns:
            Centres, shape ``(B, T)``, inside ``[0, S − 1]``.
        """
        S = src_lengths.to(query.dtype).unsqueeze(1)  # (B, 1)
        gate = torch.sigmoid(self.v_p(torch.tanh(self.W_p(query))).squeeze(-1))  # (B, T)
        return torch.minimum(S * gate, S - 1)


CENTRES: dict[str, type[nn.Module]] = {
    "global": MonotonicCentre,
    "local-m": MonotonicCentre,
    "local-p": PredictiveCentre,
}
"""Attention modes by name, mapped to the rule that places a window's centre."""


class Attention(nn.Module):
    """A score function, a window rule and the shared [`attention`][attention_core.model.attention.attention] step.

    Args:
        score: The score function.
        mode: ``global``, ``local-m`` or ``local-p`` (keys of ``CENTRES``).
        window: Default half-width ``D`` for local modes; ``None`` for ``global``.
    """

    def __init__(self, score: Score, mode: str = "global", window: int | None = None) -> None:
        super().__init__()
        if mode not in CENTRES:
            raise ValueError(f"unknown attention mode {mode!r}; valid modes: {', '.join(CENTRES)}")
        self.score = score
        self.mode = mode
        self.window = window
        self.centre = CENTRES[mode](score.query_size)

    def prepare(self, keys: Tensor) -> Tensor:
        """Key-side projection, once per source sentence (see ``Score.prepare``)."""
        return self.score.prepare(keys)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor,
        steps: Tensor,
        tgt_lengths: Tensor,
        window: int | None,
        hard: bool = False,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Attend from each query to the source.

        Args:
            query: Decoder queries, shape ``(B, T, D_q)``.
            keys: Prepared keys from [`prepare`][attention_core.model.attention.Attention.prepare].
            values: Encoder outputs, shape ``(B, S, H)``.
            mask: ``True`` for real source tokens, shape ``(B, S)``.
            steps: Target positions of the queries (0-based), shape ``(T,)``.
            tgt_lengths: Real (training) or expected (decoding) target lengths, shape ``(B,)``.
            window: Half-width ``D``, or ``None`` for global attention.
            hard: One-hot argmax weights instead of the softmax.

        Returns:
            ``(context, weights, centre)``: ``(B, T, H)``, ``(B, T, S)``, and the window centres
            ``(B, T)`` or ``None`` when attending globally.
        """
        scores = self.score(query, keys)  # (B, T, S)
        centre = None
        spec = None
        if window is not None:
            centre = self.centre(query, steps, mask.sum(dim=1), tgt_lengths)  # (B, T)
            spec = Window(centre, window, gaussian=self.centre.gaussian)
        context, weights = attention(scores, values, mask, spec, hard)
        return context, weights, centre
