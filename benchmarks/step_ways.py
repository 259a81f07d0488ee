"""A GPU's ways against the CPU's, measured on a CPU (issue #52): which way the training step takes where.

The training step has a way that reads nothing back from the device (what a GPU needs) and, for two of its parts,
a way that reads from the host and is cheaper where reading costs nothing (a CPU):

* **projection** — the vocabulary projection over every target position, the padding masked from the loss
  (GPU), against only the real positions picked by a boolean index (``REAL_ONLY_DEVICES``);
* **encoder** — one packed batch sorted on the host (GPU, cuDNN), against one unpacked run per group of
  equal-length sentences (``BY_LENGTH_DEVICES``).

Both are timed as whole training steps of the translation zoo's ``luong-general`` (its sizes, bf16, one thread)
on the same real batches, from the same weights, taking turns pass by pass in one process (median pass). A third
row times an epoch's batches: ``bucketed_batches`` (vectorised, ``IdArrays``) against the same batches padded
pair by pair with ``make_batch``, as before — on the translation recipe's epoch (cmn-eng ×3 + the extra corpora,
303,555 pairs, from the encoded corpus under the runs folder when it is there, else cmn-eng train ×3).

    OMP_NUM_THREADS=1 python benchmarks/step_ways.py --data ../shared/data

Writes ``results/step_ways.json`` and ``.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import platform
import random
import shlex
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402

import attention_core.model.encoder as encoder  # noqa: E402
import attention_core.training.loop as training  # noqa: E402
from attention_core.data.batch import make_batch  # noqa: E402
from attention_core.data.tasks import bucketed_batches  # noqa: E402
from attention_core.hub.zoo import RECIPES, model_options  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402

WAYS = {  # part -> {way: (REAL_ONLY_DEVICES, BY_LENGTH_DEVICES)}
    "projection": {"GPU's: every position, masked loss": (frozenset(), frozenset({"cpu"})),
                   "CPU's: real positions only": (frozenset({"cpu"}), frozenset({"cpu"}))},
    "encoder": {"GPU's: one packed batch": (frozenset({"cpu"}), frozenset()),
                "CPU's: by equal lengths": (frozenset({"cpu"}), frozenset({"cpu"}))},
}


def stepper(variant: str, precision: str, src_size: int, tgt_size: int, devices: tuple) -> Callable:
    """A training step of a fresh model (seed 0) that takes the ways ``devices`` name (``bench.ours_step``)."""
    cfg = ModelConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, **model_options("translation", variant))
    torch.manual_seed(0)
    step = bench.ours_step(build_model(cfg), precision, RECIPES["translation"].train.label_smoothing)  # clip 1.0

    def with_ways(batch):
        training.REAL_ONLY_DEVICES, encoder.BY_LENGTH_DEVICES = devices
        step(batch)

    return with_ways


def median_turns(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each run, taking turns (``bench.take_turns``)."""
    return {name: statistics.median(seconds) for name, seconds in bench.take_turns(runs, rounds).items()}


def step_rows(variant: str, precision: str, stream: list, rounds: int, sizes: tuple[int, int]) -> list[dict]:
    """Pairs/s of each part's two ways."""
    pairs = sum(b.size for b in stream)
    saved = training.REAL_ONLY_DEVICES, encoder.BY_LENGTH_DEVICES
    rows = []
    try:
        for part, ways in WAYS.items():
            steps = {way: stepper(variant, precision, *sizes, devices) for way, devices in ways.items()}
            for step in steps.values():  # warm-up: oneDNN builds its kernels once per shape
                for batch in stream:
                    step(batch)
            seconds = median_turns({way: (lambda s=step: [s(b) for b in stream]) for way, step in steps.items()},
                                   rounds)
            gpu, cpu = (pairs / seconds[way] for way in ways)
            rows.append({"part": part, "variant": variant, "precision": precision, "ways": list(ways),
                         "gpu_way_pairs_per_s": round(gpu, 1), "cpu_way_pairs_per_s": round(cpu, 1),
                         "cpu_way_speedup": round(cpu / gpu, 3)})
    finally:
        training.REAL_ONLY_DEVICES, encoder.BY_LENGTH_DEVICES = saved
    return rows


def pair_by_pair(examples, batch_size: int, seed: int, pool: int = 50) -> list:
    """The epoch's batches as they were made before: a Python sort and ``make_batch`` per batch."""
    order = list(range(len(examples)))
    rng = random.Random(seed)
    rng.shuffle(order)
    chunks, span = [], batch_size * pool
    for start in range(0, len(order), span):
        chunk = sorted(order[start : start + span], key=lambda i: (len(examples[i].src_ids), len(examples[i].tgt_ids)))
        chunks += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(chunks)
    return [make_batch([(examples[i].src_ids, examples[i].tgt_ids) for i in chunk]) for chunk in chunks]


