"""What a lent GPU machine did with the zoo: each model's epochs, their speed and dev BLEU, read from its workers' logs.

Usage::

    python benchmarks/gpu_zoo_run.py runs/zoo/device/logs-2/logs --label "session 37: all 18 at once under MPS"
    # → results/gpu_zoo_run.{md,json}

``scripts/zoo_device.sh`` trains every model in a worker of its own (``attention-lab zoo --stage train --recipe gpu``)
and brings back, with each call, the workers' logs (``logs-<call>.tar.xz``); the last call's logs hold every epoch.
Each model's log gives its stages (a ``start`` event each), its epochs (pairs a second, seconds, dev BLEU greedy on the
trainer's 1,000 dev pairs) and whether its training ended there (``zoo-trained``). Set beside them: the speed of the
same ``gpu`` recipe on this project's 2-core CPU (``results/gpu_recipe.json``, the default variant in bfloat16 beside
another run), the reference a GPU machine is measured against.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import repo_path, write_report  # noqa: E402


def read_log(path: Path) -> dict:
    """One worker's log: its stages' epochs and whether the model's training ended (non-JSON lines are skipped)."""
    stages: list[list[dict]] = []
    ended = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "start":
            stages.append([])
        elif event.get("event") == "zoo-trained":
            ended = True
        elif all(k in event for k in ("epoch", "dev_bleu", "seconds", "pairs_per_s")) and stages:
            stages[-1].append(event)
    return {"stages": stages, "ended": ended}


def summary(log: dict) -> dict:
    """Epoch count per stage, median seconds and pairs a second per epoch, best dev BLEU."""
    epochs = [e for stage in log["stages"] for e in stage]
    return {
        "epochs": [len(stage) for stage in log["stages"]],
        "seconds_per_epoch": round(statistics.median(e["seconds"] for e in epochs), 1) if epochs else None,
        "pairs_per_s": round(statistics.median(e["pairs_per_s"] for e in epochs)) if epochs else None,
        "best_dev_bleu": max((e["dev_bleu"] for e in epochs), default=None),
        "dev_bleu": [[e["dev_bleu"] for e in stage] for stage in log["stages"]],
        "ended": log["ended"],
    }


def main() -> None:
    """Write the table for every model log in the folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", help="a folder of worker logs, <task>--<variant>.log (a call's logs-<call>/logs)")
    parser.add_argument("--label", required=True, help="what ran: the machine, the session, how many at once")
    parser.add_argument("--cpu", default="results/gpu_recipe.json", help="the gpu recipe's speed on the CPU")
    parser.add_argument("--out", default="results/gpu_zoo_run.json")
    args = parser.parse_args()
    models = {}
    for path in sorted(Path(args.logs).glob("*--*.log")):
        models[path.stem.replace("--", "/", 1)] = summary(read_log(path))
    if not models:
        raise SystemExit(f"no <task>--<variant>.log in {args.logs}")
    cpu = {}
    if Path(args.cpu).is_file():
        for task, t in json.loads(Path(args.cpu).read_text(encoding="utf-8"))["tasks"].items():
            if any(t["pairs_per_s"]):
                cpu[task] = round(statistics.median(x for x in t["pairs_per_s"] if x))
    report = {"label": args.label, "logs": repo_path(args.logs), "models": models, "cpu_pairs_per_s": cpu}

    def markdown(r: dict) -> str:
        lines = ["The zoo trained on a lent GPU machine at the `gpu` recipe, read from its workers' logs "
                 f"(`{r['logs']}`): epochs of each stage, the median epoch's seconds and training pairs a second, "
                 "dev BLEU (greedy, 1,000 dev pairs) after each epoch, and whether training ended there. "
                 "Written by `python benchmarks/gpu_zoo_run.py`.", "", f"The run: {r['label']}", "",
                 "| model | epochs (stages) | s / epoch | pairs / s | dev BLEU by epoch | best | ended |",
                 "|---|---|---|---|---|---|---|"]
        for name, m in r["models"].items():
            curve = " → ".join(" ".join(f"{b:.2f}" for b in stage) for stage in m["dev_bleu"])
            best = "—" if m["best_dev_bleu"] is None else f"{m['best_dev_bleu']:.2f}"
            lines.append(f"| {name} | {' + '.join(map(str, m['epochs'])) or '0'} | {m['seconds_per_epoch'] or '—'} | "
                         f"{m['pairs_per_s'] or '—'} | {curve or '—'} | {best} | {'yes' if m['ended'] else 'no'} |")
        if r["cpu_pairs_per_s"]:
            lines += ["", "For reference, the same recipe's default variant on this project's 2-core CPU (bfloat16, "
                      "beside another run; `results/gpu_recipe.json`), median pairs a second: "
                      + ", ".join(f"{task} {v}" for task, v in r["cpu_pairs_per_s"].items()) + "."]
        return "\n".join(lines) + "\n"

    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
