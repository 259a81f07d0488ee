"""Figures for the theory pages: each one is made from the bundled models and backs one page's claims.

One function per figure; [`write_theory_figures`][reports.theory_figures.write_theory_figures] writes them
all as ``results/figures/theory-<name>.html`` and ``.png``, and
[`theory_figure_links`][reports.theory_figures.theory_figure_links] gives, for each, the app query that opens
the app on the same input and settings (the docs put an "open in the app" link under every figure).

| figure | page | what it shows |
|---|---|---|
| ``theory-steps`` | steps | one sentence step by step: scores → softmax → context shares → next token |
| ``theory-scores`` | scores | dot vs scaled dot on the same sentence, with each one's mean row entropy |
| ``theory-qkv`` | qkv | the same queries and keys with the learned ``W_a`` and with ``W_a = I`` |
| ``theory-bahdanau-luong`` | bahdanau-luong | Bahdanau vs Luong (both concat) on the same sentence |
| ``theory-local-p`` | local | local-p's window band and predicted centres ``p_t`` |
| ``theory-soft-hard`` | local | soft vs hard attention of the same model and sentence |
| ``theory-masking`` | masking | two sentences in one padded batch: the short one's weights on ``<pad>`` are exactly 0 |
| ``theory-greedy-beam`` | decoding | greedy vs beam 5 on the same sentence |
| ``theory-couplet-rules`` | decoding | a couplet with and without the reader's rules |
| ``theory-transformer`` | transformer | the couplet model's scores and weights: one cross-attention head |
| ``theory-bottleneck`` | why | toy reverse task: token accuracy by length, attention vs none |

The raw scores ``e_t = score(h_t, h̄_s)`` are not part of a decoder step's output, so
[`replay`][reports.theory_figures.replay] feeds a decoded output back through ``Seq2Seq.step`` (the same
step greedy and beam search call), records each step's query with a forward pre-hook on the decoder's
attention module, and recomputes the scores with the model's own score function.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from torch import Tensor

from attention_core.batch import make_batch
from attention_core.couplet import CoupletRules
from attention_core.metrics import attention_entropy, diagonality
from attention_core.pipeline import Output, Translator
from attention_core.seq2seq import WindowArg
from attention_core.toy import sample_batch
from demo.handlers import heatmap_figure, sentence_state
from demo.links import app_query
from demo.models import DEFAULT_VARIANT, ModelRegistry
from demo.plots import FONT, alignment_figure
from reports.common import write_figures

STEPS_TEXT = "我们每天早上七点吃早饭。"
"""Step-through and query/key input: the default model reorders it (… at seven every morning)."""
SAME_OUTPUT_TEXT = "我的猫喜欢睡在沙发上。"
"""Score and decoder comparisons: the compared variants write the same translation of it."""
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
LOCAL_P = "luong-general-local-p"

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


def _uniform(out: Output) -> str:
    """The entropy of uniform attention over the output's source, ``log S``, in words."""
    return f"uniform 均匀 = log S = {math.log(max(1, len(out.source_tokens))):.2f} nats"


def _escape(text: str) -> str:
    """Escape a label for plotly's HTML subset (quotes stay: plotly shows ``&#x27;`` literally)."""
    return html.escape(text, quote=False)


def _panel(translator: Translator, out: Output, window: WindowArg = "config") -> go.Figure:
    """One alignment heatmap as the app draws it (words merged, window band and ``p_t``)."""
    return heatmap_figure(sentence_state(out, translator.model, window), None, False, "")


