"""The zoo's ``gpu`` recipes against its CPU ones: dev BLEU after each epoch, the same model and data.

Usage::

    attention-lab zoo --recipe gpu --stage train --only translation/luong-general --runs runs/gpu-check   # and couplet
    python benchmarks/gpu_recipe.py --runs runs/gpu-check
    # → results/gpu_recipe.{md,json}

A lent GPU trains the zoo in minutes only at eight times the CPU recipes' batch (``attention_core.hub.zoo.on_gpu``:
batch 512, twice the learning rate). Before a GPU trains all 18 models that way, the default variant of each task is
trained at the ``gpu`` recipe on the CPU (bfloat16, as the CPU zoo trains) and its dev curve set beside the CPU
recipe's, whose runs were measured by earlier sessions and are quoted from where they were recorded:
``results/translation_recipe.md`` (the translation zoo's first stage, batch 64) and ``attention_core/hub/zoo.py``'s
``RECIPES`` docstring (the couplet default at hidden 352, batch 64, the first four of its six epochs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import repo_path, write_report  # noqa: E402

CPU_RECIPE_DEV = {
    "translation": ([16.00, 20.34, 22.77, 25.79, 27.04, 28.42, 29.32, 30.33, 29.29, 31.77],
                    "results/translation_recipe.md, '+ tv4dialog, cmn-eng ×3'"),
    "couplet": ([1.39, 1.50, 1.66, 1.84], "attention_core/hub/zoo.py, RECIPES docstring (hidden 352, batch 64)"),
}
"""Dev BLEU (greedy) after each epoch of the CPU recipes' default variant, as recorded by the runs that measured it."""


def history(run: Path) -> list[dict]:
    """The epochs of a run folder's ``metrics.jsonl`` (a second stage's folder holds the first stage's too)."""
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    """Write the comparison for every default-variant run found under ``--runs``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="runs/gpu-check", help="the gpu-recipe runs (<task>/luong-general)")
    parser.add_argument("--out", default="results/gpu_recipe.json")
    args = parser.parse_args()
    from attention_core.hub.zoo import RECIPE_SETS

    report = {"runs": repo_path(args.runs), "tasks": {}}
    for task in ("translation", "couplet"):
        runs = [Path(args.runs) / task / name for name in ("luong-general", "luong-general-continued")]
        epochs = history(runs[1]) or history(runs[0])
        if not epochs:
            continue
        cpu, source = CPU_RECIPE_DEV[task]
        gpu = RECIPE_SETS["gpu"][task]
        report["tasks"][task] = {
            "gpu_recipe": {"batch_size": gpu.train.batch_size, "lr": gpu.train.lr},
            "gpu_dev": [e["dev_bleu"] for e in epochs],
            "pairs_per_s": [e.get("pairs_per_s") for e in epochs],
            "cpu_dev": cpu,
            "cpu_source": source,
        }

    def markdown(r: dict) -> str:
        lines = ["The zoo's `gpu` recipes (eight times the batch, twice the learning rate) against its CPU recipes: "
                 "dev BLEU (greedy, the trainer's 1,000 dev pairs) after each epoch of the default variant "
                 "(`luong-general`), trained at the `gpu` recipe on this 2-core CPU in bfloat16 beside another run "
                 f"(`{r['runs']}`). Written by `python benchmarks/gpu_recipe.py`.", ""]
        for task, t in r["tasks"].items():
            n = max(len(t["gpu_dev"]), len(t["cpu_dev"]))

            def cells(xs: list[float], n: int = n) -> str:
                return " | ".join(f"{xs[i]:.2f}" if i < len(xs) else "—" for i in range(n))

            batch, lr = t["gpu_recipe"]["batch_size"], t["gpu_recipe"]["lr"]
            lines += [f"**{task}**", "", "| recipe | " + " | ".join(str(i + 1) for i in range(n)) + " |",
                      "|---|" + "---|" * n,
                      f"| cpu: batch 64, lr {lr / 2:g} ({t['cpu_source']}) | {cells(t['cpu_dev'])} |",
                      f"| gpu: batch {batch}, lr {lr:g} | {cells(t['gpu_dev'])} |", ""]
        return "\n".join(lines) + "\n"

    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
