"""Why does couplet test BLEU stay near 1 while dev BLEU rises? BLEU on Spring-Festival pairs and on the rest.

Usage::

    python benchmarks/couplet_domain.py          # reads results/eval (written by `attention-lab zoo`)

The modern couplet training set is a 55k-pair subset taken from a *New-Year couplet* project (see
``shared/data/couplet/README.md``), and the dev set is drawn from it; the test set is the general wb14123
test set. This splits every set by a fixed, written-down marker: a pair is a **Spring-Festival pair** when its
上联 or 下联 contains one of ``FESTIVAL`` (春 年 福 岁 迎 庆 节 宵 and the twelve zodiac animals, the words
New-Year couplets are made of). It reports the share of such pairs in train, dev and test, and the character
BLEU and chrF of every bundled variant's beam-5 test outputs (default rules, from ``results/eval``) on the two
parts of the test set. No model is run and nothing is tuned: the test outputs are the ones the zoo reported.
Writes ``results/couplet_domain.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.analysis.metrics import bleu, chrf  # noqa: E402
from attention_core.data.atomic import atomic_write_text  # noqa: E402
from attention_core.data.tasks import load_splits  # noqa: E402
from reports.common import load_reports, ordered  # noqa: E402

FESTIVAL = frozenset("春年福岁迎庆节宵鼠牛虎兔龙蛇马羊猴鸡狗猪")
"""Characters that mark a Spring-Festival couplet (the marker is a heuristic, stated, not tuned)."""


def is_festival(pair: tuple[str, str]) -> bool:
    """Whether a ``(上联, 下联)`` pair contains a Spring-Festival marker character.

    Examples:
        >>> is_festival(("春回大地", "福满人间")), is_festival(("海阔凭鱼跃", "天高任鸟飞"))
        (True, False)
    """
    return bool(FESTIVAL.intersection(pair[0] + pair[1]))


def share(pairs: list[tuple[str, str]]) -> float:
    """The share of Spring-Festival pairs."""
    return sum(map(is_festival, pairs)) / len(pairs) if pairs else float("nan")


def split_scores(outputs: list[str], pairs: list[tuple[str, str]]) -> dict[str, dict]:
    """Character BLEU and chrF of ``outputs`` on the whole set and on its two parts."""
    parts = {"all": range(len(pairs)),
             "festival": [i for i, p in enumerate(pairs) if is_festival(p)],
             "other": [i for i, p in enumerate(pairs) if not is_festival(p)]}
    scores = {}
    for name, index in parts.items():
        hyps, refs = [outputs[i] for i in index], [pairs[i][1] for i in index]
        scores[name] = {"n": len(index), "bleu": round(bleu(hyps, refs, "char", lowercase=True), 2),
                        "chrf": round(chrf(hyps, refs, lowercase=True), 2)}
    return scores


def main() -> None:
    """Measure the shares and the split scores, and write the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--results", default=str(ROOT / "results"))
    parser.add_argument("--decoding", default="beam5")
    args = parser.parse_args()
    splits = load_splits("couplet", args.data, extra=["poetry-couplet"])
    modern = splits.train[: splits.main_train_size]
    test = splits.evaluation_sets()["test"]
    shares = {"train (modern)": share(modern), "dev": share(splits.dev), "test": share(test),
              "poetry-couplet train": share(splits.train[splits.main_train_size :])}
    variants = load_reports(Path(args.results)).get("couplet", {})
    rows = {}
    for variant in ordered(variants):
        report = variants[variant].get(args.decoding)
        if report and len(report.get("outputs", [])) == len(test):
            rows[variant] = split_scores(report["outputs"], test)
    if not rows:
        sys.exit(f"no {args.decoding} couplet test reports with outputs in {args.results}/eval: "
                 "run `attention-lab zoo` first")
    result = {"festival_characters": "".join(sorted(FESTIVAL)), "shares": shares, "decoding": args.decoding,
              "variants": rows}
    out = Path(args.results) / "couplet_domain"
    atomic_write_text(str(out) + ".json", json.dumps(result, ensure_ascii=False, indent=2))
    first = next(iter(rows.values()))
    md = [f"Couplet BLEU by domain, produced by `python benchmarks/couplet_domain.py` from the {args.decoding} "
          "test reports in `results/eval` (default rules). A pair counts as a **Spring-Festival pair** when "
          f"either line contains one of {''.join(sorted(FESTIVAL))}.", "",
          "| set | Spring-Festival pairs |", "|---|---|",
          *[f"| {name} | {value:.1%} |" for name, value in shares.items()], "",
          f"| variant | BLEU all ({first['all']['n']}) | BLEU festival ({first['festival']['n']}) | "
          f"BLEU other ({first['other']['n']}) | chrF festival | chrF other |", "|---|---|---|---|---|---|"]
    for variant, s in rows.items():
        md.append(f"| {variant} | {s['all']['bleu']:.2f} | {s['festival']['bleu']:.2f} | {s['other']['bleu']:.2f} "
                  f"| {s['festival']['chrf']:.2f} | {s['other']['chrf']:.2f} |")
    atomic_write_text(str(out) + ".md", "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
