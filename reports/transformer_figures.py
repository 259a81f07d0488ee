"""Figures for the Transformer page, made from the bundled Transformer and measured against the RNN.

One function per figure, each taking the loaded translators;
[`write_transformer_figures`][reports.transformer_figures.write_transformer_figures] writes them all as
``results/figures/transformer-<name>.html`` and ``.png``, and
[`transformer_figure_links`][reports.transformer_figures.transformer_figure_links] gives each one the app
query that opens the app on the Transformer with the same input.

| figure | what it shows |
|---|---|
| ``transformer-cross-heads`` | one sentence: the cross-attention of every layer × head |
| ``transformer-agreement`` | per head, over test sentences: how often its argmax source position is the RNN's |
| ``transformer-entropy`` | mean cross-attention entropy per layer and head, with the RNN's as a reference |
| ``transformer-encoder-head`` | the clearest encoder self-attention head; every head's pattern shares |

The comparison with the RNN is made on the same output: the Transformer translates a test sentence
(greedy), [`Translator.attention_maps`][attention_core.decoding.translator.Translator.attention_maps] gives every
layer and head behind that output, and the RNN (``luong-general``) is fed the same output tokens with
[`replay`][reports.theory_figures.replay], so both alignments have the same rows. Entropy and diagonality
are the library's own statistics (``attention_core.analysis.metrics``), pooled over output rows.
"""

from __future__ import annotations

import html
import math
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from torch import Tensor

from attention_core.analysis.metrics import attention_entropy, diagonality
from attention_core.data.subword import word_rows
from attention_core.data.tasks import DataError, load_splits
from attention_core.decoding.translator import Translator
from demo.links import app_query
from demo.models import DEFAULT_VARIANT, ModelRegistry
from demo.plots import COLORSCALE, FONT
from reports.common import write_figures
from reports.theory_figures import STEPS_TEXT, replay

VARIANT = "transformer"
"""The zoo variant name of the Transformer (``models/<task>/transformer/``)."""
EXAMPLE_TEXT = STEPS_TEXT
"""The fixed example: short, and its translation reorders (… every morning ← 每天早上)."""
TEST_PAIRS = 200
"""Test sentences the per-head statistics are measured on (the first ones of the translation test split)."""
BEAM = 5
"""Beam of the example figures (the app's default); the measured statistics decode greedily."""
PATTERNS = {
    "previous": "previous token 前一个字",
    "self": "itself 自身",
    "next": "next token 后一个字",
    "punctuation": "punctuation 标点",
    "hub": "one key for all 同一个键",
}
"""Encoder self-attention patterns: where a query position puts its weight."""


def _escape(text: str) -> str:
    """Escape a label for plotly's HTML subset."""
    return html.escape(text, quote=False)


def head_agreement(cross: Tensor, reference: Tensor) -> Tensor:
    """For each layer and head, the output rows whose argmax source position is the reference's.

    Args:
        cross: Cross-attention of one output, ``(L, h, T, S)``.
        reference: Another alignment of the same output rows, ``(T, S)`` (the RNN's).

    Returns:
        Matching rows per head, ``(L, h)`` (integers as floats; divide by ``T`` for a share).
    """
    return (cross.argmax(dim=-1) == reference.argmax(dim=-1)).float().sum(dim=-1)  # (L, h)


@dataclass
class HeadStats:
    """Cross-attention statistics of every Transformer head, pooled over the output rows of many sentences.

    Attributes:
        sentences: Sentences measured.
        rows: Output rows (tokens and ``<eos>``) pooled.
        agreement: Share of rows whose argmax source position is the reference RNN's, ``(L, h)``.
        agreement_mean: The same for the head-averaged map of each layer, ``(L,)`` (the last layer's is the
            map the app shows).
        entropy: Mean row entropy (nats, ``metrics.attention_entropy``), ``(L, h)``.
        diagonality: Mass within one position of the diagonal (``metrics.diagonality``), ``(L, h)``.
        rnn_entropy: The reference RNN's mean row entropy on the same rows.
        rnn_diagonality: The reference RNN's diagonality on the same rows.
        uniform_entropy: Mean ``log S`` over the rows: the entropy of attention spread evenly.
        chance: Mean ``1 / S`` over the rows: the agreement of a head that picks a position at random.
        reference: Name of the reference model.
    """

    sentences: int
    rows: int
    agreement: Tensor
    agreement_mean: Tensor
    entropy: Tensor
    diagonality: Tensor
    rnn_entropy: float
    rnn_diagonality: float
    uniform_entropy: float
    chance: float
    reference: str = DEFAULT_VARIANT


