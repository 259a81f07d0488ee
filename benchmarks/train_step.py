"""One-thread training speed: the trainer's step as it is against the step as it was (issue #50).

"As it was" is the library at the commit before the issue's first change (``ISSUE_START``), read from git
and imported beside today's (``attention_core_was``): its packed encoder, its decoder loop (one
``Decoder.step`` per position) and its ``F.cross_entropy`` on float32 logits. "Now" is today's
``train_step``: the encoder over equal-length groups, teacher forcing hoisted (``Decoder.teacher_force``),
the loss written out (``loss.smoothed_cross_entropy``, its exponentials kept for the backward pass). Both
train a model of the translation zoo (its recipe's sizes, dropout, clipping and label smoothing, the trainer's
optimiser) from the same initial weights on the same stream of real batches of the translation corpus, in one
process and one thread, taking turns pass by pass so that whatever else the machine runs slows both alike. The
median pass counts; each variant is measured in a fresh process.

    OMP_NUM_THREADS=1 python benchmarks/train_step.py --data ../shared/data
    python benchmarks/train_step.py --variants luong-general --batches 48 --rounds 6 --out /tmp/step.json

Writes ``results/train_step.json`` and ``.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402

from attention_core.hub.zoo import RECIPES, VARIANTS, model_options  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402
from attention_core.training.precision import AMP_DTYPES  # noqa: E402

RNN_VARIANTS = [name for name in VARIANTS if name != "transformer"]
"""The translation zoo's RNN variants (the Transformer has no step loop)."""


ISSUE_START = "ea9fbe6"
"""The commit before issue #50's first change: the training step "as it was"."""


def library_as_it_was(rev: str = ISSUE_START) -> ModuleType:
    """The library at ``rev``, imported beside today's as ``attention_core_was`` (its own imports renamed).

    Read from git into a temporary folder; nothing in the checkout changes.
    """
    root = Path(tempfile.mkdtemp(prefix="attention-lab-was-"))
    listing = subprocess.run(["git", "-C", str(bench.ROOT), "ls-tree", "--name-only", rev, "attention_core/"],
                             capture_output=True, text=True, check=True).stdout.split()
    (root / "attention_core_was").mkdir()
    for path in listing:
        if path.endswith(".py"):
            text = subprocess.run(["git", "-C", str(bench.ROOT), "show", f"{rev}:{path}"], capture_output=True,
                                  text=True, check=True).stdout
            (root / "attention_core_was" / Path(path).name).write_text(
                re.sub(r"\battention_core\b", "attention_core_was", text), encoding="utf-8")
    sys.path.insert(0, str(root))
    return importlib.import_module("attention_core_was")


def reference_stepper(was: ModuleType, model: torch.nn.Module, precision: str):
    """The trainer's step as it was, on a model of the library as it was with ``model``'s weights."""
    seq2seq = importlib.import_module(f"{was.__name__}.seq2seq")
    config = importlib.import_module(f"{was.__name__}.config")
    training = importlib.import_module(f"{was.__name__}.training")
    old = seq2seq.build_model(config.ModelConfig(**vars(model.cfg)))
    old.load_state_dict(model.state_dict())
    recipe = RECIPES["translation"].train
    optimizer = training.make_optimizer(old.parameters(), lr=1e-3)
    return lambda batch: training.train_step(old, batch, optimizer, clip=recipe.clip,
                                             label_smoothing=recipe.label_smoothing,
                                             amp_dtype=AMP_DTYPES[precision])


