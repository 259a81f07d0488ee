"""What the reports and figures share: test-set titles, reading the zoo's reports, bootstrap lines, writing figures.

The tables ([`reports.report`][reports.report]), the theory and Transformer figures and the Transformer
comparison all use these, so none of them reaches into another's private helpers.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import plotly.graph_objects as go

from attention_core.analysis.metrics import paired_bootstrap
from attention_core.data.tasks import TASKS
from demo.models import VARIANT_LABELS

SET_TITLES = {
    "translation": "cmn-eng test (1,000 pairs)",
    "translation-tv4dialog-test": "tv4dialog test (1,203 utterances of 4 held-out episodes)",
    "couplet": "couplet test (3,834 modern couplets)",
    "couplet-poetry-test": "poetry-couplet test (2,487 classical line pairs)",
}


def bootstrap(a: dict, b: dict, references: list[str]) -> dict:
    """Paired bootstrap of two evaluation reports of the same test set (A − B), scored as their task scores."""
    tokenize = TASKS[a["task"]].bleu_tokenize
    return paired_bootstrap(a["outputs"], b["outputs"], references, tokenize, lowercase=True)


def interval(r: dict | None) -> str:
    """A bootstrap result as a table cell: ``+0.52 [+0.10, +0.95] better`` (``—`` for none)."""
    if not r:
        return "—"
    verdict = "better" if r["low"] > 0 else "worse" if r["high"] < 0 else "no clear difference"
    return f"{r['delta']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}] {verdict}"


def load_reports(results: Path) -> dict[str, dict[str, dict[str, dict]]]:
    """``{set: {variant: {decoding: report}}}`` from ``results/eval``."""
    out: dict = {}
    for path in sorted((results / "eval").glob("*--*--*.json")):
        task, variant, decoding = path.stem.split("--")
        out.setdefault(task, {}).setdefault(variant, {})[decoding] = json.loads(path.read_text("utf-8"))
    return out


def ordered(variants: dict) -> list[str]:
    """Variant names in the app's order (``VARIANT_LABELS``), any others after them, sorted."""
    return [v for v in VARIANT_LABELS if v in variants] + sorted(v for v in variants if v not in VARIANT_LABELS)


def write_figures(results: Path, figures: dict[str, go.Figure]) -> list[Path]:
    """Write ``results/figures/<stem>.html`` and ``.png`` for each ``{stem: figure}``; returns the PNG paths."""
    paths = []
    for stem, fig in figures.items():
        path = Path(results) / "figures" / stem
        write_figure(fig, path)
        paths.append(path.with_suffix(".png"))
    return paths


def write_figure(fig: go.Figure, stem: Path) -> None:
    """Write ``stem.html`` (plotly.js beside it, so it works offline) and ``stem.png`` (kaleido, when it can)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    # plotly.js is written once beside the figures: the pages work offline
    # auto_play=False: a figure with frames opens on the step its slider names, not animated to the last one
    fig.write_html(str(stem.with_suffix(".html")), include_plotlyjs="directory", full_html=True, auto_play=False)
    if Path("/usr/bin/chromium").exists():
        os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")
    try:
        fig.write_image(str(stem.with_suffix(".png")), width=900, height=fig.layout.height or 500, scale=1)
    except Exception as err:  # kaleido needs a Chrome/Chromium; the HTML figure is still written
        print(f"warning: no PNG for {stem.name} ({str(err).splitlines()[0]}); "
              "install chromium (apt-get install chromium) for PNG export", file=sys.stderr)
