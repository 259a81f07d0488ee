"""Figures for the theory pages: each one is made from the bundled models and backs one page's claims.

One function per figure; [`write_theory_figures`][reports.theory_figures.write_theory_figures] writes them
all as ``results/figures/theory-<name>.html`` and ``.png``, and
[`theory_figure_links`][reports.theory_figures.theory_figure_links] gives, for each, the app query that opens
the app on the same input and settings (the docs put an "open in the app" link under every figure).

| figure | page | what it shows |
|---|---|---|
| ``theory-steps`` | steps | one sentence step by step: scores → softmax → the context's terms → next token |
| ``theory-tiny-steps`` | steps | 4-dimensional toy states as numbered cells: score → softmax → weighted sum |
| ``theory-scores`` | scores | dot vs scaled dot on the same sentence, with each one's mean row entropy |
| ``theory-qkv`` | qkv | the same queries and keys with the learned ``W_a`` and with ``W_a = I`` |
| ``theory-bahdanau-luong`` | bahdanau-luong | Bahdanau vs Luong (both concat) on the same sentence |
| ``theory-local-p`` | local | local-p's window band and predicted centres ``p_t`` |
| ``theory-soft-hard`` | local | soft vs hard attention of the same model and sentence |
| ``theory-masking`` | masking | two sentences in one padded batch: the short one's weights on ``<pad>`` are exactly 0 |
| ``theory-greedy-beam`` | decoding | greedy vs beam 5 on the same sentence |
| ``theory-couplet-rules`` | decoding | a couplet with and without the reader's rules |
| ``theory-transformer`` | transformer | the couplet model's scores and weights: one cross-attention head |
| ``theory-positions`` | transformer | the Transformer's sinusoidal position table; two positions' dot products |
| ``theory-causal-mask`` | transformer | the decoder's causal mask beside one self-attention head: 0 above it |
| ``theory-bottleneck`` | why | toy reverse task: token accuracy by length, attention vs none |
| ``theory-alignment`` | alignment | a human-aligned sentence: forced attention, gold links, hits/misses, AER |
| ``theory-gradient`` | alignment | attention beside input × gradient importance, Kendall's τ per output token |

The raw scores ``e_t = score(h_t, h̄_s)`` are not part of a decoder step's output, so
[`replay`][reports.theory_figures.replay] feeds a decoded output back through ``Seq2Seq.step`` (the same
step greedy and beam search call), records each step's query with a forward pre-hook on the decoder's
attention module, and recomputes the scores with the model's own score function. The Transformer's figures
take the position table from ``sinusoidal_positions`` and the causal mask from the decoder's own self-attention
call (a pre-hook again); the toy step-through calls the library's score module and ``attention()`` on seeded
4-dimensional vectors.
"""

from __future__ import annotations

import html
import json
import math
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from torch import Tensor

from attention_core.analysis.alignment import Gold, argmax_links, evaluate_links, force_decode, read_gold
from attention_core.analysis.attribution import input_x_gradient
from attention_core.analysis.metrics import attention_entropy, diagonality
from attention_core.data.atomic import atomic_write_text
from attention_core.data.batch import make_batch
from attention_core.data.corpora import data_home
from attention_core.data.toy import sample_batch
from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.translator import Output, Translator
from attention_core.model.attention import attention
from attention_core.model.scores import build_score
from attention_core.model.seq2seq import WindowArg
from attention_core.model.transformer import Transformer, sinusoidal_positions
from demo.handlers import heatmap_figure, link_marks, sentence_state
from demo.links import app_query
from demo.models import DEFAULT_VARIANT, ModelRegistry
from demo.plots import COLORSCALE, FONT, alignment_figure, gold_figure
from reports.common import write_figures

STEPS_TEXT = "我们每天早上七点吃早饭。"
"""Step-through and query/key input: the default model reorders it (… at seven every morning)."""
SAME_OUTPUT_TEXT = "我的猫喜欢睡在沙发上。"
"""Score and decoder comparisons: a sentence the compared variants translate alike (the models retrained in issue #51
differ in one verb form: *likes to sleep* / *likes sleeping*), so their attention can be set side by side."""
LONG_TEXT = "如果明天下雨，我们就不去爬山了。"
"""Local attention and decoding input (16 characters: the window visibly moves)."""
SHORT_TEXT = "请把门关上。"
"""The short sentence of the padded batch (the long one is ``STEPS_TEXT``; the app batches the sentences of
one input, so the link gives it both)."""
COUPLET_RULES_TEXT = "风声雨声读书声声声入耳"
COUPLET_TEXT = "两个黄鹂鸣翠柳"
BOTTLENECK = dict(task="reverse", min_len=5, max_len=30, steps=1200)
"""The live-tab settings of the bottleneck curve (both models; only ``attention`` differs)."""
BUCKETS = ((5, 9), (10, 14), (15, 19), (20, 24), (25, 30))
"""Length buckets of the bottleneck curve (inclusive)."""
BOTTLENECK_TESTS = 200
"""Test sequences per length bucket of the bottleneck curve."""
BOTTLENECK_SEED = 7
"""Seed of the bottleneck curve's test sequences."""
BOTTLENECK_STORE = "theory_bottleneck.json"
"""The bottleneck curve's measured accuracies in ``results/`` with the settings they were measured at: the figure
depends on no bundled model, so ``python -m reports`` retrains the two toy models only when the settings change or
``--retrain-toy`` asks."""
LOCAL_P = "luong-general-local-p"
TRANSFORMER_VARIANT = "transformer"
"""The zoo variant name of the Transformer (``models/<task>/transformer/``)."""
TRANSFORMER_BEAM = 5
"""Beam of the Transformer's example figures (the app's default)."""
CAUSAL_VIEW = (1, 3)
"""Layer and head (1-based) of the causal-mask figure: the bundled translation Transformer's most spread decoder
self-attention head on ``STEPS_TEXT`` (highest mean row entropy), so the allowed lower triangle is visibly filled."""
POSITIONS = 50
"""Positions in the position-table figure (the zoo's longest training sentence)."""
POSITION_QUERIES = (10, 30)
"""Positions whose dot product with every other position the position figure draws."""
TINY = dict(states=4, size=4, seed=3, score="dot")
"""The toy step-through: ``states`` encoder states of ``size`` dimensions, drawn with ``seed``, scored by ``score``."""
ALIGNMENT_SET = "denero"
"""The gold set of the alignment figure (``attention_core.analysis.alignment.GOLD_SETS``)."""
ALIGNMENT_TEXT = "当晚,他向沙龙通报了与阿拉法特会谈的情况。"
"""The gold sentence of the alignment figure (DeNero #74, its Chinese words joined): short, with a reordering
(向 沙龙 通报 → *briefed Sharon*) and two names (沙龙 Sharon, 阿拉法特 Arafat) that never occur in the Tatoeba
corpus."""
ALIGNMENT_NAME = "DeNero & Macherey #74 (NIST MT02 news)"
"""Where the alignment figure's sentence comes from, for its title (0-based line 73 of ``train.zh``)."""
GRADIENT_TEXT = "我的梦想是成为医生。"
"""The gradient figure's test sentence (the default model writes *My dream is a doctor.*, greedy; chosen when the model
before issue #50's retraining wrote it correctly and its mean τ was the median of the short test sentences)."""

SCORE_FORMULAS = {
    "dot": "{q}ᵀ h̄<sub>s</sub>",
    "scaled_dot": "{q}ᵀ h̄<sub>s</sub> / √d",
    "general": "{q}ᵀ W<sub>a</sub> h̄<sub>s</sub>",
    "concat": "v<sub>a</sub>ᵀ tanh(W<sub>a</sub> {q} + U<sub>a</sub> h̄<sub>s</sub>)",
}
"""Each score function's formula (HTML for plotly), with ``{q}`` the decoder's query."""


@dataclass
class Trace:
    """One sentence replayed step by step: what attention computed at every decoding step.

    ``S`` is the padded source width of the batch it was replayed in (``mask`` marks the real tokens);
    ``T`` counts the output rows, ``<eos>`` included when it was produced.

    Attributes:
        source: The real source tokens (``mask.sum()`` of them).
        output: Row labels: the output tokens, then ``<eos>`` if produced.
        queries: The query of each step (``h_t`` for Luong, ``s_{t−1}`` for Bahdanau), ``(T, D_q)``.
        values: Encoder outputs ``h̄_s``, ``(S, H)``.
        scores: Raw scores ``e_{t,s}`` recomputed with the model's score function, before any mask, ``(T, S)``.
        weights: The weights the model's step returned, ``(T, S)``.
        logits: Vocabulary scores of each step, ``(T, V)``.
        mask: ``True`` for real source positions, ``(S,)``.
        centres: Window centres ``p_t``, ``(T,)``, or ``None`` when attending globally.
    """

    source: list[str]
    output: list[str]
    queries: Tensor
    values: Tensor
    scores: Tensor
    weights: Tensor
    logits: Tensor
    mask: Tensor
    centres: Tensor | None


