"""Request handlers: typed, pure functions from inputs to text and figures.

They validate input and raise ``gr.Error`` with a message in Chinese and English; decoding runs
under ``torch.inference_mode()`` through the library's one generation path
(``Translator.translate``).
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr
import plotly.graph_objects as go
import torch

from attention_core.couplet import CoupletRules
from attention_core.pipeline import SENTENCE_TOKENS, InputError, Note, Output
from attention_core.subword import word_spans
from attention_core.text import detokenize_chinese, has_chinese
from demo.links import docs_href
from demo.models import VARIANT_LABELS, ModelRegistry
from demo.plots import alignment_figure, entropy_figure, message_figure, step_figure

MAX_CHARS = {"translation": 1000, "couplet": 64}
"""Longest accepted input (characters) per task; a translation paragraph is split into sentences of at
most ``SENTENCE_TOKENS`` tokens."""

WINDOW_CHOICES = ["default", "global", *[str(d) for d in range(1, 11)]]
"""Window drop-down: the model's own, global, or a half-width D."""


@dataclass
class Settings:
    """Decoding controls shared by the tabs.

    Attributes:
        variant: Zoo variant name.
        window: ``default``, ``global`` or ``"1"`` … ``"10"``.
        hard: Hard (argmax) attention.
        beam_size: 1 = greedy.
        constrained: Couplet constraints (length, punctuation, no ``<unk>``; the rules below).
        mirror: Couplet rule: mirror the 上联's repetition pattern.
        no_reuse: Couplet rule: no character of the 上联 (重字).
        tone: Couplet rule for the last character's tone: ``classical``, ``opposite`` or ``off``.
        cliche_penalty: Couplet rule: penalty ``λ`` on over-frequent characters (0 = off).
    """

    variant: str
    window: str = "default"
    hard: bool = False
    beam_size: int = 1
    constrained: bool = True
    mirror: bool = True
    no_reuse: bool = True
    tone: str = CoupletRules().tone
    cliche_penalty: float = CoupletRules().cliche_penalty

    def rules(self) -> CoupletRules:
        """The couplet rules these settings choose (``gr.Error`` for a bad penalty)."""
        try:
            return CoupletRules(bool(self.mirror), bool(self.no_reuse), str(self.tone),
                                float(self.cliche_penalty)).validate()
        except (TypeError, ValueError) as err:
            raise gr.Error(f"对联规则无效 / invalid couplet rule: {err}") from None


@dataclass
class Result:
    """What one request returns.

    Attributes:
        text: The output sentence.
        figure: The alignment heatmap (or a message figure for the baseline).
        steps: The step-through view at step 1.
        info: A Markdown summary (escaped).
        state: What the step slider needs (tokens, weights, window, centres).
    """

    text: str
    figure: go.Figure
    steps: go.Figure
    info: str
    state: dict = field(default_factory=dict)


def parse_window(value: str) -> int | None | str:
    """Drop-down value → the library's window argument (``"config"``, ``None`` or ``D``)."""
    if value in (None, "", "default"):
        return "config"
    if value == "global":
        return None
    try:
        d = int(value)
    except (TypeError, ValueError):
        raise gr.Error(f"窗口大小无效 / invalid window {value!r}: choose default, global or 1–10") from None
    if not 1 <= d <= 10:
        raise gr.Error(f"窗口大小无效 / window must be 1–10, got {d}")
    return d


def validate_text(task: str, text: str | None) -> str:
    """Check a user's input; return it stripped, or raise ``gr.Error`` with a clear message."""
    text = (text or "").strip()
    if not text:
        raise gr.Error("请输入内容 / Please type something first.")
    limit = MAX_CHARS[task]
    if len(text) > limit:
        raise gr.Error(f"输入太长 / The input has {len(text)} characters; the limit here is {limit}.")
    if not has_chinese(text):
        what = "上联" if task == "couplet" else "中文句子"
        raise gr.Error(f"请输入{what} / This tab needs Chinese characters (got no Chinese in the input).")
    return text