def measure(was: ModuleType, variant: str, precision: str, stream: list, rounds: int, src_size: int,
            tgt_size: int) -> dict:
    """Pairs/s of the step as it was and as it is on one variant, pass by pass in turn.

    A pass steps one model through the whole stream, as training does (its weights and optimiser state
    stay in the caches, which stepping the two models batch by batch in turn would not let them); the two
    take turns pass by pass, who goes first alternating, and the median pass counts.
    """
    cfg = ModelConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, **model_options("translation", variant))
    torch.manual_seed(0)
    model = build_model(cfg)
    recipe = RECIPES["translation"].train  # clip 1.0, as ours_step clips
    steps = {"was": reference_stepper(was, model, precision),
             "now": bench.ours_step(model, precision, recipe.label_smoothing)}
    for batch in stream:  # warm-up: oneDNN builds its kernels once per shape
        for step in steps.values():
            step(batch)
    times = bench.take_turns({name: (lambda step=step: [step(b) for b in stream]) for name, step in steps.items()},
                             rounds)
    pairs = sum(b.size for b in stream)
    row: dict = {"variant": variant, "precision": precision}
    for name, seconds in times.items():
        row[f"{name}_pairs_per_s"] = round(pairs / statistics.median(seconds), 1)
        row[f"{name}_passes_s"] = [round(s, 2) for s in seconds]
    row["speedup"] = round(row["now_pairs_per_s"] / row["was_pairs_per_s"], 3)
    return row


def markdown(report: dict) -> str:
    """The report as a Markdown table."""
    lines = [
        "# One-thread training speed: the training step against the step as it was (issue #50)",
        "",
        f"As it was: the library at {report['as_it_was']} (packed encoder, one `Decoder.step` per position, "
        "`F.cross_entropy` on float32 logits). Now: the encoder over equal-length groups, teacher forcing hoisted "
        "(`Decoder.teacher_force`), the loss written out (`loss.smoothed_cross_entropy`: the exponentials of the "
        "forward pass kept and made into the gradient in place), the loss left on the device. The two take turns "
        "pass by pass; each variant in a fresh process. Issue #50's goal: at least 1.15×.",
        "",
        f"`{report['command']}` — {report['batches']} real translation batches of {report['batch_size']} "
        f"pairs, {report['rounds']} timed passes each (median), one thread, {report['machine']}; "
        f"other processes on the machine: {report['others']}.",
        "",
        "| variant | precision | as it was, pairs/s | now, pairs/s | speed-up |",
        "|---|---|---:|---:|---:|",
    ]
    for row in report["rows"]:
        lines.append(f"| {row['variant']} | {row['precision']} | {row['was_pairs_per_s']} | "
                     f"{row['now_pairs_per_s']} | {row['speedup']:.3f}× |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="the corpora folder (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--variants", nargs="+", default=RNN_VARIANTS, choices=RNN_VARIANTS)
    parser.add_argument("--precisions", nargs="+", default=["bf16"], choices=["bf16", "fp32"])
    parser.add_argument("--batches", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rev", default=ISSUE_START, help="the commit whose step is 'as it was'")
    parser.add_argument("--others", default="none", help="what else ran on the machine, for the report")
    parser.add_argument("--out", default=str(bench.ROOT / "results" / "train_step.json"))
    parser.add_argument("--worker", nargs=2, metavar=("VARIANT", "PRECISION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    bench.DATA = args.data
    if args.worker:  # one measurement in this fresh process: its row on the last line
        translator, _, _, examples = bench.setup()
        stream = bench.batch_stream(examples, args.batch_size, args.batches)
        print(json.dumps(measure(library_as_it_was(args.rev), *args.worker, stream, args.rounds,
                                 len(translator.src_vocab), len(translator.tgt_vocab))))
        return
    rows = []
    for variant in args.variants:
        for precision in args.precisions:
            # a fresh process each: in one long process the later measurements drifted (0.88x-0.96x for variants
            # measured at 1.04x-1.07x first in a process), the allocator's history weighing on one side
            row = json.loads(subprocess.run(
                [sys.executable, __file__, *sys.argv[1:], "--worker", variant, precision],
                capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
            print(row, flush=True)
            rows.append(row)
    report = {
        "command": shlex.join(["python", "benchmarks/train_step.py", *sys.argv[1:]]),
        "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__}",
        "threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "as_it_was": args.rev, "batches": args.batches, "batch_size": args.batch_size, "rounds": args.rounds,
        "others": args.others,
        "rows": rows,
    }
    bench.write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
