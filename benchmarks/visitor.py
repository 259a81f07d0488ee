"""What a visitor types: every bundled translation variant on 100 everyday sentences of our own (issue #29).

Usage::

    python benchmarks/visitor.py                     # → results/visitor/scores.{md,json}, outputs-<variant>.tsv
    python benchmarks/visitor.py --check             # only check that no sentence is in the corpora
    python benchmarks/visitor.py --reading luong-general   # the 30 outputs a reader judges, as a Markdown table
    python benchmarks/visitor.py --models runs/zoo3/models/translation --variants luong-general --out /tmp/v \
        --against results/visitor/outputs-luong-general.tsv   # a new model against the bundled one's outputs

The set (``results/visitor/visitor.tsv``, its README says how it was written) is first checked against the
corpora: no Chinese sentence of the set may equal, with spaces and punctuation removed (and traditional
characters simplified), a Chinese sentence of cmn-eng, cmn-eng-extra or tv4dialog; the command stops with the
offending ids if one does. Then every model folder under ``models/translation/`` decodes each row as the app
does (``Translator.translate_paragraph``: split into sentences, beam 5, at most ``SENTENCE_TOKENS`` tokens a
sentence; the sentences' outputs joined with a space) and is scored as the zoo scores translation
(``attention_core.analysis.evaluation``: sacrebleu 13a, lower-cased, detokenised output; chrF likewise), with a paired
bootstrap (1,000 samples) of each variant against ``none``. Names: for each row holding a name of ``NAMES``,
whether the output keeps the romanised name the reference uses (a whole-word match, case-insensitive).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.data.text import bare_chinese as match_key  # noqa: E402  (what sentences are compared by)

SET = ROOT / "results" / "visitor" / "visitor.tsv"
COLUMNS = ("id", "kind", "chinese", "english")

KINDS = {
    "short": "at most 8 characters (punctuation not counted)",
    "long": "at least 25 characters (punctuation not counted), one sentence of two or three clauses",
    "name": "a person's name, Chinese (张伟 → Zhang Wei) or foreign in Chinese (玛丽 → Mary)",
    "number": "numbers, dates, times, prices",
    "question": "a question",
    "paragraph": "two or three sentences",
    "rare": "a word rare in the training corpora (海关, 社保卡, 麻醉师, 物业费 …)",
    "everyday": "everyday topics: weather, food, family, work, shopping, health",
}
"""Each row's kind (one per row; other rows hold names, numbers and questions too)."""

NAMES = {
    "张伟": "Zhang Wei", "李娜": "Li Na", "王小明": "Wang Xiaoming", "刘洋": "Liu Yang", "陈静": "Chen Jing",
    "赵磊": "Zhao Lei", "黄丽": "Huang Li", "孙悦": "Sun Yue", "林芳": "Lin Fang", "吴强": "Wu Qiang",
    "郑红": "Zheng Hong", "周杰": "Zhou Jie",
    "玛丽": "Mary", "约翰": "John", "安娜": "Anna", "彼得": "Peter", "大卫": "David", "杰克": "Jack",
    "艾米丽": "Emily", "汤姆": "Tom", "莎拉": "Sarah", "迈克尔": "Michael",
}
"""Every person's name in the set and how its reference writes it."""

