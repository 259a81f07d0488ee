"""A table that repeats a figure's numbers in the docs shows the numbers the committed figure plots.

The bottleneck figure of "Why attention" (``results/figures/theory-bottleneck.html``) was rebuilt after its table was
written, and the table kept the old run's accuracies; a reader hovering over the figure saw other numbers than the
table under it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURE = ROOT / "results" / "figures" / "theory-bottleneck.html"


def plotted() -> dict[str, list[float]]:
    """Each trace of the bottleneck figure: its name and y values (plotly's JSON inside the HTML)."""
    html = FIGURE.read_text(encoding="utf-8")
    traces = {}
    for match in re.finditer(r'"name":"([^"]+)"[^{}]*?"y":(\[[^\]]*\])', html):
        traces[json.loads(f'"{match.group(1)}"')] = json.loads(match.group(2))
    return traces


@pytest.mark.parametrize("page", ["why.md", "why.en.md"])
def test_the_bottleneck_table_shows_the_figures_accuracies(page):
    text = (ROOT / "docs" / "theory" / page).read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and all(c.endswith("%") for c in cells[1:]):
            rows["no attention" if "no" in cells[0].lower() or "无" in cells[0] else "attention"] = [
                float(c[:-1]) for c in cells[1:]]
    traces = plotted()
    assert set(rows) == {"attention", "no attention"} and len(traces) == 2
    for name, ys in traces.items():
        row = rows["no attention" if name.lower().startswith("no attention") else "attention"]
        assert row == [round(100 * y, 1) for y in ys], f"{page}: {name} plots {ys}, the table shows {row}"


def test_the_stored_toy_accuracies_are_the_ones_the_figure_plots():
    """``python -m reports`` redraws the figure from ``results/theory_bottleneck.json``: the two must agree."""
    stored = json.loads((ROOT / "results" / "theory_bottleneck.json").read_text(encoding="utf-8"))["result"]
    for name, ys in plotted().items():
        key = "none" if name.lower().startswith("no attention") else "attention"
        assert ys == stored["accuracy"][key], f"{name}: the figure plots {ys}, the store {stored['accuracy'][key]}"
        assert f"{stored['steps'][key]} steps" in name
