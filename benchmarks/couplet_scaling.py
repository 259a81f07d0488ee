"""Couplet training arms compared on both test sets (issue #25): data against architecture, and capacity.

Usage::

    python benchmarks/couplet_scaling.py --prepare runs/c25/data-55k      # a data folder whose couplet/train is
                                                                         # train-55k (symbolic links, no copy)
    python benchmarks/couplet_scaling.py --arm "55k pairs=runs/c25/k55-h256@runs/c25/data-55k" \\
        --arm "whole corpus=runs/c25/full-h256-ep2" --reference "whole corpus"
    python benchmarks/couplet_scaling.py --study capacity --arm "hidden 352=runs/c25/cap-h352" \\
        --arm "Transformer d232=runs/c25/cap-tf232" --arm "hidden 256=runs/c25/full-h256-ep2"
    python benchmarks/couplet_scaling.py --refresh     # after re-bundling the couplet zoo: the tables keep their
                                                       # arms, the "for scale" sentence takes the new zoo's spread

``--study scaling`` (the default): each arm is a training run (its best model by dev BLEU) of the same recipe —
luong-general, hidden 256, the same extra data (poetry-couplet) — on a different ``couplet/train``, for about the
same number of training pairs. Both are decoded as the app decodes (beam 5, the default rules, the cliché table
measured on the arm's own training pairs, as ``attention-lab zoo`` does at export) on both test sets
(``couplet/test``, modern; ``poetry-couplet/test``, classical). Character BLEU per arm, and the difference of every
arm against ``--reference`` by paired bootstrap (1,000 samples, 95 % interval), with the variants' spread for scale:
the largest BLEU difference between two attention scores in ``results/``'s couplet table. Writes
``results/couplet_scaling.{md,json}`` and the figure ``results/figures/couplet_scaling.{html,png}``.

``--study capacity``: each arm is a size of the default recipe on the whole corpus, trained for the same CPU time
(the pairs ``benchmarks/couplet_capacity.py --budget`` gives each size); scored the same way, written to
``results/couplet_capacity.{md,json}`` and ``results/figures/couplet_capacity.{html,png}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SETS = {"test": "modern (couplet/test)", "poetry-test": "classical (poetry-couplet/test)"}
STUDIES = {
    "scaling": {
        "intro": "The default couplet architecture (luong-general, hidden 256, poetry-couplet as extra data) trained "
                 "on the 55k New-Year subset (`couplet/train-55k`) and on the whole corpus (`couplet/train`, 699k "
                 "pairs), "
                 "each for the same budget of training pairs (`--max-pairs`)",
        "title": "The same couplet model on 55k pairs and on the whole corpus",
        "subtitle": "about the same number of training pairs",
        "alt": "55k against the whole corpus",
        "sets": SETS,
    },
    "capacity": {
        "intro": "The default couplet recipe (whole corpus + poetry-couplet, dropout 0.2, shared and tied embeddings, "
                 "batch 64, lr 1e-3) at three sizes, each trained for the same CPU time: the pairs "
                 "`python benchmarks/couplet_capacity.py --budget` gives each size for the time hidden 256 takes for "
                 "its pairs (`results/couplet_capacity_speed.md`, `--max-pairs`)",
        "title": "Couplet model sizes at the same CPU time",
        "subtitle": "the same training seconds for every size",
        "alt": "couplet model sizes at the same CPU time",
        "sets": {"dev": "dev (the choice is made here)", **SETS},
    },
}
"""What each study compares: the table's introduction, the figure's title and the sets scored (dev only where every
arm has the same one: the capacity arms train on one split)."""


def prepare(folder: Path, data: str | None) -> None:
    """A data folder whose ``couplet/train`` is the 55k subset: links to the corpora, nothing copied."""
    from attention_core.data.corpora import data_home

    source = data_home(data)
    (folder / "couplet").mkdir(parents=True, exist_ok=True)
    links = {folder / "couplet" / "train": source / "couplet" / "train-55k",
             folder / "couplet" / "test": source / "couplet" / "test",
             folder / "poetry-couplet": source / "poetry-couplet"}
    for link, target in links.items():
        if not target.exists():
            sys.exit(f"error: {target} is missing (attention-lab data pull couplet poetry-couplet)")
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target.resolve(), target_is_directory=True)
    print(f"{folder}: couplet/train → {links[folder / 'couplet' / 'train']}")


def decode(run: Path, data: str | None, limit: int | None = None, sets: Iterable[str] = SETS) -> dict:
    """One arm: its training budget, and each set's outputs, references and BLEU at beam 5 with the rules."""
    from couplet_checkpoint import load_candidate

    from attention_core.analysis.evaluation import evaluate

    translator, splits = load_candidate(run, data)
    info = translator.meta.get("data", {})
    history = translator.meta.get("history") or []
    best = max(history, key=lambda h: h["dev_bleu"]) if history else {}
    arm = {"run": str(run), "train_pairs": info.get("sizes", {}).get("train"),
           "parameters": sum(p.numel() for p in translator.model.parameters()),
           "sources": [s if isinstance(s, str) else s.get("path") for s in info.get("sources", [])],
           "epochs": best.get("epoch"), "pairs_seen": sum(h["pairs"] for h in history[: best.get("epoch", 0)]),
           "best_dev_bleu": translator.meta.get("best_dev_bleu")}
    chosen = {name: pairs for name, pairs in {"dev": splits.dev, **splits.evaluation_sets()}.items() if name in sets}
    for name, pairs in chosen.items():
        pairs = pairs[:limit] if limit else pairs
        started = time.perf_counter()
        report = evaluate(translator, pairs, beam_size=5, constrained=True)
        arm[name] = {"bleu": round(report["bleu"], 2), "outputs": report["outputs"],
                     "references": [t for _, t in pairs], "seconds": round(time.perf_counter() - started)}
    return arm