@torch.inference_mode()
def replay(translator: Translator, texts: Sequence[str], outputs: Sequence[Output], window: WindowArg = "config",
           hard: bool = False) -> list[Trace]:
    """Feed decoded outputs back through ``Seq2Seq.step`` in one padded batch and record every step.

    Each step's query is taken with a forward pre-hook on ``model.decoder.attention`` (the decoder
    calls it positionally, query first) and the raw scores are recomputed with the model's score
    function on the keys prepared once per batch. Feeding the output's own tokens reproduces the
    weights the search returned for it (a test checks it, and that ``softmax(scores)`` gives the
    weights of a global model).

    Args:
        translator: A model with attention.
        texts: Source sentences (batched together, in this order, padded to the longest).
        outputs: One decoded output per text (``Translator.translate``).
        window: ``"config"``, ``None`` (global) or a half-width ``D``, as when decoding.
        hard: Hard attention, as when decoding.

    Returns:
        One [`Trace`][reports.theory_figures.Trace] per text.

    Raises:
        ValueError: If the model has no attention, or texts and outputs differ in number.
    """
    model = translator.model.eval()
    attention = model.decoder.attention
    if attention is None:
        raise ValueError("the no-attention baseline has no scores or weights to replay")
    if len(texts) != len(outputs):
        raise ValueError(f"{len(texts)} texts but {len(outputs)} outputs")
    cfg = model.cfg
    sources = [translator.tokenize(t) for t in texts]
    batch = make_batch([(translator.src_vocab.encode(s), [0]) for s in sources]).to(translator.device)
    targets = [[translator.tgt_vocab.stoi[tok] for tok in out.tokens] + ([cfg.eos_id] if out.finished else [])
               for out in outputs]
    B, T = len(texts), max(len(t) for t in targets)
    memory, state = model.encode(batch.src, batch.src_lengths)
    queries: list[Tensor] = []
    handle = attention.register_forward_pre_hook(lambda module, args: queries.append(args[0]))  # (B, 1, D_q)
    y = torch.full((B,), cfg.bos_id, dtype=torch.long, device=batch.src.device)
    weights, logits, centres = [], [], []
    try:
        for t in range(T):
            step = model.step(y, state, memory, t, window, hard)
            state = step.state
            weights.append(step.weights)  # (B, S)
            logits.append(step.logits)  # (B, V)
            if step.centre is not None:
                centres.append(step.centre)  # (B,)
            y = torch.tensor([tgt[t] if t < len(tgt) else cfg.pad_id for tgt in targets], device=y.device)
    finally:
        handle.remove()
    query = torch.cat(queries, dim=1)  # (B, T, D_q)
    scores = attention.score(query, memory.keys)  # (B, T, S): e_{t,s}, no mask
    attn, logit = torch.stack(weights, dim=1), torch.stack(logits, dim=1)  # (B, T, S), (B, T, V)
    cents = torch.stack(centres, dim=1) if centres else None  # (B, T)
    traces = []
    for b, out in enumerate(outputs):
        n = len(targets[b])
        traces.append(Trace(
            source=out.source_tokens, output=out.row_labels, queries=query[b, :n].float(),
            values=memory.values[b].float(), scores=scores[b, :n].float(), weights=attn[b, :n].float(),
            logits=logit[b, :n].float(), mask=memory.mask[b], centres=None if cents is None else cents[b, :n].float(),
        ))
    return traces


def _entropy_line(out: Output) -> str:
    """Mean row entropy and diagonality of an output's alignment, as a short title line."""
    return f"entropy 熵 {attention_entropy(out.weights):.2f} nats · diagonality 对角度 {diagonality(out.weights):.2f}"


def _entropy_lines(weights: Tensor, mean: bool = False) -> str:
    """Mean row entropy and diagonality of an alignment as two short lines of a panel title."""
    entropy = "mean entropy 平均熵" if mean else "entropy 熵"
    return f"{entropy} {attention_entropy(weights):.2f} nats<br>diagonality 对角度 {diagonality(weights):.2f}"


def _uniform(out: Output) -> str:
    """The entropy of uniform attention over the output's source, ``log S``, in words."""
    return f"uniform 均匀 = log S = {math.log(max(1, len(out.source_tokens))):.2f} nats"


def _escape(text: str) -> str:
    """Escape a label for plotly's HTML subset (quotes stay: plotly shows ``&#x27;`` literally)."""
    return html.escape(text, quote=False)


def _label_px(label: str) -> float:
    """About how wide (px) a tick label is drawn: 13 px a CJK character, 7 px any other."""
    return sum(13 if unicodedata.east_asian_width(c) in "WF" else 7 for c in html.unescape(label))


def _panel(translator: Translator, out: Output, window: WindowArg = "config") -> go.Figure:
    """One alignment heatmap as the app draws it (words merged, window band and ``p_t``)."""
    return heatmap_figure(sentence_state(out, translator.model, window), None, False, "")


COLUMN = 590
"""The plot's width (px) in the docs' column: about 690 px at a 1400 px window, less the figure's side margins."""
ROW_GAP = 130
"""Room (px) between two rows of panels (``side_by_side(columns=…)``): the upper row's source characters and axis
title, then the lower row's panel titles."""


def side_by_side(panels: Sequence[go.Figure], titles: Sequence[str], title: str,
                 colorbars: str = "last", columns: int | None = None, top: int | None = None) -> go.Figure:
    """Put figures made by ``demo.plots`` next to each other, keeping their traces, shapes and ticks.

    The docs embed a figure in a column about 690 px wide: a panel's title should be short lines (each under
    about 35 characters for two panels a row), or neighbouring titles run into each other.

    Args:
        panels: Single-plot figures (heatmaps from ``alignment_figure``).
        titles: One title per panel (HTML; escape labels before).
        title: The figure title.
        colorbars: ``"last"``: one colour bar (panels share the 0–1 scale); ``"each"``: one per panel, its title
            beside it.
        columns: Panels a row (default: all in one row); more panels wrap into further rows, each as tall as its
            tallest panel's rows of cells.
        top: The top margin (px), for the figure title at the very top and the panel titles under it; it adds to the
            height, so the panels keep theirs. Default: 130 px, the title centred in it.

    Returns:
        The combined figure; source tokens are written under each panel.
    """
    n = len(panels)
    cols = columns or n
    rows = math.ceil(n / cols)
    cells = [(i // cols + 1, i % cols + 1) for i in range(n)]
    heights = [max(p.layout.height or 400 for p in panels[r * cols:(r + 1) * cols]) - 200 for r in range(rows)]
    # room between panels for the next panel's row labels ("tomorrow" ran into the panel on its left), or a colour bar
    labels = [_label_px(label) for i, p in enumerate(panels) if i % cols for label in p.layout.yaxis.ticktext or ()]
    spacing = 0.2 if colorbars == "each" else max(0.09, (max(labels, default=0) + 20) / COLUMN)
    plot = sum(heights) + (rows - 1) * ROW_GAP  # px between the top and bottom margins
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles),
                        specs=[[{} if r * cols + c < n else None for c in range(cols)] for r in range(rows)],
                        row_heights=heights if rows > 1 else None,
                        vertical_spacing=ROW_GAP / plot if rows > 1 else None,
                        horizontal_spacing=spacing)
    legend_names: set[str] = set()
    for i, (panel, (row, col)) in enumerate(zip(panels, cells), 1):
        for trace in panel.data:
            if isinstance(trace, go.Heatmap):
                trace.showscale = colorbars == "each" or i == n
                if trace.colorbar.title.text == "weight":  # demo.plots' label, in both languages here
                    trace.colorbar.title.text = "weight 权重"
            elif trace.name in legend_names:
                trace.showlegend = False
            legend_names.add(trace.name)
            fig.add_trace(trace, row=row, col=col)
        for shape in panel.layout.shapes:
            fig.add_shape(shape, row=row, col=col)
        keep = ("tickmode", "tickvals", "ticktext", "tickfont", "tickangle", "range", "autorange", "title")
        xaxis, yaxis = panel.layout.xaxis.to_plotly_json(), panel.layout.yaxis.to_plotly_json()
        fig.update_xaxes(**{k: v for k, v in xaxis.items() if k in keep}, side="bottom", row=row, col=col)
        fig.update_yaxes(**{k: v for k, v in yaxis.items() if k in keep and (col == 1 or k != "title")},
                         row=row, col=col)
    if colorbars == "each":
        for i, trace in enumerate(t for t in fig.data if isinstance(t, go.Heatmap)):
            domain = fig.layout[f"xaxis{i + 1 if i else ''}"].domain
            bar = trace.colorbar.to_plotly_json()
            # the title stands beside the bar: above it, it ran into the next panel
            bar["title"] = dict(bar.get("title", {}), side="right")
            trace.colorbar = dict(bar, x=domain[1] + 0.01, thickness=10, len=0.9)
    fig.update_annotations(font=dict(size=12))
    # at the top of its own room, clear of panel titles of several lines
    anchored = dict(yref="container", y=1, yanchor="top", pad=dict(t=12)) if top else {}
    fig.update_layout(
        # a long title wraps once, at its first " · ": the pages embed the figure in a narrow column
        title=dict(text=title.replace(" · ", "<br>", 1) if len(title) > 60 and "<br>" not in title else title,
                   x=0.5, xanchor="center", font=dict(size=15), **anchored),
        height=plot + (top or 130) + 110, font=FONT,
        margin=dict(l=60, r=40, t=top or 130, b=110), showlegend=bool(legend_names - {None}),
        legend=dict(orientation="h", y=-0.16, yanchor="top", x=0.5, xanchor="center"),
    )
    return fig