def _rules_summary(settings: Settings) -> str:
    """The couplet rules in force, in words."""
    if not settings.constrained:
        return "no constraints 无约束"
    on = [name for name, flag in (("mirror 叠字对应", settings.mirror), ("no 重字", settings.no_reuse)) if flag]
    if settings.tone != "off":
        on.append(f"tone 平仄 ({settings.tone})")
    if float(settings.cliche_penalty) > 0:
        on.append(f"cliché penalty 俗套惩罚 λ={float(settings.cliche_penalty):g}")
    return "constraints 约束: length, punctuation" + (", " + ", ".join(on) if on else "")


def _controls_line(task: str, settings: Settings, window: int | None, has_attention: bool) -> str:
    """The settings in force, saying which controls do not apply to this model or setting."""
    label = html.escape(VARIANT_LABELS.get(settings.variant, settings.variant))
    decoding = (f"beam {settings.beam_size} (ranked by log p ÷ length)" if settings.beam_size > 1
                else "greedy 贪心 (beam 1)")
    parts = [f"**{label}**", decoding]
    if has_attention:
        where = "global 全局" if window is None else f"local 局部 window D = {window}"
        if settings.window in (None, "", "default"):
            where += " (the model's own 模型默认)"
        parts += [f"{'hard 硬' if settings.hard else 'soft 软'} attention", where]
    else:
        parts.append("no attention 无注意力: window and soft/hard do not apply 窗口与软/硬不适用")
    if task == "couplet":
        parts.append(_rules_summary(settings))
        if not settings.constrained:
            parts.append("the rule switches apply only with constraints on 规则仅在约束开启时生效")
    return " · ".join(parts)


def _info(task: str, outs: list[Output], notes: Callable[[Output], list[Note]], settings: Settings,
          seconds: float, window: int | None, has_attention: bool) -> str:
    """The Markdown line under the output: settings, normalised input, score, time, and notes."""
    joiner = "" if task == "couplet" else " "
    lines = [
        _controls_line(task, settings, window, has_attention),
        f"{len(outs)} sentences 句 · {seconds * 1000:.0f} ms" if len(outs) > 1 else f"{seconds * 1000:.0f} ms",
    ]
    for i, out in enumerate(outs, 1):
        where = f"sentence {i} 第{i}句: " if len(outs) > 1 else ""
        lines.append(f"{where}normalised input 规范化输入: {html.escape(joiner.join(out.source_tokens))} · "
                     f"log p = {out.score:.2f}")
        unknown = sorted({u for u in out.unknown if u})
        if unknown:
            lines.append("unknown to the model 未登录字, shown as &lt;unk&gt;: " + html.escape(" ".join(unknown)))
        if not out.finished:
            lines.append("the output hit the length limit before &lt;eos&gt;")
        for note in notes(out):
            lines.append(f"⚠️ {html.escape(note.zh)} / {html.escape(note.en)}" + _doc_link("results", "bleu-by-length"))
    if task == "couplet" and settings.constrained:
        lines.append("log p includes the cliché penalty; masked characters are never chosen")
    if settings.beam_size > 1:
        lines.append("beam search ranks finished outputs by log p ÷ length (length normalisation), so it may pick "
                     "one with a lower total log p than greedy: without it, short outputs would always win. "
                     "束搜索按 log p ÷ 长度排序。")
    if not has_attention:
        lines.append("the baseline has **no attention**: it sees the source only through one fixed vector.")
    return "  \n".join(lines)


def _doc_link(page: str, anchor: str) -> str:
    """A link to a docs page (the site this app serves, or ``ATTENTION_LAB_DOCS_URL``)."""
    return f" ([docs 文档 ↗]({docs_href(page, anchor)}))"  # Markdown: the info line carries no raw HTML


