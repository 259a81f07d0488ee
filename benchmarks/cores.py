"""Two long runs on two cores: side by side with one thread each, or one after the other with two threads?

Usage::

    python benchmarks/cores.py            # writes results/cores.{json,md}
    python benchmarks/cores.py --quick    # shorter windows (a smoke run)

The two zoos of issues #25 and #29 train for days on this machine's two cores. Two processes at one thread each
share more than the cores (memory bandwidth, the last-level cache), so each may run well below its speed alone;
one process at two threads uses the second core only where its operations split (matrix products of a batch of 64
at hidden 256–352 are small). Which way finishes the work sooner is measured here, on the two real workloads of
``benchmarks/allocator.py`` (the couplet zoo's default variant at its recipe, the translation recipe's Luong general
on its data mixture), with the trainer's own step, optimiser and precision, and tcmalloc preloaded where the system
has it, as ``attention-lab train`` and ``zoo`` run:

* each workload alone at one thread, and alone at two threads;
* both side by side at one thread each, their timed windows starting together (the processes wait for each other
  after loading and again after an untimed warm-up pass, which builds the bfloat16 kernels of every batch shape).

Each process counts the pairs it trains in a fixed window over a fixed stream of real batches; the settings take
turns within every round, and each figure is the median over rounds. The comparison is in work done per second:
side by side, each process's pairs/s as a share of its speed alone at one thread, summed (1.00 means two processes
together do no more than one alone); one after the other at two threads, the speed-up of two threads over one.

Needs the corpora (``$ATTENTION_LAB_DATA``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from attention_core.training.allocator import find_allocator  # noqa: E402

WORKLOADS = ("couplet", "translation")


def _wait_for(path: Path, procs: Sequence[subprocess.Popen] = ()) -> None:
    """Wait until ``path`` exists; stop if one of ``procs`` (the workers waited on) has ended without making it."""
    while not path.exists():
        if any(proc.poll() is not None for proc in procs):
            raise SystemExit(f"a worker ended before {path.name}")
        time.sleep(0.05)


def worker(workload: str, threads: int, batches: int, seconds: float, sync: Path) -> dict:
    """Train ``workload`` for ``seconds`` after a warm-up pass; waits at two barriers in ``sync`` (see module)."""
    import torch
    from allocator import workload_step
    from bench import batch_stream

    torch.set_num_threads(threads)
    examples, step, precision = workload_step(workload)
    stream = batch_stream(examples, 64, batches, None)
    (sync / f"{workload}.loaded").touch()
    _wait_for(sync / "warm")
    for batch in stream:  # untimed: oneDNN builds its kernels once per shape
        step(batch)
    (sync / f"{workload}.warm").touch()
    _wait_for(sync / "go")
    pairs, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for batch in stream:
            step(batch)
            pairs += batch.size
            if time.perf_counter() - started >= seconds:
                break
    elapsed = time.perf_counter() - started
    return {"workload": workload, "threads": threads, "pairs": pairs, "seconds": round(elapsed, 2),
            "pairs_per_s": round(pairs / elapsed, 1), "precision": precision}


def measure(workloads: tuple[str, ...], threads: int, batches: int, seconds: float) -> list[dict]:
    """Start one worker process per workload, release them together, return their results."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    allocator = find_allocator("tcmalloc")
    if allocator:
        env["LD_PRELOAD"] = str(allocator)
    with tempfile.TemporaryDirectory() as folder:
        sync = Path(folder)
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", w, "--threads", str(threads),
                                   "--batches", str(batches), "--seconds", str(seconds), "--sync", folder],
                                  env=env, stdout=subprocess.PIPE, text=True) for w in workloads]
        for barrier, stage in (("warm", "loaded"), ("go", "warm")):
            for w in workloads:
                _wait_for(sync / f"{w}.{stage}", procs)
            (sync / barrier).touch()
        results = []
        for proc in procs:
            out, _ = proc.communicate()
            if proc.returncode:
                raise SystemExit(f"a worker failed (exit {proc.returncode})")
            results.append(json.loads(out.strip().splitlines()[-1]))
    return results


SETTINGS = {
    "couplet alone, 1 thread": (("couplet",), 1),
    "translation alone, 1 thread": (("translation",), 1),
    "couplet alone, 2 threads": (("couplet",), 2),
    "translation alone, 2 threads": (("translation",), 2),
    "side by side, 1 thread each": (WORKLOADS, 1),
}


def main() -> None:
    from bench import write_report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter windows, one round (a smoke run)")
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--sync", help=argparse.SUPPRESS)
    parser.add_argument("--batches", type=int, default=48, help="real batches in the stream each process cycles")
    parser.add_argument("--seconds", type=float, default=60.0, help="timed window of each process")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the settings take turns within each")
    parser.add_argument("--out", default=str(ROOT / "results" / "cores.json"))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.threads, args.batches, args.seconds, Path(args.sync))))
        return
    if args.quick:
        args.batches, args.seconds, args.rounds = 8, 10.0, 1
    runs: dict[str, list[list[dict]]] = {name: [] for name in SETTINGS}
    for round_ in range(args.rounds):
        for name, (workloads, threads) in SETTINGS.items():
            runs[name].append(measure(workloads, threads, args.batches, args.seconds))
            print(round_, name, runs[name][-1], flush=True)
    speed = {(name, w): statistics.median(r["pairs_per_s"] for rows in measured for r in rows if r["workload"] == w)
             for name, measured in runs.items() for w in WORKLOADS if any(r["workload"] == w for r in measured[0])}
    alone = {w: speed[(f"{w} alone, 1 thread", w)] for w in WORKLOADS}
    side = "side by side, 1 thread each"
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "precision": runs[side][0][0]["precision"],
        "batches": args.batches, "seconds": args.seconds, "rounds": args.rounds,
        "pairs_per_s": {f"{name} / {w}": round(v, 1) for (name, w), v in speed.items()},
        "each": {name: [[r["pairs_per_s"] for r in rows] for rows in measured] for name, measured in runs.items()},
        "side_by_side_share": {w: round(speed[(side, w)] / alone[w], 3) for w in WORKLOADS},
        "two_threads_speedup": {w: round(speed[(f"{w} alone, 2 threads", w)] / alone[w], 3) for w in WORKLOADS},
    }
    report["side_by_side_work"] = round(sum(report["side_by_side_share"].values()), 3)
    write_report(args.out, report, markdown)


def markdown(r: dict) -> str:
    lines = [f"Two long runs on two cores (`python benchmarks/cores.py`): {r['machine']}, {r['precision']}, batch 64, "
             f"{r['batches']} real batches cycled for {r['seconds']:g} s by each process, tcmalloc; medians of "
             f"{r['rounds']} rounds, the settings taking turns.", "",
             "| setting | workload | pairs/s |", "|---|---|---|"]
    for key, value in r["pairs_per_s"].items():
        name, workload = key.rsplit(" / ", 1)
        lines.append(f"| {name} | {workload} | {value} |")
    share = r["side_by_side_share"]
    speedup = r["two_threads_speedup"]
    lines += ["", f"Side by side, each run goes at {share['couplet']:.2f} (couplet) and {share['translation']:.2f} "
              f"(translation) of its speed alone at one thread: together **{r['side_by_side_work']:.2f}** runs' "
              f"worth of work per unit of time. One after the other at two threads: **{speedup['couplet']:.2f}×** "
              f"(couplet) and **{speedup['translation']:.2f}×** (translation) one thread's speed."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
