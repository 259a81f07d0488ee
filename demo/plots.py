"""Plotly figures of an alignment: pure functions from tokens and weights to ``go.Figure``.

Axes are numeric positions with token tick labels, so repeated tokens (天天) stay separate
columns; every label is HTML-escaped because plotly renders a subset of HTML in text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

COLORSCALE = "Blues"


def _labels(tokens: Sequence[str]) -> list[str]:
    return [html.escape(t) for t in tokens]


def alignment_figure(
    source: Sequence[str],
    output: Sequence[str],
    weights: Sequence[Sequence[float]],
    window: int | None = None,
    centres: Sequence[float] | None = None,
    predicted: bool = False,
    title: str = "",
    highlight: int | None = None,
) -> go.Figure:
    """Heatmap of attention weights: source tokens on x, generated tokens on y.

    Args:
        source: Source tokens (columns).
        output: Generated tokens (rows), ``<eos>`` included if it was generated.
        weights: ``len(output) × len(source)`` weights.
        window: Local window half-width ``D``; drawn as a band around each row's centre.
        centres: Window centre ``p_t`` of each row.
        predicted: The centres were predicted (local-p): also draw them as markers.
        title: Figure title.
        highlight: Row to outline (the current step when stepping through the decoding).

    Returns:
        The figure.
    """
    xs, ys = _labels(source), _labels(output)
    hover = [
        [f"source {j + 1}: {xs[j]}<br>output {i + 1}: {ys[i]}<br>weight: {w:.3f}" for j, w in enumerate(row)]
        for i, row in enumerate(weights)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=[list(row) for row in weights],
            x=list(range(len(xs))),
            y=list(range(len(ys))),
            zmin=0.0,
            zmax=1.0,
            colorscale=COLORSCALE,
            text=hover,
            hoverinfo="text",
            colorbar=dict(title="weight", thickness=12),
        )
    )
    if window is not None and centres is not None:
        for i, c in enumerate(centres):
            fig.add_shape(type="rect", x0=c - window - 0.5, x1=c + window + 0.5, y0=i - 0.5, y1=i + 0.5,
                          line=dict(color="orange", width=1, dash="dot"), fillcolor="rgba(0,0,0,0)")
        if predicted:
            fig.add_trace(go.Scatter(
                x=list(centres), y=list(range(len(centres))), mode="markers", name="p_t (local-p centre)",
                marker=dict(symbol="x", size=9, color="crimson"),
                hovertemplate="p_t = %{x:.2f}<extra></extra>",
            ))
    if highlight is not None and 0 <= highlight < len(ys):
        fig.add_shape(type="rect", x0=-0.5, x1=len(xs) - 0.5, y0=highlight - 0.5, y1=highlight + 0.5,
                      line=dict(color="crimson", width=2))
    fig.update_layout(
        title=dict(text=title, y=0.98, yanchor="top", x=0.5, xanchor="center"),  # clear of Gradio's label badge
        xaxis=dict(tickmode="array", tickvals=list(range(len(xs))), ticktext=xs, side="top",
                   title="source 源", range=[-0.5, len(xs) - 0.5]),
        yaxis=dict(tickmode="array", tickvals=list(range(len(ys))), ticktext=ys, autorange="reversed",
                   title="output 输出"),
        margin=dict(l=60, r=20, t=120, b=20),
        height=max(340, 28 * len(ys) + 180),
        showlegend=bool(predicted and centres is not None),
        legend=dict(orientation="h", y=-0.05),
        font=dict(family="Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"),
    )
    return fig


def step_figure(source: Sequence[str], output: Sequence[str], weights: Sequence[Sequence[float]],
                step: int) -> go.Figure:
    """Bar chart of one decoding step: how much each source token weighs for output token ``step``.

    Args:
        source: Source tokens.
        output: Generated tokens.
        weights: ``len(output) × len(source)`` weights.
        step: Row to show (0-based, clamped into range).

    Returns:
        The figure.
    """
    xs = _labels(source)
    if not output:
        return go.Figure()
    step = max(0, min(step, len(output) - 1))
    row = list(weights[step])
    fig = go.Figure(go.Bar(
        x=list(range(len(xs))), y=row, marker_color="steelblue",
        hovertext=[f"{x}: {w:.3f}" for x, w in zip(xs, row)], hoverinfo="text",
    ))
    done = " ".join(_labels(output[:step]))
    fig.update_layout(
        title=dict(text=f"step {step + 1}/{len(output)}: {done} <b>[{html.escape(output[step])}]</b>", x=0.5,
                   xanchor="center"),
        xaxis=dict(tickmode="array", tickvals=list(range(len(xs))), ticktext=xs),
        yaxis=dict(range=[0, 1], title="weight"),
        height=280,
        margin=dict(l=50, r=20, t=60, b=30),
        font=dict(family="Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, sans-serif"),
    )
    return fig


def message_figure(text: str) -> go.Figure:
    """An empty figure carrying a message (e.g. "the baseline has no attention")."""
    fig = go.Figure()
    fig.add_annotation(text=html.escape(text), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=15))
    fig.update_layout(xaxis=dict(visible=False), yaxis=dict(visible=False), height=260,
                      margin=dict(l=20, r=20, t=20, b=20))
    return fig