def side_by_side(panels: Sequence[go.Figure], titles: Sequence[str], title: str,
                 colorbars: str = "last") -> go.Figure:
    """Put figures made by ``demo.plots`` next to each other, keeping their traces, shapes and ticks.

    Args:
        panels: Single-plot figures (heatmaps from ``alignment_figure``).
        titles: One title per panel (HTML; escape labels before).
        title: The figure title.
        colorbars: ``"last"``: one colour bar (panels share the 0–1 scale); ``"each"``: one per panel.

    Returns:
        The combined figure; source tokens are written under each panel.
    """
    n = len(panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=list(titles),
                        horizontal_spacing=0.14 if colorbars == "each" else 0.09)
    legend_names: set[str] = set()
    for i, panel in enumerate(panels, 1):
        for trace in panel.data:
            if isinstance(trace, go.Heatmap):
                trace.showscale = colorbars == "each" or i == n
            elif trace.name in legend_names:
                trace.showlegend = False
            legend_names.add(trace.name)
            fig.add_trace(trace, row=1, col=i)
        for shape in panel.layout.shapes:
            fig.add_shape(shape, row=1, col=i)
        keep = ("tickmode", "tickvals", "ticktext", "tickfont", "tickangle", "range", "autorange", "title")
        xaxis, yaxis = panel.layout.xaxis.to_plotly_json(), panel.layout.yaxis.to_plotly_json()
        fig.update_xaxes(**{k: v for k, v in xaxis.items() if k in keep}, side="bottom", row=1, col=i)
        fig.update_yaxes(**{k: v for k, v in yaxis.items() if k in keep and (i == 1 or k != "title")}, row=1, col=i)
    if colorbars == "each":
        for i, trace in enumerate(t for t in fig.data if isinstance(t, go.Heatmap)):
            domain = fig.layout[f"xaxis{i + 1 if i else ''}"].domain
            trace.colorbar = dict(trace.colorbar.to_plotly_json(), x=domain[1] + 0.01, thickness=10, len=0.9)
    fig.update_annotations(font=dict(size=12))
    height = max(p.layout.height or 400 for p in panels)
    fig.update_layout(
        # a long title wraps once, at its first " · ": the pages embed the figure in a narrow column
        title=dict(text=title.replace(" · ", "<br>", 1) if len(title) > 60 and "<br>" not in title else title,
                   x=0.5, xanchor="center",
                   font=dict(size=15)),
        height=height + 40, font=FONT,
        margin=dict(l=60, r=40, t=130, b=110), showlegend=bool(legend_names - {None}),
        legend=dict(orientation="h", y=-0.16, yanchor="top", x=0.5, xanchor="center"),
    )
    return fig