@torch.inference_mode()
def measure_heads(transformer: Translator, rnn: Translator, texts: Sequence[str], batch_size: int = 50,
                  reference: str = DEFAULT_VARIANT) -> HeadStats:
    """Decode ``texts`` with the Transformer (greedy) and measure every cross-attention head on its outputs.

    The RNN is fed the Transformer's output tokens (``replay``), so both alignments have the same rows.

    Args:
        transformer: The Transformer.
        rnn: An RNN model with attention and the same target vocabulary.
        texts: Source sentences.
        batch_size: Sentences replayed through the RNN at once.
        reference: The RNN's name, for the figures.

    Returns:
        The pooled statistics.

    Raises:
        ValueError: If the two models' target vocabularies differ (the RNN could not read the outputs), or
            no text is given.
    """
    if rnn.tgt_vocab.itos != transformer.tgt_vocab.itos:
        raise ValueError("the Transformer and the RNN have different target vocabularies: cannot compare "
                         "their alignments on the same output")
    if any(rnn.tokenize(t) != transformer.tokenize(t) for t in texts):
        raise ValueError("the Transformer and the RNN split a source sentence differently: their alignments "
                         "have different columns")
    if not texts:
        raise ValueError("no sentences to measure")
    outputs = transformer.translate(list(texts), beam_size=1)
    cfg = transformer.model.cfg
    L, h = cfg.num_layers, cfg.heads
    agree, agree_mean = torch.zeros(L, h), torch.zeros(L)
    entropy, diag = torch.zeros(L, h), torch.zeros(L, h)
    rnn_entropy = rnn_diag = uniform = chance = 0.0
    rows = 0
    for start in range(0, len(texts), batch_size):
        chunk = list(range(start, min(start + batch_size, len(texts))))
        traces = replay(rnn, [texts[i] for i in chunk], [outputs[i] for i in chunk])
        for i, trace in zip(chunk, traces):
            cross = transformer.attention_maps(outputs[i]).cross  # (L, h, T, S)
            T, S = cross.shape[-2:]
            rnn_weights = trace.weights[:, :S]  # (T, S): the batch was padded wider
            rows += T
            agree += head_agreement(cross, rnn_weights)
            agree_mean += head_agreement(cross.mean(dim=1, keepdim=True), rnn_weights)[:, 0]
            for layer in range(L):
                for head in range(h):  # the metrics average rows: times T pools them over sentences
                    entropy[layer, head] += attention_entropy(cross[layer, head]) * T
                    diag[layer, head] += diagonality(cross[layer, head]) * T
            rnn_entropy += attention_entropy(rnn_weights) * T
            rnn_diag += diagonality(rnn_weights) * T
            uniform += math.log(S) * T
            chance += T / S
    return HeadStats(len(texts), rows, agree / rows, agree_mean / rows, entropy / rows, diag / rows,
                     rnn_entropy / rows, rnn_diag / rows, uniform / rows, chance / rows, reference)


@torch.inference_mode()
def encoder_maps(transformer: Translator, text: str) -> tuple[list[str], Tensor]:
    """The source tokens of ``text`` and the encoder self-attention of every layer and head, ``(L, h, S, S)``."""
    tokens = transformer.tokenize(text)
    src = torch.tensor([transformer.src_vocab.encode(tokens)], device=transformer.device)
    bos = torch.tensor([[transformer.tgt_vocab.bos_id]], device=transformer.device)  # the encoder ignores it
    transformer.model.eval()
    maps = transformer.model.attention_maps(src, torch.tensor([len(tokens)]), bos)
    return tokens, maps.encoder[0].float().cpu()


