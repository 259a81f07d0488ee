"""Greedy and beam search over one ``Seq2Seq.step``.

Both searches are batched, return one [`Hypothesis`][attention_core.decoding.search.Hypothesis] per input
with the attention matrix of the chosen output ([`beam_search_nbest`][attention_core.decoding.search.beam_search_nbest]
returns every finished output of the beam, best first), and accept an optional
[`Constraint`][attention_core.decoding.search.Constraint] that masks the log-probabilities of each step
given the prefix each row has generated (the couplet rules,
[`CoupletConstraint`][attention_core.decoding.couplet.CoupletConstraint], are one). Beam size 1 is exactly
greedy search (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import torch
from torch import Tensor

from attention_core.decoding.config import DecodeConfig, check_coverage
from attention_core.model.decoder import DecoderState, Memory
from attention_core.model.seq2seq import Seq2Seq
from attention_core.model.transformer import TransformerMemory, TransformerState


@dataclass
class Hypothesis:
    """One decoded output.

    Attributes:
        tokens: Output ids without ``<eos>``.
        weights: Attention matrix ``(T_out, S)`` for the source's real length ``S``; ``T_out`` is
            ``len(tokens) + 1`` when the output ended with ``<eos>`` (its row is the last one),
            otherwise ``len(tokens)``. All zero for the no-attention baseline.
        centres: Local window centres ``(T_out,)``, or ``None`` when attending globally.
        score: Sum of log-probabilities of the output tokens (``<eos>`` included).
        finished: Whether the output ended with ``<eos>`` (rather than hitting the length limit).
    """

    tokens: list[int]
    weights: Tensor
    centres: Tensor | None
    score: float
    finished: bool


class Constraint(Protocol):
    """Masks disallowed tokens at each step (a log-probability of ``-inf``), or rescores them."""

    def expand(self, index: Tensor) -> Constraint:
        """The constraint for rows ``index`` of the batch (e.g. each sentence repeated into beams)."""
        ...

    def apply(self, logprobs: Tensor, t: int, prefix: Tensor) -> Tensor:
        """Mask the log-probabilities ``(B, V)`` of output position ``t``.

        ``prefix`` ``(B, t)`` holds the tokens each row has generated so far; beam search passes
        the prefixes of the beams as they stand after reordering, so a rule that depends on earlier
        output (a mirrored repetition) follows its beam.
        """
        ...


class Chain:
    """Several constraints applied in turn (each masks what it forbids).

    Args:
        constraints: The constraints, in the order they apply.
    """

    def __init__(self, *constraints: Constraint) -> None:
        self.constraints = constraints

    def expand(self, index: Tensor) -> Chain:
        """Each constraint for rows ``index``."""
        return Chain(*(c.expand(index) for c in self.constraints))

    def apply(self, logprobs: Tensor, t: int, prefix: Tensor) -> Tensor:
        """Every constraint's mask of position ``t``."""
        for c in self.constraints:
            logprobs = c.apply(logprobs, t, prefix)
        return logprobs


def default_max_len(model: Seq2Seq, src_lengths: Tensor) -> Tensor:
    """Per-row output limits ``(B,)``: twice the row's expected length plus 10 tokens.

    Each limit depends on its own source length only, so an output never changes with what else
    is in its batch.
    """
    ratio = max(1.0, model.cfg.length_ratio)
    return (src_lengths.to(torch.float64) * ratio * 2).long() + 10


def _limits(model: Seq2Seq, src_lengths: Tensor, max_len: int | None) -> list[int]:
    """Each row's output limit: ``max_len`` for all rows if given, else the row's default."""
    if max_len is not None:
        if max_len < 1:
            raise ValueError(f"max_len must be at least 1, got {max_len}")
        return [max_len] * src_lengths.numel()
    return default_max_len(model, src_lengths.cpu()).tolist()


