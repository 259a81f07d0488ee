"""Metrics: BLEU and chrF (sacrebleu), BLEU by source length, couplet rules, alignment statistics."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import sacrebleu
from sacrebleu.metrics import CHRF
from torch import Tensor

from attention_core.data.text import repetition_pattern, tone_class
from attention_core.data.vocab import UNK, is_punctuation


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


def paired_bootstrap(
    hypotheses_a: Sequence[str],
    hypotheses_b: Sequence[str],
    references: Sequence[str],
    tokenize: str = "13a",
    lowercase: bool = False,
    samples: int = 1000,
    seed: int = 12345,
) -> dict[str, float]:
    """Paired bootstrap resampling of corpus BLEU (Koehn 2004): is system A better than B?

    The test set is resampled with replacement ``samples`` times; both systems are scored on the
    same resampled sentences (from sacrebleu's per-sentence n-gram statistics), so the difference
    keeps the pairing.

    Args:
        hypotheses_a: Outputs of system A.
        hypotheses_b: Outputs of system B, aligned with A's.
        references: One reference per sentence.
        tokenize: sacrebleu tokeniser.
        lowercase: Case-insensitive scoring.
        samples: Bootstrap samples.
        seed: Seed of the resampling.

    Returns:
        ``delta`` (BLEU A − B on the full set), its 95 % interval ``low``–``high`` (2.5th and
        97.5th percentiles), and ``p_not_better``: the share of samples where A does not beat B.

    Examples:
        >>> refs = ["春风送暖", "秋雨连绵", "山高水长", "月明星稀"] * 5
        >>> r = paired_bootstrap(refs, ["春雨送寒", "秋风连天", "山低水短", "日落星稀"] * 5, refs, "char")
        >>> r["low"] > 0, r["p_not_better"]
        (True, 0.0)
    """
    import numpy as np

    metric = sacrebleu.metrics.BLEU(tokenize=tokenize, lowercase=lowercase)
    refs = [list(references)]
    stats_a = np.array(metric._extract_corpus_statistics(list(hypotheses_a), refs), dtype=np.int64)  # (N, 2+4n)
    stats_b = np.array(metric._extract_corpus_statistics(list(hypotheses_b), refs), dtype=np.int64)

    def score(stats: np.ndarray) -> float:
        return metric._compute_score_from_stats(stats.tolist()).score

    n = len(references)
    rng = np.random.default_rng(seed)
    deltas = np.empty(samples)
    for i in range(samples):
        index = rng.integers(0, n, n)
        deltas[i] = score(stats_a[index].sum(0)) - score(stats_b[index].sum(0))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return {
        "delta": score(stats_a.sum(0)) - score(stats_b.sum(0)),
        "low": float(low),
        "high": float(high),
        "p_not_better": float((deltas <= 0).mean()),
        "samples": samples,
    }


def chrf(hypotheses: Sequence[str], references: Sequence[str], lowercase: bool = False) -> float:
    """Corpus chrF (sacrebleu defaults: character 6-grams, β = 2), in [0, 100]."""
    if not hypotheses:
        return 0.0
    return CHRF(lowercase=lowercase).corpus_score(list(hypotheses), [list(references)]).score


DEFAULT_BUCKETS = (0, 5, 10, 15, 20, 30, 1000)


MIN_BUCKET = 30
"""Fewest pairs a BLEU-by-length bucket may hold; smaller buckets are merged into a neighbour."""


def bleu_by_length(
    source_lengths: Sequence[int],
    hypotheses: Sequence[str],
    references: Sequence[str],
    buckets: Sequence[int] = DEFAULT_BUCKETS,
    tokenize: str = "13a",
    lowercase: bool = False,
    min_count: int = MIN_BUCKET,
) -> list[dict]:
    """BLEU per source-length bucket: the bottleneck curve (Bahdanau et al. 2014, Fig. 2).

    A corpus BLEU of a handful of sentences is noise, so a bucket with fewer than ``min_count``
    pairs is merged into the next longer one (the last into the one before it) until every bucket
    holds at least ``min_count`` pairs or only one is left; every bucket reports its ``n``.

    Args:
        source_lengths: Source length (tokens) of each pair.
        hypotheses: System outputs.
        references: References.
        buckets: Bucket edges; bucket *i* holds lengths in ``(buckets[i], buckets[i+1]]``.
        tokenize: sacrebleu tokeniser.
        lowercase: Case-insensitive scoring.
        min_count: Fewest pairs per bucket (``1`` keeps the edges as given).

    Returns:
        One ``{"min", "max", "n", "bleu"}`` dict per non-empty bucket, shortest first.

    Examples:
        >>> lengths = [3] * 30 + [12] * 2
        >>> [(b["min"], b["max"], b["n"]) for b in bleu_by_length(lengths, ["a"] * 32, ["a"] * 32, (0, 10, 20))]
        [(1, 20, 32)]
    """
    groups = []  # [lo, hi, indices]
    for lo, hi in zip(buckets, buckets[1:]):
        index = [i for i, n in enumerate(source_lengths) if lo < n <= hi]
        if index:
            groups.append([lo, hi, index])
    i = 0
    while len(groups) > 1 and i < len(groups):
        if len(groups[i][2]) >= min_count:
            i += 1
            continue
        j = i + 1 if i + 1 < len(groups) else i - 1  # merge into the next longer bucket, the last backwards
        a, b = sorted((i, j))
        groups[a:b + 1] = [[groups[a][0], groups[b][1], groups[a][2] + groups[b][2]]]
        i = min(i, a)
    return [
        {
            "min": lo + 1,
            "max": hi,
            "n": len(index),
            "bleu": bleu([hypotheses[k] for k in index], [references[k] for k in index], tokenize, lowercase),
        }
        for lo, hi, index in groups
    ]


def _last_char(chars: Sequence[str]) -> str | None:
    for ch in reversed(chars):
        if not is_punctuation(ch):
            return ch
    return None


def _no_extra_repetition(src: Sequence[str], out: Sequence[str]) -> bool:
    """Whether every character the 下联 repeats stands where the 上联 repeats one too."""
    pattern_src, pattern_out = repetition_pattern(src), repetition_pattern(out)
    return all(
        po == i or (i < len(pattern_src) and pattern_src[i] == po) for i, po in enumerate(pattern_out)
    )


def couplet_metrics(sources: Sequence[Sequence[str]], outputs: Sequence[Sequence[str]]) -> dict[str, float]:
    """Rules a reader checks in a 下联, as shares of outputs in [0, 1].

    Each is reference-free except ``distinct_ratio`` (see
    [`couplet_corpus_metrics`][attention_core.analysis.metrics.couplet_corpus_metrics]); compute them on the
    human 下联s too (pass the references as ``outputs``) for the ceiling.

    * ``length_match`` — same number of characters as the 上联;
    * ``punctuation_aligned`` — punctuation exactly where the 上联 has it (and the same marks);
    * ``tone_opposition`` — the last characters have opposite tone classes (平 vs 仄), among couplets
      whose both last characters have a known tone;
    * ``tone_opposition_after_level`` — the same, only for 上联s that end on 平: a model that ends
      every line on 平 out of habit scores high on ``tone_opposition`` (most 上联s end on 仄) and
      near 0 here;
    * ``ends_level`` — the 下联 ends on a level tone (平), the classical rule;
    * ``repetition_mirrored`` — among 上联s that repeat a character, the share whose 下联 has the
      same repetition pattern (声声 ↔ 事事);
    * ``no_extra_repetition`` — the 下联 repeats a character only where the 上联 repeats one;
    * ``no_reuse`` — no character of the 上联 appears in the 下联 (no 重字);
    * ``no_unk`` — no ``<unk>`` in the 下联.

    Args:
        sources: 上联s as character lists (the raw characters, not ``<unk>``).
        outputs: 下联s as character lists.

    Examples:
        >>> m = couplet_metrics([list("声声慢"), list("天高")], [list("事事休"), list("地厚")])
        >>> m["repetition_mirrored"], m["no_reuse"], m["tone_opposition"]
        (1.0, 1.0, 1.0)
    """
    n = len(sources)
    if n == 0:
        return {}
    length = punct = tone_total = tone_ok = ends_total = ends_ok = rep_total = rep_ok = 0
    level_total = level_ok = extra_ok = reuse_ok = unk_ok = 0
    for src, out in zip(sources, outputs):
        length += len(src) == len(out)
        punct += len(src) == len(out) and all(
            (a == b) if is_punctuation(a) else not is_punctuation(b) for a, b in zip(src, out)
        )
        a, b = tone_class(_last_char(src) or ""), tone_class(_last_char(out) or "")
        if a and b:
            tone_total += 1
            tone_ok += a != b
            if a == "平":
                level_total += 1
                level_ok += b == "仄"
        if b:
            ends_total += 1
            ends_ok += b == "平"
        if len(set(src)) < len(src):
            rep_total += 1
            rep_ok += repetition_pattern(src) == repetition_pattern(out)
        extra_ok += _no_extra_repetition(src, out)
        reuse_ok += not ({ch for ch in src if not is_punctuation(ch)} & set(out))
        unk_ok += UNK not in out
    return {
        "length_match": length / n,
        "punctuation_aligned": punct / n,
        "tone_opposition": tone_ok / tone_total if tone_total else math.nan,
        "tone_opposition_after_level": level_ok / level_total if level_total else math.nan,
        "ends_level": ends_ok / ends_total if ends_total else math.nan,
        "repetition_mirrored": rep_ok / rep_total if rep_total else math.nan,
        "repetition_cases": rep_total,
        "no_extra_repetition": extra_ok / n,
        "no_reuse": reuse_ok / n,
        "no_unk": unk_ok / n,
    }


def couplet_corpus_metrics(outputs: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> dict:
    """Cliché collapse over a whole test set: how much the outputs lean on a few characters.

    * ``top_char`` and ``top_char_share`` — the character found in the most outputs, and the share
      of outputs that contain it (human 下联s: 3–15 %);
    * ``distinct_ratio`` — distinct characters used by the outputs ÷ distinct characters used by
      the references (1.0 for the references themselves).

    Args:
        outputs: 下联s as character lists.
        references: The human 下联s, as character lists.

    Examples:
        >>> m = couplet_corpus_metrics([list("春风"), list("春雨")], [list("秋风"), list("夏雨")])
        >>> m["top_char"], m["top_char_share"], m["distinct_ratio"]
        ('春', 1.0, 0.75)
    """
    docs = Counter(ch for out in outputs for ch in set(out) if not is_punctuation(ch))
    top, count = min(docs.items(), key=lambda kv: (-kv[1], kv[0])) if docs else ("", 0)
    used = {ch for out in outputs for ch in out if not is_punctuation(ch)}
    ref_used = {ch for ref in references for ch in ref if not is_punctuation(ch)}
    return {
        "top_char": top,
        "top_char_share": count / len(outputs) if outputs else math.nan,
        "distinct_ratio": len(used) / len(ref_used) if ref_used else math.nan,
    }


def attention_entropy(weights: Tensor) -> float:
    """Mean entropy (nats) of the rows of an attention matrix ``(T, S)``; 0 for one-hot rows."""
    w = weights.float().clamp_min(1e-12)
    rows = -(weights.float() * w.log()).sum(-1)
    return float(rows.mean()) if rows.numel() else 0.0


def uniform_entropy(weights: Tensor) -> float:
    """The entropy (nats) equal weights over the same ``S`` positions would have, ``log S``, for a matrix ``(T, S)``.

    The ceiling of [`attention_entropy`][attention_core.analysis.metrics.attention_entropy] for the same matrix: an
    attention whose entropy is close to it spreads its weight nearly evenly over the source. 0 for an empty matrix.

    Example:
        >>> import torch
        >>> round(uniform_entropy(torch.full((3, 4), 0.25)), 4), round(attention_entropy(torch.full((3, 4), 0.25)), 4)
        (1.3863, 1.3863)
    """
    T, S = weights.shape
    return math.log(S) if T and S else 0.0


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
