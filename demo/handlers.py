"""Request handlers: typed, pure functions from inputs to text and figures.

They validate input and raise ``gr.Error`` with a message in Chinese and English; decoding runs
under ``torch.inference_mode()`` through the library's one generation path
(``Translator.translate``). What a run does follows the model's task, not the tab: a model of your own
([`OWN`][demo.models.OWN]) reads its own language, and its script direction turns the source axis right to left.

A Transformer's outputs also carry every layer's and head's attention
([`Translator.attention_maps`][attention_core.decoding.translator.Translator.attention_maps]), kept in the
per-sentence state, so choosing another layer or head re-plots without decoding again
([`attention_view`][demo.handlers.attention_view]).

Issue #28's three views of what attention tells: each source token's coverage under the heatmap (words flagged
as possibly untranslated marked), the input × gradient importance of the same output beside it with Kendall's τ
per row ([`with_gradient`][demo.handlers.with_gradient], computed when first shown), and a human-aligned
sentence's links over the model's attention with its AER ([`show_gold`][demo.handlers.show_gold]).
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
import torch

from attention_core.analysis.alignment import (
    GOLD_SETS,
    Gold,
    Link,
    argmax_links,
    evaluate_links,
    force_decode,
    read_gold,
    threshold_links,
)
from attention_core.analysis.attribution import input_x_gradient, kendall_tau
from attention_core.analysis.notes import Note
from attention_core.analysis.notes import notes as output_notes
from attention_core.data.corpora import data_home
from attention_core.data.info import DataInfo
from attention_core.data.subword import word_rows, word_spans
from attention_core.data.text import detokenize_chinese, has_chinese
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.coverage import THRESHOLD as COVERAGE_THRESHOLD
from attention_core.decoding.folder import ModelLoadError
from attention_core.decoding.translator import SENTENCE_TOKENS, InputError, Output, Translator
from attention_core.editing import switch
from attention_core.model.transformer import AttentionMaps
from demo.errors import refuse
from demo.links import GOLD_SIZES, docs_markdown_link
from demo.models import OWN, ModelRegistry, architecture, is_rtl, language_pair, sides, variant_label
from demo.plots import (
    LINK_MARKS,
    add_coverage,
    add_row_notes,
    alignment_figure,
    entropy_figure,
    gold_figure,
    message_figure,
    second_line,
    step_figure,
    with_rows,
)
from demo.provenance import data_status, model_data_line

MAX_CHARS = {"translation": 1000, "couplet": 64, OWN: 1000}
"""Longest accepted input (characters) per tab; a paragraph is split into sentences of at most
``SENTENCE_TOKENS`` tokens (a couplet model of your own reads at most ``MAX_CHARS["couplet"]``)."""
CHINESE_TABS = ("translation", "couplet")
"""Tabs whose input must contain Chinese; a model of your own says itself what it reads."""

WINDOW_CHOICES = ["default", "global", *[str(d) for d in range(1, 11)]]
"""Window drop-down: the model's own, global, or a half-width D."""