def steps_figure(translator: Translator, text: str = STEPS_TEXT, top: int = 5) -> go.Figure:
    """Alammar-style step-through of one sentence (greedy), one frame per decoding step.

    Four panels per step ``t``: the raw scores ``e_{t,s}``; the weights ``a_t = softmax(e_t)``; each
    term's length ``‖a_{t,s} h̄_s‖ = a_{t,s} ‖h̄_s‖`` in the context ``c_t = Σ_s a_{t,s} h̄_s`` (``‖c_t‖`` in the
    title; the terms point different ways, so their lengths are sizes, not shares of ``c_t``); and the ``top``
    most probable next tokens, the chosen one in red. A slider moves through the steps; the figure opens (and its
    PNG shows) the step with the sharpest attention.

    Args:
        translator: A global-attention model (the default translation model ``luong-general``).
        text: The source sentence.
        top: Candidate tokens shown per step.

    Returns:
        The figure with one frame per output row (``<eos>`` included).
    """
    out = translator.translate([text])[0]
    trace = replay(translator, [text], [out])[0]
    cfg = translator.model.cfg
    S = int(trace.mask.sum())
    scores, weights = trace.scores[:, :S], trace.weights[:, :S]  # (T, S)
    norms = trace.values[:S].norm(dim=-1)  # ‖h̄_s‖: (S,)
    sizes = weights * norms  # ‖a_{t,s} h̄_s‖ = a_{t,s} ‖h̄_s‖: (T, S)
    context = (weights @ trace.values[:S]).norm(dim=-1)  # ‖c_t‖: (T,)
    probs = torch.softmax(trace.logits, dim=-1)  # (T, V)
    probs[:, [cfg.pad_id, cfg.bos_id, cfg.unk_id]] = 0.0  # never generated
    xs = [_escape(t) for t in trace.source]
    ys = [_escape(t) for t in trace.output]
    q = "h<sub>t</sub>" if cfg.decoder == "luong" else "s<sub>t−1</sub>"
    titles = [
        f"① score 打分 e<sub>t,s</sub> = {SCORE_FORMULAS[cfg.score].format(q=q)}",
        "② softmax → weights 权重 a<sub>t,s</sub> (sum 和 = 1)",
        "③ ‖a<sub>t,s</sub> h̄<sub>s</sub>‖: the length of each term of c<sub>t</sub> = Σ<sub>s</sub> "
        "a<sub>t,s</sub> h̄<sub>s</sub> 上下文每一项的长度",
        f"④ p(y<sub>t</sub>): top {top} next tokens 候选词 (chosen 选中 in red)",
    ]
    fig = make_subplots(rows=4, cols=1, subplot_titles=titles, vertical_spacing=0.09)

    def step_data(t: int) -> tuple[list[go.Bar], str]:
        p, ids = probs[t].topk(top)
        chosen = translator.tgt_vocab.stoi.get(trace.output[t], -1) if trace.output[t] != "<eos>" else cfg.eos_id
        words = [_escape(translator.tgt_vocab.itos[i]) for i in ids.tolist()]
        bars = [
            go.Bar(x=list(range(S)), y=scores[t].tolist(), marker_color="slategray",
                   hovertext=[f"{x}: e = {e:.2f}" for x, e in zip(xs, scores[t].tolist())], hoverinfo="text"),
            go.Bar(x=list(range(S)), y=weights[t].tolist(), marker_color="steelblue",
                   hovertext=[f"{x}: a = {a:.3f}" for x, a in zip(xs, weights[t].tolist())], hoverinfo="text"),
            go.Bar(x=list(range(S)), y=sizes[t].tolist(), marker_color="seagreen",
                   hovertext=[f"{x}: a·‖h̄‖ = {a:.2f}" for x, a in zip(xs, sizes[t].tolist())], hoverinfo="text"),
            go.Bar(x=list(range(top)), y=p.tolist(), text=words, textposition="outside",
                   marker_color=["crimson" if i == chosen else "lightgray" for i in ids.tolist()],
                   hovertext=[f"{w}: p = {v:.3f}" for w, v in zip(words, p.tolist())], hoverinfo="text"),
        ]
        done = " ".join(ys[:t])
        peak = int(weights[t].argmax())
        head = (f"step 步 {t + 1}/{len(ys)}: {done} <b>[{ys[t]}]</b><br><sup>‖c<sub>t</sub>‖ = {context[t]:.2f} · "
                f"max a = {weights[t, peak]:.2f} on 「{xs[peak]}」 · p({ys[t]}) = {probs[t, chosen]:.2f}</sup>")
        return bars, head

    start = int(weights.max(dim=-1).values.argmax())  # the sharpest step
    bars, head = step_data(start)
    for row, bar in enumerate(bars, 1):
        fig.add_trace(bar, row=row, col=1)
    frames = []
    for t in range(len(ys)):
        data, name = step_data(t)
        frames.append(go.Frame(data=data, traces=[0, 1, 2, 3], name=str(t),
                               layout=dict(title=dict(text=name, x=0.5, xanchor="center"))))
    fig.frames = frames
    ticks = dict(tickmode="array", tickvals=list(range(S)), ticktext=xs, range=[-0.5, S - 0.5])
    for row in (1, 2, 3):
        fig.update_xaxes(**ticks, row=row, col=1)
    fig.update_xaxes(showticklabels=False, range=[-0.5, top - 0.5], row=4, col=1)
    low, high = float(scores.min()), float(scores.max())
    pad = 0.08 * (high - low or 1.0)
    fig.update_yaxes(range=[min(0.0, low - pad), max(0.0, high + pad)], title="e", row=1, col=1)
    fig.update_yaxes(range=[0, 1], title="a", row=2, col=1)
    fig.update_yaxes(range=[0, float(sizes.max()) * 1.1 + 1e-6], title="a·‖h̄‖", row=3, col=1)
    fig.update_yaxes(range=[0, 1.15], title="p", row=4, col=1)
    slider = dict(active=start, x=0.05, len=0.9, y=-0.02, yanchor="top", pad=dict(t=10),
                  currentvalue=dict(prefix="step 步 ", font=dict(size=13)),
                  steps=[dict(method="animate", label=f"{t + 1} {ys[t]}",
                              args=[[str(t)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                   transition=dict(duration=0))]) for t in range(len(ys))])
    fig.update_layout(title=dict(text=head, x=0.5, xanchor="center"), sliders=[slider], showlegend=False,
                      height=1000, margin=dict(l=60, r=20, t=110, b=110), font=FONT, bargap=0.25)
    return fig


def scores_figure(dot: Translator, scaled: Translator, text: str = SAME_OUTPUT_TEXT) -> go.Figure:
    """Dot vs scaled dot on the same sentence, each with its mean row entropy in its title."""
    panels, titles = [], []
    for name, translator in (("dot 点积", dot), ("scaled dot 缩放点积 (÷√d)", scaled)):
        out = translator.translate([text])[0]
        panels.append(_panel(translator, out))
        # three short lines: two long titles side by side would run into each other in a narrow column
        titles.append(f"<b>{name}</b><br>{_escape(out.text)}<br>mean entropy 平均熵 "
                      f"{attention_entropy(out.weights):.2f} nats")
    top = math.log(len(dot.tokenize(text)))
    fig = side_by_side(panels, titles, "same sentence and data, only the score differs "
                       f"同一句同一数据，只有打分不同<br><sup>uniform 均匀 = log S = {top:.2f} nats</sup>")
    fig.update_layout(margin=dict(t=150))
    return fig


def qkv_figure(translator: Translator, text: str = STEPS_TEXT) -> go.Figure:
    """The same queries and keys scored with the learned bilinear map ``W_a`` and with ``W_a = I``.

    Left: the model's own weights ``softmax(h_tᵀ W_a h̄_s)``. Right: ``softmax(h_tᵀ h̄_s)`` from the very
    same queries ``h_t`` and keys ``h̄_s`` (what a dot score would make of them). Only the weights are
    recomputed: the output tokens are the model's.

    Args:
        translator: A ``general``-score model with global attention.
        text: The source sentence.
    """
    out = translator.translate([text])[0]
    trace = replay(translator, [text], [out])[0]
    S = int(trace.mask.sum())
    plain = torch.softmax(trace.queries @ trace.values[:S].T, dim=-1)  # (T, S)
    learned = trace.weights[:, :S]
    titles = []  # four short lines each: side by side in the docs' column, longer ones ran into each other
    for name, note, w in (("h<sub>t</sub>ᵀ W<sub>a</sub> h̄<sub>s</sub>", "the model 模型", learned),
                          ("h<sub>t</sub>ᵀ h̄<sub>s</sub> (W<sub>a</sub> = I 单位矩阵)",
                           "same 相同 h<sub>t</sub>, h̄<sub>s</sub>", plain)):
        titles.append(f"<b>{name}</b><br>{note}<br>{_entropy_lines(w, mean=True)}")
    panels = [alignment_figure(trace.source, trace.output, w.tolist()) for w in (learned, plain)]
    return side_by_side(panels, titles, f"query 查询 h<sub>t</sub> · keys 键 h̄<sub>s</sub><br>output 输出: "
                        f"{_escape(out.text)}", top=140)