def encoder_patterns(transformer: Translator, texts: Sequence[str]) -> Tensor:
    """For every encoder head, the share of its weight on each of ``PATTERNS``, pooled over query positions.

    Args:
        transformer: The Transformer.
        texts: Source sentences (encoded alone, no padding).

    Returns:
        ``(L, h, len(PATTERNS))``: mean weight per query position on the previous position, itself, the next
        position, punctuation (Unicode category P; every punctuation key, itself included), and the one key
        the head weighs most in that sentence (its heaviest column, ``max_column_share``: a "hub" every position
        looks at). The last is picked after the fact and overlaps the others (the heaviest key may be a
        punctuation mark, and its column includes its own diagonal weight): it is biased upward, compare it
        with ``hub_baseline``, not with ``1 / S``.
    """
    cfg = transformer.model.cfg
    total, queries = torch.zeros(cfg.num_layers, cfg.heads, len(PATTERNS)), 0
    for text in texts:
        tokens, enc = encoder_maps(transformer, text)  # (L, h, S, S)
        S = enc.size(-1)
        punct = torch.tensor([unicodedata.category(t[0]).startswith("P") for t in tokens])  # (S,)
        total[..., 0] += enc.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1)
        total[..., 1] += enc.diagonal(dim1=-2, dim2=-1).sum(-1)
        total[..., 2] += enc.diagonal(offset=1, dim1=-2, dim2=-1).sum(-1)
        total[..., 3] += enc[..., punct].sum(dim=(-2, -1))
        total[..., 4] += max_column_share(enc) * S  # (L, h): the heaviest column
        queries += S
    return total / max(1, queries)


def max_column_share(weights: Tensor) -> Tensor:
    """The "one key for all" statistic: the heaviest key's total weight divided by the number of queries.

    Args:
        weights: Self-attention maps, ``(..., S, S)`` (rows are query positions, each a distribution).

    Returns:
        ``(...)``: the largest column sum over ``S``. It is a maximum chosen after the fact, so it is at least
        ``1 / S`` for any map (exactly ``1 / S`` for uniform attention) and above ``1 / S`` for any sharp map,
        even one whose rows pick their keys independently of each other.
    """
    return weights.sum(dim=-2).max(dim=-1).values / weights.size(-2)


def shuffled_rows(weights: Tensor, generator: torch.Generator) -> Tensor:
    """``weights`` with each row's values moved to randomly permuted key positions (each row keeps its sharpness).

    The baseline of ``max_column_share``: rows as sharp as the head's own, but with no key shared on purpose.
    """
    order = torch.argsort(torch.rand(weights.shape, generator=generator), dim=-1)
    return torch.gather(weights, -1, order)


def hub_baseline(transformer: Translator, texts: Sequence[str], draws: int = 20, seed: int = 0) -> Tensor:
    """Per encoder head, the "one key for all" share its maps would have if every row's keys were shuffled.

    The same pooling as ``encoder_patterns`` (its ``hub`` entry), on ``shuffled_rows`` of each map, averaged
    over ``draws`` shuffles: what the statistic gives for attention exactly as sharp as the head's but with
    no common key. The head's ``hub`` share minus this is the part the statistic's bias does not explain.

    Returns:
        ``(L, h)``.
    """
    cfg = transformer.model.cfg
    generator = torch.Generator().manual_seed(seed)
    total, queries = torch.zeros(cfg.num_layers, cfg.heads), 0
    for text in texts:
        _, enc = encoder_maps(transformer, text)  # (L, h, S, S)
        S = enc.size(-1)
        for _ in range(draws):
            total += max_column_share(shuffled_rows(enc, generator)) * S / draws
        queries += S
    return total / max(1, queries)


def _heatmap(z: Tensor, x: Sequence[str], y: Sequence[str], what: str, showscale: bool) -> go.Heatmap:
    """One weights heatmap (0–1, the app's colours) with hover text naming both tokens."""
    hover = [[f"{_escape(y[i])} → {_escape(x[j])}<br>{what}: {w:.3f}" for j, w in enumerate(row)]
             for i, row in enumerate(z.tolist())]
    return go.Heatmap(z=z.tolist(), x=list(range(len(x))), y=list(range(len(y))), zmin=0.0, zmax=1.0,
                      colorscale=COLORSCALE, text=hover, hoverinfo="text", showscale=showscale,
                      colorbar=dict(title="weight 权重", thickness=12, len=0.8))


def _ticks(labels: Sequence[str]) -> dict:
    return dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=[_escape(t) for t in labels])