def steps_figure(translator: Translator, text: str = STEPS_TEXT, top: int = 5) -> go.Figure:
    """Alammar-style step-through of one sentence (greedy), one frame per decoding step.

    Four panels per step ``t``: the raw scores ``e_{t,s}``; the weights ``a_t = softmax(e_t)``; each
    source position's share ``a_{t,s} ‖h̄_s‖`` of the context ``c_t = Σ_s a_{t,s} h̄_s`` (``‖c_t‖`` in the
    title); and the ``top`` most probable next tokens, the chosen one in red. A slider moves through the
    steps; the figure opens (and its PNG shows) the step with the sharpest attention.

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
    shares = weights * norms  # a_{t,s} ‖h̄_s‖: (T, S)
    context = (weights @ trace.values[:S]).norm(dim=-1)  # ‖c_t‖: (T,)
    probs = torch.softmax(trace.logits, dim=-1)  # (T, V)
    probs[:, [cfg.pad_id, cfg.bos_id, cfg.unk_id]] = 0.0  # never generated
    xs = [_escape(t) for t in trace.source]
    ys = [_escape(t) for t in trace.output]
    q = "h<sub>t</sub>" if cfg.decoder == "luong" else "s<sub>t−1</sub>"
    titles = [
        f"① score 打分 e<sub>t,s</sub> = {SCORE_FORMULAS[cfg.score].format(q=q)}",
        "② softmax → weights 权重 a<sub>t,s</sub> (sum 和 = 1)",
        "③ a<sub>t,s</sub>‖h̄<sub>s</sub>‖: each source position's share of c<sub>t</sub> = Σ<sub>s</sub> "
        "a<sub>t,s</sub> h̄<sub>s</sub> 上下文",
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
            go.Bar(x=list(range(S)), y=shares[t].tolist(), marker_color="seagreen",
                   hovertext=[f"{x}: a·‖h̄‖ = {a:.2f}" for x, a in zip(xs, shares[t].tolist())], hoverinfo="text"),
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
    fig.update_yaxes(range=[0, float(shares.max()) * 1.1 + 1e-6], title="a·‖h̄‖", row=3, col=1)
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
        titles.append(f"<b>{name}</b>: {_escape(out.text)}<br>mean entropy 平均熵 "
                      f"{attention_entropy(out.weights):.2f} nats")
    top = math.log(len(dot.tokenize(text)))
    return side_by_side(panels, titles, f"same sentence, same data, only the score differs · uniform 均匀 = "
                        f"log S = {top:.2f} nats")


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
    titles = []
    for name, w in (("h<sub>t</sub>ᵀ W<sub>a</sub> h̄<sub>s</sub> (the model 模型)", learned),
                    ("h<sub>t</sub>ᵀ h̄<sub>s</sub> (W<sub>a</sub> = I, same h<sub>t</sub>, h̄<sub>s</sub>)", plain)):
        titles.append(f"<b>{name}</b><br>mean entropy 平均熵 {attention_entropy(w):.2f} · diagonality 对角度 "
                      f"{diagonality(w):.2f}")
    panels = [alignment_figure(trace.source, trace.output, w.tolist()) for w in (learned, plain)]
    return side_by_side(panels, titles, f"query 查询 h<sub>t</sub> · keys 键 h̄<sub>s</sub> · output: "
                        f"{_escape(out.text)}")


def bahdanau_luong_figure(bahdanau: Translator, luong: Translator, text: str = SAME_OUTPUT_TEXT) -> go.Figure:
    """Bahdanau vs Luong with the same concat score, on the same sentence."""
    panels, titles = [], []
    for name, translator in (("Bahdanau: query s<sub>t−1</sub>", bahdanau), ("Luong: query h<sub>t</sub>", luong)):
        out = translator.translate([text])[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b>: {_escape(out.text)}<br>{_entropy_line(out)}")
    return side_by_side(panels, titles, f"Bahdanau vs Luong, both with the concat score 同为加性打分 · {_uniform(out)}")


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
    title = (f"local-p (D = {D}): {_escape(out.text)}<br><sup>{_entropy_line(out)} · "
             f"largest weight outside the window 窗口外最大权重 = {outside:g}</sup>")
    fig = heatmap_figure(state, None, False, title)
    fig.layout.title.y = fig.layout.title.yanchor = None  # automatic: two lines stay inside the margin
    fig.update_layout(margin=dict(t=190))
    return fig


def soft_hard_figure(translator: Translator, text: str = LONG_TEXT) -> go.Figure:
    """Soft vs hard (argmax, decode time only) attention of the same model on the same sentence."""
    panels, titles = [], []
    for name, hard in (("soft 软", False), ("hard 硬 (argmax)", True)):
        out = translator.translate([text], hard=hard)[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b>: {_escape(out.text)}<br>{_entropy_line(out)}")
    return side_by_side(panels, titles, f"soft vs hard attention, same model and sentence 同一句 · {_uniform(out)}")


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
        f"<b>same scores, no mask 无掩码</b><br>weight on ∅ &lt;pad&gt;, mean per row = {leak:.1%}",
        f"<b>long 长句</b> (sets the width S = {S})<br>{_escape(outs[1].text)}",
    ]
    return side_by_side(panels, titles, f"one padded batch 一个批次: {_escape(short)} + {_escape(long)}<br><sup>short "
                        f"→ {_escape(outs[0].text)} · ∅ = &lt;pad&gt; (red box)</sup>")


def greedy_beam_figure(translator: Translator, text: str = LONG_TEXT) -> go.Figure:
    """Greedy vs beam 5 on the same sentence, with each output's log-probability."""
    panels, titles = [], []
    for name, beam in (("greedy 贪心", 1), ("beam 5 束搜索", 5)):
        out = translator.translate([text], beam_size=beam)[0]
        panels.append(_panel(translator, out))
        n = len(out.row_labels)
        titles.append(f"<b>{name}</b>: {_escape(out.text)}<br>log p = {out.score:.2f} · "
                      f"log p ÷ length = {out.score / max(1, n):.3f} ({n} tokens with &lt;eos&gt;)")
    return side_by_side(panels, titles, "greedy vs beam search, same model and sentence 同一模型同一句")