def bahdanau_luong_figure(bahdanau: Translator, luong: Translator, text: str = SAME_OUTPUT_TEXT) -> go.Figure:
    """Bahdanau vs Luong with the same concat score, on the same sentence."""
    panels, titles = [], []
    for name, translator in (("Bahdanau: query 查询 s<sub>t−1</sub>", bahdanau),
                             ("Luong: query 查询 h<sub>t</sub>", luong)):
        out = translator.translate([text])[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b><br>{_wrap(_escape(out.text))}<br>{_entropy_lines(out.weights)}")
    return side_by_side(panels, titles, f"Bahdanau vs Luong, both with the concat score 同为加性打分 · {_uniform(out)}",
                        top=140)


def local_p_figure(translator: Translator, text: str = LONG_TEXT) -> go.Figure:
    """The local-p model's alignment with its window band ``p_t ± D`` and predicted centres ``p_t``."""
    out = translator.translate([text])[0]
    D = translator.model.resolve_window("config")
    state = sentence_state(out, translator.model, "config")
    outside = 0.0
    if out.centres is not None and D is not None:
        positions = torch.arange(out.weights.shape[1], dtype=torch.float32)
        far = (positions.view(1, -1) - out.centres.view(-1, 1)).abs() > D  # (T, S)
        outside = float(out.weights[far].max()) if bool(far.any()) else 0.0
    title = (f"local-p 局部预测 (D = {D}): {_escape(out.text)}<br><sup>{_entropy_line(out)} · "
             f"largest weight outside the window 窗口外最大权重 = {outside:g}</sup>")
    fig = heatmap_figure(state, None, False, title)
    fig.layout.title.y = fig.layout.title.yanchor = None  # automatic: two lines stay inside the margin
    fig.update_layout(margin=dict(t=190))
    return fig


def _wrap(text: str, width: int = 30) -> str:
    """Break a label at spaces into lines of at most ``width`` characters (a longer word keeps its own line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def soft_hard_figure(translator: Translator, text: str = LONG_TEXT) -> go.Figure:
    """Soft vs hard (argmax, decode time only) attention of the same model on the same sentence.

    Each panel's title is short lines (the name, the translation wrapped at 30 characters, entropy and diagonality),
    so two titles side by side cannot run into each other in a narrow column; the source characters stay upright.
    """
    panels, titles = [], []
    for name, hard in (("soft 软", False), ("hard 硬 (argmax)", True)):
        out = translator.translate([text], hard=hard)[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b><br>{_wrap(_escape(out.text))}<br>entropy 熵 "
                      f"{attention_entropy(out.weights):.2f} · diagonality 对角度 {diagonality(out.weights):.2f}")
    fig = side_by_side(panels, titles, f"soft vs hard attention, same model and sentence 同一句<br><sup>"
                       f"{_uniform(out)}</sup>")
    fig.update_xaxes(tickangle=0)  # upright characters: plotly turns crowded labels sideways on its own
    fig.update_layout(margin=dict(t=175))
    return fig


def masking_figure(translator: Translator, short: str = SHORT_TEXT, long: str = STEPS_TEXT) -> go.Figure:
    """Two sentences decoded in one padded batch: the short one's weights on ``<pad>`` are exactly 0.

    Panels: the short sentence's weights over the batch's padded width; what a softmax over the same
    raw scores would give without the mask; the long sentence's weights.

    Args:
        translator: A model with global attention.
        short: The shorter sentence.
        long: The longer sentence (sets the padded width).
    """
    outs = translator.translate([short, long])  # one batch: the library pads the short one
    traces = replay(translator, [short, long], outs)
    t_short, t_long = traces
    S = t_short.mask.numel()
    pads = ~t_short.mask  # (S,)
    columns = t_short.source + ["∅"] * int(pads.sum())  # ∅ = <pad>, short enough to stay horizontal
    unmasked = torch.softmax(t_short.scores, dim=-1)  # (T, S): the same scores without the mask
    on_pad = float(t_short.weights[:, pads].max()) if bool(pads.any()) else 0.0
    leak = float(unmasked[:, pads].sum(dim=-1).mean()) if bool(pads.any()) else 0.0
    panels = [
        alignment_figure(columns, t_short.output, t_short.weights.tolist()),
        alignment_figure(columns, t_short.output, unmasked.tolist()),
        alignment_figure(t_long.source, t_long.output, t_long.weights[:, :S].tolist()),
    ]
    first = int(t_short.mask.sum())
    for panel in panels[:2]:  # outline the padded columns
        panel.add_shape(type="rect", x0=first - 0.5, x1=S - 0.5, y0=-0.5, y1=len(t_short.output) - 0.5,
                        line=dict(color="crimson", width=2, dash="dot"), fillcolor="rgba(0,0,0,0)")
    titles = [
        f"<b>short 短句, masked 有掩码</b><br>max weight on ∅ &lt;pad&gt; = {on_pad:g}",
        f"<b>same scores, no mask 无掩码</b><br>weight on ∅ &lt;pad&gt;,<br>mean per row = {leak:.1%}",
        f"<b>long 长句</b> (sets the width 决定宽度 S = {S})<br>{_wrap(_escape(outs[1].text))}",
    ]
    # two panels a row: three in the docs' column had their titles run together and their characters turned sideways
    fig = side_by_side(panels, titles, f"one padded batch 一个批次: {_escape(short)} + {_escape(long)}<br><sup>short "
                       f"→ {_escape(outs[0].text)} · ∅ = &lt;pad&gt; (red box 红框)</sup>", columns=2, top=130)
    fig.update_xaxes(tickangle=0)  # upright characters
    return fig


def greedy_beam_figure(translator: Translator, text: str = LONG_TEXT) -> go.Figure:
    """Greedy vs beam 5 on the same sentence, with each output's log-probability."""
    panels, titles = [], []
    for name, beam in (("greedy 贪心", 1), ("beam 5 束搜索", 5)):
        out = translator.translate([text], beam_size=beam)[0]
        panels.append(_panel(translator, out))
        n = len(out.row_labels)
        titles.append(f"<b>{name}</b><br>{_wrap(_escape(out.text))}<br>log p = {out.score:.2f}<br>"
                      f"÷ {n} tokens with &lt;eos&gt; = {out.score / max(1, n):.3f}")
    fig = side_by_side(panels, titles, "greedy vs beam search, same model and sentence 同一模型同一句", top=140)
    fig.update_xaxes(tickangle=0)  # upright characters, as in the soft-vs-hard figure
    return fig


def couplet_rules_figure(translator: Translator, text: str = COUPLET_RULES_TEXT, beam: int = 5) -> go.Figure:
    """A 下联 with the reader's rules (``CoupletRules()``) and without any constraint, beam ``beam``."""
    panels, titles = [], []
    for name, constrained in (("with rules 有约束 (CoupletRules())", True), ("no constraints 无约束", False)):
        out = translator.translate([text], beam_size=beam, constrained=constrained,
                                   rules=CoupletRules() if constrained else None)[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b><br>{_escape(out.text)}<br>{len(out.tokens)} characters 字 "
                      f"(first line 上联 {len(translator.tokenize(text))})<br>log p = {out.score:.2f}")
    return side_by_side(panels, titles, f"first line 上联 {_escape(text)} · beam 束宽 {beam}", top=140)


def transformer_figure(translator: Translator, text: str = COUPLET_TEXT, beam: int = 5) -> go.Figure:
    """What one cross-attention head computes, shown with our RNN couplet model (not a Transformer).

    Left: the raw scores, the matrix ``QKᵀ`` of a head whose queries are the decoder states ``h_t``
    and whose keys are ``W_a h̄_s`` (the ``general`` score); right: ``softmax`` of each row, the weights.
    """
    out = translator.translate([text], beam_size=beam)[0]
    trace = replay(translator, [text], [out])[0]
    S = int(trace.mask.sum())
    scores, weights = trace.scores[:, :S], trace.weights[:, :S]
    left = alignment_figure(trace.source, trace.output, scores.tolist())
    hover = [[f"source {j + 1}: {_escape(trace.source[j])}<br>output {i + 1}: {_escape(trace.output[i])}"
              f"<br>score: {e:.2f}" for j, e in enumerate(row)] for i, row in enumerate(scores.tolist())]
    left.update_traces(zmin=None, zmax=None, zauto=True, colorscale="RdBu", reversescale=True, zmid=0.0,
                       text=hover, colorbar=dict(title="score 分数"))
    right = alignment_figure(trace.source, trace.output, weights.tolist())
    titles = ["<b>scores 分数 QKᵀ</b><br>e<sub>t,s</sub> = h<sub>t</sub>ᵀ (W<sub>a</sub> h̄<sub>s</sub>)",
              f"<b>weights 权重 softmax(QKᵀ)</b> → {_escape(out.text)}<br>entropy 熵 "
              f"{attention_entropy(out.weights):.2f} nats · diagonality 对角度 {diagonality(out.weights):.2f}"]
    return side_by_side([left, right], titles, "what one cross-attention head computes 一个交叉注意力头的计算<br>"
                        "<sup>our RNN couplet model (luong-general), not a Transformer 这是 RNN 模型，并非 Transformer"
                        "</sup>", colorbars="each")


def positions_figure(d_model: int, length: int = POSITIONS,
                     queries: Sequence[int] = POSITION_QUERIES) -> go.Figure:
    """The sinusoidal position table a Transformer adds to its embeddings, and how two positions compare.

    Left: ``PE = sinusoidal_positions(length, d_model)`` (the library's table, Vaswani et al. 2017, §3.5):
    one row per position, even dimensions ``sin``, odd ``cos``, the wavelength growing with the dimension.
    Right: ``PE(q) · PE(p)`` for every ``p`` and each ``q`` in ``queries``: the curves have the same shape,
    shifted, because the dot product of two rows depends only on the distance ``p − q``.

    Args:
        d_model: Model size (the bundled Transformer's ``hidden_size``).
        length: Positions drawn.
        queries: Positions compared with every other one.
    """
    pe = sinusoidal_positions(length, d_model)  # (N, d)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.5, 0.5], horizontal_spacing=0.16, subplot_titles=[
        # the page's formula names the dimensions 2i and 2i + 1 (i counts the pairs): the figure says the same
        "<b>PE(pos, ·)</b>: dimension 2i sin, 2i + 1 cos<br>偶数维 sin、奇数维 cos",
        "<b>PE(q) · PE(p)</b>: depends only on p − q<br>只取决于距离 p − q",
    ])
    fig.add_trace(go.Heatmap(
        z=pe.tolist(), zmin=-1.0, zmax=1.0, colorscale="RdBu", reversescale=True,
        colorbar=dict(title="PE", thickness=10, len=0.9, x=0.43, xpad=4),
        hovertemplate="position 位置 %{y}<br>dimension 维度 %{x}<br>PE = %{z:.3f}<extra></extra>",
    ), row=1, col=1)
    similarity = pe[list(queries)] @ pe.T  # (Q, N)
    for q, row, dash in zip(queries, similarity.tolist(), ("solid", "dash", "dot")):
        fig.add_trace(go.Scatter(
            x=list(range(length)), y=row, mode="lines", name=f"q = {q}", line=dict(width=2, dash=dash),
            hovertemplate=f"PE({q}) · PE(%{{x}}) = %{{y:.1f}}<extra></extra>",
        ), row=1, col=2)
    fig.update_xaxes(title="dimension 维度", row=1, col=1)
    fig.update_yaxes(title="position pos 位置", autorange="reversed", row=1, col=1)
    fig.update_xaxes(title="position p 位置", row=1, col=2)
    fig.update_yaxes(ticks="outside", row=1, col=2)  # the panel title names the dot product: no axis title
    fig.update_annotations(font=dict(size=12))
    fig.update_layout(
        title=dict(text=f"sinusoidal positions 正弦位置编码 (d<sub>model</sub> = {d_model})<br><sup>the table our "
                   "Transformer adds to its embeddings 模型加到词向量上的位置表</sup>", x=0.5, xanchor="center",
                   font=dict(size=15)),
        height=420, font=FONT, margin=dict(l=60, r=20, t=110, b=50),
        legend=dict(x=1.0, xanchor="right", y=1.0, bgcolor="rgba(255,255,255,0.7)"),
    )
    return fig