def _logprobs(model: Seq2Seq, logits: Tensor, constraint: Constraint | None, t: int, prefix: Tensor) -> Tensor:
    """Log-probabilities of one step: ``<pad>``, ``<bos>`` and ``<unk>`` are never generated; constraints apply.

    ``prefix`` ``(B, t)`` holds the tokens generated so far (read only by a constraint).
    """
    logprobs = torch.log_softmax(logits.float(), dim=-1)  # (B, V)
    logprobs[:, [model.cfg.pad_id, model.cfg.bos_id, model.cfg.unk_id]] = float("-inf")
    return logprobs if constraint is None else constraint.apply(logprobs, t, prefix)


def _hypothesis(
    tokens: Tensor, weights: Tensor, centres: Tensor | None, score: float, src_len: int, eos: int
) -> Hypothesis:
    """Cut one decoded row at its first ``<eos>`` and at the real source length."""
    ids = tokens.tolist()
    finished = eos in ids
    n = ids.index(eos) + 1 if finished else len(ids)
    return Hypothesis(
        tokens=ids[: n - 1] if finished else ids,
        weights=weights[:n, :src_len].float().cpu(),
        centres=None if centres is None else centres[:n].float().cpu(),
        score=score,
        finished=finished,
    )


def _expand_to_beams(
    model: Seq2Seq, src: Tensor, src_lengths: Tensor, K: int, constraint: Constraint | None
) -> tuple[Memory | TransformerMemory, DecoderState | TransformerState, Constraint | None]:
    """Encode a batch once and repeat every sentence's memory, state and constraint ``K`` times (row ``b·K + k``)."""
    memory, state = model.encode(src, src_lengths)
    expand = torch.arange(src.size(0), device=src.device).repeat_interleave(K)  # (B*K,)
    return (memory.index_select(expand), state.index_select(expand),
            None if constraint is None else constraint.expand(expand))


@dataclass
class _Beams:
    """What every live hypothesis has written so far, row ``b·K + k`` for beam ``k`` of sentence ``b``.

    Attributes:
        tokens: ``(B·K, t)``.
        attn: Attention weights, ``(B·K, t, S)``, float32.
        centres: Local window centres ``(B·K, t)``, or ``None`` when attending globally.
    """

    tokens: Tensor
    attn: Tensor
    centres: Tensor | None = None

    @classmethod
    def empty(cls, rows: int, S: int, device: torch.device) -> _Beams:
        """Histories with nothing written yet."""
        return cls(torch.empty(rows, 0, dtype=torch.long, device=device), torch.empty(rows, 0, S, device=device))

    def extend(self, origin: Tensor, y: Tensor, weights: Tensor, centre: Tensor | None) -> _Beams:
        """The histories of the rows each new hypothesis extends (``origin`` ``(B·K,)``), plus this step's."""
        centres = None
        if centre is not None:
            new = centre.index_select(0, origin).unsqueeze(1).float()
            centres = new if self.centres is None else torch.cat([self.centres.index_select(0, origin), new], 1)
        return _Beams(
            torch.cat([self.tokens.index_select(0, origin), y.unsqueeze(1)], dim=1),
            torch.cat([self.attn.index_select(0, origin), weights.index_select(0, origin).unsqueeze(1).float()], 1),
            centres,
        )

    def hypothesis(self, flat: int, score: float, src_len: int, eos: int) -> Hypothesis:
        """Row ``flat`` as a [`Hypothesis`][attention_core.decoding.search.Hypothesis] (see ``_hypothesis``)."""
        return _hypothesis(self.tokens[flat], self.attn[flat], None if self.centres is None else self.centres[flat],
                           score, src_len, eos)


