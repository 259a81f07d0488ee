"""How different are the other outputs of the beam from the chosen one? Couplets, beam 5, default rules.

Usage::

    python benchmarks/beam_alternatives.py            # the default couplet model, first 300 test 上联s

Decodes the first ``--n`` 上联s of the couplet test set with the default couplet model (beam ``--beam``, the
default rules) and compares each ``Output.alternatives`` entry with the chosen 下联, position by position: the
share that differ in at most two characters, and the share whose differences all lie in the last two positions.
Writes ``results/beam_alternatives.{json,md}``; the decoding theory page quotes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.data.atomic import atomic_write_text  # noqa: E402
from attention_core.data.tasks import load_splits  # noqa: E402
from attention_core.decoding.folder import load_folder  # noqa: E402


def main() -> None:
    """Decode, compare and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="models/couplet/luong-general", help="relative to the repository root")
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--beam", type=int, default=5)
    args = parser.parse_args()
    translator = load_folder(ROOT / args.model)  # a relative path is read from the repository root
    sources = [s for s, _ in load_splits("couplet", args.data).evaluation_sets()["test"][: args.n]]
    outputs = translator.translate(sources, beam_size=args.beam)
    total = at_most_two = only_last_two = 0
    for out in outputs:
        for text, _ in out.alternatives:
            diff = [i for i, (a, b) in enumerate(zip(out.text, text)) if a != b]
            total += 1
            at_most_two += len(diff) <= 2
            only_last_two += bool(diff) and min(diff) >= len(text) - 2
    result = {"model": args.model, "n": len(outputs), "beam": args.beam, "alternatives": total,
              "at_most_two_characters": at_most_two / total, "only_last_two_positions": only_last_two / total}
    atomic_write_text(ROOT / "results" / "beam_alternatives.json", json.dumps(result, indent=2))
    md = (f"The other 下联s of the beam (`python benchmarks/beam_alternatives.py`): `{Path(args.model).name}`, "
          f"beam {args.beam}, default rules, the first {len(outputs)} couplet test 上联s, {total} alternatives "
          f"({total / len(outputs):.1f} per 上联). {result['at_most_two_characters']:.1%} differ from the chosen 下联 "
          f"in at most two characters; {result['only_last_two_positions']:.1%} only in the last two positions.\n")
    atomic_write_text(ROOT / "results" / "beam_alternatives.md", md)
    print(md)


if __name__ == "__main__":
    main()
