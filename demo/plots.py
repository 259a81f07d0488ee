"""Plotly figures of an alignment: pure functions from tokens and weights to ``go.Figure``.

Axes are numeric positions with token tick labels, so repeated tokens (天天) stay separate
columns; every label is HTML-escaped because plotly renders a subset of HTML in text. A source in a
right-to-left script (``rtl=True``) is drawn right to left: its first token is the rightmost column.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence

import plotly.graph_objects as go

FONT = dict(family="Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif")
"""The CJK font family of every figure, in the app and in the reports."""

COLORSCALE = "Blues"


LABELS_AT_FULL_SIZE = 30
"""Up to this many tick labels on an axis are drawn at full size, horizontal; beyond it they shrink and
turn (multi-character tokens), and beyond ``MAX_LABELS`` only every k-th is written (hover shows all)."""
MAX_LABELS = 60


def _labels(tokens: Sequence[str]) -> list[str]:
    return [html.escape(t) for t in tokens]


def _notes(notes: Sequence[str] | None, n: int) -> list[str]:
    """Hover lines for ``n`` labels: ``" (note)"`` escaped, or ``""`` where there is none."""
    notes = list(notes or [])[:n]
    return [f" ({html.escape(note)})" if note else "" for note in notes] + [""] * (n - len(notes))


def _ticks(labels: Sequence[str]) -> dict:
    """Tick settings that stay readable at any length: smaller, rotated, then thinned labels."""
    n = len(labels)
    every = max(1, -(-n // MAX_LABELS))  # ceil(n / MAX_LABELS)
    values = list(range(0, n, every))
    ticks = dict(tickmode="array", tickvals=values, ticktext=[labels[i] for i in values])
    if n > LABELS_AT_FULL_SIZE:
        ticks["tickfont"] = dict(size=max(9, 14 - (n - LABELS_AT_FULL_SIZE) // 6))
        if max((len(t) for t in labels), default=1) > 1:
            ticks["tickangle"] = -60
    if max((len(html.unescape(t)) for t in labels), default=2) == 1:
        ticks["tickangle"] = 0  # characters stand upright: plotly turned crowded ones sideways (the app thins them)
    return ticks


def _x_range(n: int, rtl: bool) -> list[float]:
    """The x range of ``n`` source positions: left to right, or right to left for an ``rtl`` script."""
    return [n - 0.5, -0.5] if rtl else [-0.5, n - 0.5]


def alignment_figure(  # noqa: PLR0913 — to do: the figure's options into one value (issue #55)
    source: Sequence[str],
    output: Sequence[str],
    weights: Sequence[Sequence[float]],
    window: int | None = None,
    centres: Sequence[float] | None = None,
    predicted: bool = False,
    title: str = "",
    highlight: int | None = None,
    x_title: str = "source 源",
    y_title: str = "output 输出",
    rtl: bool = False,
    value: str = "weight",
    x_notes: Sequence[str] | None = None,
    y_notes: Sequence[str] | None = None,
    subtitle: str = "",
    bands: Sequence[tuple[float, float]] | None = None,
    inserted: Sequence[tuple[int, str, str]] = (),
) -> go.Figure:
    """Heatmap of attention weights: source tokens on x, generated tokens on y (or any keys × queries).

    Args:
        source: Source tokens (columns).
        output: Generated tokens (rows), ``<eos>`` included if it was generated.
        weights: ``len(output) × len(source)`` weights.
        window: Local window half-width ``D``; drawn as a band around each row's centre.
        centres: Window centre ``p_t`` of each row.
        predicted: The centres were predicted (local-p): also draw them as markers.
        title: Figure title; one with a [`second_line`][demo.plots.second_line] is padded at the top.
        highlight: Row to outline (the current step when stepping through the decoding).
        x_title: Title of the x axis (the keys attended to), also used in the hover text.
        y_title: Title of the y axis (the queries, one per row).
        rtl: The source runs right to left (Arabic, Hebrew …): the x axis starts on the right.
        value: What a cell holds, for the hover text and the colour bar (``weight``; ``importance`` for gradients).
        x_notes: A line of hover text per column (``""``: none), e.g. the stand-in the model read for a name typed.
        y_notes: A line of hover text per row.
        subtitle: A smaller line under the title; the title and it reserve their own room above the axis title and
            the tick labels, however those turn.
        bands: Each row's window edges ``(left, right)`` on the x axis, instead of its centre ± ``window`` (columns
            drawn merged: a name typed shorter than the stand-in the model read).
        inserted: Rows the model did not write, ``(row they come before, label, note)``: drawn empty, shaded and
            marked, their note in the hover text (a name placed by attention where the model left its stand-in out).

    Returns:
        The figure.
    """
    xs, ys = _labels(source), _labels(output)
    x_name, y_name = x_title.split()[0], y_title.split()[0]
    x_more, y_more = _notes(x_notes, len(xs)), _notes(y_notes, len(ys))
    hover = [
        [f"{x_name} {j + 1}: {xs[j]}{x_more[j]}<br>{y_name} {i + 1}: {ys[i]}{y_more[i]}<br>{value}: {w:.3f}"
         for j, w in enumerate(row)]
        for i, row in enumerate(weights)
    ]
    z = [list(row) for row in weights]
    if inserted:  # rows of their own, empty; every other row moves down past those before it
        drawn = [i + sum(at <= i for at, _, _ in inserted) for i in range(len(ys))]
        hover = with_rows(hover, inserted, lambda label, note: [
            f"{y_name}: {html.escape(label)} ({html.escape(note)})<br>{value}: none 无"] * len(xs))
        z = with_rows(z, inserted, lambda label, note: [None] * len(xs))
        ys = with_rows(ys, inserted, lambda label, note: html.escape(label))
        centres = None if centres is None else with_rows(list(centres), inserted, None)
        bands = None if bands is None else with_rows(list(bands), inserted, None)
        highlight = None if highlight is None or not 0 <= highlight < len(drawn) else drawn[highlight]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(len(xs))),
            y=list(range(len(ys))),
            zmin=0.0,
            zmax=1.0,
            colorscale=COLORSCALE,
            text=hover,
            hoverinfo="text",
            # beside the bar (clear of its "1"), small: on a phone the bar took a quarter of the width
            colorbar=dict(title=dict(text=value, side="right", font=dict(size=11)), thickness=10,
                          tickfont=dict(size=10), xpad=4),
        )
    )
    banded = window is not None and centres is not None
    if banded:
        _draw_window(fig, window, centres, bands, predicted)
    _draw_inserted(fig, inserted, len(xs))
    if highlight is not None and 0 <= highlight < len(ys):
        fig.add_shape(type="rect", x0=-0.5, x1=len(xs) - 0.5, y0=highlight - 0.5, y1=highlight + 0.5,
                      line=dict(color="crimson", width=2))
    fig.update_layout(
        title=_title(title, subtitle),
        xaxis=dict(side="top", title=x_title, range=_x_range(len(xs), rtl), automargin=True, **_ticks(xs)),
        yaxis=dict(autorange="reversed", title=y_title, **_ticks(ys)),
        margin=dict(l=60, r=20, b=20,
                    t=TOP + MORE_LINE * title.count("<br>", title.find(SECOND_LINE) + 4) if SECOND_LINE in title
                    else TOP_PUSHED),
        height=max(340, 28 * len(ys) + 180),
        showlegend=banded,
        legend=dict(orientation="h", y=-0.02, yanchor="top", x=0.5, xanchor="center"),
        font=FONT,
    )
    return fig


def _draw_window(fig: go.Figure, window: int, centres: Sequence[float | None],
                 bands: Sequence[tuple[float, float] | None] | None, predicted: bool) -> None:
    """Each row's window as a dotted box (``bands``, else centre ± ``window``), named in the legend.

    Local-p's predicted centres are drawn as crosses too.
    """
    edges = bands or [None if c is None else (c - window - 0.5, c + window + 0.5) for c in centres]
    for i, edge in enumerate(edges):
        if edge is not None:
            fig.add_shape(type="rect", x0=edge[0], x1=edge[1], y0=i - 0.5, y1=i + 0.5,
                          line=dict(color="orange", width=1, dash="dot"), fillcolor="rgba(0,0,0,0)")
    # shapes have no legend entry: an invisible line in the band's style names it
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=f"window 窗口 p_t ± {window}",
                             line=dict(color="orange", width=2, dash="dot"), hoverinfo="skip"))
    if predicted:
        rows = [i for i, c in enumerate(centres) if c is not None]
        fig.add_trace(go.Scatter(
            x=[centres[i] for i in rows], y=rows, mode="markers", name="p_t (local-p centre)",
            marker=dict(symbol="x", size=9, color="crimson"),
            hovertemplate="p_t = %{x:.2f}<extra></extra>",
        ))


def _draw_inserted(fig: go.Figure, inserted: Sequence[tuple[int, str, str]], columns: int) -> None:
    """Shade and mark the rows the model did not write (see ``alignment_figure``'s ``inserted``)."""
    for k, (at, _, _) in enumerate(sorted(inserted, key=lambda entry: entry[0])):
        fig.add_shape(type="rect", x0=-0.5, x1=columns - 0.5, y0=at + k - 0.5, y1=at + k + 0.5,
                      line=dict(width=0), fillcolor=INSERTED_FILL)  # above the grid that shows through
        fig.add_annotation(text=INSERTED, x=0.5, xref="paper", y=at + k, yref="y", showarrow=False,
                           font=dict(size=11, color="dimgray"))


INSERTED = "inserted 插入 (hover)"
"""What an inserted row says across its cells (``inserted`` of [`alignment_figure`][demo.plots.alignment_figure])."""
INSERTED_FILL = "rgb(232,232,232)"


def with_rows(values: Sequence, inserted: Sequence[tuple[int, str, str]], fill: object) -> list:
    """``values`` (one a row) with a value for each inserted row ``(row it comes before, label, note)``.

    ``fill`` is the value, or a function of the label and note that makes it. Rows inserted before the same row
    keep their order.

    >>> with_rows(["my", "friend", "lives"], [(2, "Zhang Wei", ""), (0, "Tom", ""), (2, "Li Na", "")],
    ...           lambda label, note: label)
    ['Tom', 'my', 'friend', 'Zhang Wei', 'Li Na', 'lives']
    """
    out = list(values)
    for _, (at, label, note) in sorted(enumerate(inserted), key=lambda entry: (entry[1][0], entry[0]), reverse=True):
        out.insert(at, fill(label, note) if callable(fill) else fill)  # from the last: the places before stay
    return out


TOP = 120
"""The top margin (px) of a heatmap whose title holds a [`second_line`][demo.plots.second_line]: title, axis title
and tick labels (the x axis is on top)."""
MORE_LINE = 20
"""The room (px) each more line of a title's [`second_line`][demo.plots.second_line] takes (12 px type; at 17 px a title
of four smaller lines ran into the axis title: the Transformer's map with pieces merged and a stand-in read)."""
TOP_PUSHED = 20
"""The top margin a heatmap starts from when its title pushes the margin itself (plotly's ``automargin``)."""


def _title(title: str, subtitle: str = "") -> dict:
    """A heatmap's title: centred at the top, clear of Gradio's label badge.

    Plain or with a ``subtitle``, the title reserves its own room above the axis title and tick labels
    (``yref="container"``, ``automargin``): a half-width panel turns long tick labels upright, and they pushed the
    axis title into a fixed margin's title (the Transformer's decoder self-attention). A title holding a
    [`second_line`][demo.plots.second_line] keeps the fixed margin ``TOP`` and a top pad (plotly's automargin lays
    out a title with a line break wrongly).
    """
    placed = dict(text=title, y=0.98, yanchor="top", x=0.5, xanchor="center")
    if SECOND_LINE in title:
        return {**placed, "pad": dict(t=SECOND_LINE_PAD)}
    pushed = {**placed, "yref": "container", "automargin": True, "pad": dict(b=8)}
    return {**pushed, "subtitle": dict(text=subtitle, font=dict(size=12))} if subtitle else pushed


STEP_WORDS = 24
"""The most columns of the words written before a step that its bars' title shows (the last ones, after "…")."""


def step_figure(source: Sequence[str], output: Sequence[str], weights: Sequence[Sequence[float]],
                step: int, rtl: bool = False, notes: Sequence[str] | None = None) -> go.Figure:
    """Bar chart of one decoding step: how much each source token weighs for output token ``step``.

    Args:
        source: Source tokens.
        output: Generated tokens.
        weights: ``len(output) × len(source)`` weights.
        step: Row to show (0-based, clamped into range).
        rtl: The source runs right to left: its first token is the rightmost bar.
        notes: A line of hover text per source token (``""``: none).

    Returns:
        The figure.
    """
    xs = _labels(source)
    if not output:
        return go.Figure()
    step = max(0, min(step, len(output) - 1))
    row = list(weights[step])
    more = _notes(notes, len(xs))
    fig = go.Figure(go.Bar(
        x=list(range(len(xs))), y=row, marker_color="steelblue",
        hovertext=[f"{x}{note}: {w:.3f}" for x, note, w in zip(xs, more, row)], hoverinfo="text",
    ))
    done = list(output[:step])
    while len(done) > 1 and text_width(" ".join(done)) > STEP_WORDS:  # a long sentence's title ran past the edges
        done = done[1:]
    done = ("… " if len(done) < step else "") + " ".join(_labels(done))
    fig.update_layout(
        title=dict(text=f"step {step + 1}/{len(output)}: {done} <b>[{html.escape(output[step])}]</b>", x=0.5,
                   xanchor="center"),
        xaxis=dict(autorange="reversed", **_ticks(xs)) if rtl else _ticks(xs),
        yaxis=dict(range=[0, 1], title="weight"),
        height=280,
        margin=dict(l=50, r=20, t=60, b=30),
        font=FONT,
    )
    return fig


SECOND_LINE = "<br><span style='font-size:12px'>"
"""How [`second_line`][demo.plots.second_line] starts: a title holding it gets a top pad."""

SECOND_LINE_PAD = 18
"""The title's top pad (px) when it has a second line: the first line stays inside the figure."""


SUBTITLE_COLUMNS = 52
"""The widest line of a title's smaller lines (12 px), in columns (a Chinese character takes two): a phone's width."""


def second_line(text: str, columns: int = SUBTITLE_COLUMNS) -> str:
    """A figure title's smaller second line, broken into lines a phone shows whole (a long line was cut at both ends).

    Parts joined by `` · `` stay whole where they fit, so a line breaks between them. Plotly does not wrap a title.
    [`alignment_figure`][demo.plots.alignment_figure] pads a title holding one so its first line stays inside, and
    makes room for each more line.

    >>> second_line("layer 层 2/2 · mean of 4 heads 平均 · names as typed 按输入显示", 40)[len(SECOND_LINE):]
    'layer 层 2/2 · mean of 4 heads 平均<br>names as typed 按输入显示</span>'
    """
    rows: list[str] = []
    for part in text.split(" · "):
        if rows and text_width(rows[-1]) + 3 + text_width(part) <= columns:
            rows[-1] += " · " + part
        else:
            rows += line_breaks(part, columns)
    return f"{SECOND_LINE}{'<br>'.join(rows)}</span>"


def text_width(text: str) -> int:
    """How many columns ``text`` takes: a Chinese (wide) character two, any other one."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def line_breaks(text: str, columns: int) -> list[str]:
    """``text`` in lines of at most ``columns`` ([`text_width`][demo.plots.text_width]), broken at spaces.

    A word wider than a line stays whole on its own line.

    >>> line_breaks("the baseline has no attention: nothing to align", 20)
    ['the baseline has no', 'attention: nothing', 'to align']
    """
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(lines[-1]) + 1 + text_width(word) <= columns:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


MESSAGE_COLUMNS = 44
"""The widest line of a figure's message, in columns (a Chinese character takes two): a phone's width."""


def wrapped(text: str, columns: int = MESSAGE_COLUMNS) -> str:
    """``text`` HTML-escaped and broken into lines (``<br>``) of at most ``columns``, at spaces.

    Plotly does not wrap an annotation: a long message was cut at both ends on a phone. A word wider than a line
    stays whole on its own line.

    >>> wrapped("the baseline has no attention: nothing to align", 20)
    'the baseline has no<br>attention: nothing<br>to align'
    """
    return "<br>".join(html.escape(line) for line in line_breaks(text, columns))


def message_figure(text: str) -> go.Figure:
    """An empty figure carrying a message (e.g. "the baseline has no attention"), wrapped to a phone's width."""
    fig = go.Figure()
    fig.add_annotation(text=wrapped(text), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=15))
    fig.update_layout(xaxis=dict(visible=False), yaxis=dict(visible=False), height=260,
                      margin=dict(l=20, r=20, t=20, b=20))
    return fig


