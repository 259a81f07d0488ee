"""When does low coverage mean a source word was left untranslated? Choosing the flag's threshold by measurement.

Usage::

    pip install -r benchmarks/requirements-alignment.txt   # eflomal
    python benchmarks/coverage.py   # → results/coverage.{json,md}, coverage_sample_char.md, coverage_flags_*.md

The default translation model decodes the dev and test sentences (beam 5, as the app answers). A source token's
coverage is the total attention it received over the output (``Output.coverage``). Whether a unit was really
translated is judged by a statistical aligner that never sees the model: eflomal (Östling & Tiedemann 2016), trained
on our training pairs plus every (source, model output) pair, symmetrised with grow-diag-final-and, run five times
and voted (eflomal takes no seed); a unit none of whose characters links to an output word counts as *not rendered*.
Two kinds of unit are scored: single characters (punctuation left out), and content words
(``attention_core.decoding.coverage``: jieba words tagged noun, verb, adjective, name …, coverage summed over their
characters). For each threshold τ the flag "coverage < τ" is scored
against the aligner (precision: flagged units not rendered; recall: unrendered units flagged); τ is the one with the
highest dev precision among those that flag at least 10 % of the unrendered units (a flag that almost never fires tells
a visitor nothing; F1 keeps rising with τ, because flagging nearly everything recalls nearly every miss), reported on
test beside the chance level. For a person to read: a random sample of 50 flagged test characters
(``results/coverage_sample_char.md``), and every content word the shipped rule (``THRESHOLD``) flags on dev and test
(``results/coverage_flags_{dev,test}.md``): the aligner is a proxy, the reading is the check
(``results/coverage_reading.md``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.analysis.alignment import grow_diag_final_and  # noqa: E402
from attention_core.data.corpora import data_home  # noqa: E402
from attention_core.data.tasks import load_splits  # noqa: E402
from attention_core.data.text import tokenize_chinese, tokenize_english  # noqa: E402
from attention_core.data.vocab import is_punctuation  # noqa: E402
from attention_core.decoding.coverage import THRESHOLD, Word, source_words  # noqa: E402
from attention_core.decoding.folder import load_folder  # noqa: E402

TAUS = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0]
"""Thresholds tried on dev."""
SAMPLE = 50
ALIGNER_RUNS = 5
"""eflomal runs voted over (it takes no seed)."""
MIN_RECALL = 0.10
"""A threshold must flag at least this share of the not-rendered dev characters to be chosen."""


def decode(translator, pairs: list[tuple[str, str]]) -> list[dict]:
    """Each source's characters, their coverage and the output's words.

    A source given twice with two references (the corpus has such pairs) is decoded and counted once, with its first
    reference: its flags are the same flags.
    """
    rows, seen = [], set()
    for source, reference in pairs:
        if source in seen:
            continue
        seen.add(source)
        out = translator.translate([source], beam_size=5)[0]
        chars = [u or t for t, u in zip(out.source_tokens, out.unknown)]  # unknown ones as typed
        rows.append({"source": source, "reference": reference, "output": out.text, "chars": chars,
                     "coverage": [round(c, 4) for c in out.coverage.tolist()], "words": tokenize_english(out.text),
                     "source_words": [(w.text, w.tag, w.tokens) for w in source_words(chars)]})
    return rows


def rendered(rows: list[dict], train: list[tuple[str, str]], runs: int = ALIGNER_RUNS) -> None:
    """Mark each source character linked (by eflomal, grow-diag-final-and) to some output word: ``row["linked"]``.

    eflomal samples and takes no seed, so one run's links move from run to run (the dev precision of one threshold
    moved by 10 points between two runs); a character counts as linked when most of ``runs`` runs link it.
    """
    from eflomal import Aligner

    src = [" ".join(tokenize_chinese(zh)) for zh, _ in train] + [" ".join(r["chars"]) or "∅" for r in rows]
    tgt = [" ".join(tokenize_english(en)) for _, en in train] + [" ".join(r["words"]) or "∅" for r in rows]
    votes = [Counter() for _ in rows]
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
            Aligner().align(src, tgt, links_filename_fwd=str(fwd), links_filename_rev=str(rev), quiet=True)
            lines = [fwd.read_text().splitlines()[len(train):], rev.read_text().splitlines()[len(train):]]
        for counts, forward, reverse in zip(votes, *lines):
            links = [{tuple(map(int, item.split("-"))) for item in line.split()} for line in (forward, reverse)]
            counts.update({i for i, _ in grow_diag_final_and(*links)})
    for row, counts in zip(rows, votes):
        row["linked"] = sorted(i for i, n in counts.items() if 2 * n > runs)


def units(row: dict, level: str) -> list[tuple[str, list[int], bool]]:
    """The flaggable units of a sentence: ``(text, token positions, flaggable)`` per character or per word."""
    if level == "char":
        return [(c, [i], not is_punctuation(c)) for i, c in enumerate(row["chars"])]
    return [(text, tokens, Word(text, tag, tokens).content) for text, tag, tokens in row["source_words"]]


def score(rows: list[dict], tau: float, level: str) -> dict:
    """Precision, recall and F1 of "coverage < τ" against "no token linked to the output", over flaggable units."""
    flagged = missing = both = total = 0
    for row in rows:
        linked = set(row["linked"])
        for _, tokens, flaggable in units(row, level):
            if not flaggable:
                continue
            total += 1
            f = sum(row["coverage"][i] for i in tokens) < tau
            m = not linked & set(tokens)
            flagged += f
            missing += m
            both += f and m
    precision = both / flagged if flagged else 0.0
    recall = both / missing if missing else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tau": tau, "units": total, "flagged": flagged, "not_rendered": missing, "precision": precision,
            "recall": recall, "f1": f1, "chance": missing / total if total else 0.0}


def flagged(rows: list[dict], tau: float, level: str) -> list[dict]:
    """Every flagged unit of ``rows`` in order, each with its sentence, the model's output and the aligner's view."""
    return [
        {"source": r["source"], "chars": r["chars"], "unit": text, "tokens": tokens,
         "coverage": sum(r["coverage"][i] for i in tokens), "output": r["output"], "reference": r["reference"],
         "aligner": "linked" if set(r["linked"]) & set(tokens) else "not linked"}
        for r in rows for text, tokens, flaggable in units(r, level)
        if flaggable and sum(r["coverage"][i] for i in tokens) < tau
    ]


def sample(rows: list[dict], tau: float, level: str, n: int = SAMPLE, seed: int = 0) -> list[dict]:
    """``n`` random flagged units of ``rows`` (seeded)."""
    cases = flagged(rows, tau, level)
    return random.Random(seed).sample(cases, min(n, len(cases)))


def marked(case: dict) -> str:
    """The case's source with its flagged unit in 【】."""
    first, last, chars = case["tokens"][0], case["tokens"][-1], case["chars"]
    return "".join(chars[:first]) + "【" + "".join(chars[first:last + 1]) + "】" + "".join(chars[last + 1:])


