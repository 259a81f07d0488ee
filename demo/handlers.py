"""Request handlers: typed, pure functions from inputs to text and figures.

They validate input and raise ``gr.Error`` with a message in Chinese and English; decoding runs
under ``torch.inference_mode()`` through the library's one generation path
(``Translator.translate``).
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass, field

import gradio as gr
import plotly.graph_objects as go
import torch

from attention_core.couplet import CoupletRules
from attention_core.pipeline import InputError, Output
from demo.models import VARIANT_LABELS, ModelRegistry
from demo.plots import alignment_figure, message_figure, step_figure

MAX_CHARS = {"translation": 200, "couplet": 64}
"""Longest accepted input (characters) per task."""

WINDOW_CHOICES = ["default", "global", *[str(d) for d in range(1, 11)]]
"""Window drop-down: the model's own, global, or a half-width D."""

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


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
    if not _CJK.search(text):
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


def _info(task: str, text: str, out: Output, settings: Settings, window: int | None | str,
          seconds: float, has_attention: bool) -> str:
    unknown = sorted({u for u in out.unknown if u})
    joiner = "" if task == "couplet" else " "
    lines = [
        f"**{html.escape(VARIANT_LABELS.get(settings.variant, settings.variant))}** · "
        f"{'beam ' + str(settings.beam_size) if settings.beam_size > 1 else 'greedy 贪心'} · "
        f"{'hard 硬' if settings.hard else 'soft 软'} attention · window {html.escape(str(settings.window))}"
        + (" · " + _rules_summary(settings) if task == "couplet" else ""),
        f"normalised input 规范化输入: {html.escape(joiner.join(out.source_tokens))}",
        f"log p = {out.score:.2f} · {seconds * 1000:.0f} ms",
    ]
    if unknown:
        lines.append("unknown to the model 未登录字, shown as &lt;unk&gt;: " + html.escape(" ".join(unknown)))
    if not out.finished:
        lines.append("the output hit the length limit before &lt;eos&gt;")
    if task == "couplet" and settings.constrained:
        lines.append("log p includes the cliché penalty; masked characters are never chosen")
    if not has_attention:
        lines.append("the baseline has **no attention**: it sees the source only through one fixed vector.")
    return "  \n".join(lines)


def run(registry: ModelRegistry, task: str, text: str | None, settings: Settings) -> Result:
    """Decode one input with one variant and draw its alignment.

    Args:
        registry: Loaded models.
        task: ``translation`` or ``couplet``.
        text: The user's input.
        settings: Decoding controls.

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
    started = time.perf_counter()
    try:
        with torch.inference_mode():
            out = translator.translate(
                [text], beam_size=int(settings.beam_size), window=window, hard=settings.hard,
                constrained=settings.constrained if task == "couplet" else False,
                rules=rules, max_tokens=MAX_CHARS[task],
            )[0]
    except InputError as err:
        raise gr.Error(str(err)) from None
    seconds = time.perf_counter() - started
    model = translator.model
    rows = out.row_labels
    weights = out.weights.tolist()
    centres = out.centres.tolist() if out.centres is not None else None
    resolved = model.resolve_window(window)
    predicted = model.cfg.attention == "local-p"
    state = dict(source=out.source_tokens, output=rows, weights=weights, window=resolved, centres=centres,
                 predicted=predicted, has_attention=model.has_attention)
    if model.has_attention:
        figure = alignment_figure(out.source_tokens, rows, weights, resolved, centres, predicted,
                                  title="alignment 对齐 (hover for weights)")
        steps = step_figure(out.source_tokens, rows, weights, 0)
    else:
        figure = message_figure("No attention: the baseline has no alignment to show. 无注意力模型没有对齐。")
        steps = message_figure("—")
    info = _info(task, text, out, settings, window, seconds, model.has_attention)
    return Result(out.text, figure, steps, info, state)


def step_view(state: dict | None, step: int) -> tuple[go.Figure, go.Figure]:
    """The step-through view: the heatmap with row ``step`` outlined, and that row as bars.

    Args:
        state: ``Result.state`` of the last request (``None`` before the first one).
        step: 1-based step from the slider.

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
    heat = alignment_figure(state["source"], state["output"], state["weights"], state["window"],
                            state["centres"], state["predicted"], title=f"step 步 {row + 1}", highlight=row)
    return heat, step_figure(state["source"], state["output"], state["weights"], row)


def compare(registry: ModelRegistry, task: str, text: str | None, variant_a: str, variant_b: str,
            beam_size: int = 1) -> tuple[str, go.Figure, str, go.Figure]:
    """The same input through two variants, side by side.

    Returns:
        ``(text_a, figure_a, text_b, figure_b)``.
    """
    a = run(registry, task, text, Settings(variant_a, beam_size=beam_size))
    b = run(registry, task, text, Settings(variant_b, beam_size=beam_size))
    return a.text, a.figure, b.text, b.figure