def variant_spread() -> dict | None:
    """The largest beam-5 BLEU difference between two attention scores of the bundled couplet zoo, per set.

    The RNN variants only: ``none`` has no score and the Transformer is another architecture.

    With ``zoo``: which zoo that is (the default variant's hidden size and training pairs an epoch), so that the
    sentence stays true when the zoo is retrained (``--refresh`` rewrites it for the zoo bundled then).
    """
    spread: dict = {}
    for name, stem in (("test", "couplet"), ("poetry-test", "couplet-poetry-test")):
        scores = [json.loads(p.read_text(encoding="utf-8"))["bleu"]
                  for p in (ROOT / "results" / "eval").glob(f"{stem}--*--beam5.json")
                  if p.name.split("--")[1] not in ("none", "transformer")]  # the RNN's attention scores only
        if len(scores) < 2:
            return None
        spread[name] = round(max(scores) - min(scores), 2)
    default = ROOT / "models" / "couplet" / "luong-general"
    if (default / "config.json").is_file():
        from attention_core.decoding.folder import read_config

        cfg, _, meta = read_config(default)
        pairs = meta.get("data", {}).get("sizes", {}).get("train")
        spread["zoo"] = f"hidden {cfg.hidden_size}" + (f", {pairs:,} training pairs an epoch" if pairs else "")
    return spread


