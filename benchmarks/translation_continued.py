"""A second training stage for the translation zoo (issue #29): which one, chosen on the two dev sets.

Usage::

    python benchmarks/translation_continued.py --first runs/zoo3/translation/luong-general
    # → runs/continued/<candidate>/ (resumable), results/translation_continued.{md,json}

The first stage is the zoo's recipe (``RECIPES["translation"].train``: cmn-eng ×3, cmn-eng-extra and tv4dialog,
10 epochs). Each candidate continues its best weights for two more epochs with a fresh optimiser
(``fit(init=...)``, as ``TaskRecipe.continued`` does): on the same mix at a lower learning rate, or on a
curriculum that keeps cmn-eng ×3 and draws one extra pair (cmn-eng-extra or tv4dialog) per cmn-eng pair each epoch
(``full_data_epochs=10``, ``extra_ratio=1``). Every candidate and the first stage are scored on cmn-eng dev (greedy,
the trainer's model selection, and beam 5) and on the held-out TV episodes of ``tv4dialog-dev`` (beam 5). A finished
candidate is not trained again, only scored.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import repo_path, write_report  # noqa: E402


def candidates() -> dict:
    """The second stages compared, by name (each counts its ``epochs`` from the first stage's first epoch)."""
    from attention_core.hub.zoo import RECIPES

    first = RECIPES["translation"].train
    curriculum = dict(epochs=first.epochs + 2, full_data_epochs=first.epochs, extra_ratio=1.0, patience=2)
    return {
        "curriculum, lr 5e-4": replace(first, lr=5e-4, **curriculum),
        "curriculum, lr 2.5e-4": replace(first, lr=2.5e-4, **curriculum),
        "curriculum, lr 1.25e-4": replace(first, lr=1.25e-4, **curriculum),
        "same mix, lr 5e-4": replace(first, epochs=first.epochs + 2, lr=5e-4, patience=2),
    }


def markdown(report: dict) -> str:
    """One table: the first stage and each candidate on both dev sets."""
    lines = [
        f"A second training stage for the translation zoo, from `{report['first']}` (the zoo's first stage, "
        f"{report['first_epochs']} epochs): two more epochs with a fresh optimiser, on the same mix or on a "
        "curriculum (cmn-eng ×3 and one extra pair drawn per cmn-eng pair each epoch). BLEU (sacrebleu 13a, "
        "lower-cased) of the kept model (its best epoch on dev) on cmn-eng dev (greedy: the trainer's model selection; "
        "beam 5) and on tv4dialog-dev (held-out TV "
        "episodes, beam 5); the loop guard on, as by default. Written by `python benchmarks/translation_continued.py`.",
        "",
        "| stage | dev BLEU by epoch (greedy, every epoch of the stage) | cmn-eng dev greedy | cmn-eng dev beam 5 | "
        "tv4dialog-dev beam 5 | training s (this CPU, beside other work) |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in report["rows"].items():
        history = ", ".join(f"{b:.2f}" for b in r["history"][report["first_epochs"]:]) or "—"
        lines.append(f"| {name} | {history} | {r['dev greedy']:.2f} | {r['dev beam5']:.2f} | "
                     f"{r['tv4dialog-dev beam5']:.2f} | {r['seconds'] or '—'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", required=True, help="the first stage's run folder (the zoo's, finished)")
    parser.add_argument("--runs", default=str(ROOT / "runs" / "continued"), help="where the candidates train")
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", default=str(ROOT / "results" / "translation_continued.json"))
    args = parser.parse_args()

    from attention_core.analysis.evaluation import evaluate
    from attention_core.data.corpora import data_home
    from attention_core.data.tasks import TASKS, load_splits
    from attention_core.decoding.folder import load_folder
    from attention_core.editing.namecache import cached_known_names
    from attention_core.hub.zoo import RECIPES, model_options
    from attention_core.training.loop import fit

    splits = load_splits("translation", data_home(args.data), extra=RECIPES["translation"].extra)
    first = load_folder(args.first)
    first_epochs = len(first.meta.get("history") or [])

    def scored(translator, folder: Path | None = None) -> dict:
        history = translator.meta.get("history") or []  # the kept (best) model's epochs
        every = folder / "metrics.jsonl" if folder else None  # every epoch, a worse last one too
        if every and every.is_file():
            history = [json.loads(line) for line in every.read_text(encoding="utf-8").splitlines() if line.strip()]
        return {"history": [h["dev_bleu"] for h in history],
                "seconds": round(sum(h.get("seconds", 0) for h in history[first_epochs:])),
                "dev greedy": evaluate(translator, splits.dev, beam_size=1)["bleu"],
                "dev beam5": evaluate(translator, splits.dev, beam_size=5)["bleu"],
                "tv4dialog-dev beam5": evaluate(translator, splits.extra_devs["tv4dialog-dev"], beam_size=5)["bleu"]}

    rows = {"first stage": scored(first)}
    print("first stage", rows["first stage"], flush=True)
    for name, cfg in candidates().items():
        folder = Path(args.runs) / name.replace(", ", "-").replace(" ", "-")
        fit(TASKS["translation"], splits, folder, model_options("translation", "luong-general"), cfg, resume=True,
            progress=False, init=load_folder(args.first), find_names=cached_known_names)
        rows[name] = scored(load_folder(folder), folder)
        print(name, rows[name], flush=True)
    write_report(args.out, {"first": repo_path(args.first), "first_epochs": first_epochs, "rows": rows}, markdown)


if __name__ == "__main__":
    main()
