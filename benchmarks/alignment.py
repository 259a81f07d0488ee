"""Is attention an alignment? AER of every translation variant against human word alignments.

Usage::

    pip install -r benchmarks/requirements-alignment.txt   # eflomal, the statistical baseline
    python benchmarks/alignment.py                           # → results/alignment.{json,md}

For each gold set in ``align-zh-en/`` (DeNero & Macherey 150, Tsinghua 450; news, far from our Tatoeba
training domain), every bundled translation model is force-decoded on the gold English and its attention pooled
onto the gold words (``attention_core.analysis.alignment``). Links come from two rules: Luong's argmax (the
most-attended source word of each target word) and a threshold ``τ`` chosen on DeNero (lowest AER over a grid) and
applied unchanged to Tsinghua. The Transformer is scored for every layer and head and for each layer's head mean.
Baselines on the same sets: the diagonal, and eflomal (Östling & Tiedemann 2016) trained on our translation
training pairs plus the test sentences, symmetrised with grow-diag-final-and. AER, precision and recall are
corpus-level, with 95 % bootstrap intervals over sentences (1,000 samples).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.analysis.alignment import (  # noqa: E402
    GOLD_SETS,
    PTB_BRACKETS,
    Gold,
    argmax_links,
    diagonal_links,
    evaluate_links,
    force_decode,
    grow_diag_final_and,
    read_gold,
    split_words,
    threshold_links,
)
from attention_core.data.corpora import data_home  # noqa: E402
from attention_core.data.tasks import load_splits  # noqa: E402
from attention_core.data.text import tokenize_chinese, tokenize_english  # noqa: E402

TAUS = [round(0.05 * k, 2) for k in range(1, 13)]
"""The thresholds tried on DeNero."""

PUBLISHED = {
    "tsinghua": "fast_align 38.1, MGIZA 35.1, eflomal 28.7 (statistical aligners trained on ~40k pairs), mBERT "
                "without fine-tuning 18.1, awesome-align fine-tuned 13.4 (awesome-align README)",
    "denero": "HMM aligner (intersect / grow-diag / union) 27.2 / 25.7 / 33.4 (the repository's own output files)",
}
"""Published AER (%) on the same sets, as listed in the data's README."""


def _cell(r: dict) -> str:
    return (f"{100 * r['aer']:.1f} [{100 * r['aer_low']:.1f}, {100 * r['aer_high']:.1f}] | "
            f"{100 * r['precision']:.1f} | {100 * r['recall']:.1f}")


def attention_rows(models: Path, gold: dict[str, list[Gold]]) -> list[dict]:
    """Every variant (and every Transformer layer, head and head mean) with both rules on both sets."""
    from attention_core.decoding.folder import load_folder
    from attention_core.model.transformer import Transformer

    rows = []
    for folder in sorted(p for p in (models / "translation").iterdir() if (p / "config.json").is_file()):
        translator = load_folder(folder, "cpu")
        if not translator.model.has_attention:
            continue
        started = time.time()
        forced = {name: [force_decode(translator, g) for g in sets] for name, sets in gold.items()}
        views: dict[str, dict[str, list]] = {}
        if isinstance(translator.model, Transformer):
            L, h = forced["denero"][0].weights.shape[:2]
            for layer in range(L):
                views[f"layer {layer + 1}, head mean"] = {
                    n: [f.weights[layer].mean(dim=0) for f in fs] for n, fs in forced.items()}
                for head in range(h):
                    views[f"layer {layer + 1}, head {head + 1}"] = {
                        n: [f.weights[layer, head] for f in fs] for n, fs in forced.items()}
        else:
            views["attention"] = {n: [f.weights for f in fs] for n, fs in forced.items()}
        for view, matrices in views.items():
            dev = {tau: evaluate_links([threshold_links(m, tau) for m in matrices["denero"]], gold["denero"],
                                       samples=0)["aer"] for tau in TAUS}
            tau = min(TAUS, key=lambda t: (dev[t], t))
            for name in GOLD_SETS:
                for rule, links in (("argmax", [argmax_links(m) for m in matrices[name]]),
                                    (f"threshold τ={tau}", [threshold_links(m, tau) for m in matrices[name]])):
                    rows.append({"system": folder.name, "view": view, "set": name, "rule": rule,
                                 **evaluate_links(links, gold[name])})
        unknown = {n: sum(f.unknown_characters for f in fs) for n, fs in forced.items()}
        print(json.dumps({"model": folder.name, "seconds": round(time.time() - started, 1), "unknown_chars": unknown}),
              flush=True)
    return rows


