"""What the names switch fixes and what it breaks (issue #29): one model, names off and on, on the visitor set and
the cmn-eng dev split. The switch carries names and numbers (``attention_core.editing.names``,
``attention_core.editing.numbers``).

Usage::

    python benchmarks/names.py                       # → results/names.{md,json}, results/names_dev_changed.md
    python benchmarks/names.py --model models/translation/luong-general

For each set, beam 5, decoded as the app decodes (a visitor row split into sentences; a dev pair is one sentence):
BLEU (sacrebleu 13a, lower-cased) with the switch off and on, the difference by paired bootstrap (1,000 samples),
the outputs that change, and on the visitor set the names of ``benchmarks/visitor.py``'s ``NAMES`` that survive as
the reference writes them, and its ``NUMBERS`` that survive in an accepted form. Every name the switch finds in dev
is listed with what it wrote, so its precision can be read; every dev output that changes is written out beside its
reference for reading.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from visitor import BEAM, SET, decode, name_counts, number_counts, read_set  # noqa: E402


def compare(off: list[str], on: list[str], refs: list[str]) -> dict:
    """BLEU off and on, the paired bootstrap of on against off, and how many outputs changed."""
    from attention_core.analysis.metrics import bleu, paired_bootstrap

    test = paired_bootstrap(on, off, refs, "13a", lowercase=True)
    return {"n": len(refs), "bleu_off": round(bleu(off, refs, "13a", lowercase=True), 2),
            "bleu_on": round(bleu(on, refs, "13a", lowercase=True), 2),
            "on_vs_off": {k: round(v, 3) for k, v in test.items()},
            "changed": sum(a != b for a, b in zip(off, on))}


def markdown(report: dict) -> str:
    """The summary table: BLEU off and on, the change, outputs changed, names kept on the visitor set."""
    v = report["visitor"]
    lines = [
        f"The names switch (`attention_core.editing.names`) on model `{report['model']}`, beam "
        f"{report['beam_size']}, against the same model without it: BLEU (sacrebleu 13a, lower-cased), Δ by paired "
        "bootstrap (1,000 samples, 95 % interval), outputs that change (most changes on cmn-eng are only the case "
        "of a name the model already wrote, `tom` → `Tom`: lower-cased BLEU does not see them). Written by "
        "`python benchmarks/names.py`; every changed dev output is in `results/names_dev_changed.md`.",
        "",
        "| set | sentences | BLEU off | BLEU on | Δ [95 % interval] | outputs changed | "
        "sentences with names or numbers |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in (("visitor", "visitor set"), ("dev", "cmn-eng dev"), ("test", "cmn-eng test")):
        e = report[key]
        t = e["on_vs_off"]
        with_names = e.get("sentences_with_names", v["names_on"]["rows"] if key == "visitor" else "—")
        lines.append(f"| {label} | {e['n']} | {e['bleu_off']:.2f} | {e['bleu_on']:.2f} | {t['delta']:+.2f} "
                     f"[{t['low']:+.2f}, {t['high']:+.2f}] | {e['changed']} | {with_names} |")
    off, on = v["names_off"], v["names_on"]
    lines += ["", f"Names of the visitor set kept as its references write them (whole words, any case; "
              f"{on['names']} names in {on['rows']} rows): **{off['names_kept']} without the switch, "
              f"{on['names_kept']} with it**; rows keeping every name {off['rows_kept']} → {on['rows_kept']}.", ""]
    noff, non = v["numbers_off"], v["numbers_on"]
    lines += [f"Numbers, dates, times and prices of the visitor set kept (the reference's form or the same value "
              f"in digits or words, `benchmarks/visitor.py`'s `NUMBERS`; {non['numbers']} in {non['rows']} rows): "
              f"**{noff['numbers_kept']} without the switch, {non['numbers_kept']} with it**; rows keeping every "
              f"number {noff['rows_kept']} → {non['rows_kept']}.", "",
              "Names the switch found in the visitor set, and what it wrote:", "",
              ", ".join(f"{n} → {e} ({h})" for n, e, h in report["visitor_found"]), "",
              "Numbers it found in the visitor set, and what it writes for them:", "",
              ", ".join(f"{n} → {e} ({k})" for n, e, k in report["visitor_numbers_found"]), "",
              "Names, numbers and words it carried in cmn-eng dev and test (a phrase taken for a name would show "
              "here):", ""]
    for key in ("dev", "test"):
        e = report[key]
        lines.append(f"- {key}: " + ", ".join(f"{f['name']} → {f['english']} ×{f['count']}" for f in e["found"])
                     + f" (how each reached the output: {e['placed']})")
    return "\n".join(lines) + "\n"


def main() -> None:
    import torch

    from attention_core.data.atomic import atomic_write_text
    from attention_core.data.corpora import data_home
    from attention_core.data.tasks import split_translation
    from attention_core.decoding.folder import load_folder
    from attention_core.editing import switch
    from attention_core.editing.names import find_names
    from attention_core.editing.numbers import find_numbers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "translation" / "luong-general"))
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", default=str(ROOT / "results"))
    args = parser.parse_args()
    model, out = Path(args.model), Path(args.out)
    report: dict = {"model": model.name, "beam_size": BEAM}

    rows = read_set(SET)
    refs = [r.english for r in rows]
    off, _ = decode(model, rows)
    on, seconds = decode(model, rows, names=True)
    report["visitor"] = compare(off, on, refs) | {"names_off": name_counts(rows, off),
                                                 "names_on": name_counts(rows, on), "seconds_on": round(seconds, 1),
                                                 "numbers_off": number_counts(rows, off),
                                                 "numbers_on": number_counts(rows, on)}

    splits = split_translation(data_home(args.data))
    translator = load_folder(model, "cpu")
    changed: list[tuple[str, str, str, str]] = []
    for split, pairs in (("dev", splits.dev), ("test", splits.test)):
        sources, refs = [zh for zh, _ in pairs], [en for _, en in pairs]
        with torch.inference_mode():
            started = time.perf_counter()
            plain = [o.text for o in translator.translate(sources, beam_size=BEAM)]
            middle = time.perf_counter()
            results = switch.translate(translator, sources, beam_size=BEAM)
            ended = time.perf_counter()
        named = [o.text for o in results]
        found = Counter((c.name.text, c.name.english, c.name.how) for o in results for c in o.names.carried)
        placed = Counter(p for o in results for p in o.names.placed)
        report[split] = compare(plain, named, refs) | {
            "sentences_with_names": sum(bool(o.names.carried) for o in results),
            "names_found": sum(found.values()), "placed": dict(placed),
            "seconds_off": round(middle - started, 1), "seconds_on": round(ended - middle, 1),
            "found": [{"name": n, "english": e, "how": h, "count": c} for (n, e, h), c in found.most_common()],
        }
        if split == "dev":
            changed = [(s, r, a, b) for s, r, a, b in zip(sources, refs, plain, named) if a != b]
    report["visitor_found"] = sorted({(n.text, n.english, n.how) for r in rows for n in find_names(r.chinese)})
    report["visitor_numbers_found"] = [(n.text, n.english, n.kind) for r in rows for n in find_numbers(r.chinese)]
    report["visitor"]["sentences_with_names"] = sum(bool(find_names(r.chinese) or find_numbers(r.chinese))
                                                    for r in rows)
    atomic_write_text(out / "names.json", json.dumps(report, ensure_ascii=False, indent=1) + "\n")

    lines = ["Every cmn-eng dev output that the names switch changes (beam 5, model "
             f"`{model.name}`), for reading. Written by `python benchmarks/names.py`.", "",
             "| Chinese | reference | names off | names on |", "|---|---|---|---|"]
    lines += [f"| {s} | {r} | {a} | {b} |" for s, r, a, b in changed]
    atomic_write_text(out / "names_dev_changed.md", "\n".join(lines) + "\n")
    atomic_write_text(out / "names.md", markdown(report))
    print(markdown(report))

if __name__ == "__main__":
    main()