def epoch_examples(runs: str | None) -> tuple[list, str]:
    """The translation recipe's epoch from the encoded corpus under ``runs`` (else cmn-eng train ×3), and its name."""
    from attention_core.data.corpora import runs_home
    from attention_core.data.encoded import EXAMPLES, FOLDER, read
    from attention_core.data.tasks import get_task

    home = Path(runs) if runs else runs_home()
    folders = [f for f in home.glob(f"**/{FOLDER}/translation-*") if (f / EXAMPLES).is_file()]
    # the largest: a small run's corpus (a test's, your own) may sit beside the zoo's
    for zoo in sorted(folders, key=lambda f: (f / EXAMPLES).stat().st_size, reverse=True)[:1]:
        corpus = read(zoo, get_task("translation"))
        repeat = RECIPES["translation"].train.main_repeat
        return corpus.own * repeat + corpus.extra, f"the encoded corpus {zoo.name} (own ×{repeat} + extra)"
    _, _, _, examples = bench.setup()
    return examples * 3, "cmn-eng train (3,000 pairs) ×3"


def batching_row(examples: list, source: str, batch_size: int, rounds: int) -> dict:
    """Seconds to build an epoch's batches, vectorised against pair by pair (the same batches)."""
    new = list(bucketed_batches(examples, batch_size, seed=1))
    old = pair_by_pair(examples, batch_size, seed=1)
    same = len(new) == len(old) and all(torch.equal(a.tgt_out, b.tgt_out) and torch.equal(a.src, b.src)
                                        for a, b in zip(new, old, strict=True))
    seconds = median_turns({"vectorised": lambda: list(bucketed_batches(examples, batch_size, seed=1)),
                            "pair by pair": lambda: pair_by_pair(examples, batch_size, seed=1)}, rounds)
    return {"part": "epoch's batches", "pairs": len(examples), "source": source, "identical": same,
            "vectorised_s": round(seconds["vectorised"], 2), "pair_by_pair_s": round(seconds["pair by pair"], 2),
            "speedup": round(seconds["pair by pair"] / seconds["vectorised"], 2)}


def markdown(report: dict) -> str:
    """The report as Markdown tables."""
    lines = [
        "# A GPU's ways against the CPU's, on a CPU (issue #52)",
        "",
        f"`{report['command']}` — {report['batches']} real translation batches of {report['batch_size']} pairs, "
        f"{report['rounds']} timed passes each (median, taking turns), one thread, {report['machine']}; other "
        f"processes on the machine: {report['others']}.",
        "",
        "| part | variant | precision | GPU's way, pairs/s | CPU's way, pairs/s | CPU's way ÷ GPU's |",
        "|---|---|---|---:|---:|---:|",
    ]
    for row in report["steps"]:
        lines.append(f"| {row['part']}: {' vs '.join(row['ways'])} | {row['variant']} | {row['precision']} | "
                     f"{row['gpu_way_pairs_per_s']} | {row['cpu_way_pairs_per_s']} | {row['cpu_way_speedup']:.3f}× |")
    b = report["batching"]
    lines += [
        "",
        f"An epoch's batches ({b['pairs']:,} pairs, {b['source']}): vectorised {b['vectorised_s']} s, pair by "
        f"pair {b['pair_by_pair_s']} s ({b['speedup']}×); the same batches: {b['identical']}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="the corpora folder (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--runs", default=None, help="the runs folder holding an encoded corpus (default: its home)")
    parser.add_argument("--variant", default="luong-general")
    parser.add_argument("--precision", default="bf16", choices=["bf16", "fp32"])
    parser.add_argument("--batches", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--others", default="none", help="what else ran on the machine, for the report")
    parser.add_argument("--out", default=str(bench.ROOT / "results" / "step_ways.json"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    bench.DATA = args.data
    translator, _, _, examples = bench.setup()
    stream = bench.batch_stream(examples, args.batch_size, args.batches)
    sizes = len(translator.src_vocab), len(translator.tgt_vocab)
    steps = step_rows(args.variant, args.precision, stream, args.rounds, sizes)
    for row in steps:
        print(row, flush=True)
    batching = batching_row(*epoch_examples(args.runs), args.batch_size, max(3, args.rounds // 2))
    print(batching, flush=True)
    report = {
        "command": shlex.join(["python", "benchmarks/step_ways.py", *sys.argv[1:]]),
        "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__}",
        "batches": args.batches, "batch_size": args.batch_size, "rounds": args.rounds, "others": args.others,
        "steps": steps, "batching": batching,
    }
    bench.write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
