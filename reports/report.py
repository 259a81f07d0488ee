"""Turn the zoo's evaluation reports into ``results/``: tables, figures and the orderings verdict.

``python -m reports`` reads ``results/eval/<set>--<variant>--<decoding>.json`` (written by
``attention-lab zoo``; ``<set>`` is ``translation``, ``couplet`` or ``couplet-poetry-test``), the
references of each test set (from the data folder, for the paired bootstrap) and the bundled
models, and writes:

* ``results/tables/<set>.json`` and ``.md`` — BLEU/chrF of every variant, greedy and beam 5, each
  variant's BLEU difference from ``none`` with its 95 % paired-bootstrap interval (couplets also
  without constraints, and a second table of the rules a reader checks, with the human 下联s'
  values as the ceiling);
* ``results/figures/bleu-by-length-<task>.html`` and ``.png`` — the bottleneck curve;
* ``results/figures/alignment-<task>-<variant>.html`` and ``.png`` — fixed examples;
* ``results/orderings.md`` — do our numbers reproduce Luong et al. 2015's orderings?
* ``results/figures/live-reverse-*.html`` and ``.png`` — a recorded run of the live-training tab;
* ``results/figures/theory-*.html`` and ``.png`` — the theory pages' evidence (``reports.theory_figures``; the
  toy models of the bottleneck figure are trained once and their accuracies kept in
  ``results/theory_bottleneck.json``, ``--retrain-toy`` measures them again);
* ``results/figures/transformer-*.html`` and ``.png`` — the Transformer page's figures
  (``reports.transformer_figures``; skipped when no Transformer is bundled);
* ``results/figures/app-links.json`` — for each figure, the app query that opens the app with the
  figure's input and settings (the docs put an "open in the app" link under every figure);
* ``results/transformer.md`` and ``.json`` — the Transformer beside the RNN variants
  (``reports.comparison``; skipped when no Transformer was evaluated).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import plotly.graph_objects as go

from attention_core.analysis.metrics import MIN_BUCKET, bleu_by_length
from attention_core.data.atomic import atomic_write_text
from attention_core.data.tasks import TASKS, DataError, Splits, load_splits
from attention_core.hub.zoo import RECIPES
from demo.handlers import heatmap_figure, sentence_state
from demo.links import app_query
from demo.models import BUNDLED, DEFAULT_VARIANT, VARIANT_LABELS, ModelRegistry
from demo.provenance import folder_training_data
from reports.common import SET_TITLES, bootstrap, interval, load_reports, ordered, write_figure
from reports.comparison import write_comparison
from reports.theory_figures import theory_figure_links, write_theory_figures
from reports.transformer_figures import transformer_figure_links, write_transformer_figures

EXAMPLES = {
    "translation": "每次听到这首歌，都会让我回忆起自己年轻的时候。",
    "couplet": "两个黄鹂鸣翠柳",
}
"""The fixed inputs of the alignment figures."""


TEST_SETS = {
    "translation": ("translation", "test"),
    "translation-tv4dialog-test": ("translation", "tv4dialog-test"),
    "couplet": ("couplet", "test"),
    "couplet-poetry-test": ("couplet", "poetry-test"),
}
"""Report key → (task, evaluation set name of ``Splits.evaluation_sets``)."""



def load_test_sets(data: str | Path) -> dict[str, list[tuple[str, str]]]:
    """The ``(source, reference)`` pairs of every test set in ``TEST_SETS`` (none where a corpus is missing)."""
    sets: dict[str, list[tuple[str, str]]] = {}
    loaded: dict[str, Splits] = {}
    for key, (task, name) in TEST_SETS.items():
        try:
            splits = loaded.get(task) or loaded.setdefault(task, load_splits(task, data, extra=RECIPES[task].extra))
        except DataError:
            continue
        pairs = splits.evaluation_sets().get(name)
        if pairs is not None:
            sets[key] = list(pairs)
    return sets


def load_references(data: str | Path) -> dict[str, list[str]]:
    """The references of every test set in ``TEST_SETS`` (empty where the corpora are missing)."""
    return {key: [t for _, t in pairs] for key, pairs in load_test_sets(data).items()}


def versus_none(variants: dict[str, dict[str, dict]], references: list[str] | None,
                decoding: str = "beam5") -> dict[str, dict]:
    """Each variant's BLEU minus ``none``'s at ``decoding``, with a 95 % paired-bootstrap interval.

    Returns:
        ``{variant: pairedbootstrap(...)}`` for the variants whose reports hold their outputs.
    """
    base = variants.get("none", {}).get(decoding, {})
    if not references or "outputs" not in base:
        return {}
    out = {}
    for v, reports in variants.items():
        report = reports.get(decoding, {})
        if v == "none" or "outputs" not in report or len(report["outputs"]) != len(references):
            continue
        out[v] = bootstrap(report, base, references)
    return out


RULE_COLUMNS = [
    ("top_char_share", "most frequent character (share of outputs)"),
    ("distinct_ratio", "distinct characters ÷ references'"),
    ("repetition_mirrored", "repetition mirrored"),
    ("no_extra_repetition", "no extra repetition"),
    ("no_reuse", "no 重字"),
    ("tone_opposition", "last tone opposite"),
    ("tone_opposition_after_level", "… after a 上联 ending 平"),
    ("ends_level", "ends 平"),
    ("length_match", "length"),
    ("punctuation_aligned", "punctuation"),
    ("no_unk", "no `<unk>`"),  # in backticks: a bare <unk> is an HTML tag on the site
]
"""Columns of the couplet rules table (keys of ``couplet_metrics`` and ``couplet_corpus_metrics``)."""


def _rule_cells(metrics: dict) -> str:
    cells = []
    for key, _ in RULE_COLUMNS:
        value = metrics.get(key)
        if key == "top_char_share" and value is not None:
            cells.append(f"{metrics.get('top_char', '')} {value:.3f}")
        elif isinstance(value, (int, float)) and value == value:
            cells.append(f"{value:.3f}")
        else:
            cells.append("—")
    return " | ".join(cells)


def rules_table(variants: dict[str, dict[str, dict]], decoding: str = "beam5") -> str:
    """The rules a reader checks: every variant at ``decoding``, the default without constraints, humans.

    The human 下联s' row is the ceiling each rule is read against.
    """
    header = ("| variant | " + " | ".join(label for _, label in RULE_COLUMNS) + " |\n"
              + "|---" * (len(RULE_COLUMNS) + 1) + "|\n")
    rows = []
    human = None
    for v in ordered(variants):
        report = variants[v].get(decoding)
        if report and "couplet" in report:
            rows.append(f"| {v} | {_rule_cells(report['couplet'])} |")
            human = human or report.get("couplet_reference")
    free = variants.get(DEFAULT_VARIANT, {}).get(f"{decoding}-unconstrained")
    if free and "couplet" in free:
        rows.append(f"| {DEFAULT_VARIANT}, no constraints | {_rule_cells(free['couplet'])} |")
    if human:
        rows.append(f"| **human 下联 (ceiling)** | {_rule_cells(human)} |")
    return header + "\n".join(rows) + "\n"


def table(key: str, variants: dict[str, dict[str, dict]], references: list[str] | None = None,
          data: dict[str, str] | None = None) -> tuple[list[dict], str]:
    """Rows (JSON) and a Markdown table of one test set.

    ``data``: each variant's training data ([`training_data`][demo.provenance.training_data]); while the
    variants differ in it (a zoo being retrained), the table has a column that names it.
    """
    task = TEST_SETS.get(key, (key, "test"))[0]
    intervals = versus_none(variants, references)
    data = data or {}
    mixed = len({data.get(v) for v in variants}) > 1
    apart = {v for v in variants if mixed and v != "none" and data.get(v) != data.get("none")}  # no Δ across data
    intervals = {v: i for v, i in intervals.items() if v not in apart}
    rows = []
    for v in ordered(variants):
        r = variants[v]
        row: dict = {"variant": v, "trained_on": data.get(v)}
        for decoding, report in r.items():
            row[f"bleu_{decoding}"] = round(report["bleu"], 2)
            row[f"chrf_{decoding}"] = round(report["chrf"], 2)
            row[f"unk_{decoding}"] = report.get("unk_outputs", "—")
            if "couplet" in report:
                for k, value in report["couplet"].items():
                    row[f"{k}_{decoding}"] = round(value, 3) if isinstance(value, float) else value
        alignment = r.get("greedy", {}).get("alignment")
        if alignment:
            row["entropy"] = round(alignment["entropy"], 3)
            row["diagonality"] = round(alignment["diagonality"], 3)
        if v in intervals:
            row["bleu_beam5_vs_none"] = {k: round(x, 3) for k, x in intervals[v].items()}
        rows.append(row)
    def delta(variant: str) -> str:  # the cell of the difference from none
        return "other data than none's" if variant in apart else interval(intervals.get(variant))

    def lead(r: dict) -> str:  # the variant's cell, and while the rows differ in data the data's
        return f"| {r['variant']} | " + (f"{r['trained_on'] or '—'} | " if mixed else "")

    first, rule = ("| variant | trained on | ", "|---|---") if mixed else ("| variant | ", "|---")
    delta_head = "BLEU beam 5 − none [95 % CI]"
    if task == "couplet":
        header = (f"{first}BLEU greedy | BLEU beam 5 | chrF beam 5 | BLEU beam 5, no constraints | {delta_head} | "
                  f"entropy | diagonality |\n{rule}|---|---|---|---|---|---|---|\n")
        body = "".join(
            f"{lead(r)}{r.get('bleu_greedy', '—')} | {r.get('bleu_beam5', '—')} | "
            f"{r.get('chrf_beam5', '—')} | {r.get('bleu_beam5-unconstrained', '—')} | "
            f"{delta(r['variant'])} | {r.get('entropy', '—')} | {r.get('diagonality', '—')} |\n"
            for r in rows
        )
        body += "\n**The rules a reader checks** (beam 5, default rules; human 下联s are the ceiling):\n\n"
        body += rules_table(variants)
    else:
        header = (f"{first}BLEU greedy | BLEU beam 5 | chrF greedy | chrF beam 5 | {delta_head} | "
                  "outputs with &lt;unk&gt; (greedy / beam 5) | entropy | diagonality |\n"
                  f"{rule}|---|---|---|---|---|---|---|---|\n")
        body = "".join(
            f"{lead(r)}{r.get('bleu_greedy', '—')} | {r.get('bleu_beam5', '—')} | "
            f"{r.get('chrf_greedy', '—')} | {r.get('chrf_beam5', '—')} | {delta(r['variant'])} | "
            f"{r.get('unk_greedy', '—')} / {r.get('unk_beam5', '—')} | "
            f"{r.get('entropy', '—')} | {r.get('diagonality', '—')} |\n"
            for r in rows
        )
    note = ("The zoo is being retrained on new data one model at a time (the column \"trained on\"): a difference "
            "between two rows trained on different data is not the attention's alone, so a row is compared with "
            "`none` only when both were trained on the same data.\n\n") if mixed else ""
    return rows, note + header + body


def length_figure(task: str, variants: dict[str, dict[str, dict]], decoding: str = "greedy",
                  pairs: list[tuple[str, str]] | None = None) -> go.Figure:
    """BLEU by source length, one line per variant (Bahdanau et al. 2014, Fig. 2), each bucket with its ``n``.

    With the test pairs, the buckets are recomputed from the saved outputs so that none holds fewer
    than ``MIN_BUCKET`` pairs (``metrics.bleu_by_length``); otherwise the evaluation's own buckets are drawn.
    """
    fig = go.Figure()
    kind = TASKS[TEST_SETS.get(task, (task, ""))[0]]
    lengths = [len(kind.tokenize_src(src)) for src, _ in pairs] if pairs else None
    for v in ordered(variants):
        report = variants[v].get(decoding)
        if not report:
            continue
        buckets = report["bleu_by_length"]
        if lengths is not None and len(report.get("outputs", [])) == len(lengths):
            buckets = bleu_by_length(lengths, report["outputs"], [r for _, r in pairs], tokenize=kind.bleu_tokenize,
                                     lowercase=True, min_count=MIN_BUCKET)
        fig.add_trace(go.Scatter(
            x=[f"{b['min']}–{b['max'] if b['max'] < 1000 else '∞'}<br>n = {b['n']}" for b in buckets],
            y=[round(b["bleu"], 2) for b in buckets],
            mode="lines+markers", name=VARIANT_LABELS.get(v, v),
            line=dict(dash="dash" if v == "none" else "solid", width=3 if v == "none" else 2),
            hovertemplate="%{x} sentences: BLEU %{y}<extra>" + v + "</extra>",
        ))
    fig.update_layout(
        title=f"{task}: BLEU by source length ({decoding}; buckets of at least {MIN_BUCKET} sentences)",
        xaxis_title="source length (tokens) and sentences per bucket",
        yaxis_title="BLEU", height=460, legend=dict(orientation="h", y=-0.25),
        font=dict(family="Noto Sans CJK SC, sans-serif"), margin=dict(l=60, r=20, t=60, b=120),
    )
    return fig


def _compare(variants: dict, references: list[str] | None, a: str, b: str) -> tuple[str, int]:
    """``a`` vs ``b`` at beam 5 in words, and the verdict: 1 (a better), -1 (b better), 0 (no clear difference).

    With both systems' outputs and the references, the verdict is a 95 % paired-bootstrap interval of
    the BLEU difference that excludes 0; otherwise only the two scores are given and no verdict.
    """
    ra, rb = variants[a]["beam5"], variants[b]["beam5"]
    scores = f"{ra['bleu']:.2f} vs {rb['bleu']:.2f}"
    if not references or "outputs" not in ra or "outputs" not in rb:
        return f"{scores} (no outputs saved: no interval)", 0
    r = bootstrap(ra, rb, references)
    ci = f"difference {r['delta']:+.2f}, 95 % CI [{r['low']:+.2f}, {r['high']:+.2f}]"
    if r["low"] > 0:
        return f"`{a}` ahead ({scores}; {ci})", 1
    if r["high"] < 0:
        return f"`{b}` ahead ({scores}; {ci})", -1
    return f"no clear difference ({scores}; {ci})", 0


def orderings(reports: dict[str, dict[str, dict[str, dict]]], references: dict[str, list[str]] | None = None,
              data: dict[str, dict[str, str]] | None = None) -> str:
    """Compare our measured orderings with Luong et al. 2015, in plain words computed from the numbers.

    ``data``: each test set's variants' training data (``training_data_of``); two variants trained on different
    data (a zoo being retrained) are not compared, and the line says so.
    """
    references = references or {}
    data = data or {}
    lines = [
        "**Do we reproduce Luong et al. 2015?**\n",
        "Luong et al. (2015, §5.3 and Table 4, WMT English→German) report that with *global* attention "
        "the `dot` score works well, `general` is better for *local* attention, `concat` does poorly, "
        "and their best model is local-p with `general`. Every statement below is computed from our "
        "test-set BLEU (beam 5) by `python -m reports`: a difference counts only when its 95 % "
        "paired-bootstrap interval (1,000 resamples of the test set, Koehn 2004) excludes 0.\n",
    ]
    for key, variants in reports.items():
        variants = {v: r for v, r in variants.items() if "beam5" in r}
        if not variants:
            continue
        refs = references.get(key)
        trained_on = data.get(key, {})

        def compare(a: str, b: str, refs=refs, variants=variants, trained_on=trained_on) -> tuple[str, int | None]:
            if trained_on.get(a) != trained_on.get(b):
                return (f"not compared while the zoo is retrained: `{a}` was trained on {trained_on.get(a) or '?'}, "
                        f"`{b}` on {trained_on.get(b) or '?'}"), None
            return _compare(variants, refs, a, b)

        bleu = {v: r["beam5"]["bleu"] for v, r in variants.items()}
        entropy = {v: r["greedy"]["alignment"]["entropy"] for v, r in variants.items()
                   if "alignment" in r.get("greedy", {})}
        lines.append(f"\n### {SET_TITLES.get(key, key)}\n")
        ranking = sorted(bleu, key=bleu.get, reverse=True)
        groups: dict[str | None, list[str]] = {}
        for v in ranking:
            groups.setdefault(trained_on.get(v), []).append(v)
        for data_name, members in groups.items():
            lines.append("Ranking by BLEU" + (f", trained on {data_name or '?'}" if len(groups) > 1 else "") + ": "
                         + " > ".join(f"`{v}` ({bleu[v]:.2f})" for v in members) + "\n")
        if {"luong-dot", "luong-concat"} <= bleu.keys():
            text, verdict = compare("luong-dot", "luong-concat")
            lines.append(f"- dot vs concat (global): {text}" + ("" if verdict is None else
                         f" — the paper's 'concat does poorly' is "
                         f"**{'reproduced' if verdict == 1 else 'not reproduced'}**") + ".")
        if {"luong-dot", "luong-general"} <= bleu.keys():
            text, _ = compare("luong-dot", "luong-general")
            lines.append(f"- dot vs general (global): {text}; the paper found dot works well for global attention.")
        if {"luong-dot", "luong-scaled_dot"} <= bleu.keys():
            text, verdict = compare("luong-scaled_dot", "luong-dot")
            detail = ""
            if "luong-dot" in entropy and "luong-scaled_dot" in entropy and verdict is not None:
                size = variants["luong-scaled_dot"]["greedy"]["model"]["hidden_size"]  # the keys' size
                ceiling = variants["luong-scaled_dot"]["greedy"]["alignment"].get("uniform_entropy")
                equal = f", {ceiling:.2f} for equal weights over every source position" if ceiling else ""
                detail = (f" Mean attention entropy: {entropy['luong-scaled_dot']:.2f} nats scaled vs "
                          f"{entropy['luong-dot']:.2f} unscaled{equal} — dividing tanh-bounded RNN states' dot "
                          f"products by √{size} = {math.sqrt(size):.3g} flattens the softmax.")
            lines.append(f"- scaled dot vs dot: {text}." + detail)
        if {"luong-general-local-p", "luong-general"} <= bleu.keys():
            text, verdict = compare("luong-general-local-p", "luong-general")
            lines.append(f"- local-p vs global (general): {text}" + ("" if verdict is None else
                         " — the paper's gain from local-p is "
                         f"**{'reproduced' if verdict == 1 else 'not reproduced'}** on this data") + ".")
        if "none" in bleu:
            apart = [v for v in bleu if v != "none" and trained_on.get(v) != trained_on.get("none")]
            others = [v for v in bleu if v != "none" and v not in apart]
            verdicts = {v: _compare(variants, refs, v, "none")[1] for v in others}
            beaten = [v for v in others if verdicts[v] == 1]
            unclear = [v for v in others if verdicts[v] != 1]
            say_who = beaten and (len(beaten) < len(others) or apart)
            named = f" ({', '.join(f'`{v}`' for v in beaten)})" if say_who else ""
            lines.append(f"- attention variants that beat `none` ({bleu['none']:.2f}) with a 95 % interval above 0: "
                         f"{len(beaten)}/{len(others)}{named}"
                         + (f"; not shown for {', '.join(f'`{v}`' for v in unclear)}" if unclear else "")
                         + (f"; not compared while the zoo is retrained (other data than `none`'s): "
                            f"{', '.join(f'`{v}`' for v in apart)}" if apart else "") + ".")
    return "\n".join(lines) + "\n"


LIVE_RECORDING = dict(task="reverse", min_len=5, max_len=12, steps=600)
"""The live-training run the report records (and the docs link to)."""


def figure_links(variants: dict[str, list[str]]) -> dict[str, str]:
    """For each published figure, the app query that reproduces it (``demo.links.app_query``).

    Args:
        variants: The bundled variants per task (alignment figures exist for those with attention).

    Returns:
        Figure file stem → query string, e.g. ``"alignment-couplet-luong-dot": "?tab=couplet&…"``.
    """
    from demo.ui import COMPARE_EXAMPLE, COUPLET_EXAMPLES  # the Compare tab's own defaults

    links = {f"live-reverse-{name}": app_query("live", **LIVE_RECORDING) for name in ("curves", "alignment")}
    longest = {"translation": COMPARE_EXAMPLE, "couplet": COUPLET_EXAMPLES[-1]}
    for key, (task, _) in TEST_SETS.items():
        links[f"bleu-by-length-{key}"] = app_query("compare", task=task, text=longest[task], a_variant="none",
                                                   b_variant=DEFAULT_VARIANT)
    for task, example in EXAMPLES.items():
        for variant in variants.get(task, []):
            if variant != "none":
                links[f"alignment-{task}-{variant}"] = app_query(task, text=example, variant=variant, beam=5)
    # the scaling study (benchmarks/couplet_scaling.py): the couplet tab's default model on its first example
    links["couplet_scaling"] = app_query("couplet", text=COUPLET_EXAMPLES[0], variant=DEFAULT_VARIANT, beam=5)
    links["couplet_capacity"] = links["couplet_scaling"]  # the capacity study (--study capacity): the same model
    return links


def write_figure_links(results: Path, registry: ModelRegistry) -> Path:
    """Write ``results/figures/app-links.json``, the app query of every published figure.

    The figures of [`figure_links`][reports.report.figure_links], the theory pages'
    (``reports.theory_figures.theory_figure_links``) and the Transformer page's
    (``reports.transformer_figures.transformer_figure_links``).
    """
    variants = {task: [v for _, v in registry.variants(task)] for task in registry.models}
    links = {**figure_links(variants), **theory_figure_links(), **transformer_figure_links()}
    path = results / "figures" / "app-links.json"
    atomic_write_text(path, json.dumps(links, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return path


def record_live(results: Path) -> list[Path]:
    """A recorded run of the live-training tab (reverse task): its curves and final alignment."""
    from demo.live import LiveSettings, train_live

    updates = list(train_live(LiveSettings(**LIVE_RECORDING, every=50)))
    last = updates[-1]
    paths = []
    for name, fig in (("curves", last.curves), ("alignment", last.heatmap)):
        stem = results / "figures" / f"live-reverse-{name}"
        write_figure(fig, stem)
        paths.append(stem.with_suffix(".png"))
    return paths


SAMPLE_SEED = 2026
"""Seed of the 30 test lines per set that a reader judges (``results/couplet_sample.md``, the same lines for every
candidate model: ``benchmarks/couplet_sample.py``)."""


def sample_index(size: int, n: int = 30, seed: int = SAMPLE_SEED) -> list[int]:
    """The seeded sample of test lines (0-based, in order) a reader judges."""
    import random

    return sorted(random.Random(seed).sample(range(size), min(n, size)))


def sample_table(report: dict, references: list[str], sources: list[str], n: int = 30, seed: int = SAMPLE_SEED) -> str:
    """``n`` random outputs of one evaluation report, unedited, as a Markdown table (seeded, so it is stable)."""
    index = sample_index(len(references), n, seed)
    rows = [f"| {k + 1} | {i + 1} | {sources[i]} | {report['outputs'][i]} | {references[i]} |"
            for k, i in enumerate(index)]
    return "| # | test line | 上联 | model 下联 | human 下联 |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"


def write_samples(results: Path, reports: dict, data: str | Path) -> list[Path]:
    """``results/couplet_sample.md``: 30 random test outputs of the default couplet model per test set."""
    parts = []
    for key in ("couplet", "couplet-poetry-test"):
        report = reports.get(key, {}).get(DEFAULT_VARIANT, {}).get("beam5")
        if not report or "outputs" not in report:
            continue
        task, name = TEST_SETS[key]
        pairs = load_splits(task, data).evaluation_sets()[name]
        if len(pairs) != len(report["outputs"]):
            continue
        parts.append(f"## {SET_TITLES[key]}\n\n" + sample_table(report, [t for _, t in pairs], [s for s, _ in pairs]))
    if not parts:
        return []
    text = (f"# 30 random test outputs of `couplet/{DEFAULT_VARIANT}` per test set\n\n"
            "Beam 5 with the default rules, exactly as `attention-lab zoo` produced them (seeded draw, unedited). "
            "Written by `python -m reports`.\n\n" + "\n".join(parts))
    path = results / "couplet_sample.md"
    atomic_write_text(path, text)
    return [path]


def training_data_of(models: Path, task: str, variants: list[str]) -> dict[str, str]:
    """Each variant's training data, from its model folder's config (variants without a folder are left out)."""
    found = {variant: folder_training_data(models / task / variant) for variant in variants}
    return {variant: data for variant, data in found.items() if data is not None}


def write_report(results: str | Path = "results", models: str | Path | None = None,
                 data: str | Path | None = None, retrain_toy: bool = False, tables_only: bool = False) -> list[Path]:
    """Write everything listed in the module docstring; returns the files written.

    ``retrain_toy`` measures the bottleneck figure's toy models again instead of reading
    ``results/theory_bottleneck.json`` ([`stored_bottleneck`][reports.theory_figures.stored_bottleneck]).
    ``tables_only`` writes the tables and the orderings page alone, from the evaluation reports (no figure, no
    model run): while the zoo is retrained model by model, the figures keep the models they were drawn from.
    """
    results = Path(results)
    reports = load_reports(results)
    test_sets = load_test_sets(data)
    references = {key: [t for _, t in pairs] for key, pairs in test_sets.items()}
    written: list[Path] = []
    trained_on = {key: training_data_of(Path(models) if models else BUNDLED, TEST_SETS.get(key, (key, "test"))[0],
                                        list(variants)) for key, variants in reports.items()}
    for key, variants in reports.items():
        rows, md = table(key, variants, references.get(key), trained_on[key])
        atomic_write_text(results / "tables" / f"{key}.json", json.dumps(rows, indent=2))
        atomic_write_text(results / "tables" / f"{key}.md", md)
        written += [results / "tables" / f"{key}.json", results / "tables" / f"{key}.md"]
        if tables_only:
            continue
        stem = results / "figures" / f"bleu-by-length-{key}"
        write_figure(length_figure(key, variants, pairs=test_sets.get(key)), stem)
        written.append(stem.with_suffix(".png"))
    atomic_write_text(results / "orderings.md", orderings(reports, references, trained_on))
    written.append(results / "orderings.md")
    if tables_only:
        return written
    written += write_samples(results, reports, data)
    written += record_live(results)
    registry = ModelRegistry.load(models, "cpu") if models else ModelRegistry.load(device="cpu")
    for task, example in EXAMPLES.items():
        for label, variant in registry.variants(task):
            translator = registry.get(task, variant)
            if not translator.model.has_attention:
                continue
            out = translator.translate([example], beam_size=5)[0]
            # as the app draws it: one row per word (subword pieces merged), the window band and p_t
            fig = heatmap_figure(sentence_state(out, translator.model, "config"), None, False,
                                 f"{label}: {out.text}")
            stem = results / "figures" / f"alignment-{task}-{variant}"
            write_figure(fig, stem)
            written.append(stem.with_suffix(".png"))
    written += write_theory_figures(results, registry, retrain_toy=retrain_toy)
    written += write_transformer_figures(results, registry, data)
    written.append(write_figure_links(results, registry))
    comparison = write_comparison(results, Path(models) if models else BUNDLED, reports, references)
    if comparison is not None:
        written.append(comparison)
    return written
