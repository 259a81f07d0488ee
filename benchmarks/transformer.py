"""The Transformer next to the RNN variants: training throughput and decoding latency, in one process.

Usage::

    python benchmarks/transformer.py            # writes results/transformer_bench.json and .md
    python benchmarks/transformer.py --quick    # fewer repetitions (a smoke run)

* **Training throughput**: every translation zoo variant at its zoo size (``attention_core.hub.zoo``), the
  trainer's own step (``train_step``: Adam, clipping), on the same fixed stream of real cmn-eng batches
  of 64 pairs, in float32 and in the trainer's default precision; one untimed pass first, then the
  median of timed passes (``bench.train_throughput``).
* **Latency**: the bundled zoo models (``models/<task>/<variant>``) decode one sentence, greedy and beam
  5, exactly as the app does (couplets with the reader's rules); the median over repetitions.
* **Test set**: the whole translation test split, greedy and beam 5, for the Transformer and
  ``luong-general``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import _median_ms, _params, ours_step, setup, train_throughput  # noqa: E402

from attention_core.decoding.folder import load_folder  # noqa: E402
from attention_core.hub.zoo import VARIANTS, model_options  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402
from attention_core.training.precision import resolve_precision  # noqa: E402

SENTENCES = {"translation": "我喜欢自然语言处理", "couplet": "风声雨声读书声声声入耳"}
"""The one sentence each task decodes for the latency rows (the app's first examples)."""


def training_rows(examples, src_vocab: int, tgt_vocab: int, batches: int, rounds: int) -> list[dict]:
    """Pairs/s of every translation variant at its zoo size, float32 and the default precision."""
    default = resolve_precision("auto", torch.device("cpu"))
    rows = []
    for name in VARIANTS:
        row = {"variant": name}
        for precision in dict.fromkeys(("fp32", default)):
            torch.manual_seed(0)
            options = {**model_options("translation", name), "dropout": 0.0}
            model = build_model(ModelConfig(src_vocab_size=src_vocab, tgt_vocab_size=tgt_vocab, **options))
            row["parameters"] = _params(model)
            row[precision] = train_throughput(examples, 64, ours_step(model, precision), batches, rounds=rounds)
            print(json.dumps({"variant": name, precision: row[precision]}), flush=True)
        rows.append(row)
    return rows


def latency_rows(reps: int) -> list[dict]:
    """Median one-sentence decoding time of every bundled model, greedy and beam 5."""
    rows = []
    for task, sentence in SENTENCES.items():
        for name in VARIANTS:
            folder = ROOT / "models" / task / name
            if not folder.is_dir():
                continue
            translator = load_folder(folder)
            translator.translate([sentence])  # warm-up
            rows.append({
                "task": task, "variant": name, "sentence": sentence,
                "greedy_ms": _median_ms(lambda t=translator, s=sentence: t.translate([s]), reps),
                "beam5_ms": _median_ms(lambda t=translator, s=sentence: t.translate([s], beam_size=5), reps),
            })
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    return rows


def test_set_rows(sources: list[str]) -> list[dict]:
    """Seconds to decode the whole translation test split, Transformer and ``luong-general``."""
    rows = []
    for name in ("luong-general", "transformer"):
        folder = ROOT / "models" / "translation" / name
        if not folder.is_dir():
            continue
        translator = load_folder(folder)
        row = {"variant": name, "sentences": len(sources)}
        for label, beam in (("greedy_s", 1), ("beam5_s", 5)):
            started = time.perf_counter()
            translator.translate(sources, beam_size=beam)
            row[label] = round(time.perf_counter() - started, 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def markdown(r: dict) -> str:
    """The results as a Markdown page."""
    precisions = list(dict.fromkeys(("fp32", r["default_precision"])))
    lines = [
        f"Measured with `python benchmarks/transformer.py` on {r['device']} ({r['machine']}, "
        f"{r['threads']} torch thread(s)), torch {r['torch']}. All rows in one process. The trainer's default "
        f"precision on this machine: {r['default_precision']}.",
        "",
        "## Training throughput (translation, zoo sizes, batch 64, real cmn-eng pairs)",
        "",
        "| variant | parameters | " + " | ".join(f"pairs/s {p} | target tokens/s {p}" for p in precisions) + " |",
        "|---|---|" + "---|---|" * len(precisions),
    ]
    for row in r["training"]:
        cells = " | ".join(f"{row[p]['pairs_per_s']} | {row[p]['tgt_tokens_per_s']}" for p in precisions)
        lines.append(f"| {row['variant']} | {row['parameters'] / 1e6:.2f} M | {cells} |")
    lines += ["", "## One sentence, as the app decodes it (median ms)", "",
              "| task | variant | sentence | greedy | beam 5 |", "|---|---|---|---|---|"]
    for row in r["latency"]:
        lines.append(f"| {row['task']} | {row['variant']} | {row['sentence']} | {row['greedy_ms']} | "
                     f"{row['beam5_ms']} |")
    lines += ["", "## The whole translation test split (seconds)", "",
              "| variant | sentences | greedy | beam 5 |", "|---|---|---|---|"]
    for row in r["test_set"]:
        lines.append(f"| {row['variant']} | {row['sentences']} | {row['greedy_s']} | {row['beam5_s']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--out", default=str(ROOT / "results" / "transformer_bench.json"))
    args = parser.parse_args()
    translator, _, splits, examples = setup()
    results = {
        "device": "cpu", "machine": platform.machine(), "threads": torch.get_num_threads(),
        "torch": torch.__version__, "cpus": os.cpu_count(),
        "default_precision": resolve_precision("auto", torch.device("cpu")),
    }
    batches, rounds, reps = (4, 1, 3) if args.quick else (16, 3, 15)
    results["training"] = training_rows(examples, len(translator.src_vocab), len(translator.tgt_vocab),
                                        batches, rounds)
    results["latency"] = latency_rows(reps)
    sources = [s for s, _ in splits.test][: 100 if args.quick else None]
    results["test_set"] = test_set_rows(sources)
    results["median_greedy_ms"] = statistics.median(row["greedy_ms"] for row in results["latency"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    out.with_suffix(".md").write_text(markdown(results), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