@dataclass
class CausalMask:
    """One decoded sentence's causal self-attention, as the Transformer's decoder computed it.

    Attributes:
        keys: Column labels: ``<bos>`` and the output tokens written so far (what position ``t`` reads).
        rows: Row labels: the output tokens (``<eos>`` included).
        mask: The mask the decoder's self-attention was called with, ``True`` = may look, ``(T, T)``.
        weights: That layer's and head's self-attention weights, ``(T, T)``.
        layer: 1-based layer.
        head: 1-based head.
        text: The translation.
    """

    keys: list[str]
    rows: list[str]
    mask: Tensor
    weights: Tensor
    layer: int
    head: int
    text: str


@torch.inference_mode()
def causal_mask(transformer: Translator, text: str = STEPS_TEXT, beam: int = TRANSFORMER_BEAM,
                view: tuple[int, int] = CAUSAL_VIEW) -> CausalMask:
    """Decode ``text`` and re-run the decoder on its output, recording the mask of one layer's self-attention.

    The mask is the one ``Transformer.run`` builds and passes to the decoder's self-attention (taken with a
    forward pre-hook on that layer's ``self_attn``: it is called with the mask fourth); the weights are
    ``Translator.attention_maps``'s decoder maps of the same pass.

    Args:
        transformer: A Transformer translator.
        text: The source sentence.
        beam: Beam size of the decoding.
        view: ``(layer, head)``, 1-based.

    Raises:
        ValueError: If the model is not a Transformer or has no such layer or head.
    """
    if not isinstance(transformer.model, Transformer):
        raise ValueError("the causal mask belongs to a Transformer's decoder; this model has none")
    layers = transformer.model.decoder_layers
    layer, head = view
    if not (1 <= layer <= len(layers) and 1 <= head <= transformer.model.cfg.heads):
        raise ValueError(f"no layer {layer} head {head}: the model has {len(layers)} layers of "
                         f"{transformer.model.cfg.heads} heads")
    out = transformer.translate([text], beam_size=beam)[0]
    masks: list[Tensor] = []
    module = layers[layer - 1].self_attn
    handle = module.register_forward_pre_hook(lambda m, args: masks.append(args[3]))  # (B, T, T)
    try:
        maps = transformer.attention_maps(out)
    finally:
        handle.remove()
    rows = out.row_labels
    return CausalMask(["<bos>", *rows[:-1]], rows, masks[0][0].cpu(), maps.decoder[layer - 1, head - 1],
                      layer, head, out.text)


def causal_mask_figure(transformer: Translator, text: str = STEPS_TEXT, beam: int = TRANSFORMER_BEAM,
                       view: tuple[int, int] = CAUSAL_VIEW) -> go.Figure:
    """The decoder's causal mask beside the self-attention weights it produced, above the diagonal outlined.

    Left: the mask (1 = may look, 0 = blocked); right: one head's weights on the same grid, with the largest
    weight above the diagonal (exactly 0: the masked scores are ``−∞`` before the softmax) in the title.
    """
    causal = causal_mask(transformer, text, beam, view)
    T = len(causal.rows)
    above = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T): key after the query
    leak = float(causal.weights[above].max()) if bool(above.any()) else 0.0
    x_title, y_title = "key 键 (&lt;bos&gt; + output so far 已生成)", "query 查询 (output 输出)"
    mask = alignment_figure(causal.keys, causal.rows, causal.mask.float().tolist(), x_title=x_title, y_title=y_title)
    mask.update_traces(text=[[f"query {_escape(r)} → key {_escape(k)}: {'allowed 允许' if allowed else 'blocked 屏蔽'}"
                              for k, allowed in zip(causal.keys, row)] for r, row in
                             zip(causal.rows, causal.mask.tolist())])
    weights = alignment_figure(causal.keys, causal.rows, causal.weights.tolist(), x_title=x_title, y_title=y_title)
    # the blocked cells (key after the query) as one staircase outline
    path = f"M 0.5 -0.5 L {T - 0.5} -0.5 L {T - 0.5} {T - 1.5} " + " ".join(
        f"L {i + 0.5} {i + 0.5} L {i + 0.5} {i - 0.5}" for i in range(T - 2, -1, -1)) + " Z"
    for panel in (mask, weights):
        panel.add_shape(type="path", path=path, line=dict(color="crimson", width=2, dash="dot"),
                        fillcolor="rgba(0,0,0,0)")
    # short lines: the two panel titles sit side by side in a narrow column
    titles = ["<b>causal mask 因果掩码</b><br>row t: keys ≤ t only 只看之前<br>1 = may look 可看 · 0 = blocked 屏蔽",
              f"<b>layer {causal.layer} · head {causal.head}</b><br>self-attention weights 自注意力权重<br>"
              f"above the diagonal 对角线以上: max = {leak:g}"]
    fig = side_by_side([mask, weights], titles, f"decoder self-attention 解码器自注意力<br><sup>{_escape(text)} → "
                       f"{_escape(causal.text)} · red: blocked 红框: 屏蔽</sup>")
    fig.update_layout(height=420, margin=dict(l=70, r=40, t=150, b=40))
    return fig


@dataclass
class TinySteps:
    """A toy attention step on small vectors: the numbers the tiny step-through shows.

    Attributes:
        score: The score function's name (``attention_core.model.scores.SCORES``).
        query: The decoder state, i.e. the query ``q_t``, ``(d,)``.
        keys: The encoder outputs ``h̄_1 … h̄_S`` (keys and values), ``(S, d)``.
        scores: ``e_{t,s} = score(q_t, h̄_s)``, ``(S,)``.
        weights: ``a_t = softmax(e_t)``, ``(S,)``.
        context: ``c_t = Σ_s a_{t,s} h̄_s``, ``(d,)``.
    """

    score: str
    query: Tensor
    keys: Tensor
    scores: Tensor
    weights: Tensor
    context: Tensor


@torch.inference_mode()
def tiny_steps(states: int = TINY["states"], size: int = TINY["size"], seed: int = TINY["seed"],
               score: str = TINY["score"]) -> TinySteps:
    """One attention step on seeded small vectors, through the library's score module and ``attention()``.

    The vectors are drawn from a seeded normal and rounded to one decimal, so a reader can redo the sums.

    Args:
        states: Number of encoder states ``S``.
        size: Their size ``d`` (and the decoder state's).
        seed: Seed of the draw.
        score: A parameter-free score name (``dot`` or ``scaled_dot``): the toy has no learned weights.
    """
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(1, 1, size, generator=generator).round(decimals=1)  # (B=1, T=1, d)
    keys = torch.randn(1, states, size, generator=generator).round(decimals=1)  # (1, S, d)
    scorer = build_score(score, size, size)
    if list(scorer.parameters()):
        raise ValueError(f"the toy step-through needs a score without learned weights (dot, scaled_dot), got {score!r}")
    scores = scorer(query, scorer.prepare(keys))  # (1, 1, S)
    context, weights = attention(scores, keys, torch.ones(1, states, dtype=torch.bool))  # (1, 1, d), (1, 1, S)
    return TinySteps(score, query[0, 0], keys[0], scores[0, 0], weights[0, 0], context[0, 0])