def cross_heads_figure(transformer: Translator, text: str = EXAMPLE_TEXT, beam: int = BEAM) -> go.Figure:
    """One sentence's cross-attention in every layer (columns) and head (rows), subword rows merged into words.

    Each panel's title gives its mean row entropy and its argmax agreement with the head mean of the last
    layer (the map the app shows for a Transformer).

    Args:
        transformer: The Transformer.
        text: The source sentence.
        beam: Beam size of the decoding.

    Returns:
        A figure with ``L × h`` heatmaps.
    """
    out = transformer.translate([text], beam_size=beam)[0]
    maps = transformer.attention_maps(out)
    labels, cross = word_rows(out.row_labels, maps.cross)  # (L, h, W, S)
    L, h = cross.shape[:2]
    shown = cross[-1].mean(dim=0)  # (W, S): the last layer's head mean, as in the app
    titles = [f"<b>layer 层 {layer + 1} · head 头 {head + 1}</b>: H {attention_entropy(cross[layer, head]):.2f} · "
              f"as app {float((cross[layer, head].argmax(-1) == shown.argmax(-1)).float().mean()):.0%}"
              for head in range(h) for layer in range(L)]
    fig = make_subplots(rows=h, cols=L, subplot_titles=titles, horizontal_spacing=0.06, vertical_spacing=0.3 / h)
    src = out.source_tokens
    for layer in range(L):
        for head in range(h):
            fig.add_trace(_heatmap(cross[layer, head], src, labels, f"L{layer + 1} H{head + 1}",
                                   layer == head == 0), row=head + 1, col=layer + 1)
            fig.update_xaxes(**_ticks(src), tickfont=dict(size=11), row=head + 1, col=layer + 1)
            fig.update_yaxes(**_ticks(labels) if layer == 0 else dict(showticklabels=False), autorange="reversed",
                             tickfont=dict(size=11), row=head + 1, col=layer + 1)
    panel = 20 * len(labels) + 70
    fig.update_annotations(font=dict(size=12))
    fig.update_layout(
        title=dict(text=f"cross-attention, every layer and head<br>每层每头的交叉注意力<br><sup>{_escape(text)} → "
                   f"{_escape(out.text)} (beam {beam})<br>H: mean row entropy (nats) · as app: rows with the argmax "
                   "of<br>the map the app shows (last layer, mean of heads)</sup>", x=0.5, xanchor="center"),
        height=h * panel + 215, font=FONT, margin=dict(l=80, r=30, t=215, b=30),
    )
    return fig


def agreement_figure(stats: HeadStats) -> go.Figure:
    """Two ``L × h`` grids: argmax agreement with the RNN, and diagonality, each cell labelled."""
    L, h = stats.agreement.shape
    xs, ys = [f"head 头 {i + 1}" for i in range(h)], [f"layer 层 {i + 1}" for i in range(L)]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=[
        f"<b>argmax = RNN's</b> 与 RNN 相同<br>chance 随机 {stats.chance:.0%}",
        f"<b>diagonality 对角度</b><br>RNN {stats.rnn_diagonality:.2f}",
    ])
    for col, (values, fmt) in enumerate(((stats.agreement, "{:.0%}"), (stats.diagonality, "{:.2f}")), 1):
        cells = [[fmt.format(v) for v in row] for row in values.tolist()]
        fig.add_trace(go.Heatmap(
            z=values.tolist(), x=xs, y=ys, zmin=0.0, zmax=1.0, colorscale=COLORSCALE, showscale=col == 2,
            text=cells, texttemplate="%{text}", textfont=dict(size=14), colorbar=dict(thickness=12),
            hovertemplate="%{y}, %{x}: %{text}<extra></extra>",
        ), row=1, col=col)
        fig.update_yaxes(autorange="reversed", row=1, col=col)
    means = " · ".join(f"layer {i + 1} {v:.0%}" for i, v in enumerate(stats.agreement_mean.tolist()))
    fig.update_annotations(font=dict(size=12))
    fig.update_layout(
        title=dict(text=f"which heads align like the RNN<br>哪些头像 RNN 一样对齐<br><sup>{stats.sentences} test "
                   f"sentences, {stats.rows} output rows: the Transformer's greedy outputs,<br>{stats.reference} "
                   f"fed the same tokens · mean of heads: {means}</sup>", x=0.5, xanchor="center"),
        height=210 + 90 * L, font=FONT, margin=dict(l=70, r=30, t=200, b=40),
    )
    return fig


