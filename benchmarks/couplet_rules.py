"""Which couplet rules help, and how strong should the cliché penalty be? An ablation on the dev set.

Usage::

    python benchmarks/couplet_rules.py                       # the bundled default couplet model, dev set
    python benchmarks/couplet_rules.py --model runs/couplet/luong-general --split dev

Decodes the 1,000 dev couplets (drawn from ``couplet/train``, never trained on) with beam 5 under each
setting: no constraints, the structural rules only, each reader's rule added alone, all of them, and all of
them with the cliché penalty ``λ`` from 0 to 1.5 (the model's over-production table is measured first, as
``attention-lab zoo`` does at export, if the model has none). Every setting is scored with the same metrics as the zoo
(character BLEU and chrF, and the rules a reader checks, with the human 下联s as the ceiling). The defaults
of [`CoupletRules`][attention_core.decoding.couplet.CoupletRules] are chosen from this table, on dev, never on a test
set. Writes ``results/couplet_rules.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.analysis.calibration import calibrate_overproduction  # noqa: E402
from attention_core.analysis.evaluation import evaluate  # noqa: E402
from attention_core.data.atomic import atomic_write_text  # noqa: E402
from attention_core.data.tasks import load_splits  # noqa: E402
from attention_core.decoding.couplet import NO_RULES, CoupletRules  # noqa: E402
from attention_core.decoding.folder import load_folder  # noqa: E402
from attention_core.hub.zoo import calibration_pairs  # noqa: E402

SETTINGS: list[tuple[str, bool, CoupletRules]] = [
    ("no constraints", False, NO_RULES),
    ("structural only (length, punctuation, no `<unk>`)", True, NO_RULES),
    ("+ mirror", True, CoupletRules(mirror=True, no_reuse=False, tone="off", cliche_penalty=0.0)),
    ("+ no 重字", True, CoupletRules(mirror=False, no_reuse=True, tone="off", cliche_penalty=0.0)),
    ("+ tone, classical", True, CoupletRules(mirror=False, no_reuse=False, tone="classical", cliche_penalty=0.0)),
    ("+ tone, opposite", True, CoupletRules(mirror=False, no_reuse=False, tone="opposite", cliche_penalty=0.0)),
    ("all rules, tone opposite, λ = 0", True, CoupletRules(tone="opposite", cliche_penalty=0.0)),
    *[
        (f"all rules, tone classical, λ = {lam:g}", True, CoupletRules(cliche_penalty=lam))
        for lam in (0.0, 0.5, 0.75, 1.0, 1.25, 1.5)
    ],
]
"""The ablation: label, constrained, rules."""

COLUMNS = [
    ("bleu", "BLEU"),
    ("chrf", "chrF"),
    ("top_char_share", "most frequent char"),
    ("distinct_ratio", "distinct ratio"),
    ("repetition_mirrored", "mirror"),
    ("no_extra_repetition", "no extra rep."),
    ("no_reuse", "no 重字"),
    ("tone_opposition", "tone opp."),
    ("tone_opposition_after_level", "tone opp. after 平"),
    ("length_match", "length"),
]


def _cells(row: dict) -> str:
    out = []
    for key, _ in COLUMNS:
        value = row[key]
        if key == "top_char_share":
            out.append(f"{row['top_char']} {value:.3f}")
        elif key in ("bleu", "chrf"):
            out.append(f"{value:.2f}")
        else:
            out.append(f"{value:.3f}" if value == value else "—")
    return " | ".join(out)


def main() -> None:
    """Run the ablation and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "couplet" / "luong-general"))
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--split", default="dev", choices=["dev", "test", "poetry-test"])
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs (a quick check)")
    parser.add_argument("--out", default=str(ROOT / "results" / "couplet_rules"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    translator = load_folder(args.model)
    data = translator.meta.get("data", {})
    splits = load_splits("couplet", args.data, data.get("seed", 1234), data.get("extra", []))
    pairs = {**splits.evaluation_sets(), "dev": splits.dev}[args.split][: args.limit]
    if "overproduction" not in translator.meta:  # the zoo measures it at export; do the same here
        calibrate_overproduction(translator, calibration_pairs(splits))
    rows, human = [], None
    for label, constrained, rules in SETTINGS:
        report = evaluate(translator, pairs, beam_size=args.beam, constrained=constrained, rules=rules)
        row = {"setting": label, "constrained": constrained, "rules": rules.to_dict(), "bleu": report["bleu"],
               "chrf": report["chrf"], **report["couplet"]}
        rows.append(row)
        human = report["couplet_reference"]
        print(json.dumps({k: row[k] for k in ("setting", "bleu", "top_char_share", "distinct_ratio")},
                         ensure_ascii=False), flush=True)
    result = {"model": args.model, "split": args.split, "n": len(pairs), "beam": args.beam, "rows": rows,
              "human": human}
    atomic_write_text(args.out + ".json", json.dumps(result, ensure_ascii=False, indent=2))
    header = "| setting | " + " | ".join(label for _, label in COLUMNS) + " |\n" + "|---" * (len(COLUMNS) + 1)
    lines = [f"| {r['setting']} | {_cells(r)} |" for r in rows]
    human_row = {**human, "bleu": 100.0, "chrf": 100.0}
    lines.append(f"| **human 下联** | {_cells(human_row)} |")
    md = (f"Couplet rules ablation: `{Path(args.model).name}` on the {args.split} set ({len(pairs)} pairs), "
          f"beam {args.beam}. Produced by `python benchmarks/couplet_rules.py`.\n\n{header}|\n")
    md += "\n".join(lines) + "\n"
    atomic_write_text(args.out + ".md", md)
    print(md)


if __name__ == "__main__":
    main()