TINY_STAGES = (
    "① the states 状态: query 查询 q<sub>t</sub>, encoder outputs 编码器输出 h̄<sub>s</sub>",
    "② score 打分: e<sub>t,s</sub> = {formula}",
    "③ softmax → weights 权重: a<sub>t,s</sub> = exp(e<sub>t,s</sub>) / Σ<sub>s′</sub> exp(e<sub>t,s′</sub>)",
    "④ weighted sum 加权和: context 上下文 c<sub>t</sub> = Σ<sub>s</sub> a<sub>t,s</sub> h̄<sub>s</sub>",
)
"""The stages of the tiny step-through, one frame each (``{formula}``: the score's)."""


def tiny_steps_figure(steps: TinySteps | None = None) -> go.Figure:
    """Alammar-style toy step-through: small vectors as coloured, numbered cells, one frame per stage.

    Labels follow the notation box of the steps page: the query ``q_t`` above the encoder outputs ``h̄_s``
    (keys and values, one row each); the scores ``e_{t,s}``; the weights ``a_{t,s}``; each ``a_{t,s} h̄_s``;
    and their sum ``c_t`` below. Stage ``k`` fills the panels it computes (the states, then
    the scores, the weights, the weighted rows and the context); the title works one entry out in numbers.
    The figure opens on the first stage; the slider (or ▶) moves on.

    Args:
        steps: The numbers; by default ``tiny_steps()``.
    """
    steps = steps or tiny_steps()
    S, d = steps.keys.shape
    s, h, e, a, c = steps.query, steps.keys, steps.scores, steps.weights, steps.context
    weighted = a.unsqueeze(1) * h  # (S, d): a_{t,s} h̄_s
    big = float(torch.cat([s, h.flatten(), c, weighted.flatten()]).abs().max())
    rows = [f"h̄<sub>{j + 1}</sub>" for j in range(S)]
    dims = [f"d{i + 1}" for i in range(d)]
    formula = SCORE_FORMULAS[steps.score].format(q="q<sub>t</sub>")
    fig = make_subplots(
        rows=3, cols=4, column_widths=[d, 1.3, 1.3, d], row_heights=[1, S, 1], horizontal_spacing=0.05,
        vertical_spacing=0.1,
        specs=[[{}, None, None, None], [{}, {}, {}, {}], [None, None, None, {}]],
        subplot_titles=["query 查询 q<sub>t</sub> (decoder state 解码器状态)",
                        "encoder outputs 编码器输出 h̄<sub>s</sub>",
                        "scores 分数 e<sub>t,s</sub>", "weights 权重 a<sub>t,s</sub>",
                        "weighted 加权 a<sub>t,s</sub> h̄<sub>s</sub>",
                        "context 上下文 c<sub>t</sub> = Σ<sub>s</sub> a<sub>t,s</sub> h̄<sub>s</sub>"],
    )
    cells = [(1, 1), (2, 1), (2, 2), (2, 3), (2, 4), (3, 4)]
    kinds = ("state", "state", "score", "weight", "state", "state")  # the colour scale of each panel
    shown = [s.view(1, d), h, e.view(S, 1), a.view(S, 1), weighted, c.view(1, d)]
    reveal = (2, 3, 4, 6)  # panels filled at each stage
    top = float(e.abs().max())
    scales = {"state": dict(zmin=-big, zmax=big, colorscale="RdBu", reversescale=True),
              "score": dict(zmin=-top, zmax=top, colorscale="PuOr", reversescale=True),
              "weight": dict(zmin=0.0, zmax=1.0, colorscale=COLORSCALE, reversescale=False)}

    def heat(values: Tensor, kind: str, visible: bool) -> go.Heatmap:
        n, m = values.shape
        if not visible:  # not computed yet: grey cells with a question mark
            return go.Heatmap(z=[[0.0] * m for _ in range(n)], text=[["?"] * m for _ in range(n)],
                              texttemplate="%{text}", textfont=dict(size=14), showscale=False,
                              xgap=3, ygap=3, hoverinfo="skip", zmin=0.0, zmax=1.0, reversescale=False,
                              colorscale=[[0.0, "#eeeeee"], [1.0, "#eeeeee"]])
        text = [[f"{v:.2f}" for v in row] for row in values.tolist()]
        return go.Heatmap(z=values.tolist(), text=text, texttemplate="%{text}", textfont=dict(size=14),
                          showscale=False, xgap=3, ygap=3, hoverinfo="skip", **scales[kind])

    def stage_data(k: int) -> list[go.Heatmap]:
        return [heat(v, kind, i < reveal[k]) for i, (v, kind) in enumerate(zip(shown, kinds))]

    def stage_title(k: int) -> str:
        head = TINY_STAGES[k].format(formula=formula)
        if k == 0:
            sub = f"S = {S} encoder outputs of d = {d} numbers 个数 · seeded, rounded 随机种子、取一位小数"
        elif k == 1:
            terms = " + ".join(f"({float(x):.1f})({float(y):.1f})" for x, y in zip(s, h[0]))
            scale = " / √d" if steps.score == "scaled_dot" else ""
            sub = f"e<sub>t,1</sub> = q<sub>t</sub>ᵀ h̄<sub>1</sub>{scale} = ({terms}){scale} = {float(e[0]):.2f}"
        elif k == 2:
            sub = (f"a<sub>t,1</sub> = exp({float(e[0]):.2f}) / ({' + '.join(f'exp({float(x):.2f})' for x in e)}) = "
                   f"{float(a[0]):.2f} · sum 和 = 1")
        else:
            sub = (f"c<sub>t</sub>[d1] = {' + '.join(f'{float(w):.2f}·({float(x):.1f})' for w, x in zip(a, h[:, 0]))}"
                   f" = {float(c[0]):.2f}")
        return f"{head}<br><sup>{sub}</sup>"

    for trace, (row, col) in zip(stage_data(0), cells):
        fig.add_trace(trace, row=row, col=col)
    fig.frames = [go.Frame(data=stage_data(k), traces=list(range(len(cells))), name=str(k),
                           layout=dict(title=dict(text=stage_title(k), x=0.5, xanchor="center")))
                  for k in range(len(TINY_STAGES))]
    for row, col in cells:
        fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, row=row, col=col)
        fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed", row=row, col=col)
    fig.update_xaxes(tickmode="array", tickvals=list(range(d)), ticktext=dims, showticklabels=True, row=3, col=4)
    fig.update_yaxes(tickmode="array", tickvals=[0], ticktext=["q<sub>t</sub>"], showticklabels=True, row=1, col=1)
    for col in (1, 4):
        fig.update_yaxes(tickmode="array", tickvals=list(range(S)), ticktext=rows, showticklabels=True, row=2, col=col)
    fig.update_yaxes(tickmode="array", tickvals=[0], ticktext=["c<sub>t</sub>"], showticklabels=True, row=3, col=4)
    play = dict(method="animate", label="▶ play 播放",
                args=[None, dict(frame=dict(duration=1500, redraw=True), transition=dict(duration=0),
                                 fromcurrent=True, mode="immediate")])
    slider = dict(active=0, x=0.2, len=0.74, y=-0.02, yanchor="top", pad=dict(t=10),
                  currentvalue=dict(prefix="stage 阶段 ", font=dict(size=13)),
                  steps=[dict(method="animate", label=label,
                              args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                   transition=dict(duration=0))])
                         for k, label in enumerate(("1 states 状态", "2 score 打分", "3 softmax", "4 sum 加权和"))])
    fig.update_annotations(font=dict(size=12))
    fig.update_layout(
        title=dict(text=stage_title(0), x=0.5, xanchor="center", font=dict(size=14)), sliders=[slider],
        updatemenus=[dict(type="buttons", buttons=[play], x=0.0, y=-0.02, xanchor="left", yanchor="top",
                          pad=dict(t=10), showactive=False)],
        height=540, font=FONT, margin=dict(l=50, r=20, t=110, b=90), plot_bgcolor="white",
    )
    return fig


@dataclass
class BottleneckResult:
    """Token accuracy of the toy models by length bucket.

    Attributes:
        buckets: ``(shortest, longest)`` per bucket.
        sequences: Test sequences per bucket (the same ones for every model).
        tokens: Target tokens per bucket.
        accuracy: ``{"attention": [...], "none": [...]}``: greedy token accuracy per bucket.
        steps: Training steps each model got (the live tab stops a run at its time limit).
    """

    buckets: list[tuple[int, int]]
    sequences: list[int]
    tokens: list[int]
    accuracy: dict[str, list[float]]
    steps: dict[str, int]