NUMBERS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "v014": (("十二点", ("midnight", "12 o'clock", "twelve o'clock", "12:00")),),
    "v022": (("六点", ("six", "6:00", "6 o'clock")), ("半个小时", ("half an hour", "half-hour", "30 minutes"))),
    "v024": (("八折", ("20% off", "20 percent off", "80%")),),
    "v038": (("一年级", ("first grade", "grade one", "1st grade")),),
    "v043": (("周六", ("Saturday",)),),
    "v045": (("九十九块钱", ("99 yuan",)),),
    "v046": (("八点一刻", ("quarter past eight", "8:15")),),
    "v047": (("十月二十三号", ("October 23rd", "October 23")),),
    "v048": (("五口人", ("five people", "5 people")), ("两只猫", ("two cats", "2 cats"))),
    "v049": (("三百八十元", ("380 yuan",)),),
    "v050": (("两点半", ("2:30", "half past two")),),
    "v051": (("四个半小时", ("four and a half hours", "4.5 hours")),),
    "v052": (("两千五百块", ("2,500 yuan", "2500 yuan")),),
    "v053": (("1998年", ("1998",)),),
    "v054": (("九点四十五分", ("9:45",)),),
    "v055": (("三块五", ("3.5 yuan",)), ("五块", ("5 yuan", "five yuan"))),
    "v056": (("三十二", ("32", "thirty-two")), ("十五", ("15", "fifteen"))),
    "v057": (("五月十日", ("May 10th", "May 10")),),
    "v058": (("三次", ("three times", "3 times")), ("两片", ("two tablets", "2 tablets", "two pills"))),
    "v070": (("大一号", ("one size bigger", "a size bigger", "one size larger", "a size larger")),),
    "v071": (("二十岁", ("twenty", "20")),),
    "v075": (("二楼", ("second floor", "2nd floor")), ("七点", ("seven", "7:00", "7 o'clock"))),
    "v078": (("五年", ("five years", "5 years")),),
    "v088": (("两颗", ("two",)),),
    "v089": (("三年", ("three-year", "three years", "3 years", "3-year")),),
    "v096": (("两个星期", ("two weeks", "2 weeks")),),
}
"""Every number, date, time and price in the set (row → expression, the forms a reader accepts: the reference's
own, and the same value written in digits or words)."""

CORPUS_FILES = {"cmn-eng/cmn.txt": 1, "cmn-eng-extra/cmn-extra.txt": 1, "tv4dialog/tv4dialog.tsv": 0}
"""The corpora a visitor sentence must not be in: file (inside the data folder) → column of its Chinese."""

REFERENCE_VARIANT = "none"
"""Every variant is compared with the model without attention."""
READING_VARIANT = "luong-general"
"""The default model, whose outputs a reader judges."""
READING_SEED = 29
"""Seed of the 30 rows a reader judges (``random.Random(29).sample``), the same for every later model."""
READING_SIZE = 30
BEAM = 5


@dataclass(frozen=True)
class Row:
    """One visitor sentence (or short paragraph) and its reference translation."""

    id: str
    kind: str
    chinese: str
    english: str


def model_parser(doc: str, out: str) -> argparse.ArgumentParser:
    """The command line of a benchmark of one translation model: ``--model``, ``--data`` and ``--out``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "translation" / "luong-general"))
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", default=str(ROOT / "results" / out))
    return parser


def model_sets(data: str | None, tests: bool = True) -> dict[str, list[tuple[str, str]]]:
    """The sets a translation model is measured on: the dev sets, then (``tests``) the test sets, then this set."""
    from attention_core.data.corpora import data_home
    from attention_core.data.tasks import load_splits

    splits = load_splits("translation", data_home(data), extra=["cmn-eng-extra", "tv4dialog"])
    sets = {"cmn-eng dev": splits.dev, "tv4dialog-dev": splits.extra_devs["tv4dialog-dev"]}
    if tests:
        sets |= {"cmn-eng test": splits.test, "tv4dialog-test": splits.extra_tests["tv4dialog-test"]}
    return sets | {"visitor set": [(r.chinese, r.english) for r in read_set(SET)]}


def read_set(path: str | Path = SET) -> list[Row]:
    """The rows of the set, checked: the header, four non-empty columns, known kinds, unique ids.

    Raises:
        ValueError: Naming the line that breaks a rule.
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != COLUMNS:
        raise ValueError(f"{path}: the first line must be the header {' TAB '.join(COLUMNS)}")
    rows, seen = [], set()
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS) or not all(f.strip() for f in fields):
            raise ValueError(f"{path}:{number}: expected {len(COLUMNS)} non-empty tab-separated columns")
        row = Row(*fields)
        if row.kind not in KINDS:
            raise ValueError(f"{path}:{number}: unknown kind {row.kind!r}; known: {', '.join(KINDS)}")
        if row.id in seen:
            raise ValueError(f"{path}:{number}: id {row.id} appears twice")
        seen.add(row.id)
        rows.append(row)
    return rows