def sentence_state(out: Output, model: torch.nn.Module, window: int | None | str) -> dict:
    """What the views need of one sentence: pieces and words with their rows, window and centres."""
    words, word_weights = out.word_rows()
    spans = word_spans(out.row_labels)
    centres = out.centres.tolist() if out.centres is not None else None
    return dict(
        text=detokenize_chinese([u or tok for u, tok in zip(out.unknown, out.source_tokens)]),
        source=out.source_tokens,
        output=out.row_labels,
        weights=out.weights.tolist(),
        words=words,
        word_weights=word_weights.tolist(),
        word_of=[i for i, (_, index) in enumerate(spans) for _ in index],
        word_centres=None if centres is None else [sum(centres[j] for j in index) / len(index) for _, index in spans],
        window=model.resolve_window(window),
        centres=centres,
        predicted=model.cfg.attention == "local-p",
        has_attention=model.has_attention,
    )


def heatmap_figure(sentence: dict, row: int | None, pieces: bool, title: str) -> go.Figure:
    """The alignment of one sentence: rows per word (pieces merged) or per subword piece."""
    merged = not pieces and len(sentence["words"]) != len(sentence["output"])
    if not merged:
        return alignment_figure(sentence["source"], sentence["output"], sentence["weights"], sentence["window"],
                                sentence["centres"], sentence["predicted"], title=title, highlight=row)
    highlight = None if row is None else sentence["word_of"][row]
    return alignment_figure(sentence["source"], sentence["words"], sentence["word_weights"], sentence["window"],
                            sentence["word_centres"], sentence["predicted"], highlight=highlight,
                            title=title + " · words (pieces merged: mean of their rows and centres)")


def run(registry: ModelRegistry, task: str, text: str | None, settings: Settings, pieces: bool = False) -> Result:
    """Decode one input with one variant and draw its alignment.

    A translation input may hold several sentences: they are split at sentence-final punctuation,
    translated in one batch, and each gets its own alignment (``state["sentences"]``; the figure
    shows the first, [`sentence_view`][demo.handlers.sentence_view] switches).

    Args:
        registry: Loaded models.
        task: ``translation`` or ``couplet``.
        text: The user's input.
        settings: Decoding controls.
        pieces: Show one heatmap row per subword piece instead of per word.

    Returns:
        The [`Result`][demo.handlers.Result].

    Raises:
        gr.Error: On bad input or settings, with a bilingual message.
    """
    text = validate_text(task, text)
    window = parse_window(settings.window)
    if not 1 <= int(settings.beam_size) <= 10:
        raise gr.Error(f"beam size must be 1–10, got {settings.beam_size}")
    try:
        translator = registry.get(task, settings.variant)
    except KeyError as err:
        raise gr.Error(str(err.args[0])) from None
    rules = settings.rules() if task == "couplet" else None
    options = dict(beam_size=int(settings.beam_size), window=window, hard=settings.hard)
    started = time.perf_counter()
    try:
        with torch.inference_mode():
            if task == "couplet":
                outs = translator.translate([text], constrained=settings.constrained, rules=rules,
                                            max_tokens=MAX_CHARS[task], **options)
            else:
                outs = translator.translate_paragraph(text, SENTENCE_TOKENS, **options)
    except InputError as err:
        raise gr.Error(f"无法翻译 / {err}") from None
    seconds = time.perf_counter() - started
    model = translator.model
    sentences = [sentence_state(out, model, window) for out in outs]
    state = {**sentences[0], "sentences": sentences, "sentence": 0}
    if model.has_attention:
        title = "alignment 对齐 (hover for weights)" + (f" · sentence 句 1/{len(outs)}" if len(outs) > 1 else "")
        figure = heatmap_figure(sentences[0], None, pieces, title)
        steps = step_figure(state["source"], state["output"], state["weights"], 0)
    else:
        figure = message_figure("No attention: the baseline has no alignment to show. 无注意力模型没有对齐。")
        steps = message_figure("—")
    info = _info(task, outs, translator.notes, settings, seconds, model.resolve_window(window),
                 model.has_attention)
    joiner = "" if task == "couplet" else " "
    return Result(joiner.join(out.text for out in outs), figure, steps, info, state)