def couplet_rules_figure(translator: Translator, text: str = COUPLET_RULES_TEXT, beam: int = 5) -> go.Figure:
    """A 下联 with the reader's rules (``CoupletRules()``) and without any constraint, beam ``beam``."""
    panels, titles = [], []
    for name, constrained in (("with rules 有约束 (CoupletRules())", True), ("no constraints 无约束", False)):
        out = translator.translate([text], beam_size=beam, constrained=constrained,
                                   rules=CoupletRules() if constrained else None)[0]
        panels.append(_panel(translator, out))
        titles.append(f"<b>{name}</b>: {_escape(out.text)}<br>{len(out.tokens)} characters 字 "
                      f"(上联 {len(translator.tokenize(text))}) · log p = {out.score:.2f}")
    return side_by_side(panels, titles, f"上联 {_escape(text)} · beam {beam}")


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
                       text=hover, colorbar=dict(title="score"))
    right = alignment_figure(trace.source, trace.output, weights.tolist())
    titles = ["<b>scores 分数 QKᵀ</b><br>e<sub>t,s</sub> = h<sub>t</sub>ᵀ (W<sub>a</sub> h̄<sub>s</sub>)",
              f"<b>weights 权重 softmax(QKᵀ)</b> → {_escape(out.text)}<br>entropy 熵 "
              f"{attention_entropy(out.weights):.2f} nats · diagonality 对角度 {diagonality(out.weights):.2f}"]
    return side_by_side([left, right], titles, "what one cross-attention head computes 一个交叉注意力头的计算<br>"
                        "<sup>our RNN couplet model (luong-general), not a Transformer 这是 RNN 模型，并非 Transformer"
                        "</sup>", colorbars="each")


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


def bottleneck_accuracy(steps: int = BOTTLENECK["steps"], per_bucket: int = 200,
                        buckets: Sequence[tuple[int, int]] = BUCKETS, seed: int = 7) -> BottleneckResult:
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


def bottleneck_figure(result: BottleneckResult) -> go.Figure:
    """Token accuracy by sequence length, attention vs none, with ``n`` on every point."""
    xs = [f"{lo}–{hi}<br>n = {n}" for (lo, hi), n in zip(result.buckets, result.sequences)]
    fig = go.Figure()
    for name, label, dash, where in (("attention", "attention 注意力 (Luong · dot)", "solid", "top center"),
                                     ("none", "no attention 无注意力 (baseline)", "dash", "bottom center")):
        acc = result.accuracy[name]
        fig.add_trace(go.Scatter(
            x=xs, y=acc, mode="lines+markers+text", name=f"{label}, {result.steps[name]} steps",
            line=dict(dash=dash, width=3 if dash == "dash" else 2), text=[f"{a:.0%}" for a in acc],
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


def theory_figure_links() -> dict[str, str]:
    """For every theory figure, the app query that opens the app on the same input and settings.

    Returns:
        Figure file stem → query string (``demo.links.app_query``).
    """
    def compare(task: str, text: str, a: dict, b: dict) -> str:
        sides = {f"a_{k}": v for k, v in a.items()} | {f"b_{k}": v for k, v in b.items()}
        return app_query("compare", task=task, text=text, **sides)

    general = DEFAULT_VARIANT
    return {
        "theory-steps": app_query("translation", text=STEPS_TEXT, variant=general, beam=1),
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
        "theory-bottleneck": app_query("live", **BOTTLENECK, attention=True),
    }


def theory_figures(registry: ModelRegistry, bottleneck: BottleneckResult | None = None) -> dict[str, go.Figure]:
    """Every theory figure by file stem, from the bundled models (``translation``/``couplet`` variants).

    Args:
        registry: The bundled zoo (needs luong-general, luong-dot, luong-scaled_dot, bahdanau, luong-concat
            and luong-general-local-p for both tasks).
        bottleneck: Toy accuracies; computed (a few CPU minutes) when ``None``.
    """
    tr = partial(registry.get, "translation")
    couplet = registry.get("couplet", DEFAULT_VARIANT)
    return {
        "theory-steps": steps_figure(tr(DEFAULT_VARIANT)),
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


def write_theory_figures(results: Path, registry: ModelRegistry,
                         bottleneck: BottleneckResult | None = None) -> list[Path]:
    """Write every theory figure as ``results/figures/theory-<name>.html`` and ``.png``.

    Args:
        results: The results folder.
        registry: The bundled models (``ModelRegistry.load(device="cpu")``).
        bottleneck: Toy accuracies already computed; by default they are computed here (two toy
            trainings of ``BOTTLENECK["steps"]`` steps each, about a CPU minute each).

    Returns:
        The PNG paths written (the HTML lies beside each).
    """
    return write_figures(results, theory_figures(registry, bottleneck))