MEAN = "mean"
"""The head choice that averages a layer's heads (with the last layer: the heatmap the decoder reported)."""
DIGITS = 4
"""Decimals kept of the Transformer's per-head maps in the state (a weight to 0.0001 is plenty for a heatmap)."""
NO_ATTENTION = "No attention: the baseline has no alignment to show. 无注意力模型没有对齐。"


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
        names: Chinese → English: carry people's names through the model
            ([`attention_core.editing.names`][attention_core.editing.names]); on by
            default (``results/names.md``: 25 of the visitor set's 27 names kept instead of 5, dev BLEU unchanged).
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
    names: bool = True

    def rules(self) -> CoupletRules:
        """The couplet rules these settings choose (``gr.Error`` for a bad penalty)."""
        try:
            return CoupletRules(bool(self.mirror), bool(self.no_reuse), str(self.tone),
                                float(self.cliche_penalty)).validate()
        except (TypeError, ValueError) as err:
            raise refuse(f"对联规则无效 / invalid couplet rule: {err}") from None


@dataclass
class Result:
    """What one request returns.

    Attributes:
        text: The output sentence.
        figure: The alignment heatmap (or a message figure for the baseline).
        steps: The step-through view at step 1.
        info: The details, in Markdown (escaped): settings, what the model read, the beam, names, notes.
        state: What the step slider needs (tokens, weights, window, centres; a Transformer's maps).
        encoder: A Transformer's encoder self-attention (``None`` for an RNN).
        decoder: A Transformer's causal decoder self-attention (``None`` for an RNN).
        view: The ``(layer, head)`` shown for a Transformer (see [`parse_view`][demo.handlers.parse_view]).
    """

    text: str
    figure: go.Figure
    steps: go.Figure
    info: str
    state: dict = field(default_factory=dict)
    encoder: go.Figure | None = None
    decoder: go.Figure | None = None
    view: tuple[int, str] | None = None
    summary: str = ""
    """One Markdown line under the output (see [`summary_line`][demo.handlers.summary_line]); the rest is ``info``."""


def parse_window(value: str) -> int | None | str:
    """Drop-down value → the library's window argument (``"config"``, ``None`` or ``D``)."""
    if value in (None, "", "default"):
        return "config"
    if value == "global":
        return None
    try:
        d = int(value)
    except (TypeError, ValueError):
        raise refuse(f"窗口大小无效 / invalid window {value!r}: choose default, global or 1–10") from None
    if not 1 <= d <= 10:
        raise refuse(f"窗口大小无效 / window must be 1–10, got {d}")
    return d


def _number(value: object) -> int | None:
    """A whole number from an int or a string of digits, else ``None`` (no bools, no floats)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def parse_view(layers: int, heads: int, layer: object = None, head: object = None) -> tuple[int, str]:
    """Check a Transformer layer and head choice; ``None`` (or ``""``) picks the default view.

    The default, the last layer's mean over heads, is the heatmap the decoder reported while decoding.

    Args:
        layers: ``L``, the model's layers.
        heads: ``h``, its heads per layer.
        layer: 1-based layer, ``1`` … ``L`` (an int or its digits).
        head: 1-based head ``1`` … ``h`` or ``"mean"``.

    Returns:
        ``(layer, head)``: an int in ``1..L`` and ``"mean"`` or a head number as a string.

    Raises:
        gr.Error: If a value is not a number in range; the message names the range.

    Examples:
        >>> parse_view(2, 4)
        (2, 'mean')
        >>> parse_view(2, 4, "1", 3)
        (1, '3')
    """
    number = layers if layer in (None, "") else _number(layer)
    if number is None or not 1 <= number <= layers:
        raise refuse(f"层无效 / invalid layer {layer!r}: this Transformer has {layers} layers, choose 1–{layers}")
    if head in (None, "", MEAN):
        return number, MEAN
    index = _number(head)
    if index is None or not 1 <= index <= heads:
        raise refuse(f"注意力头无效 / invalid head {head!r}: this Transformer has {heads} heads, "
                       f"choose 1–{heads} or mean")
    return number, str(index)


def view_choices(layers: int, heads: int) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """The layer and head selectors' choices for a Transformer of ``layers`` × ``heads``."""
    return ([(str(n), n) for n in range(1, layers + 1)],
            [("mean of heads 平均", MEAN), *[(str(k), str(k)) for k in range(1, heads + 1)]])


def view_words(layers: int, heads: int, layer: int, head: str) -> str:
    """``layer 层 2/2 · mean of 4 heads 平均`` or ``layer 层 1/2 · head 头 3/4``."""
    shown = f"mean of {heads} heads 平均" if head == MEAN else f"head 头 {head}/{heads}"
    return f"layer 层 {layer}/{layers} · {shown}"


def check_view(registry: ModelRegistry, task: str, variant: str | None, wanted: dict) -> tuple[tuple[int, str] | None,
                                                                                                 str | None]:
    """A layer and head asked for by a URL query, checked against the variant it applies to.

    Args:
        registry: Loaded models.
        task: ``translation`` or ``couplet``.
        variant: The variant the query opens (its own or the tab's default).
        wanted: ``{"layer": int, "head": "mean" | int}``, either optional (``demo.links.parse_view``).

    Returns:
        ``(view, problem)``: the checked ``(layer, head)``, or a message for the visitor; both ``None``
        when nothing was asked.
    """
    if not wanted:
        return None, None
    shape = registry.transformer_shape(task, variant)
    if shape is None:
        asked = ", ".join(f"{key}={value}" for key, value in wanted.items())
        return None, (f"{asked}: 层与注意力头只适用于 Transformer / layer and head apply only to the Transformer; "
                      f"{variant!r} has a single attention map (add variant=transformer)")
    try:
        return parse_view(*shape, wanted.get("layer"), wanted.get("head")), None
    except gr.Error as err:
        return None, str(err.message)


def validate_text(task: str, text: str | None) -> str:
    """Check a user's input; return it stripped, or raise ``gr.Error`` with a clear message.

    The bundled tabs need Chinese; a model of your own reads any language (its own tokeniser checks the rest).
    """
    if task not in MAX_CHARS:
        raise refuse(f"未知任务 / unknown task {task!r}; choose {', '.join(MAX_CHARS)}")
    text = (text or "").strip()
    if not text:
        raise refuse("请输入内容 / Please type something first.")
    limit = MAX_CHARS[task]
    if len(text) > limit:
        raise refuse(f"输入太长 / The input has {len(text)} characters; the limit here is {limit}.")
    if task in CHINESE_TABS and not has_chinese(text):
        what = "上联" if task == "couplet" else "中文句子"
        raise refuse(f"请输入{what} / This tab needs Chinese characters (got no Chinese in the input).")
    return text


def served(registry: ModelRegistry, task: str, variant: str) -> Translator:
    """The model a request asks for, loaded if it was not yet; a message for the visitor if it is not here or broken.

    Raises:
        gr.Error: Naming the models that are here, or what is wrong with the model's files.
    """
    try:
        return registry.get(task, variant)
    except KeyError as err:
        raise refuse(str(err.args[0])) from None
    except ModelLoadError as err:  # found at start-up, its weights read on first use
        raise refuse(f"模型无法加载 / the model {variant!r} could not be loaded: {err}") from None


TOKENIZER_WORDS = {"char": "characters 字符", "word": "words 词", "bpe": "BPE pieces 子词"}


def model_summary(registry: ModelRegistry, name: str) -> str:
    """What a model of your own is, in one Markdown line (escaped): languages, tokens, architecture, data, BLEU.

    Args:
        registry: Loaded models.
        name: The name of a model of your own (``registry.models["own"]``).

    Returns:
        E.g. ``**de-en** · de → en · source: BPE pieces 子词 (27 in its vocabulary) · … · dev BLEU 33.8``.
    """
    card = registry.card(OWN, name)  # its config: the page is built before the weights are loaded
    if card is None:
        return ""
    source, target = sides(card)
    parts = [f"**{html.escape(name)}**", html.escape(language_pair(card)), html.escape(architecture(card.cfg))]
    for side, size, what in ((source, card.cfg.src_vocab_size, "source 源"),
                             (target, card.cfg.tgt_vocab_size, "target 目标")):
        tokens = TOKENIZER_WORDS.get(side.get("tokenizer", ""), html.escape(str(side.get("tokenizer", "tokens"))))
        parts.append(f"{what}: {tokens} ({size} in its vocabulary)"
                     + (", right to left 从右到左" if is_rtl(side) else ""))
    data = DataInfo.read(card.meta.get("data"))
    paths = data.train_paths()
    if paths:
        counts = " / ".join(f"{data.sizes[k]} {k}" for k in ("train", "dev", "test") if k in data.sizes)
        files = ", ".join(f"`{html.escape(Path(str(path)).name)}`" for path in paths)
        parts.append(f"trained on {files}" + (f" ({counts} pairs)" if counts else ""))
    bleu = card.meta.get("best_dev_bleu")
    if isinstance(bleu, (int, float)) and not isinstance(bleu, bool):
        parts.append(f"dev BLEU {bleu:.1f}")
    return " · ".join(parts)


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


def _controls_line(couplet: bool, settings: Settings, window: int | None, model: torch.nn.Module,
                   data: str | None = None) -> str:
    """The settings in force, saying which controls do not apply to this model or setting.

    ``data``: the model's training data, said while its task's models differ in it
    ([`model_data_line`][demo.provenance.model_data_line]).
    """
    label = html.escape(variant_label(settings.variant, model))
    has_attention = model.has_attention
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
    if couplet:
        parts.append(_rules_summary(settings))
        if not settings.constrained:
            parts.append("the rule switches apply only with constraints on 规则仅在约束开启时生效")
    if data:
        parts.append(html.escape(data))
    return " · ".join(parts)


DETAILED_SENTENCES = 3
"""Of a paragraph, the sentences whose info lines say what the model read and the beam's other candidates
(every sentence's names, numbers, words and warnings are listed, up to ``MAX_SENTENCE_LINES``)."""
MAX_SENTENCE_LINES = 20
"""The most per-sentence lines the info line holds; a long paste gets one line saying how many more there are."""


def summary_line(outs: list[Output], notes: list[list[Note]], settings: Settings, seconds: float,
                 window: int | None, model: torch.nn.Module, data: str | None = None) -> str:
    """The one line under an output: the model, its decoding, the time, and how much the details hold.

    A setting is named only when it is not the model's own (hard attention, another window); the names carried
    and the warnings are counted, and said in full in the details ([`Result.info`][demo.handlers.Result]).

    Args:
        outs: The outputs of one request (a paragraph's sentences).
        notes: Each output's notes ([`notes`][attention_core.analysis.notes.notes]).
        settings: The controls.
        seconds: What the request took.
        window: The window in force (``None``: global).
        model: The model.
        data: The model's training data, said while its task's models differ in it
            ([`model_data_line`][demo.provenance.model_data_line]).
    """
    label = variant_label(settings.variant, model)
    parts = [f"**{html.escape(label)}**", f"beam {settings.beam_size}" if settings.beam_size > 1 else "greedy 贪心"]
    if not model.has_attention:
        if "无注意力" not in label:  # the baseline's label says it already
            parts.append("no attention 无注意力")
    else:
        if settings.hard:
            parts.append("hard 硬")
        if settings.window not in (None, "", "default"):
            parts.append("global 全局" if window is None else f"window D = {window}")
    if data:
        parts.append(html.escape(data))
    if len(outs) > 1:
        parts.append(f"{len(outs)} sentences 句")
    parts.append(f"{seconds * 1000:.0f} ms")
    carried = sum(len(dict.fromkeys(c.name.text for c in out.names.carried)) for out in outs if out.names)
    if carried:
        parts.append(f"{carried} carried 替身 (names, numbers)")
    warnings = sum(len(found) + bool(any(out.unknown)) + (not out.finished) for out, found in zip(outs, notes))
    if warnings:
        parts.append(f"⚠️ {warnings} warning{'s' if warnings > 1 else ''} 提示")
    return " · ".join(parts)


def _info(couplet: bool, outs: list[Output], notes: list[list[Note]], settings: Settings,
          seconds: float, window: int | None, model: torch.nn.Module, data: str | None = None) -> str:
    """The Markdown line under the output: settings, what the model read, score, time, and notes.

    ``couplet``: the model writes couplets (its task is constrained): characters joined, the rules listed.

    A Transformer's view line (layer, head) is not part of it: [`attention_view`][demo.handlers.attention_view]
    inserts it after the first line, for the layer and head on show.
    """
    joiner = "" if couplet else " "
    has_attention = model.has_attention
    lines = [
        _controls_line(couplet, settings, window, model, data),
        f"{len(outs)} sentences 句 · {seconds * 1000:.0f} ms" if len(outs) > 1 else f"{seconds * 1000:.0f} ms",
    ]
    if len(outs) > DETAILED_SENTENCES:
        lines.append(f"sentences {DETAILED_SENTENCES + 1}–{len(outs)} 第{DETAILED_SENTENCES + 1}–{len(outs)}句: only "
                     "their names, numbers, words and warnings are listed here; choose one under "
                     "“sentence 句子” to see what the model read (the heatmap's axes)")
    sentence_lines: list[tuple[int, str]] = []
    for i, out in enumerate(outs, 1):
        where = f"sentence {i} 第{i}句: " if len(outs) > 1 else ""
        if i <= DETAILED_SENTENCES:
            sentence_lines.append((i, f"{where}what the model read 模型读到的: "
                                      f"{html.escape(joiner.join(out.source_tokens))} · log p = {out.score:.2f}"))
            shown = [(text, score) for text, score in out.alternatives if text.strip()][:4]
            if shown:
                others = " · ".join(f"{html.escape(text)} ({score:.2f})" for text, score in shown)
                sentence_lines.append((i, f"{where}also in the beam 束中其他候选 (log p; ranked by log p ÷ length "
                                          f"按 log p ÷ 长度排序): {others}"))
        for label, group in (("names 人名", "name"), ("numbers 数字", "number"), ("words 词语", "word")):
            carried = out.names.lines(group) if out.names else []
            if carried:
                sentence_lines.append((i, f"{where}{label}: " + html.escape("; ".join(carried))))
        unknown = sorted({u for u in out.unknown if u})
        if unknown:
            sentence_lines.append((i, f"{where}unknown to the model 未登录字, shown as &lt;unk&gt;: "
                                      + html.escape(" ".join(unknown))))
        if not out.finished:
            sentence_lines.append((i, f"{where}the output hit the length limit before &lt;eos&gt;"))
        for note in notes[i - 1]:
            doc = NOTE_DOCS.get((note.kind, couplet))
            sentence_lines.append((i, f"{where}⚠️ {html.escape(note.zh)} / {html.escape(note.en)}"
                                      + (_doc_link(*doc) if doc else "")))
    lines += [line for _, line in sentence_lines[:MAX_SENTENCE_LINES]]
    if len(sentence_lines) > MAX_SENTENCE_LINES:
        left = sentence_lines[MAX_SENTENCE_LINES:]
        first, last = left[0][0], left[-1][0]
        span = f"{first}–{last}" if last > first else f"{first}"
        lines.append(f"… {len(left)} more lines about sentence{'s' if last > first else ''} {span} left out here "
                     f"(第{span}句另有 {len(left)} 行从略)")
    if couplet and settings.constrained:
        lines.append("log p includes the cliché penalty; masked characters are never chosen")
    if settings.beam_size > 1:
        lines.append("beam search ranks finished outputs by log p ÷ length (length normalisation), so it may pick "
                     "one with a lower total log p than greedy: without it, short outputs would always win. "
                     "束搜索按 log p ÷ 长度排序。")
    if not has_attention:
        lines.append("the baseline has **no attention**: it sees the source only through one fixed vector.")
    return "  \n".join(lines)


NOTE_DOCS = {("long", False): ("results", "bleu-by-length"), ("untranslated", False): ("theory/alignment", "coverage"),
             ("untranslated", True): ("theory/alignment", "coverage")}
"""The docs section that explains each kind of note (``Note.kind``, a couplet?); the rest link nowhere."""


def _doc_link(page: str, anchor: str) -> str:
    """A link to a docs page (the site this app serves, or ``ATTENTION_LAB_DOCS_URL``)."""
    return f" ({docs_markdown_link(page, anchor)})"  # Markdown: the info line carries no raw HTML


def _rounded(weights: torch.Tensor) -> list:
    """Weights as nested lists of floats with ``DIGITS`` decimals (small, JSON-friendly state)."""
    return weights.double().mul(10**DIGITS).round().div(10**DIGITS).tolist()


def sentence_state(out: Output, model: torch.nn.Module, window: int | None | str,
                   maps: AttentionMaps | None = None, rtl: bool = False, text: str | None = None,
                   flagged: list[int] | None = None, tokenize: Callable[[str], list[str]] | None = None) -> dict:
    """What the views need of one sentence: pieces and words with their rows, window and centres.

    Args:
        out: One output.
        model: The model that produced it.
        window: The window argument it was decoded with.
        rtl: The source script runs right to left: the figures draw the source axis that way.
        text: The source sentence as typed (default: its tokens joined as Chinese characters).
        maps: A Transformer's maps of this output
            ([`Translator.attention_maps`][attention_core.decoding.translator.Translator.attention_maps]):
            kept as float16 tensors in ``maps`` (``encoder`` ``(L, h, S, S)``, ``decoder``
            ``(L, h, T, T)``, ``cross`` ``(L, h, T, S)``), with ``layers`` = L and ``heads`` = h. As
            tensors rather than nested lists they cost 2 bytes a weight (a 100-token sentence's
            maps: about 0.6 MB, not 10 MB of Python floats) and no conversion time.
        flagged: Positions of the source tokens of words flagged as possibly untranslated
            ([`Translator.untranslated`][attention_core.decoding.translator.Translator.untranslated]).
        tokenize: The model's source tokeniser, to label a stand-in's columns with the name typed
            ([`typed_axes`][demo.handlers.typed_axes], kept in ``typed``).

    Returns:
        A dict of plain values (JSON-friendly apart from the Transformer's ``maps``); ``coverage`` is
        ``Output.coverage`` as a list, ``flagged`` the flagged token positions, and ``finished`` whether the
        last row is ``<eos>`` (so [`decoded`][demo.handlers.decoded] can rebuild the ``Output`` for gradients).
    """
    words, word_weights = out.word_rows()
    spans = word_spans(out.row_labels)
    centres = out.centres.tolist() if out.centres is not None else None
    return dict(
        text=text if text is not None else detokenize_chinese([u or tok for u, tok in zip(out.unknown,
                                                                                     out.source_tokens)]),
        rtl=rtl,
        source=out.source_tokens,
        carried=[(c.carrier, c.name.text) for c in out.names.carried] if out.names else [],
        typed=typed_axes(out, tokenize),
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
        maps=None if maps is None else {name: getattr(maps, name).to(torch.float16)  # 2 bytes a weight
                                        for name in ("encoder", "decoder", "cross")},
        layers=None if maps is None else maps.cross.size(0),
        heads=None if maps is None else maps.cross.size(1),
        coverage=out.coverage.tolist(),
        flagged=list(flagged or []),
        finished=out.finished,
    )


def spread(parts: Sequence[str], slots: int, joiner: str = "") -> list[str]:
    """``parts`` laid over ``slots`` labels in order: a group a slot, the groups as even as possible.

    A name written over the rows of its stand-in: 9:45 p.m. over two words is 9:45 and p.m.; Zhang Wei over one word
    is Zhang Wei. Fewer parts than slots: every slot is the whole, numbered (Beijing over the pieces bos ##ton is
    Beijing 1/2 and Beijing 2/2), so no row is left without a label.

    >>> spread(list("北京南站"), 3), spread(["Zhang", "Wei"], 1, " "), spread(["Beijing"], 2)
    (['北京', '南', '站'], ['Zhang Wei'], ['Beijing 1/2', 'Beijing 2/2'])
    """
    if len(parts) < slots:
        return [f"{joiner.join(parts)} {k}/{slots}" for k in range(1, slots + 1)]
    size, extra = divmod(len(parts), slots)
    groups, start = [], 0
    for k in range(slots):
        end = start + size + (k < extra)
        groups.append(joiner.join(parts[start:end]))
        start = end
    return groups


def _typed_columns(out: Output, tokenize: Callable[[str], list[str]] | None) -> tuple[list[str], list[str], list[int]]:
    """Each of the model's source columns: its label as typed, its hover note, and the first column of its group.

    A name typed with at least as many characters as its stand-in has spread over the stand-in's columns; one
    typed shorter gives each character typed a group of the stand-in's columns (``first``: the group's first
    column, where the group is drawn). See [`typed_axes`][demo.handlers.typed_axes].
    """
    source = list(out.source_tokens)
    labels, notes, first = list(source), [""] * len(source), list(range(len(source)))  # first: a column's group
    prepared = out.names
    for c in prepared.carried if prepared is not None and tokenize is not None else []:
        carrier = tokenize(c.carrier)
        start = len(tokenize(prepared.text[: c.offset] + c.carrier)) - len(carrier)
        if start < 0 or out.source_tokens[start: start + len(carrier)] != carrier:
            continue  # not where the tokeniser puts it (never expected): the model's tokens stay
        typed = list(c.name.text)
        if len(typed) >= len(carrier):
            for j, label in enumerate(spread(typed, len(carrier)), start):
                labels[j] = label
                notes[j] = f"the model read {source[j]}: {c.carrier} stands in for {c.name.text} 替身"
            continue
        size, extra = divmod(len(carrier), len(typed))  # fewer characters typed: each takes a few of its columns
        j = start
        for k, label in enumerate(typed):
            group = range(j, j + size + (k < extra))
            read = "".join(source[i] for i in group)
            for i in group:
                first[i], labels[i] = j, label
                notes[i] = (f"the model read {read}: {c.carrier} stands in for {c.name.text}"
                            + (f", its {len(group)} columns added 替身" if len(group) > 1 else " 替身"))
            j = group.stop
    return labels, notes, first


def typed_axes(out: Output, tokenize: Callable[[str], list[str]] | None = None) -> dict:
    """The heatmap's axes in the visitor's words: the names, numbers and words the names switch carried, as typed.

    The model read a stand-in (汤姆 for 张伟, 波士顿 for 北京) and wrote the stand-in's English (tom, boston); the
    labels show what was typed and what the output says (北 京, Beijing), and each relabelled column or row has a
    note for the hover text naming the stand-in the model read or wrote. A name typed shorter than its stand-in
    takes fewer columns: the stand-in's columns are added up under each character typed (北 over 波士, 京 over 顿;
    ``columns``, drawn by [`drawn`][demo.handlers.drawn]). A name the library placed by attention, where the model
    left its stand-in out, has no row of the model's: it gets a row of its own, empty and labelled (``inserted``).

    Args:
        out: One output of the names switch (``out.names``; without it the axes are the model's tokens).
        tokenize: The model's source tokeniser (finds the stand-in's columns); ``None``: the source stays.

    Returns:
        ``{"source": (labels, notes), "output": (labels, notes), "words": (labels, notes), "columns": …,
        "inserted": …}``: the columns as drawn, the rows per piece and the rows per word (pieces merged); a note is
        ``""`` where the label is the model's token. ``columns``: the drawn column of each of the model's columns
        (``None`` when they are the same); ``inserted``: per row axis (``output``, ``words``), the rows to draw
        that the model did not write, ``[(row they come before, label, note)]``.
    """
    source, rows = list(out.source_tokens), list(out.row_labels)
    spans = word_spans(rows)
    labels, notes, first = _typed_columns(out, tokenize)
    axes = {"output": (rows, [""] * len(rows)), "words": ([word for word, _ in spans], [""] * len(spans)),
            "columns": None, "inserted": {"output": [], "words": []}}
    prepared = out.names
    kept = [j for j in range(len(source)) if first[j] == j]
    axes["source"] = ([labels[j] for j in kept], [notes[j] for j in kept])
    if len(kept) < len(source):
        axes["columns"] = [kept.index(first[j]) for j in range(len(source))]
    if prepared is None:
        return axes
    for first_word, (size, english) in prepared.written.items():
        if first_word + size > len(spans):
            continue
        read = " ".join(word for word, _ in spans[first_word: first_word + size])
        note = f"the model wrote {read}: the stand-in for {english} 替身"
        for k, label in enumerate(spread(english.split(), size, " "), first_word):
            axes["words"][0][k], axes["words"][1][k] = label, note
        pieces = [i for _, index in spans[first_word: first_word + size] for i in index]
        for i, label in zip(pieces, spread(english.split(), len(pieces), " ")):
            axes["output"][0][i], axes["output"][1][i] = label, note
    for before, names in sorted(prepared.inserted.items()):
        if before > len(spans):
            continue
        piece = spans[before][1][0] if before < len(spans) else len(rows)
        for english, carrier in names:
            note = (f"the model left out {carrier}, the stand-in for {english}: the names switch placed the name "
                    "where the attention points, so this row has no weights 按注意力插入，无权重")
            axes["inserted"]["words"].append((before, english, note))
            axes["inserted"]["output"].append((piece, english, note))
    return axes


def inserted_rows(sentence: dict, key: str) -> list[tuple[int, str, str]]:
    """The rows an axis of rows (``output`` or ``words``) draws that the model did not write.

    A name placed by attention ([`typed_axes`][demo.handlers.typed_axes]), as ``(row it comes before, label, note)``.
    """
    return list(((sentence.get("typed") or {}).get("inserted") or {}).get(key, []))


def column_position(columns: Sequence[int], x: float) -> float:
    """Where a position on the model's columns (``x``: 0 is the first column's middle) lies on the columns drawn.

    ``columns`` gives each model column's drawn column; columns merged into one share its width evenly, so the
    window's edges and a local-p centre land where they belong (outside the sentence, one column is one column).

    >>> [column_position([0, 1, 1, 2], x) for x in (-0.5, 0, 1, 1.5, 2, 3, 4)]
    [-0.5, 0.0, 0.75, 1.0, 1.25, 2.0, 3.0]
    """
    n, t = len(columns), x + 0.5
    if t <= 0 or t >= n:
        return x if t <= 0 else columns[-1] + (t - n) + 0.5

    def edge(j: int) -> float:  # the drawn position of model column j's left edge
        group = [i for i, g in enumerate(columns) if g == columns[j]]
        return columns[j] - 0.5 + (j - group[0]) / len(group)

    j = int(t)
    right = edge(j + 1) if j + 1 < n else columns[-1] + 0.5
    return edge(j) + (t - j) * (right - edge(j))


def drawn(sentence: dict) -> dict:
    """The sentence as the figures draw it: a name typed shorter than its stand-in on fewer columns.

    The weights of the stand-in's columns that one character typed covers are added up (rows stay distributions;
    coverage adds up too), a Transformer's maps with them (an encoder row of merged columns is their mean), the
    flagged columns follow, and each row's window becomes its edges on the columns drawn (``bands``,
    ``word_bands``). The same sentence, unchanged, when no columns merge; drawing it twice merges once.
    """
    columns = (sentence.get("typed") or {}).get("columns")
    if not columns:
        return sentence
    def merge(values: list | None) -> list | None:
        return _merge(values, columns, 1, "sum") if values else values

    def bands(centres: list | None) -> list | None:
        window = sentence.get("window")
        if centres is None or window is None:
            return None
        return [(column_position(columns, c - window - 0.5), column_position(columns, c + window + 0.5))
                for c in centres]

    out = {**sentence, "typed": {**sentence["typed"], "columns": None}}
    for key in ("weights", "word_weights"):
        if sentence.get(key) is not None:
            out[key] = merge(sentence[key])
    for key in ("centres", "word_centres"):
        if sentence.get(key) is not None:
            out[key] = [column_position(columns, c) for c in sentence[key]]
    out["bands"], out["word_bands"] = bands(sentence.get("centres")), bands(sentence.get("word_centres"))
    if sentence.get("coverage") is not None:
        out["coverage"] = merge([sentence["coverage"]])[0]
    out["flagged"] = sorted({columns[j] for j in sentence.get("flagged", [])})
    if sentence.get("maps"):
        index = torch.tensor(columns)
        groups = int(index.max()) + 1
        counts = torch.bincount(index, minlength=groups)

        def add(maps: torch.Tensor, dim: int) -> torch.Tensor:  # the columns (or rows) of one character summed
            shape = list(maps.shape)
            shape[dim] = groups
            return maps.float().new_zeros(shape).index_add_(dim, index, maps.float())

        encoder = add(add(sentence["maps"]["encoder"], -1), -2) / counts.unsqueeze(1).float()  # rows: their mean
        out["maps"] = {**sentence["maps"], "encoder": encoder.to(torch.float16),
                       "cross": add(sentence["maps"]["cross"], -1).to(torch.float16)}
    return out


def axis(sentence: dict, key: str) -> tuple[list[str], list[str] | None]:
    """An axis of a sentence as drawn, ``source``, ``output`` or ``words``: its labels and hover notes.

    The labels are what the visitor typed where the names switch carried a stand-in
    ([`typed_axes`][demo.handlers.typed_axes]), else the model's tokens (notes ``None``).
    """
    typed = (sentence.get("typed") or {}).get(key)
    return (list(typed[0]), list(typed[1])) if typed else (list(sentence[key]), None)


PIECES_MERGED = "words (pieces merged: mean of their rows and centres)"
"""The heatmap's second title line in the word view."""


def carried_line(carried: Sequence[Sequence[str]]) -> str:
    """The heatmap's note that its axes show the names as typed, and the stand-ins the model read (names switch)."""
    pairs = ", ".join(f"{carrier} for {html.escape(name)}" for carrier, name in dict.fromkeys(map(tuple, carried)))
    return f"names as typed 按输入显示 · the model read {pairs}" if pairs else ""  # short: the hover says more


def heatmap_figure(sentence: dict, row: int | None, pieces: bool, title: str,
                   more: Sequence[str] = ()) -> go.Figure:
    """The alignment of one sentence: rows per word (pieces merged) or per subword piece.

    A second, smaller title line (``more`` first: a Transformer's layer and head, the step) says when the pieces are
    merged and which carriers the model read for the names and numbers typed (its axes show what was typed,
    [`drawn`][demo.handlers.drawn]); a name placed by attention has a row of its own, empty
    ([`inserted_rows`][demo.handlers.inserted_rows]).
    """
    sentence = drawn(sentence)
    merged = not pieces and len(sentence["words"]) != len(sentence["output"])
    rtl = bool(sentence.get("rtl"))
    notes = [line for line in (*more, PIECES_MERGED if merged else "", carried_line(sentence.get("carried", [])))
             if line]
    if notes:  # one long line was clipped in Compare's half-width panels
        title = title + second_line(" · ".join(notes))
    source, source_notes = axis(sentence, "source")
    if not merged:
        rows, notes = axis(sentence, "output")
        figure = alignment_figure(source, rows, sentence["weights"], sentence["window"], sentence["centres"],
                                  sentence["predicted"], title=title, highlight=row, rtl=rtl, x_notes=source_notes,
                                  y_notes=notes, bands=sentence.get("bands"),
                                  inserted=inserted_rows(sentence, "output"))
    else:
        highlight = None if row is None else sentence["word_of"][row]
        rows, notes = axis(sentence, "words")
        figure = alignment_figure(source, rows, sentence["word_weights"], sentence["window"],
                                  sentence["word_centres"], sentence["predicted"], highlight=highlight, rtl=rtl,
                                  title=title, x_notes=source_notes, y_notes=notes,
                                  bands=sentence.get("word_bands"), inserted=inserted_rows(sentence, "words"))
    return figure


def _pick(maps: torch.Tensor, layer: int, head: str) -> list:
    """One layer's head, or the mean of its heads, from a ``(L, h, N, M)`` tensor: ``(N, M)`` as lists."""
    heads = maps[layer - 1].double()  # (h, N, M)
    return _rounded(heads.mean(dim=0) if head == MEAN else heads[int(head) - 1])


def _merge(weights: list, groups: list[int], dim: int, reduce: str) -> list:
    """Merge the rows (``dim=0``) or columns (``dim=1``) of ``weights`` ``(N, M)`` that share a group.

    Args:
        weights: The map, ``(N, M)``.
        groups: The group of each row or column, numbered ``0, 1, …`` in order.
        dim: 0 for rows, 1 for columns.
        reduce: ``mean`` (a word's row: the mean of its pieces' rows) or ``sum`` (a word's column: the
            weight on all its pieces), so rows stay distributions.

    Returns:
        The merged map.
    """
    values = torch.tensor(weights, dtype=torch.float64)
    index = torch.tensor(groups)
    shape = list(values.shape)
    shape[dim] = int(index.max()) + 1
    merged = values.new_zeros(shape).index_add_(dim, index, values)
    if reduce == "mean":
        counts = torch.bincount(index, minlength=shape[dim]).to(values)
        merged = merged / (counts.unsqueeze(1) if dim == 0 else counts)
    return _rounded(merged)


def selected(sentence: dict, layer: int, head: str) -> dict:
    """The sentence with its heatmap rows taken from one layer and head of a Transformer's cross-attention.

    The default view (last layer, mean of heads) is the sentence itself: the weights the decoder reported.

    Args:
        sentence: A sentence of the state, with ``maps``.
        layer: 1-based layer.
        head: ``"mean"`` or a 1-based head number.

    Returns:
        The sentence with ``weights`` ``(T, S)`` and ``word_weights`` ``(W, S)`` of that view.
    """
    if layer == sentence["layers"] and head == MEAN:
        return sentence
    weights = _pick(sentence["maps"]["cross"], layer, head)
    return {**sentence, "weights": weights, "word_weights": _merge(weights, sentence["word_of"], 0, "mean")}


def self_attention_figures(sentence: dict, layer: int, head: str, pieces: bool,
                           row: int | None = None) -> tuple[go.Figure, go.Figure]:
    """A Transformer's encoder self-attention and causal decoder self-attention at one layer and head.

    The decoder's position ``t`` reads the token written before it (``<bos>`` at ``t = 0``), so its keys
    are labelled ``<bos>`` and the output shifted by one: row ``t`` sees only columns ``0 … t``. In the
    word view (pieces merged, as in the heatmap) a word's row is the mean of its pieces' rows and a
    word's column the sum of its pieces' columns, so every row still sums to 1.

    Args:
        sentence: A sentence of the state, with ``maps``.
        layer: 1-based layer.
        head: ``"mean"`` or a 1-based head number.
        pieces: One row (and column) per subword piece instead of per word.
        row: The decoding step (0-based) to outline in the decoder's map, or ``None``.

    Returns:
        ``(encoder figure (S × S), decoder figure (T × T, or words × words))``.
    """
    sentence = drawn(sentence)
    where = view_words(sentence["layers"], sentence["heads"], layer, head)
    source, source_notes = axis(sentence, "source")
    encoder = alignment_figure(source, source, _pick(sentence["maps"]["encoder"], layer, head),
                               title="encoder self-attention 编码器自注意力", subtitle=where,
                               x_title="key 键 (source 源)", y_title="query 查询 (source 源)",
                               rtl=bool(sentence.get("rtl")), x_notes=source_notes, y_notes=source_notes)
    decoder = _pick(sentence["maps"]["decoder"], layer, head)  # (T, T)
    output = sentence["output"]
    rows, notes = axis(sentence, "output")
    keys, key_notes = ["<bos>", *rows[:-1]], ["", *(notes or [""] * len(rows))[:-1]]
    highlight, key = row, "output"
    if not pieces and len(sentence["words"]) != len(output):
        word_of = sentence["word_of"]
        columns = [0, *[w + 1 for w in word_of[: len(output) - 1]]]  # <bos>, then each piece's word
        decoder = _merge(_merge(decoder, columns, 1, "sum"), word_of, 0, "mean")
        rows, notes = axis(sentence, "words")
        keys, key_notes = ["<bos>", *rows[: columns[-1]]], ["", *(notes or [""] * len(rows))[: columns[-1]]]
        highlight, key = None if row is None else word_of[row], "words"
    figure = alignment_figure(keys, rows, decoder, highlight=highlight,
                              title="decoder self-attention 解码器自注意力", subtitle=where,
                              x_title="key 键 (&lt;bos&gt; + output so far 已生成)", y_title="query 查询 (output 输出)",
                              x_notes=key_notes, y_notes=notes, inserted=inserted_rows(sentence, key))
    return encoder, figure


@dataclass
class View:
    """The figures and info line of one sentence at one step, layer and head.

    Attributes:
        heatmap: The alignment (a Transformer's encoder–decoder attention at the chosen layer and head).
        bars: One step's weights as bars.
        encoder: A Transformer's encoder self-attention, else ``None``.
        decoder: A Transformer's decoder self-attention, else ``None``.
        info: The info line, with the Transformer's layer and head.
        view: The ``(layer, head)`` shown, for a Transformer.
    """

    heatmap: go.Figure
    bars: go.Figure
    encoder: go.Figure | None = None
    decoder: go.Figure | None = None
    info: str = ""
    view: tuple[int, str] | None = None


def _view_line(sentence: dict, layer: int, head: str) -> str:
    """The info line of a Transformer: what the maps show and where a window applies."""
    window = sentence["window"]
    where = ("global 全局 (choose D for a local-m window on every cross-attention, at decode time)" if window is None
             else f"local-m window D = {window} on every cross-attention (encoder–decoder), at decode time; "
                  "self-attention is never windowed")
    return (f"Transformer: {view_words(sentence['layers'], sentence['heads'], layer, head)} "
            f"(the heatmap, encoder and decoder maps) · window 窗口: {where}")


ATTENTION, GRADIENT = "attention", "gradient"
"""What the heatmap shows: the attention weights, or the input × gradient importance of the same output."""
SHOWN_CHOICES = [("attention 注意力", ATTENTION), ("gradient 梯度 (input × gradient)", GRADIENT)]


def attention_view(state: dict | None, step: int | None = None, pieces: bool = False, layer: object = None,
                   head: object = None, shown: str = ATTENTION) -> View:
    """Every view of the current sentence, re-plotted from the state without decoding again.

    The attention heatmap carries each source token's coverage under it (words flagged as possibly
    untranslated in red); with ``shown="gradient"`` the heatmap is the input × gradient importance kept in the
    state by [`with_gradient`][demo.handlers.with_gradient], with Kendall's τ of each row beside it.

    Args:
        state: ``Result.state`` of the last request (``None`` or empty before the first one).
        step: 1-based step to outline and show as bars; ``None``: no outline, bars at step 1.
        pieces: Rows per subword piece instead of per word.
        layer: A Transformer's layer (1-based; ``None``: the last).
        head: A Transformer's head (1-based or ``"mean"``; ``None``: the mean).
        shown: ``"attention"`` or ``"gradient"`` (drawn only once the state holds the gradients).

    Returns:
        The [`View`][demo.handlers.View].

    Raises:
        gr.Error: On a layer or head this Transformer does not have.
    """
    view = _attention_view(state, step, pieces, layer, head)
    if not state or not state.get("output"):
        return view
    row = None if step is None else max(0, min(int(step) - 1, len(state["output"]) - 1))
    if shown == GRADIENT and state.get("gradient") is not None:
        view.heatmap = gradient_figure(state, row, pieces)
        view.info = "  \n".join(line for line in (view.info, gradient_line(state)) if line)
    elif state.get("has_attention") and state.get("coverage"):
        shown_columns = drawn(state)
        add_coverage(view.heatmap, axis(state, "source")[0], shown_columns["coverage"],
                     shown_columns.get("flagged", []), COVERAGE_THRESHOLD)
    return view


def gradient_rows(state: dict, pieces: bool) -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """The gradient importance of the current sentence, as the heatmap shows it, and Kendall's τ per row.

    Args:
        state: A state holding ``gradient`` and ``agreement`` ([`with_gradient`][demo.handlers.with_gradient]).
        pieces: One row per subword piece: ``input_x_gradient``'s rows and τ exactly. Otherwise (the word view)
            a word's row is the mean of its pieces' rows, as for attention, and τ compares the merged rows.

    Returns:
        ``(row labels, importance (rows, S), τ (rows,))``.
    """
    gradient = torch.tensor(state["gradient"], dtype=torch.float32)  # (T_out, S)
    agreement = torch.tensor(state["agreement"], dtype=torch.float32)  # (T_out,)
    labels, merged = word_rows(state["output"], gradient)
    if pieces or len(labels) == len(state["output"]):
        return axis(state, "output")[0], gradient, agreement
    _, attention = word_rows(state["output"], torch.tensor(state["weights"], dtype=torch.float32))
    return axis({"words": labels, **state}, "words")[0], merged, kendall_tau(attention, merged)


def gradient_figure(state: dict, row: int | None, pieces: bool) -> go.Figure:
    """The input × gradient heatmap of the current sentence, with Kendall's τ (attention vs gradient) per row."""
    labels, gradient, tau = gradient_rows(state, pieces)  # τ over the model's own columns
    words = len(labels) != len(state["output"])
    if row is not None and words:
        row = state["word_of"][row]
    columns = (state.get("typed") or {}).get("columns")
    importance = _merge(gradient.tolist(), columns, 1, "sum") if columns else gradient.tolist()
    source, notes = axis(state, "source")
    inserted = inserted_rows(state, "words" if words else "output")
    figure = alignment_figure(source, labels, importance, highlight=row, value="importance",
                              rtl=bool(state.get("rtl")), x_notes=notes, inserted=inserted,
                              title="input × gradient 输入×梯度"
                              + second_line("|x_s · ∂ log p(y_t) / ∂x_s|, each row sums to 1"))
    notes = ["—" if math.isnan(t) else f"{t:+.2f}" for t in tau.tolist()]
    return add_row_notes(figure, with_rows(notes, inserted, ""), "τ vs attn")


def mean_tau(values: list[float]) -> float:
    """The mean of Kendall's τ over the rows that have one (``nan`` when none has)."""
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def gradient_line(state: dict) -> str:
    """The info line of the gradient view: what it is, the mean τ, and what it cost."""
    tau = mean_tau(state["agreement"])
    against = ("the attention the decoder reported (last layer, mean of heads)" if state.get("maps")
               else "the attention")
    agreement = ("no attention to compare with 无注意力可比" if math.isnan(tau)
                 else f"Kendall τ per output token beside the rows (ranking of the source by {against} vs by "
                      f"gradient: 1 = same order, 0 = unrelated), **mean τ = {tau:+.2f}** 平均")
    line = (f"gradient 梯度 (input × gradient, Shrikumar et al. 2017): {agreement} · computed on demand in "
            f"{state.get('gradient_ms', 0):.0f} ms")
    if not state.get("own_attention", True):
        line += (" · the gradient goes through the model's own soft attention and window, not the hard or windowed "
                 "attention chosen above 梯度按模型默认的软注意力与窗口计算")
    return line


def decoded(state: dict) -> Output:
    """The current sentence's ``Output`` as far as feeding it back needs: source, tokens and attention rows.

    Unknown source tokens come back as ``<unk>``, which is what the model read.
    """
    rows = state["output"]
    tokens = rows[:-1] if state["finished"] else rows
    return Output(source_tokens=list(state["source"]), unknown=[None] * len(state["source"]), tokens=list(tokens),
                  text="", weights=torch.tensor(state["weights"], dtype=torch.float32), centres=None, score=0.0,
                  finished=bool(state["finished"]))


def with_gradient(registry: ModelRegistry, state: dict | None) -> dict:
    """The state with the current sentence's input × gradient importance, computed once and kept.

    The output is fed back through its model with teacher forcing
    ([`input_x_gradient`][attention_core.analysis.attribution.input_x_gradient]); the result (``gradient``,
    ``agreement`` and ``gradient_ms``) is stored with the sentence, so stepping, the word/piece switch and
    coming back to it cost nothing.

    Args:
        registry: Loaded models.
        state: ``Result.state`` (holding ``task`` and ``variant``).

    Returns:
        A new state (the old one unchanged); the same state when there is nothing to explain.
    """
    if not state or not state.get("output") or state.get("gradient") is not None or "finished" not in state:
        return state or {}
    translator = served(registry, state["task"], state["variant"])
    started = time.perf_counter()
    importance = input_x_gradient(translator, decoded(state))
    found = dict(gradient=importance.gradient.tolist(), agreement=importance.agreement.tolist(),
                 gradient_ms=1000 * (time.perf_counter() - started))
    sentences = list(state.get("sentences", []))
    index = state.get("sentence", 0)
    if index < len(sentences):
        sentences[index] = {**sentences[index], **found}
    return {**state, **found, "sentences": sentences}


def _bar_axes(sentence: dict) -> tuple[list[str], list[str]]:
    """The step bars' source labels and output tokens, as drawn (names as typed)."""
    return axis(sentence, "source")[0], axis(sentence, "output")[0]


def _attention_view(state: dict | None, step: int | None = None, pieces: bool = False, layer: object = None,
                    head: object = None) -> View:
    """The attention views of [`attention_view`][demo.handlers.attention_view], before coverage or gradients."""
    if not state or not state.get("output"):
        empty = message_figure("Run a sentence first. 请先运行一句。")
        return View(empty, empty, info=(state or {}).get("info", ""))
    info = state.get("info", "")
    if not state.get("has_attention"):
        return View(message_figure(NO_ATTENTION), message_figure("—"), info=info)
    sentence = drawn({"words": state["output"], "word_weights": state["weights"], "word_centres": state["centres"],
                      **state})  # a name typed shorter than its stand-in: on fewer columns
    row = None if step is None else max(0, min(int(step) - 1, len(state["output"]) - 1))
    sentences = state.get("sentences", [])
    where = f"sentence 句 {state.get('sentence', 0) + 1}/{len(sentences)}" if len(sentences) > 1 else ""
    if not sentence.get("maps"):
        if row is None:
            title = "alignment 对齐 (hover for weights)" + (f" · {where}" if where else "")
        else:
            title = (f"{where} · " if where else "") + f"step 步 {row + 1}"
        heat = heatmap_figure(sentence, row, pieces, title)
        bars = step_figure(*_bar_axes(sentence), sentence["weights"], row or 0, rtl=bool(state.get("rtl")),
                           notes=axis(sentence, "source")[1])
        return View(heat, bars, info=info)
    view = parse_view(sentence["layers"], sentence["heads"], layer, head)
    sentence = selected(sentence, *view)
    title = " · ".join(part for part in (where, "cross-attention 交叉注意力") if part)
    more = [view_words(sentence["layers"], sentence["heads"], *view), "" if row is None else f"step 步 {row + 1}"]
    heat = heatmap_figure(sentence, row, pieces, title, more)  # the view in the smaller lines: a phone shows them
    bars = step_figure(*_bar_axes(sentence), sentence["weights"], row or 0, rtl=bool(sentence.get("rtl")),
                       notes=axis(sentence, "source")[1])
    encoder, decoder = self_attention_figures(sentence, *view, pieces, row)
    first, _, rest = info.partition("  \n")
    info = "  \n".join(line for line in (first, _view_line(sentence, *view), rest) if line)
    return View(heat, bars, encoder, decoder, info, view)


def run(registry: ModelRegistry, task: str, text: str | None, settings: Settings, pieces: bool = False,
        layer: object = None, head: object = None) -> Result:
    """Decode one input with one variant and draw its alignment.

    What it does follows the model's task: a couplet model writes a 下联 under its constraints; any other
    input may hold several sentences: they are split at sentence-final punctuation,
    translated in one batch, and each gets its own alignment (``state["sentences"]``; the figure
    shows the first, [`sentence_view`][demo.handlers.sentence_view] switches). A Transformer's
    outputs also keep every layer's and head's attention in the state, and the figures show the
    chosen layer and head.

    Args:
        registry: Loaded models.
        task: The tab: ``translation``, ``couplet`` or ``own`` (models of your own).
        text: The user's input.
        settings: Decoding controls.
        pieces: Show one heatmap row per subword piece instead of per word.
        layer: A Transformer's layer to show (1-based; ``None``: the last). Ignored for RNN variants.
        head: A Transformer's head to show (1-based or ``"mean"``; ``None``: the mean). Ignored for RNNs.

    Returns:
        The [`Result`][demo.handlers.Result].

    Raises:
        gr.Error: On bad input or settings, with a bilingual message.
    """
    text = validate_text(task, text)
    window = parse_window(settings.window)
    if not isinstance(settings.beam_size, (int, float)) or not 1 <= int(settings.beam_size) <= 10:
        raise refuse(f"束宽应为 1–10 / beam size must be 1–10, got {settings.beam_size!r}")
    translator = served(registry, task, settings.variant)
    shape = registry.transformer_shape(task, settings.variant)
    if shape is not None:
        parse_view(*shape, layer, head)  # a bad choice fails before decoding
    couplet = translator.task.constrained
    rules = settings.rules() if couplet else None
    config = DecodeConfig(beam_size=int(settings.beam_size), window=window, hard=settings.hard,
                          constrained=settings.constrained if couplet else None, rules=rules)
    names = bool(settings.names) and translator.reads_names  # the editing layer's switch
    texts: list[str] | None = None  # the sentences as typed, when the library does not split them itself
    started = time.perf_counter()
    try:
        with torch.inference_mode():
            if couplet:
                outs = translator.translate([text], config, max_tokens=MAX_CHARS["couplet"])
            elif translator.task.chinese_source:
                outs = switch.translate_paragraph(translator, text, SENTENCE_TOKENS, names, config=config)
            else:  # any language: the library's sentences, kept as typed for the sentence picker
                texts = translator.sentences(text, SENTENCE_TOKENS)
                outs = switch.translate(translator, texts, names, config)
    except InputError as err:
        raise refuse(f"{'无法生成下联' if couplet else '无法翻译'} / {err}") from None
    model = translator.model
    with torch.inference_mode():  # a Transformer's every layer and head (None for an RNN)
        maps = [translator.attention_maps(out, window, settings.hard) for out in outs]
    seconds = time.perf_counter() - started  # decoding and the maps: what the visitor waits for
    rtl = is_rtl(sides(translator)[0])
    typed = [texts[i] if texts is not None else out.names.original if out.names else None  # not the carriers
             for i, out in enumerate(outs)]
    sentences = [sentence_state(out, model, window, m, rtl, typed[i],
                                [t for word in translator.untranslated(out) for t in word.tokens],
                                translator.task.tokenize_src)
                 for i, (out, m) in enumerate(zip(outs, maps))]
    notes = [output_notes(translator, out) for out in outs]
    data = model_data_line(registry, task, settings.variant)
    info = _info(couplet, outs, notes, settings, seconds, model.resolve_window(window), model, data)
    summary = summary_line(outs, notes, settings, seconds, model.resolve_window(window), model, data)
    state = {**sentences[0], "sentences": sentences, "sentence": 0, "info": info, "variant": settings.variant,
             "task": task, "own_attention": not settings.hard and settings.window in (None, "", "default")}
    view = attention_view(state, None, pieces, layer, head)
    joiner = "" if couplet else " "
    return Result(joiner.join(out.text for out in outs), view.heatmap, view.bars, view.info, state, view.encoder,
                  view.decoder, view.view, summary)


def sentence_labels(state: dict | None) -> list[tuple[str, int]]:
    """Choices of the sentence selector: ``(label, index)`` per sentence of the last request."""
    sentences = (state or {}).get("sentences", [])
    return [(f"{i + 1}. " + s["text"][:24], i) for i, s in enumerate(sentences)]


def sentence_view(state: dict | None, index: int | None, pieces: bool = False, layer: object = None,
                  head: object = None) -> tuple[dict, go.Figure, go.Figure]:
    """Switch the views to sentence ``index`` of a paragraph.

    Returns:
        ``(state with that sentence current, heatmap, bars at its first step)``; a Transformer's
        self-attention views follow from [`attention_view`][demo.handlers.attention_view] on that state.
    """
    if not (state or {}).get("sentences"):
        empty = message_figure("Run a sentence first. 请先运行一句。")
        return state or {}, empty, empty
    state = with_sentence(state, index)
    heat, bars = step_view(state, 1, pieces, layer, head)
    return state, heat, bars


def with_sentence(state: dict, index: int | None) -> dict:
    """The state with sentence ``index`` (clamped to the paragraph) current; the request's info and variant stay."""
    sentences = state["sentences"]
    i = max(0, min(int(index or 0), len(sentences) - 1))
    kept = {k: v for k, v in state.items() if k not in GRADIENT_KEYS}  # another sentence has its own (or none yet)
    return {**kept, **sentences[i], "sentence": i}


GRADIENT_KEYS = ("gradient", "agreement", "gradient_ms")
"""What [`with_gradient`][demo.handlers.with_gradient] keeps of a sentence."""


def step_view(state: dict | None, step: int, pieces: bool = False, layer: object = None,
              head: object = None) -> tuple[go.Figure, go.Figure]:
    """The step-through view: the heatmap with the current step outlined, and that step as bars.

    Steps are decoding steps (one per subword piece); in the word view the outlined row is the
    word that the step's piece belongs to.

    Args:
        state: ``Result.state`` of the last request (``None`` before the first one).
        step: 1-based step from the slider.
        pieces: Heatmap rows per piece instead of per word.
        layer: A Transformer's layer (1-based; ``None``: the last).
        head: A Transformer's head (1-based or ``"mean"``; ``None``: the mean).

    Returns:
        ``(heatmap, bars)``.
    """
    view = attention_view(state, step, pieces, layer, head)
    return view.heatmap, view.bars


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


def entropy_view(states: dict[str, dict], views: dict[str, tuple[object, object]]) -> go.Figure:
    """Each side's attention entropy per output step, for the layer and head a Transformer side shows.

    Args:
        states: Per side (``"A"``, ``"B"``), ``Result.state``.
        views: Per side, the ``(layer, head)`` chosen (used for a Transformer only).

    Returns:
        The figure (a message when neither side has attention).
    """
    rows = {}
    for side, state in states.items():
        if not state.get("has_attention"):
            continue
        name = f"{side}: {state.get('variant', '')}"
        weights = state["weights"]
        if state.get("maps"):
            view = parse_view(state["layers"], state["heads"], *views.get(side, (None, None)))
            weights = selected(state, *view)["weights"]
            name += " · " + view_words(state["layers"], state["heads"], *view)
        rows[name] = (axis(state, "output")[0], weights)
    if not rows:
        return message_figure("Neither variant has attention: no entropy to compare. 两者都没有注意力。")
    sources = len(next(iter(states.values()))["source"])
    return entropy_figure(rows, sources, "entropy per step 每步注意力熵")  # short: a phone shows it whole


def compare(registry: ModelRegistry, task: str, text: str | None, a: Settings, b: Settings,
            a_view: tuple[object, object] = (None, None), b_view: tuple[object, object] = (None, None)) -> Comparison:
    """The same input through two variants, each with its own controls, side by side.

    The third view puts both alignments' entropy per output step on one chart: near 0 = sharp
    (hard attention, a confident alignment), near ``log S`` = spread evenly (e.g. scaled dot), and no
    line for the baseline, which has no attention.

    Args:
        registry: Loaded models.
        task: The tab's models: ``translation``, ``couplet`` or ``own``.
        text: The input (for a translation paragraph, the views show its first sentence).
        a: Variant A and its controls.
        b: Variant B and its controls.
        a_view: ``(layer, head)`` shown when A is a Transformer (``None``: last layer, mean of heads).
        b_view: The same for B.

    Returns:
        The [`Comparison`][demo.handlers.Comparison].

    Raises:
        gr.Error: On bad input or settings, with a bilingual message.
    """
    results = {"A": run(registry, task, text, a, layer=a_view[0], head=a_view[1]),
               "B": run(registry, task, text, b, layer=b_view[0], head=b_view[1])}
    entropy = entropy_view({side: r.state for side, r in results.items()}, {"A": a_view, "B": b_view})
    data = {side: data_status(registry, task, s.variant) for side, s in (("A", a), ("B", b))}
    if None not in data.values() and data["A"] != data["B"]:  # a zoo being retrained: say it on both sides
        warning = " · ⚠️ A and B were trained on different data: not only their attention differs 两侧训练数据不同"
        results = {side: replace(r, summary=r.summary + warning, info=r.info.replace("  \n", warning + "  \n", 1))
                   for side, r in results.items()}
    return Comparison(results["A"], results["B"], entropy)


GOLD_THRESHOLDS = {"bahdanau": 0.15, "luong-concat": 0.15, "luong-dot": 0.15, "luong-general": 0.2,
                   "luong-general-local-p": 0.25, "luong-location": 0.1, "luong-scaled_dot": 0.1, "transformer": 0.2}
"""The threshold ``τ`` of each bundled variant's link rule, chosen on DeNero by ``benchmarks/alignment.py`` (lowest
AER; ``results/alignment.md``; the Transformer's at its last layer's head mean, the map the app shows). A variant
without one is read with Luong's argmax rule."""
ARGMAX, THRESHOLD = "argmax", "threshold"
RULE_CHOICES = [("threshold τ (chosen on DeNero 在 DeNero 上选定)", THRESHOLD),
                ("argmax (Luong: most-attended word 最受关注的词)", ARGMAX)]
GOLD_NAMES = {name: f"{label} ({GOLD_SIZES[name]})" for name, label in
              (("tsinghua", "Tsinghua"), ("denero", "DeNero & Macherey"))}
GOLD_PULL = "attention-lab data pull align-zh-en"


@lru_cache(maxsize=4)
def gold_set(folder: Path, name: str) -> tuple[Gold, ...]:
    """One gold set, read once per data folder (``read_gold``)."""
    return tuple(read_gold(folder, name))


def gold_missing(data: Path) -> str:
    """What to do when the gold alignments are not in the data folder (the exact command)."""
    return (f"The human word alignments are not in `{data}/align-zh-en/`. Get them with `{GOLD_PULL}` "
            f"(then reload this page; another data folder: set `ATTENTION_LAB_DATA`). "
            f"人工对齐数据不在本机：运行 `{GOLD_PULL}`。")


def link_marks(predicted: set[Link], gold: Gold) -> dict[str, set[Link]]:
    """Sort the model's and the human links into the overlay's five kinds (disjoint; the legend of the figure).

    * hit (sure): a model link that is a sure gold link;
    * hit (possible): a model link that is a possible (not sure) gold link;
    * miss (sure): a sure gold link the model did not make (what recall counts);
    * possible, not linked: a possible gold link the model did not make (costs nothing);
    * extra: a model link outside the possible links (what precision counts).

    Examples:
        >>> g = Gold(("a", "b"), ("x", "y"), frozenset({(0, 0)}), frozenset({(0, 0), (1, 1)}))
        >>> {k.split()[0]: sorted(v) for k, v in link_marks({(1, 1), (0, 1)}, g).items()}["extra"]
        [(0, 1)]
    """
    hit_sure, hit_possible, miss, unlinked, extra = LINK_MARKS
    return {hit_sure: predicted & gold.sure, hit_possible: (predicted & gold.possible) - gold.sure,
            miss: gold.sure - predicted, unlinked: gold.possible - gold.sure - predicted,
            extra: set(predicted) - gold.possible}


@dataclass
class GoldView:
    """A gold sentence over a model's attention.

    Attributes:
        figure: The pooled attention with the links drawn over it (or a message).
        sentence: The sentence pair, in Markdown.
        info: The link rule, AER, precision, recall and counts (or what to do without the data).
        links: The model's links (empty with a message).
        scores: ``evaluate_links`` of this one sentence: ``aer``, ``precision``, ``recall``.
    """

    figure: go.Figure
    sentence: str
    info: str
    links: set[Link] = field(default_factory=set)
    scores: dict = field(default_factory=dict)


def gold_links(translator_variant: str, weights: torch.Tensor, rule: str) -> tuple[set[Link], str]:
    """The model's links by ``rule``, and the rule in words (a variant without a chosen τ falls back to argmax)."""
    tau = GOLD_THRESHOLDS.get(translator_variant)
    if rule == THRESHOLD and tau is not None:
        return threshold_links(weights, tau), f"threshold τ = {tau:g} (chosen on DeNero, results/alignment.md)"
    words = "argmax (Luong's rule)"
    if rule == THRESHOLD:
        words += f": no threshold chosen for {translator_variant}"
    return argmax_links(weights), words


def show_gold(registry: ModelRegistry, task: str, variant: str, name: str, number: object, rule: str = THRESHOLD,
              gold: Gold | None = None, data: Path | None = None) -> GoldView:
    """Force-decode a human-aligned sentence with a model and draw the human links over its attention.

    The gold English is fed to the model (teacher forcing) and its attention pooled onto the gold words
    ([`force_decode`][attention_core.analysis.alignment.force_decode]; a Transformer: its last layer's mean of heads).
    The model's links come from the rule the benchmark uses; hits, misses and extra links are marked
    ([`link_marks`][demo.handlers.link_marks]) and the sentence's AER, precision and recall are
    [`evaluate_links`][attention_core.analysis.alignment.evaluate_links] of it alone.

    Args:
        registry: Loaded models.
        task: The tab (a translation model reading Chinese).
        variant: The model.
        name: ``tsinghua`` or ``denero``.
        number: 1-based sentence number.
        rule: ``threshold`` or ``argmax``.
        gold: A gold pair to use instead of the set's sentence (tests).
        data: The data folder (default: ``data_home()``).

    Returns:
        The [`GoldView`][demo.handlers.GoldView]; without the data, a message saying how to get it.

    Raises:
        gr.Error: On an unknown set, a number out of range, or an unknown model.
    """
    if gold is None:
        if name not in GOLD_SETS:
            raise refuse(f"未知的对齐集 / unknown gold set {name!r}: choose {', '.join(GOLD_SETS)}")
        data = data_home() if data is None else data
        if not (data / "align-zh-en" / name).is_dir():
            message = gold_missing(data)
            return GoldView(message_figure(f"No gold alignments here: {GOLD_PULL}"), "", message)
        try:
            sentences = gold_set(data, name)
        except (OSError, ValueError) as err:  # a partial or damaged copy: say so, and how to get a good one
            message = (f"The human word alignments in `{data}/align-zh-en/{name}` could not be read "
                       f"({html.escape(str(err))}). `{GOLD_PULL}` fetches them again (checked against the manifest).")
            return GoldView(message_figure(f"Gold alignments unreadable: {GOLD_PULL}"), "", message)
        index = _number(number) if not isinstance(number, float) else (int(number) if number.is_integer() else None)
        if index is None or not 1 <= index <= len(sentences):
            raise refuse(f"句号无效 / sentence number {number!r}: {GOLD_NAMES[name]} has 1–{len(sentences)}")
        gold = sentences[index - 1]
        where = f"{GOLD_NAMES[name].split(' (')[0]} {index}/{len(sentences)}"
    else:
        where = "gold sentence"
    translator = served(registry, task, variant)
    sentence = (f"**{html.escape(where)}** · 中文 (segmented 分词): {html.escape(' '.join(gold.source))}  \n"
                f"English (human 人工): {html.escape(' '.join(gold.target))}")
    if not translator.model.has_attention:
        return GoldView(message_figure(NO_ATTENTION), sentence, NO_ATTENTION)
    forced = force_decode(translator, gold)
    weights = forced.weights
    if weights.dim() == 4:  # a Transformer: (L, h, T, S) → the last layer's mean of heads
        weights = weights[-1].mean(dim=0)
    links, rule_words = gold_links(variant, weights, rule)
    marks = link_marks(links, gold)
    scores = evaluate_links([links], [gold], samples=0)
    label = html.escape(variant_label(variant, translator.model))
    counts = " · ".join(f"{kind}: {len(found)}" for kind, found in marks.items())
    info = (f"**{label}** force-decoded on the human English 用人工译文强制解码 · links 连线: {rule_words}  \n"
            f"this sentence 本句: **AER {scores['aer']:.1%}** · precision {scores['precision']:.1%} · recall "
            f"{scores['recall']:.1%} · {len(links)} model links vs {len(gold.sure)} sure / {len(gold.possible)} "
            f"possible human links ({counts})")
    if forced.unknown_characters:
        info += f"  \n{forced.unknown_characters} source characters unknown to the model 未登录字 (read as &lt;unk&gt;)"
    info += "  \nnews, far from the everyday sentences the models learned from 新闻语料，远离训练领域" + \
        _doc_link("results", "")
    title = f"{where}: human links over attention 人工对齐 vs 注意力"
    figure = gold_figure(gold.source, gold.target, weights.tolist(), marks, title=html.escape(title))
    return GoldView(figure, sentence, info, links, scores)