def bottleneck_accuracy(steps: int = BOTTLENECK["steps"], per_bucket: int = BOTTLENECK_TESTS,
                        buckets: Sequence[tuple[int, int]] = BUCKETS, seed: int = BOTTLENECK_SEED) -> BottleneckResult:
    """Train the live tab's toy model with and without attention, then score it per length bucket.

    Both models are trained by ``demo.live.train_live`` on the reverse task (lengths ``BOTTLENECK``),
    with the same seed, sizes and number of steps (the seed draws the initial weights first, so the two
    see different batches from the same distribution); each bucket's test sequences are drawn once from
    a seeded generator and shared by both models.

    Args:
        steps: Training steps per model.
        per_bucket: Test sequences per bucket.
        buckets: ``(shortest, longest)`` lengths per bucket.
        seed: Seed of the test sequences.
    """
    from demo.live import SYMBOLS, LiveSettings, evaluate_toy, train_live

    tests = [sample_batch("reverse", per_bucket, lo, hi, SYMBOLS, torch.Generator().manual_seed(seed + i))
             for i, (lo, hi) in enumerate(buckets)]
    settings = {k: v for k, v in BOTTLENECK.items() if k != "steps"}
    accuracy: dict[str, list[float]] = {}
    done: dict[str, int] = {}
    for name, on in (("attention", True), ("none", False)):
        # one update at the end; no time bound, so a busy machine cannot cut the run short
        *_, last = train_live(LiveSettings(**settings, steps=steps, every=steps, attention=on), max_seconds=math.inf)
        done[name] = last.step
        accuracy[name] = [evaluate_toy(last.model, batch, None) for batch in tests]
    return BottleneckResult(list(buckets), [b.size for b in tests],
                            [int((b.tgt_lengths - 1).sum()) for b in tests], accuracy, done)


def stored_bottleneck(results: Path, retrain: bool = False) -> BottleneckResult:
    """The bottleneck curve's accuracies, measured once and kept.

    Read from ``results/theory_bottleneck.json`` when measured at today's settings (``BOTTLENECK``, ``BUCKETS``,
    ``BOTTLENECK_TESTS``, ``BOTTLENECK_SEED``),
    else measured by [`bottleneck_accuracy`][reports.theory_figures.bottleneck_accuracy] (two toy trainings) and
    stored there.

    Args:
        results: The results folder.
        retrain: Measure again even when the stored accuracies match the settings (after a change to the live
            tab's training code, which the settings do not capture).
    """
    path = results / BOTTLENECK_STORE
    settings = {"bottleneck": BOTTLENECK, "buckets": [list(b) for b in BUCKETS], "per_bucket": BOTTLENECK_TESTS,
                "seed": BOTTLENECK_SEED}
    if path.is_file() and not retrain:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("settings") == settings:
            r = stored["result"]
            return BottleneckResult(**{**r, "buckets": [tuple(b) for b in r["buckets"]]})  # JSON made them lists
    result = bottleneck_accuracy(BOTTLENECK["steps"], BOTTLENECK_TESTS, BUCKETS, BOTTLENECK_SEED)
    atomic_write_text(path, json.dumps({"settings": settings, "result": asdict(result)}, indent=1) + "\n")
    return result


def bottleneck_figure(result: BottleneckResult) -> go.Figure:
    """Token accuracy by sequence length, attention vs none, with ``n`` on every point."""
    xs = [f"{lo}–{hi}<br>n = {n}" for (lo, hi), n in zip(result.buckets, result.sequences)]
    fig = go.Figure()
    for name, label, dash, where in (("attention", "attention 注意力 (Luong · dot)", "solid", "top center"),
                                     ("none", "no attention 无注意力 (baseline)", "dash", "bottom center")):
        acc = result.accuracy[name]
        fig.add_trace(go.Scatter(
            x=xs, y=acc, mode="lines+markers+text", name=f"{label}, {result.steps[name]} steps",
            line=dict(dash=dash, width=3 if dash == "dash" else 2), text=[f"{a:.1%}" for a in acc],
            textposition=where,
            customdata=[[n, k] for n, k in zip(result.sequences, result.tokens)],
            hovertemplate="length %{x}<br>accuracy %{y:.1%}<br>n = %{customdata[0]} sequences, "
                          "%{customdata[1]} tokens<extra>" + name + "</extra>",
        ))
    fig.update_layout(
        title=dict(text="reverse 倒序 task: greedy token accuracy by length 按长度的词准确率<br><sup>same size "
                   "(hidden 64), seed and steps; trained on lengths "
                   f"{BOTTLENECK['min_len']}–{BOTTLENECK['max_len']} by the live tab's code</sup>",
                   x=0.5, xanchor="center"),
        xaxis=dict(title="sequence length 序列长度 (n = test sequences per bucket)"),
        yaxis=dict(title="token accuracy 词准确率", range=[0, 1.1], tickformat=".0%"),
        height=460, font=FONT, margin=dict(l=60, r=20, t=80, b=120),
        legend=dict(orientation="h", y=-0.3, x=0.5, xanchor="center"),
    )
    return fig

@dataclass
class GoldOverlay:
    """A gold sentence's human links beside the links read off a model's forced attention.

    Attributes:
        gold: The human-aligned pair.
        weights: The forced attention pooled onto the gold words, ``(n_target_words, n_source_words)``.
        predicted: Luong's rule on ``weights``: each English word's most-attended Chinese word (``A``).
        links: The links by the app's five kinds ([`link_marks`][demo.handlers.link_marks]: sure and possible
            hits, missed sure links, possible links not made, extra links), as ``(source, target)`` pairs.
        scores: The sentence's ``aer``, ``precision`` and ``recall`` (fractions).
    """

    gold: Gold
    weights: Tensor
    predicted: set[tuple[int, int]]
    links: dict[str, set[tuple[int, int]]]
    scores: dict[str, float]


def gold_overlay(translator: Translator, gold: Gold) -> GoldOverlay:
    """Force-decode a gold pair, read Luong's links off its attention and sort them against the human ones."""
    weights = force_decode(translator, gold).weights
    if weights.dim() != 2:
        raise ValueError("the alignment figure needs one attention map per step (an RNN model, not a Transformer)")
    predicted = argmax_links(weights)
    return GoldOverlay(gold, weights, predicted, link_marks(predicted, gold),
                       evaluate_links([predicted], [gold], samples=0))


def alignment_gold_figure(translator: Translator, gold: Gold, name: str = "") -> go.Figure:
    """The model's forced attention on a human-aligned pair, the human links drawn over it, the sentence's AER.

    The gold English is fed to the model (teacher forcing, ``attention_core.analysis.alignment.force_decode``); pieces
    and characters are pooled onto the gold words; each English word links to its most-attended Chinese word
    (Luong's rule). The links are drawn as the app's gold view draws them ([`gold_figure`][demo.plots.gold_figure]):
    hits on sure and on possible human links, sure human links the model missed, possible ones it did not make (no
    cost), and its links no human drew.

    Args:
        translator: An RNN translation model (the default ``luong-general``).
        gold: The pair.
        name: Where the pair comes from, for the title (``"DeNero #74"``).
    """
    overlay = gold_overlay(translator, gold)
    fig = gold_figure(gold.source, gold.target, overlay.weights.tolist(), overlay.links)
    s = overlay.scores
    where = f"{_escape(name)} · " if name else ""
    title = (f"human links over forced attention 人工对齐与注意力<br><sup>{where}rule 规则: argmax per English word · "
             f"AER {100 * s['aer']:.1f} % · precision {100 * s['precision']:.1f} % · "
             f"recall {100 * s['recall']:.1f} %</sup>")
    # plotly anchors a two-line title by its first line: "top" at 0.93 keeps both lines inside the figure
    fig.layout.title = dict(text=title, x=0.5, xanchor="center", y=0.93, yref="container", yanchor="top",
                            font=dict(size=15))
    fig.update_layout(height=fig.layout.height + 60, margin=dict(l=60, r=20, t=160, b=70))
    return fig


@dataclass
class GradientView:
    """Attention and input × gradient importance of one decoded sentence (``attention_core.analysis.attribution``).

    Attributes:
        source: Source tokens.
        rows: Output rows (``<eos>`` included when produced).
        text: The output text.
        attention: The attention rows, ``(T, S)``.
        gradient: ``|input × gradient|``, rows normalised, ``(T, S)``.
        tau: Kendall's τ-b of each row pair, ``(T,)`` (``nan`` where undefined).
    """

    source: list[str]
    rows: list[str]
    text: str
    attention: Tensor
    gradient: Tensor
    tau: Tensor


def gradient_view(translator: Translator, text: str = GRADIENT_TEXT) -> GradientView:
    """Decode ``text`` greedily and compute its gradient importance beside its attention."""
    out = translator.translate([text])[0]
    importance = input_x_gradient(translator, out)
    return GradientView(out.source_tokens, out.row_labels, out.text, out.weights.float().cpu(), importance.gradient,
                        importance.agreement)