def cell(text: str) -> str:
    """Text for a markdown table's cell (a ``|`` would end the cell)."""
    return text.replace("|", "\\|")


def write_cases(path: Path, title: str, cases: list[dict]) -> None:
    """A markdown table of flagged cases, numbered, for a person to read."""
    out = [f"# {title}", "", "| # | source (flagged in 【】) | coverage | model output | reference | aligner |",
           "|---|---|---|---|---|---|"]
    out += [f"| {k} | {cell(marked(case))} | {case['coverage']:.3f} | {cell(case['output'])} | "
            f"{cell(case['reference'])} | {case['aligner']} |" for k, case in enumerate(cases, 1)]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def choose(by_tau: list[dict]) -> float:
    """The threshold with the highest precision among those that flag at least ``MIN_RECALL`` of the misses."""
    return max((r for r in by_tau if r["recall"] >= MIN_RECALL), key=lambda r: (r["precision"], -r["tau"]))["tau"]


def table(by_tau: dict[str, list[dict]], best: float, what: str) -> list[str]:
    """One markdown table of both splits by threshold."""
    lines = [f"| τ | dev: {what} flagged | precision | recall | F1 | test: {what} flagged | precision | recall | F1 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for d, t in zip(by_tau["dev"], by_tau["test"]):
        mark = " **(chosen)**" if d["tau"] == best else ""
        cells = [f"{r['flagged']} | {100 * r['precision']:.1f} % | {100 * r['recall']:.1f} % | {100 * r['f1']:.1f} %"
                 for r in (d, t)]
        lines.append(f"| {d['tau']}{mark} | {cells[0]} | {cells[1]} |")
    test = next(r for r in by_tau["test"] if r["tau"] == best)
    return lines + ["", f"Chance level: {100 * test['chance']:.1f} % of the test {what}s ({test['not_rendered']} of "
                    f"{test['units']}) are not rendered by the aligner's judgement. At τ = {best} the test precision "
                    f"is {100 * test['precision']:.1f} %, the recall {100 * test['recall']:.1f} %.", ""]


def main() -> None:
    """Decode, align, choose τ on dev, report on test, write the reading sample."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA)")
    parser.add_argument("--model", default=str(ROOT / "models" / "translation" / "luong-general"))
    parser.add_argument("--results", default=str(ROOT / "results"))
    args = parser.parse_args()
    splits = load_splits("translation", data_home(args.data), extra=["cmn-eng-extra"])
    translator = load_folder(args.model)
    rows = {name: decode(translator, pairs) for name, pairs in (("dev", splits.dev), ("test", splits.test))}
    rendered(rows["dev"] + rows["test"], splits.train)
    levels = {"char": "character", "word": "content word"}
    by_tau = {level: {name: [score(rows[name], tau, level) for tau in TAUS] for name in rows} for level in levels}
    best = {level: choose(by_tau[level]["dev"]) for level in levels}
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    (results / "coverage.json").write_text(json.dumps({"model": Path(args.model).name, "chosen_tau": best,
                                                       "by_tau": by_tau}, indent=2) + "\n", encoding="utf-8")
    lines = [
        "Measured by `python benchmarks/coverage.py` on the default translation model "
        f"(`{Path(args.model).name}`, beam 5), dev and test splits (1,000 pairs each; a source given twice is counted "
        "once). A unit is *flagged* when its coverage (the total attention its characters received over the output) "
        "is below τ, and *not rendered* when eflomal, trained on our training pairs plus every (source, output) pair "
        f"and symmetrised with grow-diag-final-and, links none of its characters to an output word in most of "
        f"{ALIGNER_RUNS} runs (eflomal takes no seed). τ is chosen on dev — the highest precision among the "
        f"thresholds that flag at least {100 * MIN_RECALL:.0f} % of the not-rendered units — and reported on test. "
        "The aligner is a proxy; the check is reading the flags (`coverage_reading.md`).",
        "",
        "## Per character (punctuation left out)",
        "",
        *table(by_tau["char"], best["char"], "character"),
        "## Per content word (jieba words tagged noun, verb, adjective, name, idiom, place or time; "
        "`attention_core.decoding.coverage`)",
        "",
        *table(by_tau["word"], best["word"], "content word"),
    ]
    (results / "coverage.md").write_text("\n".join(lines), encoding="utf-8")
    picked = sample(rows["test"], best["char"], "char")
    write_cases(results / "coverage_sample_char.md",
                f"{len(picked)} random flagged test characters (τ = {best['char']}, seed 0), for reading", picked)
    for name in rows:  # the shipped rule, every flag: what the reading checks (the aligner is a proxy)
        cases = flagged(rows[name], THRESHOLD, "word")
        write_cases(results / f"coverage_flags_{name}.md",
                    f"Every {name} content word the shipped rule flags (coverage < {THRESHOLD}): {len(cases)}, "
                    "for reading", cases)
    print(json.dumps({"chosen_tau": best}))


if __name__ == "__main__":
    main()