def sentence_labels(state: dict | None) -> list[tuple[str, int]]:
    """Choices of the sentence selector: ``(label, index)`` per sentence of the last request."""
    sentences = (state or {}).get("sentences", [])
    return [(f"{i + 1}. " + s["text"][:24], i) for i, s in enumerate(sentences)]


def sentence_view(state: dict | None, index: int | None, pieces: bool = False) -> tuple[dict, go.Figure, go.Figure]:
    """Switch the views to sentence ``index`` of a paragraph.

    Returns:
        ``(state with that sentence current, heatmap, bars at its first step)``.
    """
    sentences = (state or {}).get("sentences", [])
    if not sentences:
        empty = message_figure("Run a sentence first. 请先运行一句。")
        return state or {}, empty, empty
    i = max(0, min(int(index or 0), len(sentences) - 1))
    state = {**sentences[i], "sentences": sentences, "sentence": i}
    heat, bars = step_view(state, 1, pieces)
    return state, heat, bars


def step_view(state: dict | None, step: int, pieces: bool = False) -> tuple[go.Figure, go.Figure]:
    """The step-through view: the heatmap with the current step outlined, and that step as bars.

    Steps are decoding steps (one per subword piece); in the word view the outlined row is the
    word that the step's piece belongs to.

    Args:
        state: ``Result.state`` of the last request (``None`` before the first one).
        step: 1-based step from the slider.
        pieces: Heatmap rows per piece instead of per word.

    Returns:
        ``(heatmap, bars)``.
    """
    if not state or not state.get("output"):
        empty = message_figure("Run a sentence first. 请先运行一句。")
        return empty, empty
    if not state.get("has_attention"):
        fig = message_figure("No attention: the baseline has no alignment to show. 无注意力模型没有对齐。")
        return fig, message_figure("—")
    row = max(0, min(int(step) - 1, len(state["output"]) - 1))
    sentences = state.get("sentences", [])
    where = f"sentence 句 {state.get('sentence', 0) + 1}/{len(sentences)} · " if len(sentences) > 1 else ""
    sentence = {"words": state["output"], "word_weights": state["weights"], "word_centres": state["centres"],
                **state}
    heat = heatmap_figure(sentence, row, pieces, f"{where}step 步 {row + 1}")
    return heat, step_figure(state["source"], state["output"], state["weights"], row)


@dataclass
class Comparison:
    """What the Compare tab shows.

    Attributes:
        a: Variant A's result (text, heatmap, info).
        b: Variant B's result.
        entropy: Both alignments' entropy per output step (the third view).
    """

    a: Result
    b: Result
    entropy: go.Figure


def compare(registry: ModelRegistry, task: str, text: str | None, a: Settings, b: Settings) -> Comparison:
    """The same input through two variants, each with its own controls, side by side.

    The third view puts both alignments' entropy per output step on one chart: near 0 = sharp
    (hard attention, a confident alignment), near ``log S`` = spread evenly (e.g. scaled dot), and no
    line for the baseline, which has no attention.

    Args:
        registry: Loaded models.
        task: ``translation`` or ``couplet``.
        text: The input (for a translation paragraph, the views show its first sentence).
        a: Variant A and its controls.
        b: Variant B and its controls.

    Returns:
        The [`Comparison`][demo.handlers.Comparison].

    Raises:
        gr.Error: On bad input or settings, with a bilingual message.
    """
    results = {"A": run(registry, task, text, a), "B": run(registry, task, text, b)}
    rows = {f"{side}: {settings.variant}": (r.state["output"], r.state["weights"])
            for (side, r), settings in zip(results.items(), (a, b)) if r.state.get("has_attention")}
    sources = len(results["A"].state["source"])
    if rows:
        entropy = entropy_figure(rows, sources, "attention entropy per output step 每步注意力的熵")
    else:
        entropy = message_figure("Neither variant has attention: no entropy to compare. 两者都没有注意力。")
    return Comparison(results["A"], results["B"], entropy)
