"""Does mixed precision cost quality? The zoo's translation/luong-general recipe trained in fp32 and in bf16.

Usage::

    python benchmarks/precision_quality.py              # seed 1; writes results/precision_quality.{json,md}
    python benchmarks/precision_quality.py --seeds 1 2  # more seeds

Each run is the ``attention-lab train`` command below (one torch thread, resumable: finished runs are
skipped, an interrupted one continues), then ``attention-lab evaluate`` on the 1,000 test pairs, greedy
and beam 5. Runs go to ``runs/quality/`` (not shipped); the summary goes to ``results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = [  # the zoo's translation recipe (attention_core.zoo.RECIPES) with the luong-general variant
    "--decoder", "luong", "--score", "general", "--hidden", "256", "--emb", "128", "--dropout", "0.3",
    "--tie-embeddings", "--epochs", "12", "--batch-size", "64", "--lr", "1e-3", "--min-freq", "2",
    "--patience", "3", "--label-smoothing", "0.1", "--max-len", "50",
]
PRECISIONS = ("fp32", "bf16")


def _cli(*args: str) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "attention_core.cli", *args], check=True, cwd=ROOT, env=env)


def run(precision: str, seed: int, runs: Path, data: str) -> dict:
    """Train (or resume, or skip) one run, evaluate it, and summarise it."""
    out = runs / f"{precision}-s{seed}"
    _cli("train", "--task", "translation", "--data", data, "--out", str(out), *RECIPE, "--seed", str(seed),
         "--precision", precision, "--quiet", *(["--resume"] if (out / "checkpoint.pt").exists() else []))
    tests = {}
    for beam in (1, 5):
        report = runs / f"{precision}-s{seed}-test-beam{beam}.json"
        if not report.exists():
            _cli("evaluate", "--model", str(out), "--data", data, "--beam", str(beam), "--report", str(report))
        tests[beam] = json.loads(report.read_text(encoding="utf-8"))
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
        "thread per run, two runs side by side on the 2-core CPU; test = the 1,000 test pairs).",
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
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--runs", default=str(ROOT / "runs" / "quality"))
    p.add_argument("--out", default=str(ROOT / "results" / "precision_quality.json"))
    args = p.parse_args()
    rows = [run(prec, seed, Path(args.runs), args.data) for seed in args.seeds for prec in PRECISIONS]
    out = Path(args.out)
    out.write_text(json.dumps(rows, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(rows), encoding="utf-8")
    print(markdown(rows))


if __name__ == "__main__":
    main()