def entropy_figure(rows: dict[str, tuple[Sequence[str], Sequence[Sequence[float]]]], sources: int,
                   title: str = "") -> go.Figure:
    """How spread out each output step's attention is, for several alignments of the same source.

    The entropy of a row, ``−Σ_j α_tj log α_tj`` (nats), is 0 when all weight is on one source
    position (hard attention) and ``log S`` when the weight is uniform over the ``S`` source positions
    (no information about where to look); the dashed line marks that maximum.

    Args:
        rows: Per name (e.g. ``"A: luong-dot"``), the output tokens and their weights ``T × S``.
        sources: ``S``, the number of source positions.
        title: Figure title.

    Returns:
        The figure: one line per alignment over the output steps.
    """
    fig = go.Figure()
    longest = 1
    for name, (output, weights) in rows.items():
        entropies = [-sum(w * math.log(w) for w in row if w > 0) for row in weights]
        longest = max(longest, len(entropies))
        fig.add_trace(go.Scatter(
            x=list(range(1, len(entropies) + 1)), y=entropies, mode="lines+markers", name=html.escape(name),
            text=_labels(output), hovertemplate="step %{x}: %{text}<br>entropy %{y:.2f} nats<extra></extra>",
        ))
    top = math.log(max(sources, 1))
    fig.add_trace(go.Scatter(x=[1, longest], y=[top, top], mode="lines", name=f"uniform 均匀 (log {sources})",
                             line=dict(color="grey", dash="dash"), hoverinfo="skip"))
    fig.update_layout(
        title=dict(text=title, x=0.5, xanchor="center"),
        xaxis=dict(title="output step 输出步", range=[0.5, longest + 0.5]),  # no "0" on "0" at the corner
        yaxis=dict(title="entropy 熵 (nats)", range=[0, top * 1.08 + 0.05]),
        height=340, margin=dict(l=60, r=20, t=60, b=20),
        # under the plot, in the figure's own room: on a phone its lines wrap, and they ran into the axis title
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0.5, xanchor="center"),
        font=FONT,
    )
    return fig


