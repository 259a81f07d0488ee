"""What carrying rare common words fixes and what it breaks (``attention_core.editing.words``): one translation model,
beam 5,
the names switch with names and numbers only against names, numbers and common words, on cmn-eng dev, the held-out
TV episodes of ``tv4dialog-dev`` and the visitor set.

Usage::

    python benchmarks/words.py                       # → results/words.{md,json}
    python benchmarks/words.py --model runs/zoo3/models/translation/luong-general

For each set: BLEU (sacrebleu 13a, lower-cased) without and with the common words, the difference by paired bootstrap
(1,000 samples, 95 % interval), the outputs that change, the sentences where a word was carried, and how each carried
word reached the output. Every carried word is listed with its English, so its precision can be read; every visitor
output that changes is written out beside its reference.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import write_report  # noqa: E402
from names import compare  # noqa: E402
from visitor import BEAM, SET, model_parser, model_sets, read_set  # noqa: E402


def decode(translator, sources: list[str], words: bool, paragraphs: bool) -> tuple[list[str], list, int]:
    """Outputs with the names switch, common words carried or not, every carried word with how it was placed, and
    how many sentences were translated a second time (a word was left out; the second translation is kept only when
    every carrier came through and none was written twice)."""
    from attention_core.decoding.translator import SENTENCE_TOKENS
    from attention_core.editing import switch

    tried: set[int] = set()
    sentence = [-1]
    find_words, left_out = switch.find_words, switch.left_out  # the library's, before they are patched below

    def find(text):  # called once per sentence, before `left_out` is asked about its words
        sentence[0] += 1
        return find_words(text) if words else []

    def recorded(found, output):
        short = left_out(found, output)
        if short:
            tried.add(sentence[0])
        return short

    with mock.patch.object(switch, "find_words", find), mock.patch.object(switch, "left_out", recorded):
        if paragraphs:
            outs = [switch.translate_paragraph(translator, s, SENTENCE_TOKENS, beam_size=BEAM) for s in sources]
        else:
            outs = [[o] for o in switch.translate(translator, sources, beam_size=BEAM)]
    carried = [[(c.name.text, c.name.english, placed) for o in row for c, placed in zip(o.names.carried, o.names.placed)
                if c.name.group == "word"] for row in outs]
    return [" ".join(o.text for o in row) for row in outs], carried, len(tried)


def markdown(report: dict) -> str:
    """The summary table, the words carried, and the visitor outputs that change."""
    lines = [
        f"Common words carried by the names switch (`attention_core.editing.words`) on model `{report['model']}`, beam "
        f"{report['beam_size']}: the switch with names and numbers only against names, numbers and common words. "
        "BLEU (sacrebleu 13a, lower-cased), Δ by paired bootstrap (1,000 samples, 95 % interval). Written by "
        "`python benchmarks/words.py`.",
        "",
        "| set | sentences | BLEU without words | BLEU with words | Δ [95 % interval] | outputs changed | "
        "sentences translated again (a word left out) | of them kept (every carrier came through, none written "
        "twice) | words carried |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, e in report["sets"].items():
        t = e["on_vs_off"]
        lines.append(f"| {name} | {e['n']} | {e['bleu_off']:.2f} | {e['bleu_on']:.2f} | {t['delta']:+.2f} "
                     f"[{t['low']:+.2f}, {t['high']:+.2f}] | {e['changed']} | {e['tried']} | {e['sentences']} | "
                     f"{e['carried']} |")
    for name, e in report["sets"].items():
        lines += ["", f"Words carried in {name} (Chinese → English ×count):", "",
                  ", ".join(f"{w} → {en} ×{c}" for w, en, c in e["words"]) or "none"]
    lines += ["", "Visitor-set outputs that change (unedited):", "", "| id | Chinese | reference | without words | "
              "with words |", "|---|---|---|---|---|"]
    lines += [f"| {c['id']} | {c['chinese']} | {c['reference']} | {c['off']} | {c['on']} |"
              for c in report["visitor_changed"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    args = model_parser(__doc__, "words.json").parse_args()

    import torch

    from attention_core.decoding.folder import load_folder

    translator = load_folder(args.model, "cpu")
    rows = read_set(SET)
    sets = model_sets(args.data, tests=False)
    report: dict = {"model": args.model, "beam_size": BEAM, "sets": {}}
    with torch.inference_mode():
        for name, pairs in sets.items():
            sources, refs = [s for s, _ in pairs], [e for _, e in pairs]
            paragraphs = name == "visitor set"
            off, _, _ = decode(translator, sources, False, paragraphs)
            on, carried, tried = decode(translator, sources, True, paragraphs)
            words = Counter((w, en) for row in carried for w, en, _ in row)
            report["sets"][name] = compare(off, on, refs) | {
                "sentences": sum(bool(row) for row in carried), "tried": tried,
                "carried": sum(len(row) for row in carried),
                "words": [(w, en, c) for (w, en), c in words.most_common()],
            }
            if paragraphs:
                report["visitor_changed"] = [
                    {"id": r.id, "chinese": r.chinese, "reference": r.english, "off": a, "on": b}
                    for r, a, b in zip(rows, off, on) if a != b]
            print(name, {k: v for k, v in report["sets"][name].items() if k != "words"}, flush=True)
    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
