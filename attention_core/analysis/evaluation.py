"""Evaluate a translator on a test set and build the JSON report the ``evaluate`` command writes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from attention_core.analysis.metrics import (
    attention_entropy,
    bleu,
    bleu_by_length,
    chrf,
    couplet_corpus_metrics,
    couplet_metrics,
    diagonality,
    uniform_entropy,
)
from attention_core.data.tasks import Task
from attention_core.data.vocab import UNK
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.translator import Output, Translator


def evaluate(
    translator: Translator,
    pairs: Sequence[tuple[str, str]],
    config: DecodeConfig | None = None,
    *,
    examples: int = 5,
    **settings: Any,
) -> dict:
    """Decode the sources of ``pairs`` and score them against the targets.

    Translation is scored like the peers: detokenised output, lower-cased, sacrebleu BLEU (13a)
    and chrF. Couplets are scored per character (sacrebleu ``char``), plus the rules a reader checks
    ([`couplet_metrics`][attention_core.analysis.metrics.couplet_metrics] and
    [`couplet_corpus_metrics`][attention_core.analysis.metrics.couplet_corpus_metrics]), computed on the
    human references too (``couplet_reference``: the ceiling). Every report counts the outputs that
    contain ``<unk>`` (``unk_outputs``; the searches never generate it), and has alignment
    statistics (entropy, diagonality) and all outputs in order (``outputs``, for paired
    significance tests).

    Args:
        translator: The model to evaluate.
        pairs: ``(source, reference)`` texts.
        config: How to decode ([`DecodeConfig`][attention_core.decoding.config.DecodeConfig]; default: greedy with
            the task's defaults: couplet constraints with every rule for couplets, the loop guard for translation).
        examples: How many outputs to include verbatim.
        **settings: Fields of ``DecodeConfig`` to change (``beam_size=5``, ``constrained=False``, …).

    Returns:
        The report as a JSON-ready dict; ``decoding`` records the settings the task's defaults filled in.
    """
    task = translator.task
    config = DecodeConfig.of(config, **settings).for_task(task)
    rules = (config.rules or CoupletRules()) if config.constrained and task.constrained else None
    config = replace(config, rules=rules)
    started = time.perf_counter()
    outputs = translator.translate([s for s, _ in pairs], config)
    seconds = time.perf_counter() - started
    hyps = [o.text for o in outputs]
    refs = [t for _, t in pairs]
    lengths = [len(o.source_tokens) for o in outputs]
    report = {
        "task": task.name,
        "model": translator.model.cfg.to_dict(),
        "decoding": {
            "beam_size": config.beam_size,
            "constrained": config.constrained,
            "rules": rules.to_dict() if rules else None,
            "window": config.window,
            "hard": config.hard,
            "loop_guard": config.guard is not None,
            "coverage": config.coverage if config.beam_size > 1 else 0.0,  # greedy search has no penalty
        },
        "n": len(pairs),
        "bleu": bleu(hyps, refs, task.bleu_tokenize, lowercase=True),
        "chrf": chrf(hyps, refs, lowercase=True),
        "bleu_by_length": bleu_by_length(lengths, hyps, refs, tokenize=task.bleu_tokenize, lowercase=True),
        "unk_outputs": sum(UNK in o.tokens or UNK in o.text for o in outputs),
        "decode_seconds": round(seconds, 2),
        "scoring": f"sacrebleu {task.bleu_tokenize}, lowercased, detokenised output",
    }
    if task.constrained:
        report |= _couplet_scores(task, outputs, refs)
    if translator.model.has_attention:
        report["alignment"] = _alignment_statistics(outputs)
    report["outputs"] = hyps
    report["examples"] = [
        {"source": s, "reference": r, "output": h} for (s, r), h in list(zip(pairs, hyps))[:examples]
    ]
    return report


def _couplet_scores(task: Task, outputs: Sequence[Output], refs: Sequence[str]) -> dict:
    """The rules a reader checks, on the outputs (``couplet``) and on the human references (``couplet_reference``)."""
    sources = [[u or tok for u, tok in zip(o.unknown, o.source_tokens)] for o in outputs]  # raw characters
    ref_tokens = [task.tokenize_tgt(r) for r in refs]
    out_tokens = [o.tokens for o in outputs]
    return {
        "couplet": {**couplet_metrics(sources, out_tokens), **couplet_corpus_metrics(out_tokens, ref_tokens)},
        "couplet_reference": {**couplet_metrics(sources, ref_tokens), **couplet_corpus_metrics(ref_tokens, ref_tokens)},
    }


def _alignment_statistics(outputs: Sequence[Output]) -> dict[str, float]:
    """Mean attention entropy, diagonality and the entropy of uniform weights over the outputs."""
    n = max(1, len(outputs))
    return {
        "entropy": sum(attention_entropy(o.weights) for o in outputs) / n,
        "diagonality": sum(diagonality(o.weights) for o in outputs) / n,
        "uniform_entropy": sum(uniform_entropy(o.weights) for o in outputs) / n,
    }
