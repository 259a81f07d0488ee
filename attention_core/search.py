"""Greedy and beam search over one ``Seq2Seq.step``, and couplet constraints.

Both searches are batched, return one [`Hypothesis`][attention_core.search.Hypothesis] per input
with the attention matrix of the chosen output, and accept an optional
[`Constraint`][attention_core.search.Constraint] that masks the log-probabilities of each step.
Beam size 1 is exactly greedy search (a test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from attention_core.seq2seq import Seq2Seq, WindowArg
from attention_core.vocab import Vocab, is_punctuation


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
    """Masks disallowed tokens at each step (a log-probability of ``-inf``)."""

    def expand(self, index: Tensor) -> Constraint:
        """Follow a reordering or repetition of the batch rows (e.g. into beams)."""
        ...

    def apply(self, logprobs: Tensor, t: int) -> Tensor:
        """Mask the log-probabilities ``(B, V)`` of output position ``t``."""
        ...


class CoupletConstraint:
    """Rules of a 下联 given its 上联, enforced while decoding.

    * the 下联 has exactly the 上联's length (``<eos>`` forbidden before, forced after);
    * punctuation stands where the 上联 has it, and only there (the same mark when the target
      vocabulary has it);
    * never ``<unk>``;
    * optionally (``no_repeat``) never the 上联's character at the same position.

    Args:
        sources: The 上联s as lists of characters, one per batch row.
        vocab: The target vocabulary.
        no_repeat: Forbid copying the 上联's character at the same position.
        device: Device of the log-probabilities.
    """

    def __init__(
        self,
        sources: Sequence[Sequence[str]],
        vocab: Vocab,
        no_repeat: bool = False,
        device: torch.device | str = "cpu",
    ) -> None:
        B, S = len(sources), max((len(s) for s in sources), default=0)
        V = len(vocab)
        self.lengths = torch.tensor([len(s) for s in sources], device=device)
        self.punct = torch.zeros(B, S + 1, dtype=torch.bool, device=device)  # position holds punctuation
        self.forced = torch.full((B, S + 1), -1, dtype=torch.long, device=device)
        self.same = torch.full((B, S + 1), -1, dtype=torch.long, device=device)
        for b, src in enumerate(sources):
            for i, ch in enumerate(src):
                if is_punctuation(ch):
                    self.punct[b, i] = True
                    self.forced[b, i] = vocab.stoi.get(ch, -1)
                elif no_repeat and ch in vocab:
                    self.same[b, i] = vocab.stoi[ch]
        punct_ids = [i for i, tok in enumerate(vocab.itos) if is_punctuation(tok)]
        self.punct_vocab = torch.zeros(V, dtype=torch.bool, device=device)
        self.punct_vocab[punct_ids] = True
        self.word_vocab = ~self.punct_vocab
        self.word_vocab[[vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id]] = False
        self.eos_id = vocab.eos_id

    def expand(self, index: Tensor) -> CoupletConstraint:  # noqa: D102
        new = object.__new__(CoupletConstraint)
        new.__dict__.update(self.__dict__)
        for name in ("lengths", "punct", "forced", "same"):
            setattr(new, name, getattr(self, name).index_select(0, index))
        return new

    def apply(self, logprobs: Tensor, t: int) -> Tensor:  # noqa: D102
        B, V = logprobs.shape
        col = min(t, self.punct.size(1) - 1)
        punct, forced, same = self.punct[:, col], self.forced[:, col], self.same[:, col]  # (B,)
        allowed = torch.where(punct.unsqueeze(1), self.punct_vocab, self.word_vocab)  # (B, V)
        rows = torch.arange(B, device=logprobs.device)
        has_forced = forced >= 0
        if has_forced.any():
            only = torch.zeros_like(allowed)
            only[rows[has_forced], forced[has_forced]] = True
            allowed = torch.where(has_forced.unsqueeze(1), only, allowed)
        repeat = same >= 0
        if repeat.any():
            allowed = allowed.clone()
            allowed[rows[repeat], same[repeat]] = False
        ended = t >= self.lengths  # (B,)
        eos_only = torch.zeros_like(allowed)
        eos_only[:, self.eos_id] = True
        allowed = torch.where(ended.unsqueeze(1), eos_only, allowed)
        return logprobs.masked_fill(~allowed, float("-inf"))


def default_max_len(model: Seq2Seq, src_lengths: Tensor) -> int:
    """A generous output limit: twice the expected length plus 10 tokens."""
    return int(src_lengths.max().item() * max(1.0, model.cfg.length_ratio) * 2) + 10


def _logprobs(model: Seq2Seq, logits: Tensor, constraint: Constraint | None, t: int) -> Tensor:
    """Log-probabilities of one step: ``<pad>`` and ``<bos>`` are never generated; constraints apply."""
    logprobs = torch.log_softmax(logits.float(), dim=-1)  # (B, V)
    logprobs[:, [model.cfg.pad_id, model.cfg.bos_id]] = float("-inf")
    return logprobs if constraint is None else constraint.apply(logprobs, t)


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


@torch.inference_mode()
def greedy(
    model: Seq2Seq,
    src: Tensor,
    src_lengths: Tensor,
    max_len: int | None = None,
    window: WindowArg = "config",
    hard: bool = False,
    constraint: Constraint | None = None,
) -> list[Hypothesis]:
    """Greedy decoding of a batch: the most probable token at every step.

    Args:
        model: The model (put in eval mode by the caller).
        src: Source ids ``(B, S)``.
        src_lengths: Real source lengths ``(B,)``.
        max_len: Output limit; defaults to [`default_max_len`][attention_core.search.default_max_len].
        window: ``"config"``, ``None`` (global) or a half-width ``D``.
        hard: Hard (argmax) attention.
        constraint: Optional step-wise constraint.

    Returns:
        One hypothesis per row.
    """
    cfg = model.cfg
    B = src.size(0)
    max_len = max_len or default_max_len(model, src_lengths)
    memory, state = model.encode(src, src_lengths)
    y = torch.full((B,), cfg.bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    score = torch.zeros(B, device=src.device)
    tokens, weights, centres = [], [], []
    for t in range(max_len):
        step = model.step(y, state, memory, t, window, hard)
        logprobs = _logprobs(model, step.logits, constraint, t)  # (B, V)
        best, y = logprobs.max(dim=-1)
        score += best.masked_fill(done, 0.0)
        state = step.state
        tokens.append(y)
        weights.append(step.weights)
        if step.centre is not None:
            centres.append(step.centre)
        done |= y == cfg.eos_id
        if bool(done.all()):
            break
    toks = torch.stack(tokens, dim=1)  # (B, T)
    attn = torch.stack(weights, dim=1)  # (B, T, S)
    cents = torch.stack(centres, dim=1) if centres else None  # (B, T)
    lengths = src_lengths.tolist()
    return [
        _hypothesis(
            toks[b], attn[b], None if cents is None else cents[b], float(score[b]), lengths[b], cfg.eos_id
        )
        for b in range(B)
    ]


@torch.inference_mode()
def beam_search(
    model: Seq2Seq,
    src: Tensor,
    src_lengths: Tensor,
    beam_size: int = 5,
    max_len: int | None = None,
    window: WindowArg = "config",
    hard: bool = False,
    constraint: Constraint | None = None,
    alpha: float = 1.0,
) -> list[Hypothesis]:
    """Batched beam search with length normalisation.

    Each sentence keeps ``beam_size`` live hypotheses; one that emits ``<eos>`` is set aside with
    the score ``log p / len^alpha`` (``len`` counts ``<eos>``). A sentence is done when it has
    ``beam_size`` finished hypotheses; the best normalised one is returned, with its attention.

    Args:
        model: The model (in eval mode).
        src: Source ids ``(B, S)``.
        src_lengths: Real source lengths ``(B,)``.
        beam_size: Live hypotheses per sentence; 1 is greedy search.
        max_len: Output limit (default: ``default_max_len``).
        window: ``"config"``, ``None`` (global) or a half-width ``D``.
        hard: Hard (argmax) attention.
        constraint: Optional step-wise constraint.
        alpha: Length-normalisation exponent (0 = raw log-probability).

    Returns:
        One hypothesis per row.
    """
    if beam_size < 1:
        raise ValueError(f"beam size must be at least 1, got {beam_size}")
    cfg = model.cfg
    B, K, device = src.size(0), beam_size, src.device
    max_len = max_len or default_max_len(model, src_lengths)
    memory, state = model.encode(src, src_lengths)
    expand = torch.arange(B, device=device).repeat_interleave(K)  # (B*K,)
    memory, state = memory.index_select(expand), state.index_select(expand)
    if constraint is not None:
        constraint = constraint.expand(expand)
    beam_scores = torch.full((B, K), float("-inf"), device=device)
    beam_scores[:, 0] = 0.0
    beam_scores = beam_scores.view(-1)  # (B*K,)
    y = torch.full((B * K,), cfg.bos_id, dtype=torch.long, device=device)
    tokens = torch.empty(B * K, 0, dtype=torch.long, device=device)
    attn = torch.empty(B * K, 0, src.size(1), device=device)
    cents: Tensor | None = None
    finished: list[list[tuple[float, Hypothesis]]] = [[] for _ in range(B)]
    lengths = src_lengths.tolist()
    offsets = (torch.arange(B, device=device) * K).unsqueeze(1)  # (B, 1)
    for t in range(max_len):
        step = model.step(y, state, memory, t, window, hard)
        logprobs = _logprobs(model, step.logits, constraint, t)  # (B*K, V)
        V = logprobs.size(-1)
        candidates = (beam_scores.unsqueeze(1) + logprobs).view(B, K * V)
        top_scores, top_index = candidates.topk(K, dim=1)  # (B, K)
        origin = (offsets + torch.div(top_index, V, rounding_mode="floor")).view(-1)  # (B*K,)
        y = (top_index % V).view(-1)
        state = step.state.index_select(origin)
        tokens = torch.cat([tokens.index_select(0, origin), y.unsqueeze(1)], dim=1)
        new_weights = step.weights.index_select(0, origin).unsqueeze(1).float()  # (B*K, 1, S)
        attn = torch.cat([attn.index_select(0, origin), new_weights], dim=1)
        if step.centre is not None:
            new = step.centre.index_select(0, origin).unsqueeze(1).float()
            cents = new if cents is None else torch.cat([cents.index_select(0, origin), new], 1)
        beam_scores = top_scores.view(-1).clone()
        is_eos = (y == cfg.eos_id) & torch.isfinite(beam_scores)
        for flat in is_eos.nonzero().flatten().tolist():
            b = flat // K
            if len(finished[b]) < K:
                raw = float(beam_scores[flat])
                hyp = _hypothesis(
                    tokens[flat],
                    attn[flat],
                    None if cents is None else cents[flat],
                    raw,
                    lengths[b],
                    cfg.eos_id,
                )
                finished[b].append((raw / (t + 1) ** alpha, hyp))
        beam_scores = beam_scores.masked_fill(is_eos, float("-inf"))
        full = torch.tensor([len(f) >= K for f in finished], device=device)
        beam_scores = beam_scores.view(B, K).masked_fill(full.unsqueeze(1), float("-inf")).view(-1)
        if bool(full.all()):
            break
    results = []
    for b in range(B):
        if not finished[b]:  # length limit reached: take the best live hypothesis
            flat = b * K + int(beam_scores.view(B, K)[b].argmax())
            raw = float(beam_scores[flat])
            hyp = _hypothesis(
                tokens[flat], attn[flat], None if cents is None else cents[flat], raw, lengths[b], cfg.eos_id
            )
            finished[b].append((raw / tokens.size(1) ** alpha, hyp))
        results.append(max(finished[b], key=lambda pair: pair[0])[1])
    return results
