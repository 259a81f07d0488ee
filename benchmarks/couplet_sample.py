"""The 30 + 30 couplet test lines a reader judges, decoded by a candidate model (issue #25).

Usage::

    python benchmarks/couplet_sample.py runs/c25/full-h256 --label "whole corpus, hidden 256" \\
        --out results/couplet_reading_whole-h256.md

The lines are those of ``results/couplet_sample.md`` (``reports.report.sample_index``, seed 2026: 30 of the modern
``couplet/test``, 30 of the classical ``poetry-couplet/test``), so every candidate is read on the same 上联s. The
run's best model decodes them as the zoo's models do (beam 5, the default rules, its cliché table measured on
training pairs first); the table has an empty judgement column for the reader. Nothing is edited.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SETS = {"test": "couplet test (modern)", "poetry-test": "poetry-couplet test (classical)"}


def main() -> None:
    import torch
    from couplet_checkpoint import load_candidate

    from attention_core.data.atomic import atomic_write_text
    from reports.report import sample_index

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a training run or model folder")
    parser.add_argument("--label", default=None)
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", required=True, help="the Markdown table to write")
    args = parser.parse_args()
    translator, splits = load_candidate(Path(args.run), args.data)
    label = args.label or Path(args.run).name
    parts = [f"# The 30 + 30 test lines a reader judges: {label}", "",
             f"`{args.run}` (its best model by dev BLEU), beam 5, the default rules, cliché table measured on its "
             "training pairs; the lines of `results/couplet_sample.md` (seed 2026). Written by "
             "`python benchmarks/couplet_sample.py`, unedited; ✓ accept, ? borderline (not accepted), ✗ reject.", ""]
    for name, title in SETS.items():
        pairs = splits.evaluation_sets()[name]
        index = sample_index(len(pairs))
        with torch.inference_mode():
            outputs = translator.translate([pairs[i][0] for i in index], beam_size=5)
        parts += [f"## {title}", "", "| # | test line | 上联 | model 下联 | human 下联 | judgement |",
                  "|---|---|---|---|---|---|"]
        parts += [f"| {k + 1} | {i + 1} | {pairs[i][0]} | {out.text} | {pairs[i][1]} | |"
                  for k, (i, out) in enumerate(zip(index, outputs))]
        parts.append("")
    atomic_write_text(args.out, "\n".join(parts))
    print(args.out)


if __name__ == "__main__":
    main()
