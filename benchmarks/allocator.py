"""Training speed under each memory allocator: glibc's malloc against tcmalloc and jemalloc (issue #25).

Usage::

    python benchmarks/allocator.py            # writes results/allocator.{json,md}
    python benchmarks/allocator.py --quick    # fewer batches and rounds (a smoke run)

A training step on a CPU allocates and frees tensors of many megabytes (the logits of a batch, ``(N, V)``, and
their gradient; each step's gates). glibc's ``malloc`` hands blocks above its mmap threshold back to the
kernel when they are freed, so the next step's block is fresh memory that faults in page by page; tcmalloc and
jemalloc keep freed memory for reuse. The allocator is chosen when a process starts (``LD_PRELOAD``), so
each measurement is a fresh process (``--worker``) training on the same fixed stream of real batches with the
trainer's own step, optimiser and precision (``bench.train_throughput``: one untimed pass, then the median of
timed passes); the allocators take turns within every round, so a machine that slows down mid-run slows each
of them alike. The figure per allocator is the median over rounds, and its peak resident memory is the
process's high-water mark.

Two workloads, the two long runs of this project:

* ``couplet``: the couplet zoo's default variant at its recipe (``attention_core.hub.zoo.RECIPES["couplet"]``,
  Luong general, hidden 352, shared and tied embeddings) on whole-corpus couplet batches;
* ``translation``: Luong general, hidden 256, 4,000 BPE target pieces, on the mixture the translation
  candidate trains on (cmn-eng three times, cmn-eng-extra, tv4dialog).

Needs the corpora (``$ATTENTION_LAB_DATA``) and Debian's ``libtcmalloc-minimal4`` / ``libjemalloc2`` (an
allocator that is not installed is reported as missing, not measured).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from attention_core.training.allocator import ALLOCATORS, find_allocator  # noqa: E402

WORKLOADS = ("couplet", "translation")
SYSTEM = "glibc malloc"


def _examples(workload: str) -> tuple[list, int, int, dict]:
    """Real training examples of a workload, with its vocabulary sizes and model options."""
    from attention_core.data.encoded import build_vocabs
    from attention_core.data.subword import Subwords
    from attention_core.data.tasks import encode_pairs, get_task, load_splits
    from attention_core.hub.zoo import RECIPES

    if workload == "couplet":
        recipe = RECIPES["couplet"]
        task = get_task("couplet")
        splits = load_splits("couplet", None, extra=recipe.extra)
        src, tgt = build_vocabs(task, splits.train, recipe.train.min_freq, True)
        pairs = splits.train[::40]  # the corpus and poetry-couplet, every 40th pair
        options = {**recipe.model, "decoder": "luong", "score": "general"}
        return encode_pairs(pairs, task, src, tgt, recipe.train.max_len), len(src), len(tgt), options
    splits = load_splits("translation", None, 1234, ["cmn-eng-extra", "tv4dialog"])
    base = get_task("translation")
    main = splits.main_train_size or len(splits.train)
    task = base.with_subwords(Subwords.train((base.tokenize_tgt(t) for _, t in splits.train), 4000))
    src, tgt = build_vocabs(task, splits.train, 2, False)
    mixture = splits.train[:main] * 3 + splits.train[main:]
    options = dict(decoder="luong", score="general", hidden_size=256, emb_size=128, dropout=0.3, tie_embeddings=True)
    return encode_pairs(mixture[::40], task, src, tgt, 50), len(src), len(tgt), options


def workload_step(workload: str) -> tuple[list, Callable, str]:
    """A workload's real examples, and the trainer's step on a fresh model (seed 0) at the trainer's precision."""
    import torch
    from bench import ours_step

    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model
    from attention_core.training.precision import resolve_precision

    examples, src_size, tgt_size, options = _examples(workload)
    precision = resolve_precision("auto", torch.device("cpu"))
    torch.manual_seed(0)
    model = build_model(ModelConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, **options))
    return examples, ours_step(model, precision), precision


def worker(workload: str, batches: int, rounds: int) -> dict:
    """One workload's training speed in this process (whatever allocator it was started with)."""
    from bench import train_throughput

    examples, step, precision = workload_step(workload)
    row = train_throughput(examples, 64, step, batches, rounds=rounds)
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    row["precision"] = precision
    return row


def measure(workload: str, allocator: str, batches: int, rounds: int) -> dict:
    """Run one worker process under ``allocator`` (``SYSTEM`` for none preloaded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("LD_PRELOAD", None)
    if allocator != SYSTEM:
        env["LD_PRELOAD"] = str(find_allocator(allocator))
    done = subprocess.run([sys.executable, __file__, "--worker", workload, "--batches", str(batches),
                           "--rounds", str(rounds)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from bench import write_report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer batches and rounds (a smoke run)")
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--batches", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes in each worker")
    parser.add_argument("--repeats", type=int, default=3, help="workers per allocator and workload, taking turns")
    parser.add_argument("--out", default=str(ROOT / "results" / "allocator.json"))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.batches, args.rounds)))
        return
    if args.quick:
        args.batches, args.rounds, args.repeats = 8, 1, 1
    allocators = [SYSTEM] + [name for name in ALLOCATORS if find_allocator(name)]
    missing = [name for name in ALLOCATORS if not find_allocator(name)]
    runs: dict[str, dict[str, list[dict]]] = {w: {a: [] for a in allocators} for w in WORKLOADS}
    for repeat in range(args.repeats):
        for workload in WORKLOADS:
            for allocator in allocators:
                row = measure(workload, allocator, args.batches, args.rounds)
                runs[workload][allocator].append(row)
                print(repeat, workload, allocator, row, flush=True)
    rows = {}
    for workload, by_allocator in runs.items():
        system = statistics.median(r["pairs_per_s"] for r in by_allocator[SYSTEM])
        for allocator, measured in by_allocator.items():
            speed = statistics.median(r["pairs_per_s"] for r in measured)
            rows[f"{workload} / {allocator}"] = {
                "workload": workload, "allocator": allocator, "pairs_per_s": round(speed, 1),
                "each": [r["pairs_per_s"] for r in measured], "speed_vs_system": round(speed / system, 3),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in measured)}
    import torch

    report = {"machine": f"{platform.machine()}, 1 torch thread", "torch": torch.__version__,
              "precision": runs[WORKLOADS[0]][SYSTEM][0]["precision"], "batches": args.batches,
              "rounds": args.rounds, "repeats": args.repeats, "missing": missing, "rows": rows}
    write_report(args.out, report, markdown)


def markdown(r: dict) -> str:
    lines = [f"Training speed by memory allocator (`python benchmarks/allocator.py`): {r['machine']}, torch "
             f"{r['torch']}, {r['precision']}, batch 64, {r['batches']} real batches a pass; each figure the median "
             f"of {r['repeats']} fresh processes (each the median of {r['rounds']} timed passes), the allocators "
             "taking turns.", "",
             "| workload | allocator | pairs/s | each process | × glibc | peak resident MB |",
             "|---|---|---|---|---|---|"]
    for row in r["rows"].values():
        each = ", ".join(str(x) for x in row["each"])
        lines.append(f"| {row['workload']} | {row['allocator']} | {row['pairs_per_s']} | {each} | "
                     f"{row['speed_vs_system']:.2f} | {row['peak_rss_mb']} |")
    if r["missing"]:
        lines += ["", f"Not installed, not measured: {', '.join(r['missing'])}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