def figure(report: dict, out: Path, study: dict) -> None:
    """BLEU per arm and test set, with the paired-bootstrap interval of each arm against the reference."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for label, arm in report["arms"].items():
        sets = study["sets"]
        fig.add_bar(name=label, x=[sets[s] for s in sets], y=[arm[s]["bleu"] for s in sets],
                    text=[f"{arm[s]['bleu']:.2f}" for s in sets], textposition="outside")
    subtitle = f"character BLEU, beam 5, default rules, {study['subtitle']}"
    fig.update_layout(title=f"{study['title']}<br><sup>{subtitle}</sup>",
                      yaxis_title="character BLEU", barmode="group", height=420, width=760,
                      margin=dict(t=60, l=60, r=20, b=40), legend=dict(orientation="h", y=-0.15))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.write_html(out.with_suffix(".html"), include_plotlyjs="cdn", full_html=True)
    fig.write_image(out.with_suffix(".png"), scale=2)


def markdown(report: dict, study: dict, stem: str) -> str:
    arms, ref = report["arms"], report["reference"]
    sized = all("parameters" in arm for arm in arms.values())  # studies measured before arms recorded their size
    lines = [study["intro"] + ", each arm's best model by its own dev BLEU "
             "(the pairs it had seen by then in the table), decoded as the app decodes (beam 5, default rules). Δ: "
             f"paired bootstrap against *{ref}*, 1,000 samples, 95 % interval. Written by "
             "`python benchmarks/couplet_scaling.py`.", "",
             "| arm | " + "parameters | " * sized + "training pairs (corpus) | epochs | pairs seen | " + " | ".join(
                 f"{study['sets'][s]} BLEU | Δ vs {ref}" for s in study["sets"]) + " |",
             "|---|---|---|---|" + "---|" * sized + "---|---|" * len(study["sets"])]
    for label, arm in arms.items():
        cells = []
        for s in study["sets"]:
            d = arm[s].get("vs_reference")
            cells += [f"{arm[s]['bleu']:.2f}", f"{d['delta']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]" if d else "—"]
        size = f"{arm['parameters'] / 1e6:.2f} M | " if sized else ""
        lines.append(f"| {label} | {size}{arm['train_pairs']:,} | {arm['epochs']} | "
                     f"{arm['pairs_seen']:,} | "
                     + " | ".join(cells) + " |")
    if report.get("variant_spread"):
        sp = report["variant_spread"]
        zoo = f" ({sp['zoo']})" if sp.get("zoo") else ""
        lines += ["", "For scale: the largest BLEU difference between two attention scores of the bundled couplet "
                  f"zoo{zoo}, beam 5: {sp['test']:.2f} on the modern set, {sp['poetry-test']:.2f} on the classical "
                  "set."]
    lines += ["", f"![{study['alt']}](figures/{stem}.png)"]
    return "\n".join(lines) + "\n"


def main() -> None:
    from attention_core.analysis.metrics import paired_bootstrap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare", metavar="FOLDER", help="only make the 55k data folder (links)")
    parser.add_argument("--study", choices=list(STUDIES), default="scaling", help="what the arms compare")
    parser.add_argument("--arm", action="append", default=[], metavar="LABEL=RUN[@DATA]",
                        help="an arm: label, run folder and, for a run trained on a prepared folder, that folder")
    parser.add_argument("--reference", default=None, help="the arm the others are compared with (default: the last)")
    parser.add_argument("--data", default=None, help="data folder of the whole corpus (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--out", default=str(ROOT / "results"))
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pairs of each set (a check)")
    parser.add_argument("--refresh", action="store_true",
                        help="only rewrite the study's table and figure from its JSON, with the variants' spread of "
                             "the couplet zoo bundled now (after the zoo is retrained)")
    args = parser.parse_args()
    if args.prepare:
        prepare(Path(args.prepare), args.data)
        return
    study, out, stem = STUDIES[args.study], Path(args.out), f"couplet_{args.study}"
    if args.refresh:
        refresh(out, stem, study)
        return
    if len(args.arm) < 2 or any("=" not in a for a in args.arm):
        sys.exit("error: give at least two --arm LABEL=RUN[@DATA]")
    sets = study["sets"]
    arms = {}
    for spec in args.arm:
        label, run = spec.split("=", 1)
        run, _, data = run.partition("@")  # an arm trained on a prepared folder reads its split from it
        arms[label] = decode(Path(run), data or args.data, args.limit, sets)
        print(f"{label}: " + ", ".join(f"{s} {arms[label][s]['bleu']}" for s in sets), flush=True)
    ref = args.reference or list(arms)[-1]
    for label, arm in arms.items():
        for s in sets:
            if label != ref:
                test = paired_bootstrap(arm[s]["outputs"], arms[ref][s]["outputs"], arm[s]["references"], "char")
                arm[s]["vs_reference"] = {k: round(v, 3) for k, v in test.items()}
    report = {"reference": ref, "arms": arms, "variant_spread": variant_spread()}
    slim = {**report, "arms": {k: {**a, **{s: {x: y for x, y in a[s].items() if x not in ("outputs", "references")}
                                            for s in sets}} for k, a in arms.items()}}
    write(slim, out, stem, study)


def write(report: dict, out: Path, stem: str, study: dict) -> None:
    """The study's JSON (without outputs), table and figure."""
    from attention_core.data.atomic import atomic_write_text

    atomic_write_text(out / f"{stem}.json", json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    figure(report, out / "figures" / stem, study)
    atomic_write_text(out / f"{stem}.md", markdown(report, study, stem))
    print(markdown(report, study, stem))


def refresh(out: Path, stem: str, study: dict) -> None:
    """Rewrite a measured study with the spread of the zoo bundled now (the arms' numbers are kept as measured)."""
    path = out / f"{stem}.json"
    if not path.is_file():
        sys.exit(f"error: {path} is missing: run the study first (--arm …)")
    report = json.loads(path.read_text(encoding="utf-8"))
    spread = variant_spread()
    if spread is None:
        sys.exit("error: results/eval holds fewer than two beam-5 reports of the couplet zoo's attention scores on "
                 "each test set: nothing to refresh the spread from")
    write({**report, "variant_spread": spread}, out, stem, study)


if __name__ == "__main__":
    main()