COVERAGE_HEIGHT = 0.16
"""The share of a heatmap's height that its coverage row takes (see [`add_coverage`][demo.plots.add_coverage])."""
FLAGGED = "crimson"


def add_coverage(fig: go.Figure, source: Sequence[str], coverage: Sequence[float], flagged: Sequence[int] = (),
                 threshold: float | None = None) -> go.Figure:
    """Put each source token's coverage under an alignment heatmap, as bars on the heatmap's own x axis.

    Coverage is the total attention a source token received (``Output.coverage``). The bars share the heatmap's
    x axis, so each stands exactly under its column (right to left too); tokens of words flagged as possibly
    untranslated are drawn in red and marked ``⚠``.

    Args:
        fig: A figure from [`alignment_figure`][demo.plots.alignment_figure].
        source: The source tokens (its columns).
        coverage: ``(S,)`` coverage per source token.
        flagged: Positions of the source tokens of flagged words.
        threshold: The flag's threshold (on a word's summed coverage), named in the hover text.

    Returns:
        The same figure, taller, with the bars in a lower panel.
    """
    xs = _labels(source)
    flagged = set(flagged)
    top = max([1.0, *coverage])
    rule = f" (a flagged word's total is below {threshold:g})" if threshold is not None else ""
    fig.add_trace(go.Bar(
        x=list(range(len(xs))), y=list(coverage), xaxis="x", yaxis="y2", name="coverage 覆盖度",
        marker_color=[FLAGGED if j in flagged else "slategray" for j in range(len(xs))],
        text=["⚠" if j in flagged else "" for j in range(len(xs))], textposition="outside",
        textfont=dict(color=FLAGGED), cliponaxis=False, showlegend=False,
        hovertext=[f"{x}: coverage {c:.2f}" + (f"<br>possibly untranslated 可能漏译{rule}" if j in flagged else "")
                   for j, (x, c) in enumerate(zip(xs, coverage))],
        hoverinfo="text",
    ))
    height = fig.layout.height or 400
    grown = int(height / (1 - COVERAGE_HEIGHT - 0.04))
    fig.update_layout(
        height=grown,
        yaxis=dict(domain=[COVERAGE_HEIGHT + 0.04, 1.0]),
        yaxis2=dict(domain=[0.0, COVERAGE_HEIGHT], anchor="x", range=[0, top * 1.3], title="coverage<br>覆盖度",
                    title_font=dict(size=11), tickfont=dict(size=9), nticks=3),
    )
    fig.update_traces(colorbar=dict(len=1 - COVERAGE_HEIGHT - 0.04, y=1.0, yanchor="top"),
                      selector=dict(type="heatmap"))
    return fig