@torch.inference_mode()
def greedy(
    model: Seq2Seq,
    src: Tensor,
    src_lengths: Tensor,
    config: DecodeConfig | None = None,
    constraint: Constraint | None = None,
    **settings: Any,
) -> list[Hypothesis]:
    """Greedy decoding of a batch: the most probable token at every step.

    Args:
        model: The model (put in eval mode by the caller).
        src: Source ids ``(B, S)``.
        src_lengths: Real source lengths ``(B,)``.
        config: Its ``max_len`` (the output limit of every row; by default each row's own
            [`default_max_len`][attention_core.decoding.search.default_max_len]), ``window`` (``"config"``,
            ``None`` for global, or a half-width ``D``) and ``hard`` (argmax attention)
            ([`DecodeConfig`][attention_core.decoding.config.DecodeConfig]).
        constraint: Optional step-wise constraint.
        **settings: Fields of ``DecodeConfig`` to change (``max_len=10``, ``window=2``, ``hard=True``).

    Returns:
        One hypothesis per row.
    """
    config = DecodeConfig.of(config, **settings)
    max_len, window, hard = config.max_len, config.window, config.hard
    cfg = model.cfg
    B = src.size(0)
    limits = _limits(model, src_lengths, max_len)
    limit = torch.tensor(limits, device=src.device)  # (B,)
    memory, state = model.encode(src, src_lengths)
    y = torch.full((B,), cfg.bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    score = torch.zeros(B, device=src.device)
    tokens, weights, centres = [], [], []
    for t in range(max(limits)):
        step = model.step(y, state, memory, t, window, hard)
        prefix = torch.stack(tokens, 1) if constraint is not None and tokens else y.new_empty(B, 0)  # (B, t)
        logprobs = _logprobs(model, step.logits, constraint, t, prefix)  # (B, V)
        best, y = logprobs.max(dim=-1)
        score += best.masked_fill(done, 0.0)
        state = step.state
        tokens.append(y)
        weights.append(step.weights)
        if step.centre is not None:
            centres.append(step.centre)
        done |= (y == cfg.eos_id) | (limit <= t + 1)  # a row stops at <eos> or at its own limit
        if bool(done.all()):
            break
    toks = torch.stack(tokens, dim=1)  # (B, T)
    attn = torch.stack(weights, dim=1)  # (B, T, S)
    cents = torch.stack(centres, dim=1) if centres else None  # (B, T)
    lengths = src_lengths.tolist()
    return [
        _hypothesis(
            toks[b, : limits[b]],
            attn[b, : limits[b]],
            None if cents is None else cents[b, : limits[b]],
            float(score[b]),
            lengths[b],
            cfg.eos_id,
        )
        for b in range(B)
    ]


def beam_search(
    model: Seq2Seq,
    src: Tensor,
    src_lengths: Tensor,
    config: DecodeConfig | None = None,
    constraint: Constraint | None = None,
    **settings: Any,
) -> list[Hypothesis]:
    """Batched beam search with length normalisation: the best hypothesis of each row.

    The search, its arguments and how it stops are those of
    [`beam_search_nbest`][attention_core.decoding.search.beam_search_nbest]; this keeps the first of each
    row's list.

    Returns:
        One hypothesis per row: the finished one with the best ``log p / len^alpha`` (plus the coverage
        penalty when ``coverage`` > 0).
    """
    return [hyps[0] for hyps in beam_search_nbest(model, src, src_lengths, config, constraint, **settings)]


COVERAGE_FLOOR = 1e-6
"""The least coverage the penalty counts for a source position (``log 0`` would be minus infinity)."""


def coverage_penalty(weights: Tensor, floor: float = COVERAGE_FLOOR) -> float:
    """The coverage penalty of one output's attention (Wu et al. 2016): ``Σ_j log min(Σ_t a_tj, 1)``.

    Zero when every source position received at least one unit of attention over the output, more negative the
    more attention a position lacks; a position that received none counts as ``log floor``.

    Args:
        weights: Attention ``(T, S)`` over the real source positions.
        floor: The least coverage counted (``log 0`` would be minus infinity).

    >>> round(coverage_penalty(torch.tensor([[0.5, 0.5], [0.5, 0.5]])), 6)
    0.0
    >>> round(coverage_penalty(torch.tensor([[1.0, 0.0], [0.8, 0.2]])), 4)  # the second word: 0.2 of a unit
    -1.6094
    """
    return float(_live_penalties(weights.unsqueeze(0), torch.tensor([weights.size(1)]), floor)[0])


def _live_penalties(attn: Tensor, src_lengths: Tensor, floor: float) -> Tensor:
    """[`coverage_penalty`][attention_core.decoding.search.coverage_penalty] of every live row at once: ``(B*K,)``.

    Args:
        attn: Attention so far ``(B*K, T, S)``, rows in groups of ``K`` per sentence.
        src_lengths: Real source lengths ``(B,)``; padding positions count as covered.
        floor: The least coverage counted.
    """
    rows, _, S = attn.shape
    lengths = src_lengths.to(attn.device).repeat_interleave(rows // src_lengths.numel())
    real = torch.arange(S, device=attn.device).unsqueeze(0) < lengths.unsqueeze(1)  # (B*K, S)
    logs = attn.float().sum(dim=1).clamp(min=floor, max=1.0).log()
    return logs.masked_fill(~real, 0.0).sum(dim=1)


@torch.inference_mode()
def beam_search_nbest(
    model: Seq2Seq,
    src: Tensor,
    src_lengths: Tensor,
    config: DecodeConfig | None = None,
    constraint: Constraint | None = None,
    **settings: Any,
) -> list[list[Hypothesis]]:
    """Batched beam search with length normalisation, returning every finished hypothesis.

    Each sentence keeps ``beam_size`` live hypotheses; one that emits ``<eos>`` is set aside with the score
    ``log p / len^alpha`` (``len`` counts ``<eos>``). A sentence is done when it has at least ``beam_size`` finished
    hypotheses *and* none of its live hypotheses scores better, by the same normalised score at its current length,
    than the best finished one; its finished hypotheses are then returned, best first, each with its attention.
    (Stopping at the ``beam_size``-th finished hypothesis alone could return a short or empty output while a longer
    live one already scored better.) The rule is still a heuristic: a live hypothesis that scores worse now but
    would overtake after more tokens is not pursued.

    The settings are a [`DecodeConfig`][attention_core.decoding.config.DecodeConfig]'s (beam 5 unless it says) or its
    fields by name: ``beam_size`` (1 is greedy search), ``max_len`` (default: each sentence's own
    ``default_max_len``), ``window``, ``hard``, ``alpha`` (the length exponent; 0 = raw log-probability) and
    ``coverage``, the weight ``β`` of the coverage penalty (Wu et al. 2016, GNMT): a finished hypothesis scores
    ``log p / len^alpha + β Σ_j log min(Σ_t a_tj, 1)``, so one that left source words without attention (an
    untranslated clause) ranks lower ([`coverage_penalty`][attention_core.decoding.search.coverage_penalty]); a live
    hypothesis is compared with its penalty so far. ``log p / len`` is a per-token average while the penalty is a
    sum over the source, so useful weights are far below GNMT's 0.2 (``results/coverage_penalty.md``). ``0`` or
    ``None`` (the default): off; a model without attention is never penalised.

    Args:
        model: The model (in eval mode).
        src: Source ids ``(B, S)``.
        src_lengths: Real source lengths ``(B,)``.
        config: The settings (default: ``DecodeConfig()``; a ``beam_size`` left ``None`` is 5 here).
        constraint: Optional step-wise constraint.
        **settings: Fields of ``DecodeConfig`` to change.

    Returns:
        Per row, its finished hypotheses, best first by the normalised score ``log p / len^alpha`` (ties
        keep the order they finished in): at least ``beam_size`` when the row stopped before its length
        limit; at the limit, those finished so far, or the best live one when none had finished.
    """
    config = DecodeConfig.of(config, **settings)
    if config.beam_size is None:  # the beam search's own default
        config = replace(config, beam_size=5)
    beam_size, max_len, window, hard, alpha = config.beam_size, config.max_len, config.window, config.hard, config.alpha
    if beam_size < 1:
        raise ValueError(f"beam size must be at least 1, got {beam_size}")
    coverage = config.coverage or 0.0  # no task here to give a default: off
    check_coverage(coverage)
    coverage = coverage if coverage and model.has_attention else 0.0  # a model without attention: no penalty
    cfg = model.cfg
    B, K, device = src.size(0), beam_size, src.device
    limits = _limits(model, src_lengths, max_len)
    memory, state, constraint = _expand_to_beams(model, src, src_lengths, K, constraint)
    beam_scores = torch.full((B, K), float("-inf"), device=device)
    beam_scores[:, 0] = 0.0  # one live hypothesis a sentence at the start: the others would repeat it
    beam_scores = beam_scores.view(-1)  # (B*K,)
    y = torch.full((B * K,), cfg.bos_id, dtype=torch.long, device=device)
    beams = _Beams.empty(B * K, src.size(1), device)
    finished: list[list[tuple[float, Hypothesis]]] = [[] for _ in range(B)]
    lengths = src_lengths.tolist()
    offsets = (torch.arange(B, device=device) * K).unsqueeze(1)  # (B, 1)
    for t in range(max(limits)):
        step = model.step(y, state, memory, t, window, hard)
        logprobs = _logprobs(model, step.logits, constraint, t, beams.tokens)  # (B*K, V)
        V = logprobs.size(-1)
        candidates = (beam_scores.unsqueeze(1) + logprobs).view(B, K * V)
        top_scores, top_index = candidates.topk(K, dim=1)  # (B, K)
        origin = (offsets + torch.div(top_index, V, rounding_mode="floor")).view(-1)  # (B*K,)
        y = (top_index % V).view(-1)
        state = step.state.index_select(origin)
        beams = beams.extend(origin, y, step.weights, step.centre)
        beam_scores = top_scores.view(-1).clone()
        # each row's coverage penalty so far: a finished row's final one, a live row's as if it ended now
        penalties = coverage * _live_penalties(beams.attn, src_lengths, COVERAGE_FLOOR) if coverage else None  # (B*K,)
        is_eos = (y == cfg.eos_id) & torch.isfinite(beam_scores)
        for flat in is_eos.nonzero().flatten().tolist():
            raw = float(beam_scores[flat])
            hyp = beams.hypothesis(flat, raw, lengths[flat // K], cfg.eos_id)
            penalty = 0.0 if penalties is None else float(penalties[flat])
            finished[flat // K].append((raw / (t + 1) ** alpha + penalty, hyp))
        beam_scores = beam_scores.masked_fill(is_eos, float("-inf"))
        live = beam_scores.view(B, K)
        live_norm = live / (t + 1) ** alpha
        if penalties is not None:  # a live hypothesis is compared with its penalty so far
            live_norm = live_norm + penalties.view(B, K)
        live_best = live_norm.max(dim=1).values.tolist()  # (B,)
        done = [len(f) >= K and max(score for score, _ in f) >= best for f, best in zip(finished, live_best)]
        for b in range(B):
            if not done[b] and limits[b] <= t + 1:  # this sentence's own length limit
                if not finished[b]:  # keep the best live hypothesis
                    flat = b * K + int(live[b].argmax())
                    raw = float(beam_scores[flat])
                    finished[b].append((raw / (t + 1) ** alpha, beams.hypothesis(flat, raw, lengths[b], cfg.eos_id)))
                done[b] = True
        full = torch.tensor(done, device=device)
        beam_scores = live.masked_fill(full.unsqueeze(1), float("-inf")).view(-1)
        if bool(full.all()):
            break
    return [[hyp for _, hyp in sorted(f, key=lambda pair: -pair[0])] for f in finished]
