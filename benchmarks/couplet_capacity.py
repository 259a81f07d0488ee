"""Capacity at an equal CPU-time budget (issue #25): training speed of the couplet candidates, side by side.

Usage::

    python benchmarks/couplet_capacity.py                       # writes results/couplet_capacity_speed.{json,md}
    python benchmarks/couplet_capacity.py --quick               # fewer batches (a smoke run)
    python benchmarks/couplet_capacity.py --budget 1892174      # also: each size's pairs for that CPU time

Every size trains on the same fixed stream of real whole-corpus couplet batches (the vocabulary of the
whole-corpus run ``runs/c25/full-h256``, or one built from the training split), with the trainer's own step
(``attention_core.training.loop.train_step``), optimiser and precision, in one process: one untimed pass (oneDNN
compiles its kernels once per shape), then the median of timed passes. A CPU-time budget is then the same
number of seconds for every size: ``--budget N`` turns *N pairs of the reference size* (hidden 256, the
default) into each size's pairs, ``N × its speed ÷ the reference's`` — the ``--max-pairs`` to train it with.

The sizes are the largest that ship under the 10 MB weights limit (float16) and a Transformer with about the
same parameter count; the reference is today's zoo size.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import ours_step, train_throughput, write_report  # noqa: E402

from attention_core.data.tasks import encode_pairs, get_task, load_splits  # noqa: E402
from attention_core.data.vocab import Vocab  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402
from attention_core.training.precision import resolve_precision  # noqa: E402

SHARED = dict(dropout=0.2, tie_embeddings=True, share_embeddings=True)
SIZES: dict[str, dict] = {
    "luong-general h256": dict(decoder="luong", score="general", hidden_size=256, emb_size=128),
    "luong-general h352": dict(decoder="luong", score="general", hidden_size=352, emb_size=128),
    "transformer d232": dict(decoder="transformer", score="scaled_dot", hidden_size=232, emb_size=232, heads=4,
                             ff_size=928, num_layers=2),
}
"""The candidate sizes (with the couplet recipe's dropout and embedding sharing); the first is the reference."""
REFERENCE = "luong-general h256"
WEIGHTS_LIMIT = 10_000_000
"""Bytes a shipped weights file may have (float16, two bytes a parameter)."""


def vocab() -> Vocab:
    """The whole-corpus couplet vocabulary of the candidate run, or one built from the training split."""
    run = ROOT / "runs" / "c25" / "full-h256" / "src_vocab.json"
    if run.is_file():
        return Vocab.load(run)
    from attention_core.data.encoded import build_vocabs
    from attention_core.hub.zoo import RECIPES

    recipe = RECIPES["couplet"]
    splits = load_splits("couplet", None, extra=recipe.extra)
    return build_vocabs(get_task("couplet"), splits.train, recipe.train.min_freq, True)[0]  # shared embeddings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer batches and rounds (a smoke run)")
    parser.add_argument("--budget", type=int, default=None, metavar="PAIRS",
                        help="training pairs of the reference size; prints each size's pairs for the same CPU time")
    parser.add_argument("--out", default=str(ROOT / "results" / "couplet_capacity_speed.json"))
    args = parser.parse_args()
    batches, rounds = (8, 1) if args.quick else (48, 3)
    precision = resolve_precision("auto", torch.device("cpu"))
    v = vocab()
    task = get_task("couplet")
    train = load_splits("couplet", None).train
    examples = encode_pairs(train[:20000:5], task, v, v, max_len=40)
    rows = {}
    for name, sizes in SIZES.items():
        torch.manual_seed(0)
        model = build_model(ModelConfig(src_vocab_size=len(v), tgt_vocab_size=len(v), **SHARED, **sizes))
        step = ours_step(model, precision)
        params = sum(p.numel() for p in model.parameters())
        rows[name] = {**train_throughput(examples, 64, step, batches, rounds=rounds), "parameters": params,
                      "float16_bytes": 2 * params, "ships": 2 * params < WEIGHTS_LIMIT, "config": sizes}
        print(name, rows[name], flush=True)
    ref = rows[REFERENCE]["pairs_per_s"]
    for row in rows.values():
        row["speed_vs_reference"] = round(row["pairs_per_s"] / ref, 3)
        if args.budget:
            row["budget_pairs"] = round(args.budget * row["pairs_per_s"] / ref)
    report = {"machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread(s)", "torch": torch.__version__,
              "precision": precision, "batch_size": 64, "vocab": len(v), "reference": REFERENCE,
              "reference_budget_pairs": args.budget, "rows": rows}
    write_report(args.out, report, markdown)


def markdown(r: dict) -> str:
    lines = [f"Training speed of the couplet capacity candidates, side by side in one process "
             f"(`python benchmarks/couplet_capacity.py`): {r['machine']}, torch {r['torch']}, {r['precision']}, "
             f"batch {r['batch_size']}, real whole-corpus couplet batches, vocabulary {r['vocab']:,}.", "",
             "| size | parameters | float16 weights | pairs/s | × reference | pairs for the same CPU time |",
             "|---|---|---|---|---|---|"]
    for name, row in r["rows"].items():
        budget = f"{row['budget_pairs']:,}" if "budget_pairs" in row else "—"
        lines.append(f"| {name} | {row['parameters'] / 1e6:.2f} M | {row['float16_bytes'] / 1e6:.2f} MB | "
                     f"{row['pairs_per_s']} | {row['speed_vs_reference']:.2f} | {budget} |")
    if r.get("reference_budget_pairs"):
        lines += ["", f"The budget: {r['reference_budget_pairs']:,} pairs of *{r['reference']}*; each size gets the "
                  "pairs it trains in the same seconds (`--max-pairs`)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