def add_row_notes(fig: go.Figure, notes: Sequence[str], heading: str) -> go.Figure:
    """Write a short note beside each heatmap row, in a column right of the plot (e.g. Kendall's τ per row).

    Args:
        fig: A figure from [`alignment_figure`][demo.plots.alignment_figure] (rows on its y axis).
        notes: One text per row.
        heading: The column's heading, above the first row.
    """
    for i, note in enumerate(notes):
        fig.add_annotation(text=html.escape(note), x=1.0, xref="paper", xanchor="left", xshift=6, y=i, yref="y",
                           showarrow=False, font=dict(size=11))
    fig.add_annotation(text=heading, x=1.0, xref="paper", xanchor="left", xshift=6, y=-0.5, yref="y",
                       yanchor="bottom", showarrow=False, font=dict(size=11))
    right = fig.layout.margin.r or 20
    fig.update_layout(margin=dict(r=right + 60))
    fig.update_traces(colorbar=dict(x=1.0, xpad=70), selector=dict(type="heatmap"))
    return fig


LINK_MARKS = {
    "hit (sure) 命中": dict(symbol="circle", size=11, color="limegreen", line=dict(color="darkgreen", width=1.5)),
    "hit (possible) 命中可能": dict(symbol="circle-open", size=11, color="limegreen", line=dict(width=2.5)),
    "miss (sure) 漏掉": dict(symbol="square-open", size=14, color="darkorange", line=dict(width=3)),
    "possible, not linked 可能未连": dict(symbol="square-open", size=11, color="gray", line=dict(width=1.5)),
    "extra 多余": dict(symbol="x", size=10, color=FLAGGED, line=dict(width=1)),
}
"""How each kind of link is drawn over a gold sentence's attention; the keys are the legend's words, in the order
[`link_marks`][demo.handlers.link_marks] sorts the links into."""