def gradient_figure(translator: Translator, text: str = GRADIENT_TEXT) -> go.Figure:
    """Attention (left) beside input × gradient importance (right), with Kendall's τ of each row on the right.

    Args:
        translator: A translation model with attention (the default ``luong-general``).
        text: The source sentence (decoded greedily, as the app's first answer).
    """
    view = gradient_view(translator, text)
    x_title = "source 源"
    left = alignment_figure(view.source, view.rows, view.attention.tolist(), x_title=x_title)
    right = alignment_figure(view.source, view.rows, view.gradient.tolist(), x_title=x_title)
    taus = ["τ n/a" if math.isnan(t) else f"τ {t:+.2f}" for t in view.tau.tolist()]
    right.update_yaxes(ticktext=[f"{_escape(r)} · {t}" for r, t in zip(view.rows, taus)],
                       tickvals=list(range(len(view.rows))), tickmode="array")
    valid = view.tau[~view.tau.isnan()]
    mean = float(valid.mean()) if valid.numel() else float("nan")
    top = int((view.attention.argmax(-1) == view.gradient.argmax(-1)).sum())
    titles = ["<b>attention 注意力</b> a<sub>t,s</sub>",
              "<b>input × gradient 输入×梯度</b><br>"
              "|x<sub>s</sub> · ∂log p(y<sub>t</sub>)/∂x<sub>s</sub>|, rows sum to 1"]
    fig = side_by_side([left, right], titles,
                       f"where it looked vs what it depended on 看了哪里与依赖哪里<br><sup>{_escape(text)} → "
                       f"{_escape(view.text)} · mean τ 平均 {mean:.2f} · same top-1 最大处相同: {top} of "
                       f"{len(view.rows)}</sup>")
    fig.update_yaxes(side="right", row=1, col=2)
    # the colour bar lies under the panels: on the right it would cover the τ labels in a narrow page column
    fig.update_layout(margin=dict(l=70, r=130, t=120, b=110), height=fig.layout.height + 60)
    for trace in fig.data:
        if isinstance(trace, go.Heatmap) and trace.showscale:
            trace.colorbar = dict(orientation="h", x=0.5, xanchor="center", y=-0.2, yanchor="top", len=0.5,
                                  thickness=10, title=dict(text="weight 权重 (rows sum to 1)", side="right"))
    return fig


def alignment_gold(data: str | Path | None = None) -> Gold | None:
    """The alignment figure's gold sentence from the data folder, or ``None`` (with a note) without the gold set."""
    try:
        golds = read_gold(data_home(data), ALIGNMENT_SET)
    except FileNotFoundError:
        print(f"note: no theory-alignment (no gold set {ALIGNMENT_SET} in {data_home(data)}/align-zh-en)",
              file=sys.stderr)
        return None
    found = [g for g in golds if "".join(g.source) == ALIGNMENT_TEXT]
    if not found:
        raise ValueError(f"{ALIGNMENT_SET} has no sentence {ALIGNMENT_TEXT!r}")
    return found[0]


def alignment_theory_figures(registry: ModelRegistry, gold: Gold | None = None) -> dict[str, go.Figure]:
    """The alignment page's figures: ``theory-alignment`` (needs ``gold``; left out without) and ``theory-gradient``.

    Args:
        registry: The bundled zoo (the default translation model).
        gold: The gold pair of the alignment figure; by default ``alignment_gold()``.
    """
    translator = registry.get("translation", DEFAULT_VARIANT)
    gold = gold if gold is not None else alignment_gold()
    figures = {}
    if gold is not None:
        name = ALIGNMENT_NAME if "".join(gold.source) == ALIGNMENT_TEXT else ""
        figures["theory-alignment"] = alignment_gold_figure(translator, gold, name)
    figures["theory-gradient"] = gradient_figure(translator)
    return figures


def theory_figure_links() -> dict[str, str]:
    """For every theory figure, the app query that opens the app on the same input and settings.

    Returns:
        Figure file stem → query string (``demo.links.app_query``).
    """
    def compare(task: str, text: str, a: dict, b: dict) -> str:
        sides = {f"a_{k}": v for k, v in a.items()} | {f"b_{k}": v for k, v in b.items()}
        return app_query("compare", task=task, text=text, **sides)

    general = DEFAULT_VARIANT
    transformer = dict(variant=TRANSFORMER_VARIANT, beam=TRANSFORMER_BEAM)
    layer, head = CAUSAL_VIEW
    return {
        "theory-steps": app_query("translation", text=STEPS_TEXT, variant=general, beam=1),
        "theory-tiny-steps": app_query("translation", text=STEPS_TEXT, variant=general, beam=1),
        "theory-scores": compare("translation", SAME_OUTPUT_TEXT, dict(variant="luong-dot", beam=1),
                                 dict(variant="luong-scaled_dot", beam=1)),
        "theory-qkv": app_query("translation", text=STEPS_TEXT, variant=general, beam=1),
        "theory-bahdanau-luong": compare("translation", SAME_OUTPUT_TEXT, dict(variant="bahdanau", beam=1),
                                         dict(variant="luong-concat", beam=1)),
        "theory-local-p": app_query("translation", text=LONG_TEXT, variant=LOCAL_P, beam=1, window="default"),
        "theory-soft-hard": compare("translation", LONG_TEXT, dict(variant=LOCAL_P, beam=1, hard=False),
                                    dict(variant=LOCAL_P, beam=1, hard=True)),
        "theory-masking": app_query("translation", text=SHORT_TEXT + STEPS_TEXT, variant=general, beam=1),
        "theory-greedy-beam": compare("translation", LONG_TEXT, dict(variant=general, beam=1),
                                      dict(variant=general, beam=5)),
        "theory-couplet-rules": app_query("couplet", text=COUPLET_RULES_TEXT, variant=general, beam=5,
                                          constrained=False),
        "theory-transformer": app_query("couplet", text=COUPLET_TEXT, variant=general, beam=5),
        "theory-positions": app_query("translation", text=STEPS_TEXT, **transformer),
        "theory-causal-mask": app_query("translation", text=STEPS_TEXT, **transformer, layer=layer, head=head),
        "theory-bottleneck": app_query("live", **BOTTLENECK, attention=True),
        "theory-alignment": app_query("translation", text=ALIGNMENT_TEXT, variant=general, beam=1),
        "theory-gradient": app_query("translation", text=GRADIENT_TEXT, variant=general, beam=1),
    }


def theory_figures(registry: ModelRegistry, bottleneck: BottleneckResult | None = None,
                   gold: Gold | None = None) -> dict[str, go.Figure]:
    """Every theory figure by file stem, from the bundled models (``translation``/``couplet`` variants).

    Args:
        registry: The bundled zoo (needs luong-general, luong-dot, luong-scaled_dot, bahdanau, luong-concat
            and luong-general-local-p for both tasks; the translation Transformer for the position and
            causal-mask figures, which are left out, with a note, without it).
        bottleneck: Toy accuracies; computed (a few CPU minutes) when ``None`` (``write_theory_figures`` passes
            the stored ones, [`stored_bottleneck`][reports.theory_figures.stored_bottleneck]).
        gold: The alignment figure's gold pair; read from the data folder when ``None`` (the figure is left
            out, with a note, without the gold set).
    """
    tr = partial(registry.get, "translation")
    couplet = registry.get("couplet", DEFAULT_VARIANT)
    figures = {
        "theory-steps": steps_figure(tr(DEFAULT_VARIANT)),
        "theory-tiny-steps": tiny_steps_figure(),
        "theory-scores": scores_figure(tr("luong-dot"), tr("luong-scaled_dot")),
        "theory-qkv": qkv_figure(tr(DEFAULT_VARIANT)),
        "theory-bahdanau-luong": bahdanau_luong_figure(tr("bahdanau"), tr("luong-concat")),
        "theory-local-p": local_p_figure(tr(LOCAL_P)),
        "theory-soft-hard": soft_hard_figure(tr(LOCAL_P)),
        "theory-masking": masking_figure(tr(DEFAULT_VARIANT)),
        "theory-greedy-beam": greedy_beam_figure(tr(DEFAULT_VARIANT)),
        "theory-couplet-rules": couplet_rules_figure(couplet),
        "theory-transformer": transformer_figure(couplet),
        "theory-bottleneck": bottleneck_figure(bottleneck or bottleneck_accuracy()),
    }
    return figures | transformer_theory_figures(registry) | alignment_theory_figures(registry, gold)


def transformer_theory_figures(registry: ModelRegistry) -> dict[str, go.Figure]:
    """The Transformer page's theory figures (positions, causal mask), from the translation Transformer.

    Without one in ``registry`` it returns nothing and says so in one line: the other figures do not need it.
    """
    if TRANSFORMER_VARIANT not in registry.models.get("translation", {}):
        print(f"note: no theory-positions or theory-causal-mask (no translation model {TRANSFORMER_VARIANT})",
              file=sys.stderr)
        return {}
    transformer = registry.get("translation", TRANSFORMER_VARIANT)
    return {
        "theory-positions": positions_figure(transformer.model.cfg.hidden_size),
        "theory-causal-mask": causal_mask_figure(transformer),
    }


def write_theory_figures(results: Path, registry: ModelRegistry, bottleneck: BottleneckResult | None = None,
                         retrain_toy: bool = False) -> list[Path]:
    """Write every theory figure as ``results/figures/theory-<name>.html`` and ``.png``.

    Args:
        results: The results folder.
        registry: The bundled models (``ModelRegistry.load(device="cpu")``).
        bottleneck: Toy accuracies already computed; by default the stored ones, measured here (two toy
            trainings of ``BOTTLENECK["steps"]`` steps each, about a CPU minute each on an idle machine) when
            none are stored at today's settings or ``retrain_toy`` asks.
        retrain_toy: Measure the toy accuracies again (see
            [`stored_bottleneck`][reports.theory_figures.stored_bottleneck]).

    Returns:
        The PNG paths written (the HTML lies beside each).
    """
    return write_figures(results, theory_figures(registry, bottleneck or stored_bottleneck(results, retrain_toy)))