def corpus_hits(rows: Sequence[Row], data: str | Path) -> list[tuple[str, str]]:
    """``(row id, corpus file)`` for every row whose Chinese is a Chinese sentence of ``CORPUS_FILES``."""
    wanted = {match_key(r.chinese): r.id for r in rows}
    hits = []
    for name, column in CORPUS_FILES.items():
        with open(Path(data) / name, encoding="utf-8-sig") as f:
            keys = {match_key(fields[column]) for line in f if len(fields := line.split("\t")) > column}
        hits += [(wanted[k], name) for k in sorted(keys & wanted.keys())]
    return sorted(hits)


def names_in(chinese: str) -> list[str]:
    """The romanised names (as the references write them) of the names in a Chinese text."""
    return [english for name, english in NAMES.items() if name in chinese]


def keeps(output: str, name: str) -> bool:
    """Whether ``output`` has ``name`` as whole words, case-insensitive (``Mary's`` keeps ``Mary``)."""
    return re.search(rf"\b{re.escape(name)}\b", output, re.IGNORECASE) is not None


def numbers_in(row_id: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The numbers of one visitor row (``NUMBERS``)."""
    return NUMBERS.get(row_id, ())


def keeps_number(output: str, forms: Sequence[str]) -> bool:
    """Whether ``output`` writes a number in one of its accepted forms (whole words, any case)."""
    return any(re.search(rf"(?<![\w.,:]){re.escape(form)}(?![\w:]|[.,]\d)", output, re.IGNORECASE) for form in forms)


def name_counts(rows: Sequence[Row], outputs: Sequence[str]) -> dict:
    """Rows keeping every name and names kept (``NAMES``: as the reference writes them)."""
    named = [(i, names_in(r.chinese)) for i, r in enumerate(rows) if names_in(r.chinese)]
    kept = [[keeps(outputs[i], n) for n in names] for i, names in named]
    return {"rows": len(named), "names": sum(len(n) for _, n in named),
            "rows_kept": sum(all(k) for k in kept), "names_kept": sum(map(sum, kept))}


def number_counts(rows: Sequence[Row], outputs: Sequence[str]) -> dict:
    """Rows keeping every number and numbers kept (``NUMBERS``, any accepted form)."""
    numbered = [(i, numbers_in(r.id)) for i, r in enumerate(rows) if numbers_in(r.id)]
    kept = [[keeps_number(outputs[i], forms) for _, forms in numbers] for i, numbers in numbered]
    return {"rows": len(numbered), "numbers": sum(len(n) for _, n in numbered),
            "rows_kept": sum(all(k) for k in kept), "numbers_kept": sum(map(sum, kept)),
            "kept": [[expr for (expr, _), k in zip(numbers, ks) if k] for (_, numbers), ks in zip(numbered, kept)]}


def reading_sample(rows: Sequence[Row], size: int = READING_SIZE, seed: int = READING_SEED) -> list[Row]:
    """The rows a reader judges: a seeded sample, in set order."""
    chosen = set(random.Random(seed).sample([r.id for r in rows], size))
    return [r for r in rows if r.id in chosen]


def variants(models: Path) -> list[str]:
    """The bundled translation variants: every folder with a ``config.json``."""
    return sorted(p.parent.name for p in models.glob("*/config.json"))


def decode(folder: Path, rows: Sequence[Row], names: bool = False) -> tuple[list[str], float]:
    """Each row's output as the app makes it (sentences split, beam 5, joined with a space), and the seconds.

    ``names``: with the names switch ([`attention_core.editing.names`][attention_core.editing.names]).
    """
    import torch

    from attention_core.decoding.folder import load_folder
    from attention_core.decoding.translator import SENTENCE_TOKENS
    from attention_core.editing import switch

    translator = load_folder(folder, "cpu")
    started = time.perf_counter()
    with torch.inference_mode():
        outputs = [" ".join(o.text for o in switch.translate_paragraph(translator, r.chinese, SENTENCE_TOKENS,
                                                                      names, beam_size=BEAM))
                   for r in rows]
    return outputs, time.perf_counter() - started


def score(rows: Sequence[Row], outputs: dict[str, list[str]], tokenize: str = "13a") -> dict:
    """BLEU and chrF per variant, each against ``none``, names kept.

    Lower-cased, as ``attention_core.analysis.evaluation`` scores.
    """
    from attention_core.analysis.metrics import bleu, chrf, paired_bootstrap
    from attention_core.data.vocab import UNK

    refs = [r.english for r in rows]
    result = {}
    for variant, hyps in outputs.items():
        names, numbers = name_counts(rows, hyps), number_counts(rows, hyps)
        entry = {
            "bleu": round(bleu(hyps, refs, tokenize, lowercase=True), 2),
            "chrf": round(chrf(hyps, refs, lowercase=True), 2),
            "bleu_by_kind": {kind: round(bleu([h for h, r in zip(hyps, rows) if r.kind == kind],
                                              [r.english for r in rows if r.kind == kind], tokenize, lowercase=True), 2)
                             for kind in KINDS},
            "name_sentences_kept": names["rows_kept"],
            "names_kept": names["names_kept"],
            "numbers_kept": numbers["numbers_kept"],
            "unk_outputs": sum(UNK in h for h in hyps),
        }
        if variant != REFERENCE_VARIANT and REFERENCE_VARIANT in outputs:
            test = paired_bootstrap(hyps, outputs[REFERENCE_VARIANT], refs, tokenize, lowercase=True)
            entry["vs_none"] = {k: round(v, 3) for k, v in test.items()}
        result[variant] = entry
    none: list[str] = [""] * len(rows)  # the totals, from counts of outputs that keep nothing
    names, numbers = name_counts(rows, none), number_counts(rows, none)
    return {"n": len(rows), "name_sentences": names["rows"], "names": names["names"], "numbers": numbers["numbers"],
            "kinds": dict(Counter(r.kind for r in rows)), "variants": result}


def markdown(report: dict) -> str:
    """The scores table, best BLEU first, and BLEU by kind."""
    v = report["variants"]
    order = sorted(v, key=lambda name: -v[name]["bleu"])
    lines = [
        f"Every bundled translation variant on the visitor set ({report['n']} sentences of our own, "
        "`results/visitor/visitor.tsv`): beam 5, each row decoded as the app does (split into sentences, outputs "
        "joined with a space), scored as the zoo scores translation (sacrebleu 13a, lower-cased, one reference). "
        "Δ vs none: paired bootstrap, 1,000 samples, 95 % interval. Names: of the "
        f"{report['name_sentences']} rows with a person's name ({report['names']} names), the rows whose output "
        "keeps every name as the reference writes it (whole words, any case), and the names kept; numbers: of "
        f"the {report.get('numbers', '—')} numbers, dates, times and prices (`NUMBERS`), those written in a form a "
        "reader accepts. "
        "Written by `python benchmarks/visitor.py`.",
        "",
        "| variant | BLEU | Δ vs none [95 % interval] | chrF | rows keeping every name | names kept | "
        "numbers kept | outputs with `<unk>` | decode s | BLEU, names on | names kept, names on | "
        "numbers kept, names on |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    data = report.get("trained_on") or {}
    mixed = len({data.get(name) for name in v}) > 1
    if mixed:  # while the zoo is retrained: whose data, and a Δ across data is not the attention's alone
        lines[-2] = lines[-2].replace("| variant |", "| variant | trained on |", 1)
        lines[-1] = "|---" + lines[-1]
    for name in order:
        e = v[name]
        t = e.get("vs_none") if not mixed or data.get(name) == data.get("none") else None  # not across data
        delta = f"{t['delta']:+.2f} [{t['low']:+.2f}, {t['high']:+.2f}]" if t else "—"
        on = e.get("names_on")
        numbers = report.get("numbers", "—")
        switch = (f"{on['bleu']:.2f} | {on['names_kept']} / {report['names']} | "
                  f"{on.get('numbers_kept', '—')} / {numbers}") if on else "— | — | —"
        source = f"{data.get(name) or '—'} | " if mixed else ""
        lines.append(f"| {name} | {source}{e['bleu']:.2f} | {delta} | {e['chrf']:.2f} | "
                     f"{e['name_sentences_kept']} / {report['name_sentences']} | {e['names_kept']} / "
                     f"{report['names']} | {e.get('numbers_kept', '—')} / {numbers} | {e['unk_outputs']} | "
                     f"{e.get('decode_seconds', '—')} | {switch} |")
    if mixed:
        lines += ["", "The zoo is being retrained on new data one model at a time: a Δ between models trained on "
                  "different data is not the attention's alone, so a model is compared with `none` only when both were "
                  "trained on the same data."]
    lines += ["", "Names on: the same decoding with the names switch (`attention_core.editing.names`, names and "
              "numbers, on by default in the app; `results/names.md`)."]
    kinds = list(KINDS)
    lines += ["", "BLEU by kind (a few sentences each: noisy; read it as a direction, not a score):", "",
              "| variant | " + " | ".join(f"{k} ({report['kinds'].get(k, 0)})" for k in kinds) + " |",
              "|---|" + "---|" * len(kinds)]
    for name in order:
        lines.append(f"| {name} | " + " | ".join(f"{v[name]['bleu_by_kind'][k]:.1f}" for k in kinds) + " |")
    if report.get("against"):  # python benchmarks/visitor.py --against OUTPUTS_TSV
        lines += ["", f"Against the outputs in `{report['against']}` (paired bootstrap, 1,000 samples, 95 % interval):",
                  "", "| variant | Δ BLEU | Δ BLEU, names on (both) |", "|---|---|---|"]
        for name in order:
            a, b = v[name]["vs_against"], v[name]["vs_against_names_on"]
            lines.append(f"| {name} | {a['delta']:+.2f} [{a['low']:+.2f}, {a['high']:+.2f}] | "
                         f"{b['delta']:+.2f} [{b['low']:+.2f}, {b['high']:+.2f}] |")
    return "\n".join(lines) + "\n"


def outputs_tsv(rows: Iterable[Row], outputs: Sequence[str], named: Sequence[str]) -> str:
    """``id<TAB>chinese<TAB>output<TAB>output with names`` with a header."""
    return "".join(["id\tchinese\toutput\toutput_names\n"]
                   + [f"{r.id}\t{r.chinese}\t{o}\t{n}\n" for r, o, n in zip(rows, outputs, named)])


def read_outputs(path: Path, names: bool = False) -> dict[str, str]:
    """An ``outputs-<variant>.tsv`` by row id: the output, or (``names``) the output with the names switch."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return {line.split("\t")[0]: line.split("\t")[3 if names else 2] for line in lines}


def reading_table(rows: Sequence[Row], out: Path, variant: str, names: bool = False) -> str:
    """The sampled rows with their references and ``variant``'s outputs (``names``: with the switch), to judge."""
    output = read_outputs(out / f"outputs-{variant}.tsv", names)
    table = ["| id | kind | Chinese | reference | output | judgement |", "|---|---|---|---|---|---|"]
    table += [f"| {r.id} | {r.kind} | {r.chinese} | {r.english} | {output[r.id]} | |" for r in reading_sample(rows)]
    return "\n".join(table) + "\n"


def main() -> None:
    from attention_core.data.atomic import atomic_write_text
    from attention_core.data.corpora import data_home

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=str(SET), help="the visitor set (TSV)")
    parser.add_argument("--models", default=str(ROOT / "models" / "translation"))
    parser.add_argument("--variants", nargs="*", default=None, help="default: every folder under --models")
    parser.add_argument("--data", default=None, help="data folder (default: $ATTENTION_LAB_DATA, else the user cache)")
    parser.add_argument("--out", default=str(ROOT / "results" / "visitor"))
    parser.add_argument("--check", action="store_true", help="only check that no sentence is in the corpora")
    parser.add_argument("--reading", metavar="VARIANT", help="print the 30 sampled rows with VARIANT's outputs")
    parser.add_argument("--names", action="store_true", help="with --reading: the outputs with the names switch")
    parser.add_argument("--against", metavar="OUTPUTS_TSV", help="also compare every variant with these outputs "
                        "(another model's outputs-<variant>.tsv, e.g. the bundled default's), names off and on")
    args = parser.parse_args()
    rows, out = read_set(args.set), Path(args.out)
    if args.reading:
        print(reading_table(rows, out, args.reading, args.names), end="")
        return
    folder = data_home(args.data)
    missing = [name for name in CORPUS_FILES if not (folder / name).is_file()]
    if missing:
        sys.exit(f"error: the corpora are needed for the check; missing in {folder}: {', '.join(missing)} "
                 "(attention-lab data pull, or --data FOLDER)")
    hits = corpus_hits(rows, folder)
    if hits:
        sys.exit("error: these visitor sentences are in a corpus (spaces and punctuation removed), replace them: "
                 + "; ".join(f"{i} in {name}" for i, name in hits))
    print(f"{len(rows)} sentences, none in {', '.join(CORPUS_FILES)}")
    if args.check:
        return
    models = Path(args.models)
    outputs, named, seconds = {}, {}, {}
    for variant in args.variants or variants(models):
        outputs[variant], seconds[variant] = decode(models / variant, rows)
        named[variant], _ = decode(models / variant, rows, names=True)
        atomic_write_text(out / f"outputs-{variant}.tsv", outputs_tsv(rows, outputs[variant], named[variant]))
        print(f"{variant}: {seconds[variant]:.0f} s", flush=True)
    report = score(rows, outputs)
    with_names = score(rows, named)["variants"]
    for variant, entry in with_names.items():
        report["variants"][variant]["names_on"] = {k: entry[k] for k in ("bleu", "chrf", "names_kept",
                                                                          "name_sentences_kept", "numbers_kept")}
    for variant, s in seconds.items():
        report["variants"][variant]["decode_seconds"] = round(s)
    if args.against:  # "against today's model": paired bootstrap of each variant against the given outputs
        from bench import repo_path

        from attention_core.analysis.metrics import paired_bootstrap

        refs = [r.english for r in rows]
        report["against"] = repo_path(args.against)
        for variant in outputs:
            entry = report["variants"][variant]
            for key, hyps, names in (("vs_against", outputs[variant], False),
                                     ("vs_against_names_on", named[variant], True)):
                other = read_outputs(Path(args.against), names)
                test = paired_bootstrap(hyps, [other[r.id] for r in rows], refs, "13a", lowercase=True)
                entry[key] = {k: round(v, 3) for k, v in test.items()}
            print(f"{variant} against {args.against}: {entry['vs_against']} (names on: "
                  f"{entry['vs_against_names_on']})", flush=True)
    from demo.provenance import folder_training_data

    report["trained_on"] = {variant: folder_training_data(models / variant) for variant in outputs}
    report["decoding"] = {"beam_size": BEAM, "per_row": "translate_paragraph, outputs joined with a space",
                          "scoring": "sacrebleu 13a, lowercased, detokenised output"}
    atomic_write_text(out / "scores.json", json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    atomic_write_text(out / "scores.md", markdown(report))


if __name__ == "__main__":
    main()
