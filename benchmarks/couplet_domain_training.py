"""Does training on fewer Spring-Festival couplets help the general ones? Continue the default couplet model and see.

Usage::

    python benchmarks/couplet_domain_training.py --keep 1.0 --out runs/domain/keep100   # the zoo's curriculum
    python benchmarks/couplet_domain_training.py --keep 0.33 --out runs/domain/keep33   # a third of them
    python benchmarks/couplet_domain_training.py --table runs/domain/keep100 runs/domain/keep33  # the table

Continues ``models/couplet/luong-general`` for ``--epochs`` epochs of the zoo's couplet curriculum (every modern
pair plus an equal, fresh draw of poetry pairs per epoch, Adam at ``--lr``, halved when greedy BLEU on the dev pairs
*without* a Spring-Festival marker stops rising), except that each epoch keeps only a ``--keep`` share of the modern
pairs that carry a marker (drawn afresh; see [`benchmarks/couplet_domain.py`](couplet_domain.py) for the marker).
After every second epoch the cliché table is measured again on training pairs and the model is decoded with beam 5
and the default rules on dev and both test sets, each also split into Spring-Festival pairs and the rest. Each run
writes its records to ``OUT.jsonl`` (a new run replaces them); ``--table`` writes
``results/couplet_domain_training.{json,md}`` from them. The poetry draw matches the modern pairs kept, so a smaller
``--keep`` also means fewer pairs per epoch.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from couplet_budget import decay, measure, train_epoch  # noqa: E402
from couplet_domain import is_festival, split_scores  # noqa: E402


def run(keep: float, epochs: int, lr: float, out: str, data: str) -> None:
    """Continue the default couplet model with ``keep`` of the Spring-Festival pairs; records go to ``out.jsonl``."""
    from attention_core.analysis.evaluation import evaluate
    from attention_core.data.tasks import encode_pairs, load_splits
    from attention_core.decoding.folder import load_folder
    from attention_core.training.loop import make_optimizer

    tr = load_folder(ROOT / "models" / "couplet" / "luong-general")
    tr.model.float()
    sp = load_splits("couplet", data, extra=["poetry-couplet"])
    n = sp.main_train_size

    def encode(pairs: list[tuple[str, str]]) -> list:
        return encode_pairs(pairs, tr.task, tr.src_vocab, tr.tgt_vocab, max_len=40)

    festival = encode([p for p in sp.train[:n] if is_festival(p)])
    other = encode([p for p in sp.train[:n] if not is_festival(p)])
    extra = encode(sp.train[n:])
    dev_other = [p for p in sp.dev if not is_festival(p)]
    optimizer, best = make_optimizer(tr.model.parameters(), lr), -1.0
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out + ".jsonl", "w", encoding="utf-8") as log:  # a new run starts a new log
        def emit(record: dict) -> None:
            line = json.dumps(record, ensure_ascii=False)
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()

        emit({"keep": keep, "fest": len(festival), "other": len(other), "extra": len(extra),
              "dev_other": len(dev_other)})
        for epoch in range(1, epochs + 1):
            rng = random.Random(900 + epoch)
            own = other + rng.sample(festival, round(keep * len(festival)))
            pairs = own + rng.sample(extra, len(own))
            started = time.time()
            train_epoch(tr, pairs, optimizer, epoch)
            dev = evaluate(tr, sp.dev, beam_size=1, constrained=False)["bleu"]
            dev_o = evaluate(tr, dev_other, beam_size=1, constrained=False)["bleu"]
            emit({"epoch": epoch, "pairs": len(pairs), "s": round(time.time() - started),
                  "dev_greedy_free": round(dev, 3), "dev_other_greedy_free": round(dev_o, 3),
                  "lr": optimizer.param_groups[0]["lr"]})
            best = decay(optimizer, dev_o, best)
            if epoch % 2 == 0 or epoch == epochs:
                full: dict = {"epoch": epoch}
                for name, (test, report) in measure(tr, sp).items():
                    full[name] = dict(bleu=round(report["bleu"], 3), mfc=round(report["couplet"]["top_char_share"], 3),
                                      distinct=round(report["couplet"]["distinct_ratio"], 3),
                                      parts={k: v["bleu"] for k, v in split_scores(report["outputs"], test).items()})
                emit(full)


def table(logs: list[str], out: str) -> str:
    """The comparison table of finished runs, from their ``.jsonl`` records."""
    runs = []
    for path in logs:
        records = [json.loads(line) for line in Path(path + ".jsonl").read_text(encoding="utf-8").splitlines()]
        runs.append({"keep": records[0]["keep"], "records": records})
    lines = ["Continuing the shipped `couplet/luong-general` (epochs counted from it) with a share of the "
             "Spring-Festival modern pairs per epoch "
             "(`python benchmarks/couplet_domain_training.py`); beam 5 with the default rules, character BLEU on the "
             "Spring-Festival pairs / the rest of each set, and the distinct-character ratio.", "",
             "| Spring-Festival pairs kept | epoch | pairs per epoch | dev BLEU (fest / other) "
             "| test BLEU (fest / other) | test distinct | poetry BLEU | poetry distinct |",
             "|---|---|---|---|---|---|---|---|"]
    for r in runs:
        sizes = {x["epoch"]: x["pairs"] for x in r["records"] if "pairs" in x}
        for x in (x for x in r["records"] if "dev" in x):
            d, t, p = x["dev"], x["test"], x["poetry"]
            lines.append(f"| {r['keep']:.0%} | {x['epoch']} | {sizes[x['epoch']]:,} | {d['parts']['all']:.2f} "
                         f"({d['parts']['festival']:.2f} / {d['parts']['other']:.2f}) | {t['parts']['all']:.2f} "
                         f"({t['parts']['festival']:.2f} / {t['parts']['other']:.2f}) | {t['distinct']:.3f} "
                         f"| {p['parts']['all']:.2f} | {p['distinct']:.3f} |")
    md = "\n".join(lines) + "\n"
    Path(out + ".json").write_text(json.dumps(runs, ensure_ascii=False, indent=2), encoding="utf-8")
    Path(out + ".md").write_text(md, encoding="utf-8")
    return md


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=float, default=1.0, help="share of the Spring-Festival modern pairs per epoch")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", default="runs/domain/run", help="records go to OUT.jsonl")
    parser.add_argument("--table", nargs="+", metavar="OUT", help="write the table of these finished runs instead")
    args = parser.parse_args()
    if args.table:
        print(table(args.table, str(ROOT / "results" / "couplet_domain_training")))
    else:
        run(args.keep, args.epochs, args.lr, args.out, args.data)


if __name__ == "__main__":
    main()
