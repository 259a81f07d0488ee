"""How many more epochs should the couplet models get? Continue the default couplet model and measure per epoch.

Usage::

    python benchmarks/couplet_budget.py --epochs 6            # continues models/couplet/luong-general
    python benchmarks/couplet_budget.py --from-log runs/ft2/log.txt   # only re-format a finished run's log

Continues the model on the zoo's couplet curriculum (every modern pair plus an equal, fresh draw of poetry pairs
each epoch) with a fresh Adam optimiser at ``--lr``, halved whenever dev BLEU (greedy, structural rules only, the
trainer's own selection metric) does not beat the best so far. After every second epoch the cliché table is
measured again on training pairs (as ``attention-lab zoo`` does at export) and the model is decoded with beam 5
and the default rules on the dev set and on both test sets. The budget of the zoo's second stage
(``TaskRecipe.continued``) is chosen from the dev columns; the test columns are reported, not used. Writes
``results/couplet_budget.{json,md}``. The log lines it prints are JSON, one per measurement.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def train_epoch(tr, pairs: list, optimizer, epoch: int) -> int:
    """One epoch of continued training over encoded ``pairs`` (batches of 64, bucketed with seed ``700 + epoch``).

    Returns:
        The number of pairs trained on.
    """
    from attention_core.data.tasks import bucketed_batches
    from attention_core.training.loop import train_step

    tr.model.train()
    seen = 0
    for batch in bucketed_batches(pairs, 64, seed=700 + epoch):
        train_step(tr.model, batch, optimizer, clip=1.0, label_smoothing=0.1)
        seen += len(batch.src_lengths)
    return seen


def decay(optimizer, score: float, best: float) -> float:
    """Halve the learning rate unless ``score`` beats ``best``; return the new best."""
    if score > best:
        return score
    for group in optimizer.param_groups:
        group["lr"] /= 2
    return best


def measure(tr, sp) -> dict[str, tuple[list, dict]]:
    """Measure the cliché table again (as ``attention-lab zoo`` does at export), then decode dev and both test sets.

    Returns:
        ``{"dev" | "test" | "poetry": (pairs, report)}``, each decoded with beam 5 and the default rules.
    """
    from attention_core.analysis.calibration import calibrate_overproduction
    from attention_core.analysis.evaluation import evaluate
    from attention_core.hub.zoo import calibration_pairs

    tr.meta.pop("overproduction", None)
    calibrate_overproduction(tr, calibration_pairs(sp))
    sets = (("dev", sp.dev), ("test", sp.test), ("poetry", sp.extra_tests["poetry-test"]))
    return {name: (pairs, evaluate(tr, pairs, beam_size=5, constrained=True)) for name, pairs in sets}


def run(model: str, data: str, epochs: int, lr: float) -> list[dict]:
    """Continue ``model`` for ``epochs`` epochs and return the log records."""

    from attention_core.analysis.evaluation import evaluate
    from attention_core.data.tasks import encode_pairs, load_splits
    from attention_core.decoding.folder import load_folder
    from attention_core.training.loop import make_optimizer

    tr = load_folder(model)
    sp = load_splits("couplet", data, extra=["poetry-couplet"])
    n = sp.main_train_size
    own = encode_pairs(sp.train[:n], tr.task, tr.src_vocab, tr.tgt_vocab, max_len=40)
    extra = encode_pairs(sp.train[n:], tr.task, tr.src_vocab, tr.tgt_vocab, max_len=40)
    optimizer, best, records = make_optimizer(tr.model.parameters(), lr), -1.0, []
    for epoch in range(1, epochs + 1):
        started = time.time()
        seen = train_epoch(tr, own + random.Random(500 + epoch).sample(extra, len(own)), optimizer, epoch)
        dev = evaluate(tr, sp.dev, beam_size=1, constrained=False)["bleu"]
        record = {"epoch": epoch, "pairs": seen, "s": round(time.time() - started), "dev_greedy_free": round(dev, 3),
                  "lr": optimizer.param_groups[0]["lr"]}
        records.append(record)
        print(json.dumps(record), flush=True)
        best = decay(optimizer, dev, best)
        if epoch % 2 == 0:
            full: dict = {"epoch": epoch}
            for name, (_, report) in measure(tr, sp).items():
                full[name] = dict(bleu=round(report["bleu"], 3), chrf=round(report["chrf"], 2),
                                  mfc=report["couplet"]["top_char_share"],
                                  distinct=round(report["couplet"]["distinct_ratio"], 3))
            records.append(full)
            print(json.dumps(full, ensure_ascii=False), flush=True)
    return records


def from_log(path: str) -> list[dict]:
    """The records of a finished run, read back from its printed log."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("{"):
            records.append(json.loads(line))
        elif line.startswith("epoch ") and "{" in line:  # the first version printed "epoch N {...}"
            records.append({"epoch": int(line.split()[1]), **json.loads(line[line.index("{"):])})
    return records


def markdown(records: list[dict], command: str) -> str:
    """The per-epoch table."""
    lines = [f"Continuing `couplet/luong-general` on the couplet curriculum, measured by `{command}`.",
             "Dev BLEU greedy (structural rules only) after every epoch; every second epoch beam 5 with the default",
             "rules on dev and both test sets (character BLEU, most frequent character's share, distinct characters",
             "÷ the references'). The budget is chosen from the dev columns.", "",
             "| epoch | lr | dev BLEU greedy | dev BLEU beam 5 | dev mfc | dev distinct | test BLEU | test mfc "
             "| test distinct | poetry BLEU | poetry mfc | poetry distinct |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    full = {r["epoch"]: r for r in records if "dev" in r}
    for r in (r for r in records if "dev_greedy_free" in r):
        f = full.get(r["epoch"])
        cells = ["—"] * 9 if f is None else [
            f"{f[s]['bleu']:.2f}" if k == "bleu" else f"{f[s][k]:.3f}"
            for s in ("dev", "test", "poetry") for k in ("bleu", "mfc", "distinct")]
        lines.append(f"| {r['epoch']} | {r['lr']:g} | {r['dev_greedy_free']:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "couplet" / "luong-general"))
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--from-log", default=None, help="re-format the log of a finished run instead of training")
    parser.add_argument("--out", default=str(ROOT / "results" / "couplet_budget"))
    args = parser.parse_args()
    records = from_log(args.from_log) if args.from_log else run(args.model, args.data, args.epochs, args.lr)
    command = f"python benchmarks/couplet_budget.py --epochs {args.epochs} --lr {args.lr:g}"
    Path(args.out + ".json").write_text(json.dumps({"command": command, "records": records}, ensure_ascii=False,
                                                   indent=2))
    Path(args.out + ".md").write_text(markdown(records, command), encoding="utf-8")


if __name__ == "__main__":
    main()
