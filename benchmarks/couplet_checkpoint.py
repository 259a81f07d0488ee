"""Score a couplet training run as the zoo scores its models: a candidate recipe's evidence before a re-bundle.

Usage::

    python benchmarks/couplet_checkpoint.py runs/c25/full-h256 --label "whole corpus, hidden 256"
    python benchmarks/couplet_checkpoint.py --table        # only re-write the table from the records

Loads the run's best model (by dev BLEU), measures its cliché table on training pairs as ``attention-lab zoo``
does at export (``load_candidate``; kept in the run folder for the same weights), then decodes both test sets
with beam 5 and the default rules. One record per call is appended to ``results/couplet_checkpoints.jsonl``
(the run's command, epochs, per-epoch dev BLEU and speed, test BLEU, chrF and the rules a reader checks);
``results/couplet_checkpoints.md`` is the table of all records, beside the bundled default model's figures from
``results/eval``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RECORDS = ROOT / "results" / "couplet_checkpoints.jsonl"
KEYS = ("top_char_share", "distinct_ratio", "repetition_mirrored", "no_reuse", "tone_opposition", "no_unk")


def load_candidate(run: Path, data: str | None) -> tuple[Any, Any]:
    """A run's best couplet model as the zoo ships it, and its splits.

    The model's cliché table is measured on its training pairs as ``attention-lab zoo`` does at export
    (``attention_core.hub.zoo.give_overproduction``: once per weights, kept in the run folder as
    ``overproduction.json``).

    Args:
        run: A training run or model folder.
        data: The data folder its split is read from (``None``: ``$ATTENTION_LAB_DATA``, else the user cache).

    Returns:
        ``(translator, splits)``.
    """
    from attention_core.data.tasks import load_splits
    from attention_core.decoding.folder import load_folder
    from attention_core.hub.zoo import give_overproduction

    translator = load_folder(run, "cpu")
    info = translator.meta.get("data", {})
    splits = load_splits("couplet", data, info.get("seed", 1234), info.get("extra", []))
    give_overproduction(translator, Path(run), splits, str(run))
    return translator, splits


def measure(run: Path, data: str | None, label: str) -> dict:
    """The record of one run: its training history and both test sets at beam 5 with the default rules."""
    from attention_core.analysis.evaluation import evaluate

    started = time.time()
    translator, splits = load_candidate(run, data)
    record = {"label": label, "run": str(run), "command": translator.meta.get("command"),
              "parameters": sum(p.numel() for p in translator.model.parameters()),
              "history": translator.meta.get("history"), "best_dev_bleu": translator.meta.get("best_dev_bleu")}
    for name, pairs in splits.evaluation_sets().items():
        report = evaluate(translator, pairs, beam_size=5, constrained=True)
        record[name] = {"n": report["n"], "bleu": round(report["bleu"], 2), "chrf": round(report["chrf"], 2),
                        **{k: round(report["couplet"][k], 3) for k in KEYS},
                        "examples": [o for o in report.get("outputs", [])[:5]]}
    record["seconds_to_measure"] = round(time.time() - started)
    return record


def bundled_row(root: Path = ROOT) -> dict | None:
    """The bundled default couplet model's beam-5 figures, from the zoo's evaluation reports.

    Its label names the model the reports measured (hidden size, weights' sha256), so the row stays true when the
    bundled model is replaced.
    """
    rows = {}
    for name, stem in (("test", "couplet"), ("poetry-test", "couplet-poetry-test")):
        path = root / "results" / "eval" / f"{stem}--luong-general--beam5.json"
        if not path.is_file():
            return None
        r = json.loads(path.read_text(encoding="utf-8"))
        rows[name] = {"bleu": r["bleu"], "chrf": r["chrf"], **{k: r["couplet"][k] for k in KEYS}}
    label = f"bundled default (hidden {r['model']['hidden_size']}, weights {r.get('weights_sha256', '?')[:8]})"
    return {"label": label, "history": None, **rows}


def markdown(records: list[dict]) -> str:
    """The table of every record, the bundled model first."""
    lines = ["Couplet training runs scored as the zoo scores its models: beam 5, default rules, cliché table measured "
             "on training pairs. Written by `python benchmarks/couplet_checkpoint.py`.", "",
             "| run | epochs | best dev BLEU (greedy) | pairs/s | modern test BLEU | chrF | most frequent char | "
             "distinct | classical BLEU | distinct |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        history = r.get("history") or []
        speed = f"{history[-1]['pairs_per_s']:.0f}" if history else "—"
        t, p = r["test"], r["poetry-test"]
        lines.append(f"| {r['label']} | {len(history) or '—'} | {r.get('best_dev_bleu', '—') or '—'} | {speed} | "
                     f"{t['bleu']:.2f} | {t['chrf']:.2f} | {t['top_char_share']:.3f} | {t['distinct_ratio']:.3f} | "
                     f"{p['bleu']:.2f} | {p['distinct_ratio']:.3f} |")
    for r in records:
        if r.get("command"):
            lines += ["", f"`{r['label']}`: `{r['command']}`; dev BLEU by epoch "
                      + ", ".join(f"{h['dev_bleu']}" for h in r.get("history") or [])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", help="a training run folder (its best model)")
    parser.add_argument("--label", default=None)
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--table", action="store_true", help="only re-write the table")
    args = parser.parse_args()
    if args.run and not args.table:
        record = measure(Path(args.run), args.data, args.label or Path(args.run).name)
        with open(RECORDS, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    lines = RECORDS.read_text(encoding="utf-8").splitlines() if RECORDS.is_file() else []
    records = [json.loads(line) for line in lines if line.strip()]
    bundled = bundled_row()
    RECORDS.with_suffix(".md").write_text(markdown(([bundled] if bundled else []) + records), encoding="utf-8")


if __name__ == "__main__":
    main()
