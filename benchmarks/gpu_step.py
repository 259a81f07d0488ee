"""The default translation model's training step alone on one device: pairs/s at the ``gpu`` recipe (issue #52).

Issue #52's first goal is ``luong-general`` translation alone at ≥ 100,000 training pairs/s on a lent H200 at the
``gpu`` recipe (bfloat16). This measures it as the trainer steps: ``train_step`` (on a GPU the step that reads nothing
back, ``tests/test_sync_free.py``) with the trainer's optimiser, clipping, label smoothing and precision, on real
batches of the recipe's size cut from the translation corpus (``bucketed_batches``), moved to the device before the
clock starts. After an untimed pass (cuDNN plans, first allocations), ``--rounds`` timed passes; the median counts,
the device synchronised at each pass's end. Runs on a CPU too (one thread: the smoke test and the reference).

    python benchmarks/gpu_step.py --data ../shared/data               # → results/gpu_step.{json,md}
    python benchmarks/gpu_step.py --device cpu --batches 4 --out /tmp/gpu_step.json
"""

from __future__ import annotations

import argparse
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402

from attention_core.data.tasks import bucketed_batches  # noqa: E402
from attention_core.hub.zoo import RECIPE_SETS, model_options  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402
from attention_core.training.loop import make_optimizer, train_step  # noqa: E402
from attention_core.training.precision import AMP_DTYPES, resolve_precision  # noqa: E402

GOAL = 100_000
"""Issue #52's goal for luong-general alone on an H200, training pairs/s."""


def measure(variant: str, device: torch.device, precision: str, batches: int, rounds: int, recipe: str) -> dict:
    """Pairs/s of ``variant``'s training step on ``device`` at the ``recipe`` set's translation batch size."""
    train = RECIPE_SETS[recipe]["translation"].train
    translator, _, _, examples = bench.setup()
    stream = list(bucketed_batches(examples * (1 + batches * train.batch_size // max(1, len(examples))),
                                   train.batch_size, seed=1))[:batches]
    stream = [b.to(device) for b in stream]
    cfg = ModelConfig(src_vocab_size=len(translator.src_vocab), tgt_vocab_size=len(translator.tgt_vocab),
                      **model_options("translation", variant))
    torch.manual_seed(0)
    model = build_model(cfg).to(device)
    optimizer = make_optimizer(model.parameters(), train.lr)
    precision = resolve_precision(precision, device)

    def one_pass() -> float:
        started = time.perf_counter()
        for batch in stream:
            loss = train_step(model, batch, optimizer, clip=train.clip, label_smoothing=train.label_smoothing,
                              amp_dtype=AMP_DTYPES[precision])
        float(loss)  # waits for the device: the pass is over when its last step is
        return time.perf_counter() - started

    one_pass()  # untimed
    seconds = [one_pass() for _ in range(rounds)]
    pairs = sum(b.size for b in stream)
    return {"variant": variant, "device": str(device), "device_name": torch.cuda.get_device_name(device)
            if device.type == "cuda" else platform.processor() or platform.machine(),
            "precision": precision, "recipe": recipe, "batch_size": train.batch_size, "batches": len(stream),
            "pairs_per_s": round(pairs / statistics.median(seconds), 1), "passes_s": [round(s, 3) for s in seconds],
            "threads": torch.get_num_threads()}


def markdown(report: dict) -> str:
    """The report as a Markdown table."""
    lines = [
        "# One model's training step alone on one device (issue #52)",
        "",
        f"`{report['command']}` — torch {report['torch']}; the median of the timed passes. Issue #52's goal: "
        f"`luong-general` at ≥ {GOAL:,} pairs/s on an H200.",
        "",
        "| variant | device | precision | recipe (batch) | batches | pairs/s |",
        "|---|---|---|---|---:|---:|",
    ]
    for row in report["rows"]:
        lines.append(f"| {row['variant']} | {row['device_name']} ({row['device']}) | {row['precision']} | "
                     f"{row['recipe']} ({row['batch_size']}) | {row['batches']} | {row['pairs_per_s']:,} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="the corpora folder (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--variants", nargs="+", default=["luong-general"])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--precision", default="bf16", choices=["bf16", "fp32", "auto"])  # fp16 would need a scaler
    parser.add_argument("--recipe", default="gpu", choices=sorted(RECIPE_SETS))
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(bench.ROOT / "results" / "gpu_step.json"))
    args = parser.parse_args()
    bench.DATA = args.data
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    elif device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    rows = []
    for variant in args.variants:
        rows.append(measure(variant, device, args.precision, args.batches, args.rounds, args.recipe))
        print(rows[-1], flush=True)
    report = {"command": shlex.join(["python", "benchmarks/gpu_step.py", *sys.argv[1:]]), "torch": torch.__version__,
              "rows": rows}
    bench.write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