def eflomal_rows(data: Path, gold: dict[str, list[Gold]]) -> list[dict]:
    """eflomal trained on our translation training pairs plus the gold sentences (characters → English tokens)."""
    from eflomal import Aligner

    splits = load_splits("translation", data, extra=["cmn-eng-extra"])
    src = [" ".join(tokenize_chinese(zh)) for zh, _ in splits.train]
    tgt = [" ".join(tokenize_english(en)) for _, en in splits.train]
    spans, owners = {}, {}
    for name, sets in gold.items():
        spans[name] = (len(src), len(src) + len(sets))
        for g in sets:
            chars, groups = split_words(g.source, tokenize_chinese)  # characters, as the models read them
            owners.setdefault(name, []).append([w for w, group in enumerate(groups) for _ in group])
            src.append(" ".join(chars) or "∅")
            tgt.append(" ".join(PTB_BRACKETS.get(t, t).lower() for t in g.target))
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        Aligner().align(src, tgt, links_filename_fwd=str(fwd), links_filename_rev=str(rev), quiet=True)
        lines = [fwd.read_text().splitlines(), rev.read_text().splitlines()]
    rows = []
    for name, sets in gold.items():
        start, end = spans[name]
        predicted = {"forward": [], "reverse": [], "grow-diag-final-and": []}
        for k, line_no in enumerate(range(start, end)):
            owner = owners[name][k]
            directional = []
            for direction in lines:
                links = set()
                for item in direction[line_no].split():
                    i, j = map(int, item.split("-"))
                    links.add((owner[i], j))
                directional.append(links)
            predicted["forward"].append(directional[0])
            predicted["reverse"].append(directional[1])
            predicted["grow-diag-final-and"].append(grow_diag_final_and(*directional))
        for rule, links in predicted.items():
            rows.append({"system": "eflomal", "view": f"{len(splits.train):,} training pairs + the gold sentences",
                         "set": name, "rule": rule, **evaluate_links(links, sets)})
    return rows


def markdown(rows: list[dict], command: str) -> str:
    """The tables: one per gold set."""
    lines = [f"Measured by `{command}`. AER, precision and recall in % (corpus level; AER with its 95 % bootstrap "
             "interval over sentences). Lower AER is better. The threshold τ of each attention view was chosen on "
             "DeNero and applied unchanged to Tsinghua.", "",
             "**The domain gap.** Both gold sets are news (Xinhua, NIST MT02: long sentences, names, numbers); our "
             "models were trained on short everyday Tatoeba sentences. Every number below is therefore about "
             "attention far outside its training domain: many characters are rare or unseen, and the forced English "
             "is nothing the models would write.", ""]
    for name in GOLD_SETS:
        lines += [f"## {name} ({'150' if name == 'denero' else '450'} sentences)", "",
                  f"Published on this set: {PUBLISHED[name]}.", "",
                  "| system | view | rule | AER [95 % CI] | precision | recall |", "|---|---|---|---|---|---|"]
        for r in sorted((r for r in rows if r["set"] == name), key=lambda r: r["aer"]):
            lines.append(f"| {r['system']} | {r['view']} | {r['rule']} | {_cell(r)} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--models", default=str(ROOT / "models"))
    parser.add_argument("--out", default=str(ROOT / "results" / "alignment"))
    parser.add_argument("--no-eflomal", action="store_true", help="skip the statistical baseline")
    args = parser.parse_args()
    data = data_home(args.data)
    gold = {name: read_gold(data, name) for name in GOLD_SETS}
    rows = []
    for name, sets in gold.items():
        rows.append({"system": "diagonal", "view": "—", "set": name, "rule": "same relative position",
                     **evaluate_links([diagonal_links(len(g.source), len(g.target)) for g in sets], sets)})
    if not args.no_eflomal:
        rows += eflomal_rows(data, gold)
    rows += attention_rows(Path(args.models), gold)
    command = "python benchmarks/alignment.py" + (" --no-eflomal" if args.no_eflomal else "")
    Path(args.out + ".json").write_text(json.dumps({"command": command, "rows": rows}, ensure_ascii=False, indent=1))
    Path(args.out + ".md").write_text(markdown(rows, command), encoding="utf-8")


if __name__ == "__main__":
    main()