def entropy_figure(stats: HeadStats) -> go.Figure:
    """Mean cross-attention entropy by layer: one marker per head, the mean of heads, the RNN and uniform."""
    L, h = stats.entropy.shape
    layers = list(range(1, L + 1))
    fig = go.Figure()
    for head in range(h):  # each head's markers a little apart, so equal values stay visible
        fig.add_trace(go.Scatter(
            x=[x + 0.04 * (head - (h - 1) / 2) for x in layers], y=stats.entropy[:, head].tolist(), mode="markers",
            name=f"head 头 {head + 1}", customdata=layers,
            marker=dict(size=11, symbol=["circle", "square", "diamond", "triangle-up", "x", "star"][head % 6]),
            hovertemplate="layer %{customdata}, head " + str(head + 1) + ": %{y:.2f} nats<extra></extra>",
        ))
    mean = stats.entropy.mean(dim=1).tolist()
    fig.add_trace(go.Scatter(x=layers, y=mean, mode="lines+markers",
                             name="mean of heads 各头平均: " + " → ".join(f"{m:.2f}" for m in mean),
                             line=dict(color="black", width=3),
                             hovertemplate="layer %{x}: %{y:.2f} nats<extra>mean</extra>"))
    for value, name, dash in ((stats.rnn_entropy, f"RNN {stats.reference}", "dash"),
                              (stats.uniform_entropy, "uniform 均匀 (log S)", "dot")):
        fig.add_trace(go.Scatter(x=[0.7, L + 0.3], y=[value, value], mode="lines",
                                 name=f"{name}: {value:.2f}", line=dict(dash=dash, color="gray", width=2),
                                 hovertemplate=f"{name}: {value:.2f} nats<extra></extra>"))
    fig.update_layout(
        title=dict(text=f"cross-attention entropy by layer<br>按层的交叉注意力熵<br><sup>mean row entropy (nats), "
                   f"{stats.sentences} test sentences, {stats.rows} output rows<br>lower = sharper 越低越集中</sup>",
                   x=0.5, xanchor="center"),
        yaxis=dict(title="entropy 熵 (nats)", rangemode="tozero"),
        xaxis=dict(title="decoder layer 解码器层", tickvals=layers, range=[0.7, L + 0.3]),
        height=520, font=FONT, margin=dict(l=70, r=30, t=150, b=130),
        legend=dict(orientation="h", y=-0.22, x=0.5, xanchor="center"),
    )
    return fig


def encoder_head_figure(transformer: Translator, patterns: Tensor, text: str = EXAMPLE_TEXT,
                        sentences: int | None = None, uniform: float | None = None,
                        baseline: Tensor | None = None) -> go.Figure:
    """The encoder head with the strongest non-self pattern on one sentence, beside every head's pattern shares.

    The head is chosen from ``patterns`` (``encoder_patterns``): the largest share on anything but the query
    position itself (the previous or next token, punctuation, or one key for all; with ``baseline``, the
    last counts only its excess over the baseline, since its raw share is biased upward).

    Args:
        transformer: The Transformer.
        patterns: ``(L, h, len(PATTERNS))`` from ``encoder_patterns``.
        text: The sentence shown.
        sentences: How many sentences ``patterns`` was measured on (for the title).
        uniform: The share a position would get from uniform attention, mean ``1 / S`` (a reference line).
        baseline: ``hub_baseline`` of every head, ``(L, h)``: drawn beside the "one key for all" bars.
    """
    names = list(PATTERNS)
    L, h, _ = patterns.shape
    kinds = [n for n in names if n != "self"]
    other = patterns[..., [names.index(n) for n in kinds]].clone()  # (L, h, K)
    if baseline is not None:
        other[..., kinds.index("hub")] -= baseline
    best, K = int(other.flatten().argmax()), len(kinds)
    layer, head, kind = best // (h * K), best // K % h, kinds[best % K]
    share = float(patterns[layer, head, names.index(kind)])
    tokens, enc = encoder_maps(transformer, text)
    weights = enc[layer, head]  # (S, S)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.45, 0.55], horizontal_spacing=0.12, subplot_titles=[
        f"<b>layer 层 {layer + 1} · head 头 {head + 1}</b>",
        "every head 每个头: weight share 权重占比",
    ])
    fig.add_trace(_heatmap(weights, tokens, tokens, "weight", False), row=1, col=1)
    fig.update_xaxes(**_ticks(tokens), title="key 键", row=1, col=1)
    fig.update_yaxes(**_ticks(tokens), autorange="reversed", title="query 查询", row=1, col=1)
    heads = [f"L{i + 1}H{j + 1}" for i in range(L) for j in range(h)]
    for k, name in enumerate(names):
        fig.add_trace(go.Bar(x=heads, y=patterns[..., k].flatten().tolist(), name=PATTERNS[name],
                             hovertemplate="%{x}: %{y:.0%}<extra>" + name + "</extra>"), row=1, col=2)
    if baseline is not None:
        fig.add_trace(go.Bar(x=heads, y=baseline.flatten().tolist(), name="one key, rows shuffled 行打乱后",
                             marker=dict(color="lightgray", pattern=dict(shape="/")),
                             hovertemplate="%{x}: %{y:.0%}<extra>hub, rows shuffled</extra>"), row=1, col=2)
    if uniform is not None:
        fig.add_trace(go.Scatter(x=[heads[0], heads[-1]], y=[uniform, uniform], mode="lines",
                                 name=f"uniform 均匀 (1/S): {uniform:.0%}", line=dict(dash="dot", color="gray"),
                                 hoverinfo="skip"), row=1, col=2)
    fig.update_yaxes(tickformat=".0%", range=[0, min(1.0, 1.15 * float(patterns.max()))], row=1, col=2)
    fig.update_xaxes(title="layer·head 层·头", row=1, col=2)
    over = f" over {sentences} test sentences" if sentences else ""
    if kind == "hub" and baseline is not None:
        over += f" (rows shuffled: {float(baseline[layer, head]):.0%})"
    fig.update_annotations(font=dict(size=12))
    fig.update_layout(
        title=dict(text=f"a head that does something else<br>一个做别的事的头<br><sup>encoder self-attention on "
                   f"{_escape(text)}<br>layer {layer + 1} head {head + 1} puts {share:.0%} of each position's weight "
                   f"on the<br>{PATTERNS[kind]}{over}</sup>", x=0.5, xanchor="center"),
        barmode="group", height=620, font=FONT, margin=dict(l=70, r=30, t=220, b=130),
        legend=dict(orientation="h", y=-0.2, x=0.75, xanchor="center"),
    )
    return fig


