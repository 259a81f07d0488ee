"""One-thread training speed: the training step as it is against the step as it was (issue #50).

Two changes are measured together. ``Seq2Seq.forward`` runs teacher forcing through the decoder's
``teacher_force``; with ``hoisted=False`` it steps through ``Decoder.teacher_force``, the loop the library
had before (one ``Decoder.step`` per position, as decoding runs it). On a CPU the encoder runs each group
of equal-length sentences unpacked; the reference runs the packed batch, as before (``PackedEncoder``).
Both train a model of the translation zoo (its recipe's sizes and
dropout, the trainer's ``train_step``, optimiser, clipping and label smoothing) from the same initial
weights on the same stream of real batches of the translation corpus, in one process and one thread,
taking turns pass by pass so that whatever else the machine runs slows both alike. The median pass
counts.

    OMP_NUM_THREADS=1 python benchmarks/train_step.py --data ../shared/data
    python benchmarks/train_step.py --variants luong-general --batches 48 --rounds 3 --out /tmp/step.json

Writes ``results/train_step.json`` and ``.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

from attention_core.config import ModelConfig  # noqa: E402
from attention_core.encoder import Encoder  # noqa: E402
from attention_core.precision import AMP_DTYPES  # noqa: E402
from attention_core.seq2seq import build_model  # noqa: E402
from attention_core.training import make_optimizer, train_step  # noqa: E402
from attention_core.zoo import RECIPES, VARIANTS, model_options  # noqa: E402

RNN_VARIANTS = [name for name in VARIANTS if name != "transformer"]
"""The translation zoo's RNN variants (the Transformer has no step loop)."""


class PackedEncoder(Encoder):
    """The encoder as it was: the RNN over the packed batch, on every device."""

    def _run_by_length(self, embedded, src_lengths):  # noqa: D102
        packed = pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, state = self.rnn(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=embedded.size(1))[0], state


class Reference(torch.nn.Module):
    """The step as it was: a packed encoder and the reference loop (``hoisted=False``).

    ``train_step`` unwraps ``.module`` for the config.
    """

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        module.encoder.__class__ = PackedEncoder
        self.module = module

    def forward(self, *args, **kwargs):  # noqa: D102
        return self.module(*args, **kwargs, hoisted=False)


def stepper(model: torch.nn.Module, precision: str):
    """The trainer's step (recipe's clipping and label smoothing) on ``model`` with its own optimiser."""
    recipe = RECIPES["translation"].train
    optimizer = make_optimizer(model.parameters(), lr=1e-3)
    return lambda batch: train_step(model, batch, optimizer, clip=recipe.clip,
                                    label_smoothing=recipe.label_smoothing, amp_dtype=AMP_DTYPES[precision])


def measure(variant: str, precision: str, stream: list, rounds: int, src_size: int, tgt_size: int) -> dict:
    """Pairs/s of the reference and the hoisted loop on one variant, passes taken in turn."""
    cfg = ModelConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, **model_options("translation", variant))
    torch.manual_seed(0)
    ours = build_model(cfg)
    theirs = build_model(cfg)
    theirs.load_state_dict(ours.state_dict())
    steps = {"reference": stepper(Reference(theirs), precision), "hoisted": stepper(ours, precision)}
    for step in steps.values():  # warm-up: oneDNN builds its kernels once per shape
        for batch in stream:
            step(batch)
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            started = time.perf_counter()
            for batch in stream:
                step(batch)
            times[name].append(time.perf_counter() - started)
    pairs = sum(b.size for b in stream)
    row: dict = {"variant": variant, "precision": precision}
    for name, seconds in times.items():
        row[f"{name}_pairs_per_s"] = round(pairs / statistics.median(seconds), 1)
        row[f"{name}_passes_s"] = [round(s, 2) for s in seconds]
    row["speedup"] = round(row["hoisted_pairs_per_s"] / row["reference_pairs_per_s"], 3)
    return row


def markdown(report: dict) -> str:
    """The report as a Markdown table."""
    lines = [
        "# One-thread training speed: the training step against the step as it was (issue #50)",
        "",
        "Reference: the packed encoder and one `Decoder.step` per position. Now: the encoder over equal-length "
        "groups, teacher forcing hoisted (`Decoder.teacher_force`).",
        "",
        f"`{report['command']}` — {report['batches']} real translation batches of {report['batch_size']} "
        f"pairs, {report['rounds']} timed passes each (taken in turn, median), one thread, {report['machine']}; "
        f"other processes on the machine: {report['others']}.",
        "",
        "| variant | precision | as it was, pairs/s | now, pairs/s | speed-up |",
        "|---|---|---:|---:|---:|",
    ]
    for row in report["rows"]:
        lines.append(f"| {row['variant']} | {row['precision']} | {row['reference_pairs_per_s']} | "
                     f"{row['hoisted_pairs_per_s']} | {row['speedup']:.3f}× |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="the corpora folder (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--variants", nargs="+", default=RNN_VARIANTS, choices=RNN_VARIANTS)
    parser.add_argument("--precisions", nargs="+", default=["bf16"], choices=["bf16", "fp32"])
    parser.add_argument("--batches", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--others", default="none", help="what else ran on the machine, for the report")
    parser.add_argument("--out", default=str(bench.ROOT / "results" / "train_step.json"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    bench.DATA = args.data
    translator, _, _, examples = bench.setup()
    stream = bench.batch_stream(examples, args.batch_size, args.batches)
    rows = []
    for variant in args.variants:
        for precision in args.precisions:
            row = measure(variant, precision, stream, args.rounds, len(translator.src_vocab),
                          len(translator.tgt_vocab))
            print(row, flush=True)
            rows.append(row)
    report = {
        "command": shlex.join(["python", "benchmarks/train_step.py", *sys.argv[1:]]),
        "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__}",
        "threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "batches": args.batches, "batch_size": args.batch_size, "rounds": args.rounds, "others": args.others,
        "rows": rows,
    }
    bench.write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
