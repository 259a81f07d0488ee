"""Evaluate a translator on a test set and build the JSON report the ``evaluate`` command writes."""

from __future__ import annotations

import time
from collections.abc import Sequence

from attention_core.metrics import (
    attention_entropy,
    bleu,
    bleu_by_length,
    chrf,
    couplet_metrics,
    diagonality,
)
from attention_core.pipeline import Translator
from attention_core.seq2seq import WindowArg


def evaluate(
    translator: Translator,
    pairs: Sequence[tuple[str, str]],
    beam_size: int = 1,
    constrained: bool | None = None,
    window: WindowArg = "config",
    hard: bool = False,
    no_repeat: bool = False,
    examples: int = 5,
) -> dict:
    """Decode the sources of ``pairs`` and score them against the targets.

    Translation is scored like the peers: detokenised output, lower-cased, sacrebleu BLEU (13a)
    and chrF. Couplets are scored per character (sacrebleu ``char``), plus the reference-free
    couplet rules. Every report also has alignment statistics (entropy, diagonality).

    Args:
        translator: The model to evaluate.
        pairs: ``(source, reference)`` texts.
        beam_size: 1 = greedy.
        constrained: Couplet constraints (default: the task's default).
        window: Decode-time window override.
        hard: Hard attention at decode time.
        no_repeat: Couplet constraint: no character repeated from the 上联 at the same position.
        examples: How many outputs to include verbatim.

    Returns:
        The report as a JSON-ready dict.
    """
    task = translator.task
    started = time.perf_counter()
    outputs = translator.translate(
        [s for s, _ in pairs],
        beam_size=beam_size,
        window=window,
        hard=hard,
        constrained=constrained,
        no_repeat=no_repeat,
    )
    seconds = time.perf_counter() - started
    hyps = [o.text for o in outputs]
    refs = [t for _, t in pairs]
    lengths = [len(o.source_tokens) for o in outputs]
    report = {
        "task": task.name,
        "model": translator.model.cfg.to_dict(),
        "decoding": {
            "beam_size": beam_size,
            "constrained": task.constrained if constrained is None else constrained,
            "window": window,
            "hard": hard,
            "no_repeat": no_repeat,
        },
        "n": len(pairs),
        "bleu": bleu(hyps, refs, task.bleu_tokenize, lowercase=True),
        "chrf": chrf(hyps, refs, lowercase=True),
        "bleu_by_length": bleu_by_length(lengths, hyps, refs, tokenize=task.bleu_tokenize, lowercase=True),
        "decode_seconds": round(seconds, 2),
        "scoring": f"sacrebleu {task.bleu_tokenize}, lowercased, detokenised output",
    }
    if task.name == "couplet":
        report["couplet"] = couplet_metrics([o.source_tokens for o in outputs], [o.tokens for o in outputs])
    if translator.model.has_attention:
        report["alignment"] = {
            "entropy": sum(attention_entropy(o.weights) for o in outputs) / max(1, len(outputs)),
            "diagonality": sum(diagonality(o.weights) for o in outputs) / max(1, len(outputs)),
        }
    report["examples"] = [
        {"source": s, "reference": r, "output": h} for (s, r), h in list(zip(pairs, hyps))[:examples]
    ]
    return report
