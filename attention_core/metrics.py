"""Metrics: BLEU and chrF (sacrebleu), BLEU by source length, couplet rules, alignment statistics."""

from __future__ import annotations

import math
from collections.abc import Sequence

import sacrebleu
from pypinyin import Style, pinyin
from sacrebleu.metrics import CHRF
from torch import Tensor

from attention_core.vocab import is_punctuation


def bleu(
    hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a", lowercase: bool = False
) -> float:
    """Corpus BLEU (sacrebleu) of detokenised hypotheses against one reference each.

    Args:
        hypotheses: System outputs.
        references: References, aligned with ``hypotheses``.
        tokenize: sacrebleu tokeniser (``13a`` for English, ``char`` for Chinese couplets).
        lowercase: Case-insensitive scoring.

    Returns:
        BLEU in [0, 100].
    """
    if not hypotheses:
        return 0.0
    return sacrebleu.corpus_bleu(
        list(hypotheses), [list(references)], tokenize=tokenize, lowercase=lowercase
    ).score


def chrf(hypotheses: Sequence[str], references: Sequence[str], lowercase: bool = False) -> float:
    """Corpus chrF (sacrebleu defaults: character 6-grams, β = 2), in [0, 100]."""
    if not hypotheses:
        return 0.0
    return CHRF(lowercase=lowercase).corpus_score(list(hypotheses), [list(references)]).score


DEFAULT_BUCKETS = (0, 5, 10, 15, 20, 30, 1000)


def bleu_by_length(
    source_lengths: Sequence[int],
    hypotheses: Sequence[str],
    references: Sequence[str],
    buckets: Sequence[int] = DEFAULT_BUCKETS,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> list[dict]:
    """BLEU per source-length bucket: the bottleneck curve (Bahdanau et al. 2014, Fig. 2).

    Args:
        source_lengths: Source length (tokens) of each pair.
        hypotheses: System outputs.
        references: References.
        buckets: Bucket edges; bucket *i* holds lengths in ``(buckets[i], buckets[i+1]]``.
        tokenize: sacrebleu tokeniser.
        lowercase: Case-insensitive scoring.

    Returns:
        One ``{"min", "max", "n", "bleu"}`` dict per non-empty bucket.
    """
    out = []
    for lo, hi in zip(buckets, buckets[1:]):
        index = [i for i, n in enumerate(source_lengths) if lo < n <= hi]
        if index:
            out.append(
                {
                    "min": lo + 1,
                    "max": hi,
                    "n": len(index),
                    "bleu": bleu(
                        [hypotheses[i] for i in index], [references[i] for i in index], tokenize, lowercase
                    ),
                }
            )
    return out


def tone_class(char: str) -> str | None:
    """平 (level: tones 1, 2) or 仄 (oblique: tones 3, 4), by pypinyin; ``None`` if unknown.

    Examples:
        >>> tone_class("天"), tone_class("地"), tone_class("，")
        ('平', '仄', None)
    """
    if len(char) != 1 or is_punctuation(char):
        return None
    reading = pinyin(char, style=Style.TONE3, heteronym=False, errors="ignore")
    if not reading or not reading[0]:
        return None
    tone = reading[0][0][-1:]
    return "平" if tone in ("1", "2") else "仄" if tone in ("3", "4") else None


def _last_char(chars: Sequence[str]) -> str | None:
    for ch in reversed(chars):
        if not is_punctuation(ch):
            return ch
    return None


def repetition_pattern(chars: Sequence[str]) -> tuple[int, ...]:
    """Each position's first occurrence index: 声声慢 → (0, 0, 2); equal patterns mirror repetitions."""
    first: dict[str, int] = {}
    return tuple(first.setdefault(ch, i) for i, ch in enumerate(chars))


def couplet_metrics(sources: Sequence[Sequence[str]], outputs: Sequence[Sequence[str]]) -> dict[str, float]:
    """Reference-free rules of a good 下联, as shares of outputs in [0, 1].

    * ``length_match`` — same number of characters as the 上联;
    * ``punctuation_aligned`` — punctuation exactly where the 上联 has it (and the same marks);
    * ``tone_opposition`` — the last characters have opposite tones (平 vs 仄), among couplets whose
      both last characters have a known tone;
    * ``ends_level`` — the 下联 ends on a level tone (平), the classical rule;
    * ``repetition_mirrored`` — repeated characters mirror each other (声声 ↔ 事事), i.e. equal
      repetition patterns, among couplets whose 上联 repeats a character.

    Args:
        sources: 上联s as character lists.
        outputs: 下联s as character lists.
    """
    n = len(sources)
    if n == 0:
        return {}
    length = punct = tone_total = tone_ok = ends_total = ends_ok = rep_total = rep_ok = 0
    for src, out in zip(sources, outputs):
        length += len(src) == len(out)
        punct += len(src) == len(out) and all(
            (a == b) if is_punctuation(a) else not is_punctuation(b) for a, b in zip(src, out)
        )
        a, b = tone_class(_last_char(src) or ""), tone_class(_last_char(out) or "")
        if a and b:
            tone_total += 1
            tone_ok += a != b
        if b:
            ends_total += 1
            ends_ok += b == "平"
        if len(set(src)) < len(src):
            rep_total += 1
            rep_ok += repetition_pattern(src) == repetition_pattern(out)
    return {
        "length_match": length / n,
        "punctuation_aligned": punct / n,
        "tone_opposition": tone_ok / tone_total if tone_total else math.nan,
        "ends_level": ends_ok / ends_total if ends_total else math.nan,
        "repetition_mirrored": rep_ok / rep_total if rep_total else math.nan,
        "repetition_cases": rep_total,
    }


def attention_entropy(weights: Tensor) -> float:
    """Mean entropy (nats) of the rows of an attention matrix ``(T, S)``; 0 for one-hot rows."""
    w = weights.float().clamp_min(1e-12)
    rows = -(weights.float() * w.log()).sum(-1)
    return float(rows.mean()) if rows.numel() else 0.0


def diagonality(weights: Tensor, width: float = 1.0) -> float:
    """Share of attention mass within ``width`` positions of the diagonal ``s = t · S / T``.

    Args:
        weights: Attention matrix ``(T, S)``.
        width: Half-width of the diagonal band.

    Returns:
        A value in [0, 1]: 1 for a perfectly monotonic alignment.
    """
    T, S = weights.shape
    if T == 0 or S == 0:
        return 0.0
    import torch

    diag = torch.arange(T, dtype=torch.float32).unsqueeze(1) * S / T  # (T, 1)
    band = (torch.arange(S, dtype=torch.float32).unsqueeze(0) - diag).abs() <= width
    total = weights.float().sum()
    return float((weights.float() * band).sum() / total) if total > 0 else 0.0