def gold_figure(source: Sequence[str], target: Sequence[str], weights: Sequence[Sequence[float]],
                marks: dict[str, Sequence[tuple[int, int]]], title: str = "") -> go.Figure:
    """A force-decoded gold sentence's attention with the human and the model's links drawn over it.

    Args:
        source: The gold source words (columns).
        target: The gold target words (rows).
        weights: ``len(target) × len(source)`` pooled attention.
        marks: Per legend entry (a key of [`LINK_MARKS`][demo.plots.LINK_MARKS]), links ``(source, target)``.
        title: Figure title.
    """
    fig = alignment_figure(source, target, weights, title=title, x_title="source 源 (gold words 人工分词)",
                           y_title="gold English 人工译文")
    for name, links in marks.items():
        links = sorted(links)
        fig.add_trace(go.Scatter(
            x=[i for i, _ in links], y=[j for _, j in links], mode="markers", name=f"{name} ({len(links)})",
            marker=LINK_MARKS[name], hoverinfo="skip",
        ))
    # the markers would pad the axes and draw a grid over the cells; long English reads best unrotated
    fig.update_xaxes(showgrid=False, zeroline=False)
    fig.update_yaxes(showgrid=False, zeroline=False, autorange=None, range=[len(target) - 0.5, -0.5], tickangle=0)
    if len(source) > LABELS_AT_FULL_SIZE:  # turned source labels: room between them and the title
        fig.update_layout(margin=dict(t=170))
    return fig.update_layout(showlegend=True, legend=dict(orientation="h", y=-0.02, yanchor="top", x=0.5,
                                                          xanchor="center"))
