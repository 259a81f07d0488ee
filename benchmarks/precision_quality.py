"""Does mixed precision cost quality? The zoo's translation/luong-general recipe trained in fp32 and in bf16.

Usage::

    python benchmarks/precision_quality.py              # seed 1; writes results/precision_quality.{json,md}
    python benchmarks/precision_quality.py --seeds 1 2  # more seeds

Each run trains with exactly the zoo's recipe (``attention_core.hub.zoo.RECIPES`` and ``model_options``; only the
seed and the precision change) on one torch thread, resumably (finished runs are skipped, an interrupted one
continues), then is evaluated on the 1,000 test pairs, greedy and beam 5. Runs go to ``runs/quality/`` (not
shipped); the summary goes to ``results/``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.analysis.evaluation import evaluate  # noqa: E402
from attention_core.data.atomic import atomic_write_text  # noqa: E402
from attention_core.data.tasks import TASKS, load_splits  # noqa: E402
from attention_core.decoding.folder import load_folder  # noqa: E402
from attention_core.editing.namecache import cached_known_names  # noqa: E402
from attention_core.hub.zoo import RECIPES, model_options  # noqa: E402
from attention_core.training.loop import fit  # noqa: E402

TASK, VARIANT = "translation", "luong-general"
PRECISIONS = ("fp32", "bf16")


def run(precision: str, seed: int, runs: Path, splits) -> dict:
    """Train (or resume, or skip) one run, evaluate it, and summarise it."""
    out = runs / f"{precision}-s{seed}"
    train_cfg = replace(RECIPES[TASK].train, seed=seed, precision=precision)
    fit(TASKS[TASK], splits, out, model_options(TASK, VARIANT), train_cfg, resume=True, progress=False,
        command=f"python benchmarks/precision_quality.py --seeds {seed}", find_names=cached_known_names)
    tests = {}
    for beam in (1, 5):
        path = runs / f"{precision}-s{seed}-test-beam{beam}.json"
        if not path.exists():
            report = evaluate(load_folder(out), splits.test, beam_size=beam)
            atomic_write_text(path, json.dumps(report, ensure_ascii=False))
        tests[beam] = json.loads(path.read_text(encoding="utf-8"))
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {
        "precision": precision,
        "seed": seed,
        "epochs": len(history),
        "best_dev_bleu": max(h["dev_bleu"] for h in history),
        "final_train_loss": history[-1]["train_loss"],
        "train_seconds": round(sum(h["seconds"] for h in history), 1),
        "median_pairs_per_s": round(statistics.median(h["pairs_per_s"] for h in history), 1),
        "test_bleu_greedy": round(tests[1]["bleu"], 2),
        "test_bleu_beam5": round(tests[5]["bleu"], 2),
        "test_chrf_beam5": round(tests[5]["chrf"], 2),
    }


def markdown(rows: list[dict]) -> str:
    """The summary table for the docs' benchmarks page."""
    lines = [
        "Command: `python benchmarks/precision_quality.py` (the zoo's translation/luong-general recipe, one torch "
        "thread per run; test = the 1,000 test pairs). Training times are each run's own wall-clock: they depend "
        "on what else shared the CPU.",
        "",
        "| precision | seed | epochs | best dev BLEU | final train loss | test BLEU greedy | test BLEU beam 5 "
        "| test chrF beam 5 | training time (s) | median pairs/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['precision']} | {r['seed']} | {r['epochs']} | {r['best_dev_bleu']} | {r['final_train_loss']} | "
            f"{r['test_bleu_greedy']} | {r['test_bleu_beam5']} | {r['test_chrf_beam5']} | {r['train_seconds']} | "
            f"{r['median_pairs_per_s']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    p.add_argument("--runs", default=str(ROOT / "runs" / "quality"))
    p.add_argument("--out", default=str(ROOT / "results" / "precision_quality.json"))
    args = p.parse_args()
    torch.set_num_threads(1)
    splits = load_splits(TASK, args.data, extra=RECIPES[TASK].extra)
    rows = [run(prec, seed, Path(args.runs), splits) for seed in args.seeds for prec in PRECISIONS]
    out = Path(args.out)
    out.write_text(json.dumps(rows, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(rows), encoding="utf-8")
    print(markdown(rows))


if __name__ == "__main__":
    main()