def test_sources(data: str | Path | None = None, n: int = TEST_PAIRS) -> list[str]:
    """The Chinese side of the first ``n`` pairs of the translation test split (``load_splits``)."""
    return [src for src, _ in load_splits("translation", data).test[:n]]


def transformer_figures(registry: ModelRegistry, texts: Sequence[str]) -> dict[str, go.Figure]:
    """Every Transformer figure by file stem.

    Args:
        registry: Needs ``translation/transformer`` and ``translation/luong-general``.
        texts: Test sentences for the measured figures.
    """
    transformer = registry.get("translation", VARIANT)
    stats = measure_heads(transformer, registry.get("translation", DEFAULT_VARIANT), texts)
    return {
        "transformer-cross-heads": cross_heads_figure(transformer),
        "transformer-agreement": agreement_figure(stats),
        "transformer-entropy": entropy_figure(stats),
        "transformer-encoder-head": encoder_head_figure(
            transformer, encoder_patterns(transformer, texts), sentences=len(texts),
            uniform=len(texts) / sum(len(transformer.tokenize(t)) for t in texts),  # mean 1/S per query position
            baseline=hub_baseline(transformer, texts),
        ),
    }


def transformer_figure_links() -> dict[str, str]:
    """For every Transformer figure, the app query that opens the translation tab on the Transformer.

    Returns:
        Figure file stem → query string (``demo.links.app_query``).
    """
    query = app_query("translation", text=EXAMPLE_TEXT, variant=VARIANT, beam=BEAM)
    return {stem: query for stem in ("transformer-cross-heads", "transformer-agreement", "transformer-entropy",
                                     "transformer-encoder-head")}


def write_transformer_figures(results: Path, registry: ModelRegistry, data: str | Path | None = None
                              ) -> list[Path]:
    """Write every Transformer figure as ``results/figures/transformer-<name>.html`` and ``.png``.

    Without a translation Transformer (or the ``luong-general`` reference, or the test split) it writes
    nothing and says so in one line: the rest of the report does not need it.

    Args:
        results: The results folder.
        registry: The bundled models.
        data: The data folder (the test split's first ``TEST_PAIRS`` sentences are measured).

    Returns:
        The PNG paths written (the HTML lies beside each).
    """
    have = registry.models.get("translation", {})
    missing = [v for v in (VARIANT, DEFAULT_VARIANT) if v not in have]
    if missing:
        print(f"note: no Transformer figures (no translation model {', '.join(missing)})", file=sys.stderr)
        return []
    try:
        texts = test_sources(data)
    except DataError as err:
        print(f"note: no Transformer figures (no test split: {err})", file=sys.stderr)
        return []
    return write_figures(results, transformer_figures(registry, texts))
