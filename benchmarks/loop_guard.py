"""What the loop guard fixes and what it breaks (``attention_core.decoding.repetition.LoopGuard``): one translation
model,
beam 5, the guard off and at each setting, on cmn-eng dev and the held-out TV episodes of ``tv4dialog-dev`` (where
the setting is chosen), then on the test sets and the visitor set.

Usage::

    python benchmarks/loop_guard.py                  # → results/loop_guard.{md,json}
    python benchmarks/loop_guard.py --model runs/zoo3/models/translation/luong-general

For each set and setting: BLEU (sacrebleu 13a, lower-cased), its difference from the guard off by paired bootstrap
(1,000 samples, 95 % interval), the outputs that change, the outputs in a loop (a token four times in a row, or a
stretch of one to four tokens said four times over) and the outputs that reached the length limit without ending.
A sample of changed dev outputs is written out beside the guard-off output for reading.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import write_report  # noqa: E402
from names import compare  # noqa: E402
from visitor import BEAM, model_parser, model_sets  # noqa: E402


def in_loop(output: str, longest: int = 4, times: int = 4) -> bool:
    """Whether an output is in a loop: a stretch of one to ``longest`` tokens written ``times`` times in a row."""
    from attention_core.data.text import tokenize_english

    tokens = tokenize_english(output)
    return any(all(tokens[i + k * p : i + (k + 1) * p] == tokens[i : i + p] for k in range(1, times))
               for p in range(1, longest + 1) for i in range(len(tokens) - times * p + 1))


SETTINGS = {"off": None, "max_run 3": (3, 10**6), "ngram 4": (10**6, 4), "max_run 3 + ngram 8": (3, 8),
            "max_run 3 + ngram 5": (3, 5), "max_run 3 + ngram 6": (3, 6)}
"""The settings compared: ``(max_run, ngram)`` of ``LoopGuard`` (``10**6``: that rule off); the last is the default."""

DEFAULT = "max_run 3 + ngram 6"

SAMPLE = 12
"""Changed outputs of each dev set written out for reading."""


def decode(translator, sources: list[str], setting: tuple[int, int] | None, paragraphs: bool = False):
    """Outputs (texts) and how many reached the length limit, beam 5, with the guard ``setting``."""
    from attention_core.decoding.repetition import LoopGuard
    from attention_core.decoding.translator import SENTENCE_TOKENS

    guard = LoopGuard(*setting) if setting else False
    if paragraphs:  # a visitor row as the app decodes it: split into sentences, joined with a space
        outs = [translator.translate_paragraph(s, SENTENCE_TOKENS, beam_size=BEAM, loop_guard=guard) for s in sources]
        return [" ".join(o.text for o in row) for row in outs], sum(not o.finished for row in outs for o in row)
    outs = translator.translate(sources, beam_size=BEAM, loop_guard=guard)
    return [o.text for o in outs], sum(not o.finished for o in outs)


def markdown(report: dict) -> str:
    """The tables: every setting on each set, then changed dev outputs for reading."""
    lines = [
        f"The loop guard (`attention_core.decoding.repetition.LoopGuard`) on model `{report['model']}`, "
        f"beam {report['beam_size']}: "
        "BLEU (sacrebleu 13a, lower-cased), Δ against the guard off by paired bootstrap (1,000 samples, 95 % "
        "interval), outputs changed, outputs in a loop (a stretch of one to four tokens four times in a row) and "
        "outputs that reached the length limit without `<eos>`. The setting was chosen on the two dev sets; the "
        f"default is **{DEFAULT}**. Written by `python benchmarks/loop_guard.py`.",
        "",
        "| set | sentences | setting | BLEU | Δ [95 % interval] | changed | in a loop | unfinished |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in report["sets"].items():
        for setting, r in rows.items():
            delta = "—" if setting == "off" else (
                f"{r['vs_off']['delta']:+.2f} [{r['vs_off']['low']:+.2f}, {r['vs_off']['high']:+.2f}]")
            lines.append(f"| {name} | {r['n']} | {setting} | {r['bleu']:.2f} | {delta} | {r['changed']} | "
                         f"{r['loops']} | {r['unfinished']} |")
    for name, samples in report["changed_samples"].items():
        lines += ["", f"Changed outputs of {name} (a seeded sample, unedited; guard off → default):", "",
                  "| source | reference | off | default |", "|---|---|---|---|"]
        lines += [f"| {s['source']} | {s['reference']} | {s['off']} | {s['on']} |".replace("\n", " ")
                  for s in samples]
    return "\n".join(lines) + "\n"


def main() -> None:
    args = model_parser(__doc__, "loop_guard.json").parse_args()

    import torch

    from attention_core.analysis.metrics import bleu
    from attention_core.decoding.folder import load_folder

    translator = load_folder(args.model, "cpu")
    sets = model_sets(args.data)
    report: dict = {"model": args.model, "beam_size": BEAM, "sets": {}, "changed_samples": {}}
    with torch.inference_mode():
        for name, pairs in sets.items():
            sources, refs = [s for s, _ in pairs], [e for _, e in pairs]
            off, rows = None, {}
            for setting, limits in SETTINGS.items():
                outs, unfinished = decode(translator, sources, limits, paragraphs=name == "visitor set")
                off = outs if off is None else off
                c = compare(off, outs, refs)
                rows[setting] = {"n": len(refs), "bleu": round(bleu(outs, refs, "13a", lowercase=True), 2),
                                 "vs_off": c["on_vs_off"], "changed": c["changed"],
                                 "loops": sum(in_loop(o) for o in outs), "unfinished": unfinished}
                if setting == DEFAULT and name.endswith("dev"):
                    changed = [i for i, (a, b) in enumerate(zip(off, outs)) if a != b]
                    pick = sorted(random.Random(0).sample(changed, min(SAMPLE, len(changed))))
                    report["changed_samples"][name] = [
                        {"source": sources[i], "reference": refs[i], "off": off[i], "on": outs[i]} for i in pick]
                print(name, setting, rows[setting], flush=True)
            report["sets"][name] = rows
    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
