"""The Gradio interface: one ``build_<tab>_tab()`` per tab, wired to the pure handlers.

The task tabs share one builder ([`build_task_tab`][demo.ui.build_task_tab]): the bundled translation and couplet
tabs, and the tab of your own models ([`OWN`][demo.models.OWN]), whose words, examples and script direction
come from the model chosen in it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr
import plotly.graph_objects as go

from attention_core.data.corpora import data_home
from attention_core.data.info import DataInfo
from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.folder import ModelLoadError
from attention_core.editing import names
from attention_core.model.scores import SCORES
from demo.errors import refuse
from demo.handlers import (
    ATTENTION,
    GOLD_NAMES,
    GOLD_PULL,
    GOLD_SETS,
    GRADIENT,
    MEAN,
    RULE_CHOICES,
    SHOWN_CHOICES,
    THRESHOLD,
    WINDOW_CHOICES,
    Comparison,
    Result,
    Settings,
    View,
    attention_view,
    check_view,
    compare,
    entropy_view,
    gold_missing,
    model_summary,
    run,
    sentence_labels,
    show_gold,
    view_choices,
    with_gradient,
    with_sentence,
)
from demo.links import GOLD_SIZES, TASK_TABS, docs_link, parse_query
from demo.live import MAX_LEN, MAX_STEPS, LiveSettings, stopped_status, train_live, try_sequence
from demo.models import OWN, ModelRegistry, is_rtl, own_examples, sides
from demo.plots import message_figure
from demo.provenance import data_groups, mixed_zoo_note, same_data, variant_choices

try:  # ZeroGPU on Hugging Face Spaces: borrow a GPU per call; a no-op anywhere else
    import spaces

    gpu: Callable = spaces.GPU
except ImportError:  # pragma: no cover - depends on the environment

    def gpu(fn: Callable) -> Callable:
        """No ``spaces`` package: run the function as it is."""
        return fn


TRANSLATION_EXAMPLES = [
    "我喜欢自然语言处理",
    "今天天气很好",
    "你明天有空吗？",
    "我们每天早上七点吃早饭。",
    "张伟和李娜是好朋友。",
    "那些说钱不能买来幸福的人，只是不知道上哪里去买而已。",
    "在日本，在我们的雨季常常下雨，雨季一般在六月中旬至七月中旬。",
    "我昨天去了图书馆。那里人很多！你想明天和我一起去吗？",
]
COMPARE_EXAMPLE = "那些说钱不能买来幸福的人，只是不知道上哪里去买而已。"
"""The Compare tab's default: one long sentence the models know every character of (the bottleneck shows)."""
COUPLET_EXAMPLES = [
    "风声雨声读书声声声入耳",
    "落霞与孤鹜齐飞",
    "年年岁岁花相似",
    "两个黄鹂鸣翠柳",
    "明月松间照",
    "一帆风顺年年好",
    "山含泪，水呜咽，哀乐声中，祭当年屈死同胞，铭倭寇血仇国耻",
]
"""Couplet examples that show the mechanism: repetition patterns to mirror (声声, 年年岁岁), classical
lines (王勃, 刘希夷, 杜甫, 王维), a modern New-Year 上联, and a long 上联 whose punctuation the 下联 must follow."""

CSS = """
.hint {font-size: 0.85em; opacity: 0.8; margin-top: -6px}
.summary {min-height: 1.5em}
[id$="-window"]:has(input:disabled), [id$="-hard"]:has(input:disabled), #live-score:has(input:disabled),
[id$="-names"]:has(input:disabled), #couplet-mirror:has(input:disabled), #couplet-no-reuse:has(input:disabled),
#couplet-tone:has(input:disabled), #couplet-cliche:has(input:disabled) {opacity: 0.45}
.label-wrap > span:first-child {flex: 1 1 auto; min-width: 0; text-align: left}
.label-wrap > .icon {flex: none; align-self: center; margin-left: 0.75em}
@media (max-width: 640px) {
  .row > .form > .block, .row > .block {min-width: 100% !important}
}
"""
"""The page's own styles (``launch(css=...)``): greyed controls; a folded box's title wraps clear of its arrow; on a
phone (640 px and less) every control and figure of a row takes the whole width, one under another (side by side
they squeezed their text into columns of 100 px)."""

JS = r"""
() => {
  // Plotly writes every tick label it is given, so on a phone a sentence's characters ran into each other.
  // After each drawing of a plot, an axis whose labels touch keeps every k-th of them (the smallest k that
  // fits; the hover text names every column). Rotated labels need their spacing times the sine of the angle.
  const angle = (t) => {
    const turned = /rotate\((-?[\d.]+)/.exec(t.getAttribute('transform') || '');
    return turned ? Math.abs(+turned[1]) * Math.PI / 180 : 0;
  };
  const thin = (plot) => {
    for (const layer of plot.querySelectorAll('.xaxislayer-above')) {
      const labels = [...layer.querySelectorAll('text')].filter((t) => t.textContent.trim());
      labels.forEach((t) => { t.style.display = ''; });
      const boxes = labels.map((t) => [t, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0)
        .sort((a, b) => (a[1].left + a[1].right) - (b[1].left + b[1].right));
      const clash = ([t, a], [, b]) => {
        const turn = angle(t);
        const apart = Math.abs((b.left + b.right) - (a.left + a.right)) / 2;
        if (turn > 0.1) return apart * Math.sin(turn) < 0.95 * parseFloat(getComputedStyle(t).fontSize);
        return Math.min(a.right, b.right) - Math.max(a.left, b.left) > -2 && a.top < b.bottom && b.top < a.bottom;
      };
      let step = 1;
      while (step < boxes.length && boxes.some((box, i) => i + step < boxes.length && clash(box, boxes[i + step]))) {
        step += 1;
      }
      boxes.forEach(([t], i) => { if (i % step) t.style.display = 'none'; });
    }
  };
  const hooked = new WeakSet();
  const hook = () => document.querySelectorAll('.js-plotly-plot').forEach((plot) => {
    if (hooked.has(plot) || typeof plot.on !== 'function') return;
    hooked.add(plot);
    plot.on('plotly_afterplot', () => thin(plot));
    thin(plot);
  });
  new MutationObserver(hook).observe(document.body, {childList: true, subtree: true});
  hook();
}
"""
"""The page's own script (``launch(js=...)``): on a narrow screen, a plot's crowded tick labels are thinned to every
k-th (the figures are built on the server, which does not know the width)."""

HALF_MIN = 520
"""The narrowest a half-width figure panel gets (px): below two of them side by side, they stack (a sentence's
thirty characters keep their own columns)."""

SUBMIT = "Enter ↵ runs · Shift+Enter = new line 换行"
"""How the input boxes behave (one line high, growing to eight: Enter submits)."""


PLACEHOLDERS = {
    "heatmap": "Run a sentence to see where the model looks. 运行一句，看看模型看向哪里。",
    "heatmap-couplet": "Type a 上联 and press Generate to see where the model looks as it writes the 下联. "
                       "输入上联并生成，看看模型写下联时看向哪里。",
    "gold": "Choose a sentence and press the button: the human links over the model's attention. 选一句，按按钮。",
    "steps": "After a run: one decoding step's attention, a bar per source word (move the slider above). "
             "运行后：逐步查看每一步的注意力。",
    "entropy": "After Compare: how spread out each step's attention is, A and B on one scale. "
               "对比后：两边每一步注意力的熵。",
    "curves": "Press Train: the loss and accuracy appear here as the model learns. 按「训练」：这里显示损失与准确率。",
    "live": "Press Train: the attention on a fixed example, redrawn as the model learns. "
            "按「训练」：这里显示固定样例的注意力。",
    "sequence": "After training, type a sequence and press Run: its alignment appears here. "
                "训练后输入序列，按「运行」：这里显示它的对齐。",
}
"""What each plot says before it has something to show (no plot is an empty box)."""


def placeholder(kind: str, task: str = "") -> go.Figure:
    """A plot's message before its first figure ([`PLACEHOLDERS`][demo.ui.PLACEHOLDERS]).

    In a task's own words where it has them (``heatmap-couplet``).
    """
    return message_figure(PLACEHOLDERS.get(f"{kind}-{task}", PLACEHOLDERS[kind]))




def rerun_on_change(groups: list[dict], handler: Callable, state: gr.State, inputs: list, outputs: list,
                    text_at: int = 0) -> list:
    """Re-run the current input when a decoding control changes: the output follows the controls.

    A sentence decodes in well under a second, so no button press is needed. Every user change of a control
    (not a programmatic one) re-runs; ``trigger_mode="always_last"`` keeps only the last change made while a
    run is going, so dragging a slider or a burst of clicks costs two runs, not one per change (the debounce).
    Nothing runs before the first run (an empty ``state``) or with an emptied input box (``inputs[text_at]``).

    Another model (``variant``) first puts the window and soft/hard back to the model's own, then runs: a
    setting chosen for one model is never carried over, unseen, to the next. The reset is done in the page
    ([`ModelResetJS`][demo.ui.ModelResetJS]), at once: a window chosen right after the model is never
    overwritten by a late answer from a busy server, and only opening the list changes nothing.

    Args:
        groups: The controls by name, one dict per set of them (a task tab has one, Compare one per side).
        handler: The run, from ``inputs``.
        state: The last run's state (empty before the first).
        inputs: The run's inputs.
        outputs: The run's outputs.
        text_at: Where the input text is among ``inputs``.

    Returns:
        The events, so a caller can add ``.failure`` to each.
    """

    def rerun(state_value: dict, *values: object) -> tuple:
        if not state_value or not str(values[text_at] or "").strip():
            return tuple(gr.skip() for _ in outputs)
        return handler(*values)

    def rerun_for_another_model(put_back: str, state_value: dict, *values: object) -> tuple:
        if not put_back:  # the model stayed (the list was only opened), or this choice was taken already
            return tuple(gr.skip() for _ in outputs)
        say_reset(put_back)
        return rerun(state_value, *values)

    options = dict(api_visibility="private", trigger_mode="always_last", show_progress="minimal")
    events = []
    for controls in groups:
        for name, control in controls.items():
            if name != "variant":
                events.append(control.input(rerun, [state, *inputs], outputs, **options))
                continue
            page_js = ModelResetJS(control.elem_id or str(id(control)))
            kept = [controls["window"], controls["hard"]]
            control.focus(None, control, None, js=page_js.entered, api_visibility="private")
            reset = control.input(None, [control, *kept], kept, js=page_js.reset, api_visibility="private")
            put_back = gr.Textbox(visible=False)  # only a place for what page_js.take hands the run
            events.append(reset.then(rerun_for_another_model, [put_back, state, *inputs], outputs,
                                     js=page_js.take, **options))
    return events


MODEL_OWN = ("default", False)
"""The window and soft/hard of "the model's own": how each model was trained to attend."""


@dataclass(frozen=True)
class ModelResetJS:
    """The page's side of a choice of model: the window and soft/hard put back at once, in the browser.

    A server's answer comes late on a busy machine, and a window chosen meanwhile would be overwritten by it;
    in the page the reset is done before the next click. A Gradio drop-down fires ``input`` on a choice and
    again each time it is left (even when only opened), so the model is compared with the one it held when it
    was entered, and what was put back is handed to exactly one run. Each drop-down keeps its own record
    under ``key`` in ``globalThis.attentionLab``.

    Attributes:
        key: The drop-down's ``elem_id``.
    """

    key: str

    @property
    def _store(self) -> str:
        return "(globalThis.attentionLab ??= {entered: {}, putBack: {}})"

    @property
    def entered(self) -> str:
        """On ``focus``, from (model): remember the model the drop-down holds as it is entered."""
        return f"(model) => {{ {self._store}.entered[{json.dumps(self.key)}] = model; return []; }}"

    @property
    def reset(self) -> str:
        """On ``input``, from (model, window, soft/hard) to (window, soft/hard).

        Another model gets [`MODEL_OWN`][demo.ui.MODEL_OWN] and the values it replaced are kept for
        [`take`][demo.ui.ModelResetJS.take] (the first ones, when a second model is chosen before a run took them:
        those are the visitor's); the same model changes nothing.
        """
        key, skip = json.dumps(self.key), "{__type__: 'update'}"
        return (f"(model, window, hard) => {{ const s = {self._store}; "
                f"if (s.entered[{key}] === model) return [{skip}, {skip}]; "
                f"s.entered[{key}] = model; s.putBack[{key}] ??= JSON.stringify([window, hard]); "
                f"return [{json.dumps(MODEL_OWN[0])}, {json.dumps(MODEL_OWN[1])}]; }}")

    @property
    def take(self) -> str:
        """Before the run that follows: its first input becomes what was put back (JSON), taken once, else ``""``."""
        key = json.dumps(self.key)
        return (f"(_, ...values) => {{ const s = {self._store}; const putBack = s.putBack[{key}] ?? ''; "
                f"delete s.putBack[{key}]; return [putBack, ...values]; }}")


def say_reset(carried: str) -> None:
    """Say that another model put the window or soft/hard back to its own, when they were changed.

    A window D chosen for local-p would otherwise be applied, unseen, to the Transformer's cross-attention.

    Args:
        carried: The window and soft/hard before the reset, as JSON.
    """
    window, hard = json.loads(carried)
    changed = [words for changed, words in ((window not in (None, "", MODEL_OWN[0]), f"window D {window}"),
                                            (bool(hard), "hard attention 硬注意力")) if changed]
    if changed:
        gr.Info(f"{' and '.join(changed)}: back to the new model's own (chosen again if wanted) "
                "换模型后窗口与软/硬恢复为模型默认", duration=6)


def _doc(page: str, text: str) -> str:
    return f"<span class='hint'>{text} · {docs_link(page)}</span>"


def attends(registry: ModelRegistry, task: str, variant: str | None) -> bool:
    """Whether a model looks back at the source (``False`` only for a known model without attention, the baseline).

    The window and soft/hard controls do nothing without attention, so they are greyed out for it.

    >>> attends(ModelRegistry({"translation": {}}, "test"), "translation", "none")  # not a model here: unknown
    True
    """
    card = registry.card(task, variant)
    return card is None or card.has_attention


def applies(registry: ModelRegistry, task: str, variant: str | None) -> dict[str, bool]:
    """Which of the controls that not every model has a use for apply to one: ``window``, ``hard``, ``names``.

    Window and soft/hard need attention; the names switch needs a model that translates Chinese into English.
    A model not loaded here (a URL's typo) keeps them all on: the run says what is wrong.

    >>> applies(ModelRegistry({"translation": {}}, "test"), "translation", "none")
    {'window': True, 'hard': True, 'names': True}
    """
    card = registry.card(task, variant)
    on = attends(registry, task, variant)
    return {"window": on, "hard": on, "names": card is None or card.reads_names}


def window_info(registry: ModelRegistry, task: str, variant: str | None) -> str:
    """What the window does for one model, under its drop-down (the Transformer's is not the RNNs')."""
    card = registry.card(task, variant)
    if card is None:
        return WINDOW_INFO["rnn"]
    cfg = card.cfg
    if not card.has_attention:
        return WINDOW_INFO["none"]
    if registry.transformer_shape(task, variant):
        return WINDOW_INFO["transformer"]
    if cfg.attention == "local-p":
        return WINDOW_INFO["local-p"].format(window=cfg.window)
    if cfg.attention == "local-m":
        return WINDOW_INFO["local-m"].format(window=cfg.window)
    return WINDOW_INFO["rnn"]


WINDOW_INFO = {
    "rnn": "default = global 全局 (as trained); D = a local-m window, ±D around t·S/T (trained global, a model reads "
           "worse with a small D 小窗口会变差)",
    "local-m": "default = its own D = {window} (local-m, around t·S/T); global or another D to compare",
    "local-p": "default = its own D = {window} around the p_t it predicts; global or another D to compare",
    "transformer": "Transformer: D windows every cross-attention layer (local-m, ±D around t·S/T) at decode "
                   "time; self-attention never (trained global, it reads worse with a small D 小窗口会变差)",
    "none": "no attention 无注意力: no window",
}
"""The window drop-down's line for each kind of model (see [`window_info`][demo.ui.window_info])."""


def follow_variant(registry: ModelRegistry, task: gr.components.Component | str, controls: dict) -> None:
    """Keep ``controls`` to what their model uses, as the model changes.

    Window and soft/hard are greyed out without attention (and back), the names switch for a model that does not
    read Chinese into English, and the window's line says what it does for the model.

    ``.change`` follows every change (a URL's too); the values are put back only on a visitor's choice
    (in the page, by [`rerun_on_change`][demo.ui.rerun_on_change]).
    """
    names = [name for name in ("window", "hard", "names") if name in controls]

    def follow(*values: str) -> tuple:
        task_value, variant = (task, values[0]) if isinstance(task, str) else values
        on = applies(registry, task_value, variant)
        return tuple(gr.update(interactive=on[name], **({"info": window_info(registry, task_value, variant)}
                                                          if name == "window" else {}))
                     for name in names)

    inputs = [controls["variant"]] if isinstance(task, str) else [task, controls["variant"]]
    controls["variant"].change(follow, inputs, [controls[name] for name in names], api_visibility="private",
                               queue=False, show_progress="hidden")


def _controls(registry: ModelRegistry, task: str) -> dict:
    """The decoding controls of a tab, each with a one-line explanation."""
    c: dict = {}
    label = "your model 你的模型" if task == OWN else "score function / variant 注意力类型"
    c["variant"] = gr.Dropdown(variant_choices(registry, task), value=registry.default_variant(task), label=label,
                               elem_id=f"{task}-variant", info=mixed_zoo_note(registry, task))
    gr.Markdown(_doc("theory/scores", "How the decoder scores each source position: dot, scaled dot, "
                     "general (bilinear), concat (additive), or no attention at all.")
                + " " + _doc("theory/transformer", "The Transformer scores with scaled dot in several heads and "
                             "layers at once."))
    on = applies(registry, task, registry.default_variant(task))
    c["window"] = gr.Dropdown(WINDOW_CHOICES, value=MODEL_OWN[0], label="window D 窗口", elem_id=f"{task}-window",
                              interactive=on["window"],
                              info=window_info(registry, task, registry.default_variant(task)))
    gr.Markdown(_doc("theory/local", "global = every source position; D = only positions within ±D of the "
                     "centre (local-m: t·S/T; local-p models: their predicted p_t)."))
    c["hard"] = gr.Radio([("soft 软", False), ("hard 硬", True)], value=MODEL_OWN[1], label="attention 注意力",
                         elem_id=f"{task}-hard", interactive=on["hard"])
    gr.Markdown(_doc("theory/local", "hard = all weight on the single best position (argmax). Both greyed "
                     "out for the model without attention; both back to the model's own when another is chosen."))
    # beam 5 by default: the setting the zoo is evaluated with (results/), a few ms more per sentence
    c["beam"] = gr.Slider(1, 10, value=5, step=1, label="beam size 束宽 (1 = greedy 贪心)")
    gr.Markdown(_doc("theory/decoding", "Greedy keeps the best token at each step; beam search keeps the "
                     "k best partial outputs and returns the complete one with the best log p ÷ length "
                     "(length normalisation: without it short outputs would win, so beam can show a lower "
                     "log p than greedy)."))
    if task == "translation" or (task == OWN and any(registry.card(OWN, name).reads_names
                                                     for name in registry.models[OWN])):
        c["names"] = gr.Checkbox(value=Settings.names,
                                 label="names, numbers & rare words 人名·数字·生词 "
                                       "(张伟 → Zhang Wei, 九十九块 → 99 yuan, 花生 → peanut)",
                                 elem_id=f"{task}-names", interactive=on["names"])
        gr.Markdown(_doc("guide/names", "People's names and numbers are carried through the model by ones it knows "
                         "(汤姆 → Tom, 三 → three) and written in pinyin or as the CC-CEDICT dictionary writes "
                         "them, numbers as English writes them; a noun the model left out is carried the same way "
                         "(苹果 → apple) and written as the dictionary writes it (花生 → peanut); the heatmap shows "
                         "them as typed, and the stand-in the model read when you hover."))
    if task == "couplet":
        default = CoupletRules()
        c["constrained"] = gr.Checkbox(value=True, label="couplet constraints 对联约束")
        gr.Markdown(_doc("theory/decoding", "Constraints force the 上联's length and punctuation and forbid "
                         "&lt;unk&gt;; the rules below apply only with them."))
        c["mirror"] = gr.Checkbox(value=default.mirror, label="mirror repetitions 叠字对应 (声声 ↔ 事事)",
                                  elem_id=f"{task}-mirror")
        c["no_reuse"] = gr.Checkbox(value=default.no_reuse, label="no character of the 上联 不重字",
                                    elem_id=f"{task}-no-reuse")
        c["tone"] = gr.Radio([("仄起平收 classical", "classical"), ("opposite 相反", "opposite"), ("off 关", "off")],
                             value=default.tone, label="last character's tone 尾字平仄", elem_id=f"{task}-tone")
        c["cliche_penalty"] = gr.Slider(0, 2, value=default.cliche_penalty, step=0.1,
                                        label="cliché penalty 俗套惩罚 λ (0 = off)", elem_id=f"{task}-cliche")
        gr.Markdown(_doc("theory/decoding", "Characters this model over-produces (春, 风 …, measured against "
                         "human 下联s) lose λ × log(excess) of their score, against Spring-Festival clichés."))
        rules = [c[name] for name in COUPLET_RULES]
        c["constrained"].change(lambda on: tuple(gr.update(interactive=bool(on)) for _ in rules), c["constrained"],
                                rules, api_visibility="private", queue=False, show_progress="hidden")
    follow_variant(registry, task, c)
    return c


COUPLET_RULES = ("mirror", "no_reuse", "tone", "cliche_penalty")
"""The couplet rules, which apply only with the constraints on (greyed out without them)."""


TRANSFORMER_HINT = ("Transformer: each of its layers has several heads, each attending on its own. The layer and "
                    "head chosen here apply to all three maps: encoder–decoder attention (the heatmap, what the "
                    "RNN variants show; by default the last layer's mean of heads, the weights it decoded with), "
                    "the encoder's self-attention (source × source) and the decoder's causal self-attention "
                    "(each output position sees only the ones before it). 选择层与注意力头。")


def _view_selectors(registry: ModelRegistry, task: str, elem: str) -> tuple[gr.Radio, gr.Radio]:
    """Layer and head selectors (filled for the Transformer a run shows; sized for the task's first one)."""
    shape = next((s for _, v in registry.variants(task) if (s := registry.transformer_shape(task, v))), None)
    layers, heads = view_choices(*shape) if shape else ([], [])
    layer = gr.Radio(layers, value=shape[0] if shape else None, label="layer 层 (1 = nearest the input 最底层)",
                     elem_id=f"{elem}-layer")
    head = gr.Radio(heads, value=MEAN if shape else None, label="head 注意力头", elem_id=f"{elem}-head")
    return layer, head


def _view_updates(result: Result) -> tuple:
    """Layer and head selectors for the model a run used: filled and shown for a Transformer, else hidden."""
    if result.view is None:
        return gr.skip(), gr.skip(), gr.Group(visible=False)
    layers, heads = view_choices(result.state["layers"], result.state["heads"])
    return (gr.Radio(layers, value=result.view[0]), gr.Radio(heads, value=result.view[1]),
            gr.Group(visible=True))


def _settings(names: list[str], values: tuple) -> Settings:
    """Control values, in the order of ``names``, as the handlers' ``Settings``."""
    settings = Settings(**{{"beam": "beam_size"}.get(k, k): v for k, v in zip(names, values)})
    settings.beam_size = int(settings.beam_size)
    return settings


def _restored(controls: dict, wanted: dict) -> list:
    """Updates that set the controls named in a URL query (``gr.skip()`` for the others)."""
    return [gr.update(value=wanted[name]) if name in wanted else gr.skip() for name in controls]


@dataclass
class TaskTab:
    """The components of a task tab that a URL query can set, and how to run it.

    Attributes:
        text: The input box.
        controls: The decoding controls by name.
        outputs: What a run updates.
        handler: The run, from ``(text, *controls, pieces, layer, head)``.
        pieces: The subword-pieces switch.
        layer: The Transformer's layer selector.
        head: The Transformer's head selector (the last input).
        shown: What the heatmap shows (attention or gradient).
        follow: Re-draws the views for ``shown`` after a run, from ``viewing``.
        viewing: ``[state, step, pieces, layer, head, shown]``.
        drawn: What ``follow`` updates.
        gold: The gold-alignment panel's inputs (``name``, ``number``, ``rule``), where the tab has one.
        gold_handler: Shows a gold sentence: ``(variant, name, number, rule) -> (sentence, info, figure)``.
        gold_outputs: What ``gold_handler`` updates.
        details: The folded details boxes, by the key their open state is remembered under.
    """

    text: gr.Textbox
    controls: dict
    outputs: list
    handler: Callable
    pieces: gr.Checkbox
    layer: gr.Radio
    head: gr.Radio
    shown: gr.Radio | None = None
    follow: Callable | None = None
    viewing: list = field(default_factory=list)
    drawn: list = field(default_factory=list)
    gold: dict = field(default_factory=dict)
    gold_handler: Callable | None = None
    gold_outputs: list = field(default_factory=list)
    details: dict = field(default_factory=dict)


DETAILS = "details 详情: settings, what the model read, the beam's other outputs, names, notes"
"""The label of the folded box under an output."""
DETAILS_COUPLET = "details 详情: settings and rules, what the model read, the beam's other outputs, notes"
"""The label of the folded box under a 下联 (a couplet model reads no names)."""


def details_box(key: str, label: str = DETAILS) -> tuple[gr.Markdown, gr.Accordion, gr.Markdown]:
    """The one-line summary under an output, and the details folded under it (closed until opened).

    The box stays as the visitor leaves it, across runs and, in this browser, across visits
    ([`remember_details`][demo.ui.remember_details]).

    Returns:
        ``(summary, box, details)``; the Markdowns' ids are ``{key}-summary`` and ``{key}-info``.
    """
    summary = gr.Markdown(elem_id=f"{key}-summary", elem_classes=["summary"])
    with gr.Accordion(label, open=False, elem_id=f"{key}-details") as box:
        info = gr.Markdown(elem_id=f"{key}-info")
    return summary, box, info


def remember_details(app: gr.Blocks, boxes: dict[str, gr.Accordion]) -> None:
    """Keep each details box open or closed as the visitor left it, in this browser (``localStorage``)."""
    remembered = gr.BrowserState({}, storage_key="attention-lab-details")
    for key, box in boxes.items():
        box.expand(lambda known, key=key: {**(known or {}), key: True}, remembered, remembered,
                   api_visibility="private", queue=False, show_progress="hidden")
        box.collapse(lambda known, key=key: {**(known or {}), key: False}, remembered, remembered,
                     api_visibility="private", queue=False, show_progress="hidden")

    def restore(known: dict | None) -> tuple:
        return tuple(gr.Accordion(open=bool((known or {}).get(key))) if key in (known or {}) else gr.skip()
                     for key in boxes)

    app.load(restore, remembered, list(boxes.values()), api_visibility="private", queue=False,
             show_progress="hidden")


@dataclass(frozen=True)
class TabWords:
    """What a task tab's boxes and button say, and which way its input and output run.

    Attributes:
        input: The input box's label.
        placeholder: The input box's placeholder.
        button: The run button.
        output: The output box's label.
        input_rtl: The input is in a right-to-left script.
        output_rtl: The output is in a right-to-left script.
    """

    input: str
    placeholder: str
    button: str
    output: str
    input_rtl: bool = False
    output_rtl: bool = False


TAB_WORDS = {
    "translation": TabWords("中文 Chinese", "输入中文句子 Type a Chinese sentence", "翻译 Translate", "English"),
    "couplet": TabWords("上联 first line", "输入上联", "生成 Generate", "下联 second line"),
}


def tab_words(registry: ModelRegistry, task: str, variant: str | None = None) -> TabWords:
    """The words of a task tab; for your own models, those of the model ``variant`` (default: the tab's first)."""
    if task != OWN:
        return TAB_WORDS[task]
    card = registry.card(OWN, variant or registry.default_variant(OWN))
    if card.task.name in TAB_WORDS:  # a model of a bundled task, trained by you
        return TAB_WORDS[card.task.name]
    source, target = sides(card)
    src, tgt = (side.get("language") or "" for side in (source, target))
    return TabWords(f"source 源 {src}".strip(), f"Type a sentence{f' in {src}' if src else ''} 输入一句",
                    "运行 Run", f"output 输出 {tgt}".strip(), is_rtl(source), is_rtl(target))


@dataclass
class TaskParts:
    """The components of a task tab, as its layout pieces build them, for the ``_wire_*`` pieces to connect.

    Attributes:
        text: The input box.
        button: The run button.
        examples: The example inputs (a click runs one).
        output: The output box.
        brief: The one-line summary under the output.
        details: The folded box of the details.
        info: The details (settings, what the model read, the beam, names, notes).
        controls: The decoding controls by name.
        sentence: A paragraph's sentence selector.
        pieces: The subword-pieces switch.
        shown: What the heatmap shows (attention or gradient).
        selectors: The group of a Transformer's layer and head selectors.
        layer: The layer selector.
        head: The head selector.
        heatmap: The alignment.
        step: The decoding step slider.
        bars: One step's weights.
        self_maps: The row of a Transformer's self-attention maps.
        encoder: The encoder's self-attention.
        decoder: The decoder's self-attention.
        state: The last run (tokens, weights, maps), for re-plotting without decoding.
        gold: The gold-alignment panel's components (the translation tab's), else empty.
        model: The summary of the model of your own chosen (that tab only).
    """

    text: gr.Textbox
    button: gr.Button
    examples: gr.Dataset
    output: gr.Textbox
    brief: gr.Markdown
    details: gr.Accordion
    info: gr.Markdown
    controls: dict
    sentence: gr.Dropdown
    pieces: gr.Checkbox
    shown: gr.Radio
    selectors: gr.Group
    layer: gr.Radio
    head: gr.Radio
    heatmap: gr.Plot
    step: gr.Slider
    bars: gr.Plot
    self_maps: gr.Row
    encoder: gr.Plot
    decoder: gr.Plot
    state: gr.State
    gold: dict = field(default_factory=dict)
    model: gr.Markdown | None = None

    @property
    def inputs(self) -> list:
        """A run's inputs: the text, the controls, then the pieces switch, layer and head (the API's order)."""
        return [self.text, *self.controls.values(), self.pieces, self.layer, self.head]

    @property
    def outputs(self) -> list:
        """What a run updates, the one-line summary last (the API's outputs keep their order)."""
        return [self.output, self.info, self.heatmap, self.bars, self.state, self.step, self.sentence, self.layer,
                self.head, self.selectors, self.encoder, self.decoder, self.self_maps, self.brief]

    @property
    def viewing(self) -> list:
        """What a re-plot reads: ``[state, step, pieces, layer, head, shown]``."""
        return [self.state, self.step, self.pieces, self.layer, self.head, self.shown]

    @property
    def drawn(self) -> list:
        """What a re-plot updates: the state (gradients kept), the figures and the details."""
        return [self.state, self.heatmap, self.bars, self.encoder, self.decoder, self.info]


def _own_header(registry: ModelRegistry, task: str) -> gr.Markdown:
    """The tab of your own models' words on top, and the summary of the model chosen."""
    gr.Markdown("Models you trained yourself (`attention-lab train --task parallel …`), opened with "
                "`python app.py --models DIR` or `--hub-repo ID`: the same heatmap, step view and controls "
                "as the bundled tabs, read from each model's saved task. 你自己训练的模型。 · "
                + docs_link("guide/own-data"))
    return gr.Markdown(model_summary(registry, registry.default_variant(OWN)), elem_id=f"{task}-model")


def _input_and_output(task: str, words: TabWords, examples: list[str]) -> dict:
    """The input box, its button and examples, the output box, its summary line and the folded details."""
    text = gr.Textbox(label=words.input, placeholder=words.placeholder, lines=1, max_lines=8, info=SUBMIT,
                      rtl=words.input_rtl, elem_id=f"{task}-input")
    button = gr.Button(words.button, variant="primary", elem_id=f"{task}-run")
    chosen = gr.Dataset(components=[gr.Textbox(visible=False)], samples=[[e] for e in examples],
                        label="examples 示例 (click to run 点击即运行)", elem_id=f"{task}-examples")
    output = gr.Textbox(label=words.output, interactive=False, rtl=words.output_rtl, elem_id=f"{task}-output")
    brief, details, info = details_box(task, DETAILS_COUPLET if task == "couplet" else DETAILS)
    return dict(text=text, button=button, examples=chosen, output=output, brief=brief, details=details, info=info)


def _view_switches(registry: ModelRegistry, task: str) -> dict:
    """What the figures show: a paragraph's sentence, pieces or words, attention or gradient, a layer and head."""
    with gr.Row(visible=task != "couplet"):
        sentence = gr.Dropdown([], value=None, label="sentence 句子 (a paragraph is translated sentence by "
                               "sentence)", interactive=True, elem_id=f"{task}-sentence")
        pieces = gr.Checkbox(value=False, label="show subword pieces 显示子词 (default: pieces merged "
                             "into words, each word's row the mean of its pieces')", elem_id=f"{task}-pieces")
    with gr.Row():
        shown = gr.Radio(SHOWN_CHOICES, value=ATTENTION, label="the heatmap shows 热力图显示", scale=2,
                         elem_id=f"{task}-shown")
        gr.Markdown(_doc("results", "Attention: where the decoder looked; the bars under it are each "
                         "source token's coverage (total attention received; red ⚠ = a word possibly left "
                         "untranslated). Gradient: how much each output token's log p depends on each source "
                         "token (input × gradient, computed when asked), with Kendall τ per row: does attention "
                         "rank the source as the gradient does?"))
    with gr.Group(visible=False, elem_id=f"{task}-transformer-view") as selectors:  # shown for a Transformer
        with gr.Row():
            layer, head = _view_selectors(registry, task, task)
        gr.Markdown(_doc("theory/transformer", TRANSFORMER_HINT))
    return dict(sentence=sentence, pieces=pieces, shown=shown, selectors=selectors, layer=layer, head=head)


def _figures(task: str) -> dict:
    """The heatmap, the step slider and its bars, and a Transformer's two self-attention maps (hidden till one runs).

    No label badge over the plots: each figure carries its own title. Each starts with a placeholder figure, so
    plotly.js loads with the page, not after the first click.
    """
    heatmap = gr.Plot(placeholder("heatmap", task), label="alignment heatmap 对齐热力图", show_label=False,
                      elem_id=f"{task}-heatmap")
    step = gr.Slider(1, 60, value=1, step=1, label="step through the decoding 逐步查看 (one step per piece)")
    bars = gr.Plot(placeholder("steps"), label="one step 单步", show_label=False, elem_id=f"{task}-steps")
    with gr.Row(visible=False) as self_maps:  # a Transformer's self-attention, at the same layer and head
        # side by side on a wide screen, one under the other below two HALF_MIN widths (no cramped labels)
        encoder = gr.Plot(label="encoder self-attention 编码器自注意力", show_label=False,
                          elem_id=f"{task}-encoder", min_width=HALF_MIN)
        decoder = gr.Plot(label="decoder self-attention 解码器自注意力", show_label=False,
                          elem_id=f"{task}-decoder", min_width=HALF_MIN)
    return dict(heatmap=heatmap, step=step, bars=bars, self_maps=self_maps, encoder=encoder, decoder=decoder)


def _shown(view: View) -> tuple:
    """A view's figures and details, for ``TaskParts.drawn`` after the state; self-attention only for a Transformer."""
    transformer = view.view is not None
    return (view.heatmap, view.bars, view.encoder if transformer else gr.skip(),
            view.decoder if transformer else gr.skip(), view.info or gr.skip())


def _redrawer(registry: ModelRegistry) -> Callable:
    """Re-plot from the state when the step, pieces, layer, head or attention/gradient switch changes.

    No decoding; the gradients of a sentence are computed the first time they are shown, then kept.
    """
    @gpu
    def redraw(state_value: dict, step_value: int, pieces_value: bool, layer_value: object, head_value: object,
               shown_value: str) -> tuple:
        if shown_value == GRADIENT:
            state_value = with_gradient(registry, state_value)
        return (state_value, *_shown(attention_view(state_value, step_value, bool(pieces_value), layer_value,
                                                    head_value, shown_value)))

    return redraw


def _wire_runs(registry: ModelRegistry, task: str, parts: TaskParts) -> tuple[Callable, Callable]:
    """A run from the button, Enter, an example or a changed control; after an error, nothing stale stays.

    Returns:
        ``(handler, follow)``: the run, and what re-draws a gradient view after one.
    """
    names = list(parts.controls)
    redraw = _redrawer(registry)

    @gpu
    def handler(text_value: str, *values: object) -> tuple:
        *values, pieces_value, layer_value, head_value = values  # the pieces switch, then layer and head, last
        result: Result = run(registry, task, text_value, _settings(names, tuple(values)), bool(pieces_value),
                             layer_value, head_value)
        steps = max(1, len(result.state.get("output", [])))
        transformer = result.view is not None
        return (result.text, result.info, result.figure, result.steps, result.state,
                gr.Slider(1, steps, value=1, step=1), gr.Dropdown(sentence_labels(result.state), value=0),
                *_view_updates(result), result.encoder if transformer else gr.skip(),
                result.decoder if transformer else gr.skip(), gr.Row(visible=transformer), result.summary)

    def follow(state_value: dict, step_value: int, pieces_value: bool, layer_value: object, head_value: object,
               shown_value: str) -> tuple:
        """After a run: the gradient view stays on (computed for the new output); attention is drawn already."""
        if shown_value != GRADIENT or not state_value:
            return tuple(gr.skip() for _ in range(6))
        return redraw(state_value, step_value, pieces_value, layer_value, head_value, shown_value)

    def cleared() -> tuple:
        """After an error (its message is the toast): no stale output, info, figures or state."""
        return ("", "", placeholder("heatmap", task), placeholder("steps"), {}, gr.update(value=1),
                gr.Dropdown([], value=None), gr.skip(), gr.skip(), gr.Group(visible=False), None, None,
                gr.Row(visible=False), "")

    inputs, outputs = parts.inputs, parts.outputs
    events = [
        parts.button.click(handler, inputs, outputs, api_name=task),
        parts.text.submit(handler, inputs, outputs, api_visibility="private"),
        parts.examples.click(lambda sample: sample[0], parts.examples, parts.text, api_visibility="private",
                             queue=False).then(handler, inputs, outputs, api_visibility="private"),
        *rerun_on_change([parts.controls], handler, parts.state, inputs, outputs),
    ]
    for event in events:
        event.failure(cleared, None, outputs, api_visibility="private", queue=False)
        event.success(follow, parts.viewing, parts.drawn, api_visibility="private", show_progress="minimal")
    return handler, follow


def _wire_views(registry: ModelRegistry, parts: TaskParts) -> None:
    """Another sentence, step, pieces/words, layer, head or attention/gradient: re-plotted from the state."""
    redraw = _redrawer(registry)

    @gpu
    def pick(state_value: dict, index: int, pieces_value: bool, layer_value: object, head_value: object,
             shown_value: str) -> tuple:
        if not (state_value or {}).get("sentences"):
            return (state_value or {}, *_shown(attention_view(state_value)), gr.skip())
        new_state = with_sentence(state_value, index)
        if shown_value == GRADIENT:
            new_state = with_gradient(registry, new_state)
        steps = max(1, len(new_state.get("output", [])))
        return (new_state, *_shown(attention_view(new_state, 1, bool(pieces_value), layer_value, head_value,
                                                  shown_value)),
                gr.Slider(1, steps, value=1, step=1))

    parts.sentence.input(pick, [parts.state, parts.sentence, *parts.viewing[2:]], [*parts.drawn, parts.step],
                         api_visibility="private")
    for control in (parts.step, parts.pieces):
        control.change(redraw, parts.viewing, parts.drawn, api_visibility="private", show_progress="hidden")
    for control in (parts.layer, parts.head):
        control.input(redraw, parts.viewing, parts.drawn, api_visibility="private", show_progress="hidden")
    parts.shown.input(redraw, parts.viewing, parts.drawn, api_visibility="private", show_progress="minimal")


def _wire_gold(registry: ModelRegistry, task: str, parts: TaskParts) -> tuple[Callable, list]:
    """The gold panel's button and Enter show a sentence; another model, set or rule shows it again.

    Returns:
        ``(gold_handler, gold_outputs)``.
    """
    gold = parts.gold

    @gpu
    def gold_handler(variant_value: str, name_value: str, number_value: object, rule_value: str) -> tuple:
        view = show_gold(registry, task, variant_value, name_value, number_value, rule_value)
        return view.sentence, view.info, view.figure

    def gold_again(shown_before: str, *values: object) -> tuple:
        """A control changed after a gold sentence was shown: show it again with the new choice."""
        if not shown_before:
            return tuple(gr.skip() for _ in range(3))
        return gold_handler(*values)

    def gold_cleared() -> tuple:
        """After a refused choice (its message is the toast): the panel as before a sentence was shown."""
        return "", gold_info_at_start(), placeholder("gold")

    gold_inputs = [parts.controls["variant"], gold["name"], gold["number"], gold["rule"]]
    gold_outputs = [gold["sentence"], gold["info"], gold["figure"]]
    events = [gold["button"].click(gold_handler, gold_inputs, gold_outputs, api_name=f"{task}_gold"),
              gold["number"].submit(gold_handler, gold_inputs, gold_outputs, api_visibility="private")]
    for control in (parts.controls["variant"], gold["name"], gold["rule"]):
        events.append(control.input(gold_again, [gold["sentence"], *gold_inputs], gold_outputs,
                                    api_visibility="private", trigger_mode="always_last"))
    for event in events:
        event.failure(gold_cleared, None, gold_outputs, api_visibility="private", queue=False)
    return gold_handler, gold_outputs


def _follow_own_model(registry: ModelRegistry, parts: TaskParts, examples_of: dict[str, list[str]]) -> None:
    """Another model of your own: its summary, its language's words and direction, its examples."""
    def chose(name: str) -> tuple:
        if name not in examples_of:
            return tuple(gr.skip() for _ in range(4))
        now = tab_words(registry, OWN, name)
        return (model_summary(registry, name),
                gr.Textbox(label=now.input, placeholder=now.placeholder, rtl=now.input_rtl),
                gr.Textbox(label=now.output, rtl=now.output_rtl),
                gr.Dataset(samples=[[e] for e in examples_of[name]]))

    parts.controls["variant"].change(chose, parts.controls["variant"],
                                     [parts.model, parts.text, parts.output, parts.examples],
                                     api_visibility="private", queue=False)


def build_task_tab(registry: ModelRegistry, task: str, title: str, examples: list[str]) -> TaskTab:
    """One task tab: input, controls, output, heatmap, and the step-through view.

    ``task`` is ``translation``, ``couplet`` or ``own``; for your own models, choosing one in the drop-down
    also changes the boxes' words and direction, the examples and the model's summary. The layout comes in
    pieces (``_input_and_output``, ``_controls``, ``_view_switches``, ``_figures``, the gold
    panel), then the wiring (``_wire_runs``, ``_wire_views``, ``_wire_gold``, ``_follow_own_model``).
    """
    words = tab_words(registry, task)
    examples_of: dict[str, list[str]] = {}
    if task == OWN:  # read once, at start-up: each model's test sources (or the one it recorded)
        examples_of = {name: own_examples(registry.card(OWN, name)) for name in registry.models[OWN]}
        examples = examples_of[registry.default_variant(OWN)]
    with gr.Tab(title, id=task):
        model = _own_header(registry, task) if task == OWN else None
        with gr.Row():
            with gr.Column(scale=3):
                boxes = _input_and_output(task, words, examples)
            with gr.Column(scale=2):
                controls = _controls(registry, task)
        parts = TaskParts(**boxes, controls=controls, **_view_switches(registry, task), **_figures(task),
                          state=gr.State({}), gold=_gold_panel(task) if task == "translation" else {}, model=model)
        handler, follow = _wire_runs(registry, task, parts)
        _wire_views(registry, parts)
        gold_handler, gold_outputs = _wire_gold(registry, task, parts) if parts.gold else (None, [])
        if task == OWN:
            _follow_own_model(registry, parts, examples_of)
    return TaskTab(parts.text, controls, parts.outputs, handler, parts.pieces, parts.layer, parts.head, parts.shown,
                   follow, parts.viewing, parts.drawn, parts.gold, gold_handler, gold_outputs,
                   {task: parts.details})


GOLD_TITLE = "Gold alignment 人工对齐 · is attention an alignment?"


def gold_label(missing: bool) -> str:
    """The gold panel's title; without the data, what it lacks and the command that gets it."""
    return f"{GOLD_TITLE} — its data is not here 本机没有数据: {GOLD_PULL}" if missing else GOLD_TITLE


def _gold_panel(task: str) -> dict:
    """The gold-alignment panel: choose a human-aligned sentence, see its links over the model's attention.

    Folded, its title saying what is missing and how to get it, when the human alignments are not in the data
    folder (a fresh clone): it filled the bottom of the tab to answer only that.
    """
    missing = bool(gold_info_at_start())
    with gr.Accordion(gold_label(missing), open=not missing, elem_id=f"{task}-gold"):
        gr.Markdown("Choose one of the human-aligned news sentences: the model chosen above reads its human English "
                    "(forced decoding), its attention is pooled onto the gold words, and its links (the rule chosen "
                    "by the benchmark) are drawn over it with the human ones: sure and possible links hit, sure "
                    "links missed, and extra links. 选一句人工对齐的句子，看模型的注意力与人工连线。 · "
                    + docs_link("results"))
        with gr.Row():
            name = gr.Radio([(GOLD_NAMES[n], n) for n in reversed(GOLD_SETS)], value="tsinghua",
                            label="human-aligned set 人工对齐集", elem_id=f"{task}-gold-set")
            number = gr.Number(1, minimum=1, maximum=GOLD_SIZES["tsinghua"], precision=0, step=1,
                               label=f"sentence 句号 (Tsinghua 1–{GOLD_SIZES['tsinghua']}, DeNero "
                                     f"1–{GOLD_SIZES['denero']}) · Enter ↵",
                               elem_id=f"{task}-gold-number")
            rule = gr.Radio(RULE_CHOICES, value=THRESHOLD, label="the model's links 模型的连线",
                            elem_id=f"{task}-gold-rule")
        # primary: inside a Group a secondary button loses its border and read as a heading
        button = gr.Button("show the human links 显示人工对齐", variant="primary", elem_id=f"{task}-gold-run")
        sentence = gr.Markdown(elem_id=f"{task}-gold-sentence")
        info = gr.Markdown(gold_info_at_start(), elem_id=f"{task}-gold-info")
        figure = gr.Plot(placeholder("gold"), show_label=False, label="gold alignment 人工对齐",
                         elem_id=f"{task}-gold-heatmap")
    return dict(name=name, number=number, rule=rule, button=button, sentence=sentence, info=info, figure=figure)


def gold_info_at_start() -> str:
    """The gold panel's info line before a sentence is shown: how to get the sets, when they are missing."""
    data = data_home()
    missing = not all((data / "align-zh-en" / name).is_dir() for name in GOLD_SETS)
    return gold_missing(data) if missing else ""


COMPARE_CONTROLS = ("variant", "window", "hard", "beam")
"""The controls each side of the Compare tab has (couplet rules stay at their defaults)."""


def _side_controls(registry: ModelRegistry, side: str, variant: str | None, task: str = "translation") -> dict:
    """One side's controls in the Compare tab, choosing among the models of ``task``."""
    variants, on = variant_choices(registry, task), applies(registry, task, variant)
    return {
        # the choices follow the task chosen in the page; the API may name any task's model (checked by the run)
        "variant": gr.Dropdown(variants, value=variant, label=f"variant {side} 模型", allow_custom_value=True,
                               elem_id=f"compare-{side}-variant", info=mixed_zoo_note(registry, task)),
        "window": gr.Dropdown(WINDOW_CHOICES, value=MODEL_OWN[0], label=f"window D {side} 窗口",
                              elem_id=f"compare-{side}-window", interactive=on["window"],
                              info=window_info(registry, task, variant)),
        "hard": gr.Radio([("soft 软", False), ("hard 硬", True)], value=MODEL_OWN[1], label=f"attention {side} 注意力",
                         elem_id=f"compare-{side}-hard", interactive=on["hard"]),
        "beam": gr.Slider(1, 10, value=5, step=1, label=f"beam {side} 束宽 (1 = greedy 贪心)",
                          elem_id=f"compare-{side}-beam"),
    }


@dataclass
class CompareTab:
    """The Compare tab's components that a URL query can set, and its run.

    ``views`` holds each side's Transformer layer and head selectors (``{"a": (layer, head), ...}``),
    the last inputs of the run; ``defaults`` each side's variant at start, for the task ``start``.
    """

    task: gr.Radio
    text: gr.Textbox
    a: dict
    b: dict
    outputs: list
    handler: Callable
    views: dict
    defaults: dict
    start: str = "translation"
    details: dict = field(default_factory=dict)


COMPARE_TASKS = {"translation": "翻译 Translation", "couplet": "对联 Couplet", OWN: "你的模型 Your models"}
"""The Compare tab's task choices (your models only when there are some)."""


def compare_defaults(registry: ModelRegistry, task: str) -> tuple[str | None, str | None]:
    """The variants A and B that Compare starts with for a task.

    No attention against concat, else the first and the last. While the task's models differ in their training
    data (a zoo being retrained), the second is one trained on the baseline's data (concat, else the default model,
    else another), so the first comparison a visitor sees is of attention alone. Your models: the first, and the
    last one that reads the same source language (else the first again, each side with its own controls).
    """
    have = [v for _, v in registry.variants(task)]
    if task == OWN:
        language = sides(registry.card(OWN, have[0]))[0].get("language")
        same = [v for v in have if sides(registry.card(OWN, v))[0].get("language") == language]
        return have[0], same[-1]
    first = "none" if "none" in have else (have[0] if have else None)
    second = "luong-concat" if "luong-concat" in have else (have[-1] if have else None)
    groups = data_groups(registry, task)
    if first == "none" and len(groups) > 1:
        _, kin = same_data(groups, "none")
        second = next((v for v in ("luong-concat", registry.default_variant(task), *kin) if v in kin and v != "none"),
                      second)
    return first, second


def compare_example(registry: ModelRegistry, task: str) -> str:
    """The Compare tab's input for a task (your models: the first example of the first one, if any)."""
    if task == OWN:
        return next(iter(own_examples(registry.card(OWN, registry.default_variant(OWN)))), "")
    return COMPARE_EXAMPLE if task == "translation" else COUPLET_EXAMPLES[-1]


def compare_rtl(registry: ModelRegistry, task: str) -> bool:
    """Whether Compare's input box runs right to left for a task (the first of your models decides)."""
    return task == OWN and is_rtl(sides(registry.card(OWN, registry.default_variant(OWN)))[0])


def build_compare_tab(registry: ModelRegistry) -> CompareTab:
    """Two variants side by side on the same input, each with its own controls, and a third view."""
    with gr.Tab("对比 Compare", id="compare"):
        gr.Markdown("The same input through two variants, each with its own controls. The default is a long "
                    "test sentence the models know every character of: **no attention** squeezes it into one "
                    "vector, an **attention** model looks back at every word. Below the two heatmaps, the attention "
                    "entropy of each output step puts both on one scale. 同一输入，两种模型并排对比。 · "
                    + docs_link("theory/why"))
        tasks = [t for t in COMPARE_TASKS if t != OWN or OWN in registry.models]
        start = "translation" if "translation" in registry.models or OWN not in registry.models else OWN
        task = gr.Radio([(COMPARE_TASKS[t], t) for t in tasks], value=start, label="task 任务",
                        elem_id="compare-task")
        text = gr.Textbox(label="input 输入", value=compare_example(registry, start), lines=1, max_lines=8,
                          info=SUBMIT, rtl=compare_rtl(registry, start), elem_id="compare-input")
        defaults = dict(zip("ab", compare_defaults(registry, start)))
        with gr.Row():
            with gr.Column():
                a = _side_controls(registry, "A", defaults["a"], start)
            with gr.Column():
                b = _side_controls(registry, "B", defaults["b"], start)
        for side_controls in (a, b):
            follow_variant(registry, task, side_controls)
        button = gr.Button("对比 Compare", variant="primary", elem_id="compare-run")
        sides = {}
        with gr.Row():
            for side in ("A", "B"):
                with gr.Column(min_width=HALF_MIN):
                    out = gr.Textbox(label=side, interactive=False, elem_id=f"compare-{side}-output")
                    brief, details, info = details_box(f"compare-{side}", f"details {side} 详情")
                    with gr.Group(visible=False, elem_id=f"compare-{side}-transformer-view") as selectors:
                        with gr.Row():
                            layer, head = _view_selectors(registry, "translation", f"compare-{side}")
                    fig = gr.Plot(placeholder("heatmap"), label=f"{side} alignment", show_label=False,
                                  elem_id=f"compare-{side}-heatmap")
                    sides[side] = dict(out=out, info=info, fig=fig, layer=layer, head=head, selectors=selectors,
                                       state=gr.State({}), brief=brief, details=details)
        entropy = gr.Plot(placeholder("entropy"), label="entropy per step", show_label=False, elem_id="compare-entropy")
        gr.Markdown(_doc("results", "Entropy of a step = −Σ α log α (nats): 0 = all weight on one source position "
                         "(hard attention), log S = spread evenly over all S positions."))

        def switch(task_value: str) -> tuple:
            choices = variant_choices(registry, task_value)
            first, second = compare_defaults(registry, task_value)
            note = mixed_zoo_note(registry, task_value) or ""  # "" clears the other task's note
            return (gr.Dropdown(choices, value=first, info=note), gr.Dropdown(choices, value=second, info=note),
                    gr.Textbox(value=compare_example(registry, task_value), rtl=compare_rtl(registry, task_value)),
                    *(gr.update(value=value) for value in MODEL_OWN * 2))  # other models: their own window, soft

        A, B = sides["A"], sides["B"]

        @gpu
        def handler(task_value: str, text_value: str, *values: object) -> tuple:
            # each side's controls, then (A layer, A head, B layer, B head) last: the API keeps its order
            n = len(COMPARE_CONTROLS)
            a_layer, a_head, b_layer, b_head = values[2 * n:]
            result: Comparison = compare(registry, task_value, text_value,
                                         _settings(list(COMPARE_CONTROLS), values[:n]),
                                         _settings(list(COMPARE_CONTROLS), values[n: 2 * n]),
                                         (a_layer, a_head), (b_layer, b_head))
            return (result.a.text, result.a.info, result.a.figure, result.b.text, result.b.info, result.b.figure,
                    result.entropy, result.a.state, result.b.state, *_view_updates(result.a),
                    *_view_updates(result.b), result.a.summary, result.b.summary)

        def redraw(state_a: dict, state_b: dict, a_layer: object, a_head: object, b_layer: object,
                   b_head: object) -> tuple:
            """A side's layer or head changed: re-plot both heatmaps, info lines and the entropy (no decoding)."""
            if not state_a or not state_b:
                return tuple(gr.skip() for _ in range(5))
            view_a = attention_view(state_a, None, False, a_layer, a_head)
            view_b = attention_view(state_b, None, False, b_layer, b_head)
            entropy_fig = entropy_view({"A": state_a, "B": state_b}, {"A": (a_layer, a_head), "B": (b_layer, b_head)})
            return view_a.heatmap, view_a.info, view_b.heatmap, view_b.info, entropy_fig

        selectors = [A["layer"], A["head"], B["layer"], B["head"]]
        inputs = [task, text, *a.values(), *b.values(), *selectors]
        outputs = [A["out"], A["info"], A["fig"], B["out"], B["info"], B["fig"], entropy, A["state"], B["state"],
                   A["layer"], A["head"], A["selectors"], B["layer"], B["head"], B["selectors"], A["brief"], B["brief"]]
        def cleared() -> tuple:
            """After an error (its message is the toast): no stale outputs, info lines, figures or states."""
            return ("", "", placeholder("heatmap"), "", "", placeholder("heatmap"), placeholder("entropy"), {}, {},
                    *(gr.skip(), gr.skip(), gr.Group(visible=False)) * 2, "", "")

        # another task: its models and example, and nothing left on screen of the last task's run
        task.input(switch, task, [a["variant"], b["variant"], text, a["window"], a["hard"], b["window"], b["hard"]],
                   api_visibility="private").then(
            cleared, None, outputs, api_visibility="private", queue=False)
        events = [button.click(handler, inputs, outputs, api_name="compare"),
                  text.submit(handler, inputs, outputs, api_visibility="private"),
                  *rerun_on_change([a, b], handler, A["state"], inputs, outputs, text_at=1)]
        for event in events:
            event.failure(cleared, None, outputs, api_visibility="private", queue=False)
        for control in selectors:
            control.input(redraw, [A["state"], B["state"], *selectors], [A["fig"], A["info"], B["fig"], B["info"],
                                                                       entropy],
                          api_visibility="private", show_progress="hidden")
    views = {"a": (A["layer"], A["head"]), "b": (B["layer"], B["head"])}
    return CompareTab(task, text, a, b, outputs, handler, views, defaults, start,
                      {"compare-A": A["details"], "compare-B": B["details"]})


def model_counts(registry: ModelRegistry) -> str:
    """The header's line on the models: how many of each task, and where they come from.

    >>> model_counts(ModelRegistry({"translation": {"none": None, "bahdanau": None}}, "bundled zoo models/"))
    '2 translation (bundled with the app 随附)'
    """
    order = [t for t in ("translation", "couplet", OWN) if t in registry.models]
    counts = ", ".join(f"{len(registry.models[t])} {'of your own' if t == OWN else t}" for t in order)
    where = "bundled with the app 随附" if registry.source.startswith("bundled") else f"`{registry.source}`"
    return f"{counts} ({where})"


LIVE_CONCURRENCY = 2
"""Live trainings at once: a crowd of trainers queues here and cannot starve the other tabs."""


@dataclass
class LiveTab:
    """The live tab's controls that a URL query can set."""

    controls: dict


def build_live_tab() -> LiveTab:
    """Watch attention learn: train a toy model and stream its alignment (``demo.live``)."""
    with gr.Tab("看注意力学习 Watch attention learn", id="live"):
        gr.Markdown(
            "A small model (hidden 64) learns a toy task whose correct alignment is known: **reverse** "
            "(anti-diagonal), **copy** (diagonal) or **sort** (each output looks at where its digit stands, a "
            "permutation that changes with every sequence). Press Train and watch the heatmap sharpen from a "
            "uniform smear into the alignment. Turn attention off to see the bottleneck: the baseline's "
            "accuracy falls as sequences get longer. 小模型在玩具任务上训练，实时观察注意力形成。 · "
            + docs_link("theory/why")
        )
        with gr.Row():
            task = gr.Radio(["reverse", "copy", "sort"], value="reverse", label="task 任务", elem_id="live-task")
            score = gr.Dropdown(list(SCORES), value="dot", label="score 打分函数", elem_id="live-score")
            window = gr.Dropdown(["global", *[str(d) for d in range(1, 11)]], value="global",
                                 label="window D 窗口 (local-m)", elem_id="live-window")
            attention = gr.Checkbox(value=True, label="attention 注意力 (off = baseline 基线)",
                                    elem_id="live-attention")
        # the baseline has no score and no window: greyed out while attention is off
        attention.change(lambda on: (gr.Dropdown(interactive=bool(on)), gr.Dropdown(interactive=bool(on))),
                         attention, [score, window], api_visibility="private", queue=False, show_progress="hidden")
        with gr.Row():
            min_len = gr.Slider(1, MAX_LEN, value=5, step=1, label="min length 最短")
            max_len = gr.Slider(1, MAX_LEN, value=12, step=1, label="max length 最长")
            steps = gr.Slider(100, MAX_STEPS, value=600, step=100, label="steps 步数", elem_id="live-steps")
        with gr.Row():
            train = gr.Button("训练 Train", variant="primary", elem_id="live-train")
            stop = gr.Button("停止 Stop", elem_id="live-stop")
        status = gr.Markdown(elem_id="live-status")
        with gr.Row():
            curves = gr.Plot(placeholder("curves"), label="loss & accuracy 损失与准确率", show_label=False,
                             elem_id="live-curves")
            heatmap = gr.Plot(placeholder("live"), label="alignment of a fixed example 固定样例的对齐",
                              show_label=False, elem_id="live-heatmap")
        model = gr.State(None)
        progress = gr.State({})
        with gr.Row():
            sequence = gr.Textbox(label="try your own sequence 试试你的序列", placeholder="3 1 4 1 5 9 2 6",
                                  lines=1, max_lines=1, info="digits 0–9 (full-width １２３ too) · Enter ↵ runs",
                                  elem_id="live-sequence")
            run_seq = gr.Button("运行 Run", elem_id="live-run-sequence")
        seq_out = gr.Textbox(label="output 输出", interactive=False, elem_id="live-sequence-output")
        seq_heat = gr.Plot(placeholder("sequence"), label="its alignment 它的对齐", show_label=False,
                           elem_id="live-sequence-heatmap")

        def parse(w: str | None) -> int | None:
            return None if w in (None, "global") else int(w)

        def clear() -> tuple:
            """A new run starts from nothing: no old curves, heatmap, model or status."""
            return ("starting 开始训练 …", placeholder("curves"), placeholder("live"), None, {}, "",
                    placeholder("sequence"))

        def stream(task_v, score_v, window_v, attention_v, min_v, max_v, steps_v):
            try:
                settings = LiveSettings(task=task_v, score=score_v, window=parse(window_v),
                                        attention=bool(attention_v), min_len=int(min_v), max_len=int(max_v),
                                        steps=int(steps_v), every=max(50, int(steps_v) // 30))  # ≈ 1–2 s
            except (TypeError, ValueError):
                raise refuse("设置须为数字 / the window, lengths and steps must be numbers") from None
            for update in train_live(settings):
                yield (update.status, update.curves, update.heatmap, update.model,
                       {"step": update.step, "steps": settings.steps, "accuracy": update.accuracy,
                        "task": settings.task, "max_len": settings.max_len})

        cleared = train.click(clear, None, [status, curves, heatmap, model, progress, seq_out, seq_heat],
                              api_visibility="private", queue=False)
        event = cleared.then(stream, [task, score, window, attention, min_len, max_len, steps],
                             [status, curves, heatmap, model, progress], api_name="train_live",
                             concurrency_limit=LIVE_CONCURRENCY, concurrency_id="live-train")
        stop.click(stopped_status, progress, status, cancels=[event], api_visibility="private", queue=False)

        def try_it(model_v, text_v, window_v, progress_v):
            return try_sequence(model_v, text_v, parse(window_v), progress_v)

        run_seq.click(try_it, [model, sequence, window, progress], [seq_out, seq_heat], api_visibility="private")
        sequence.submit(try_it, [model, sequence, window, progress], [seq_out, seq_heat], api_visibility="private")
    controls = dict(task=task, score=score, window=window, attention=attention, min_len=min_len, max_len=max_len,
                    steps=steps)
    return LiveTab(controls)


def _asked_views(registry: ModelRegistry, query: dict, compare_tab: CompareTab) -> dict:
    """The Transformer views a URL query asks for, checked: ``{where: (task, variant, view, problem)}``.

    ``where`` is the task tab's name, or ``"a"``/``"b"`` for a Compare side; only what the query asks for.
    """
    tab, asked = query.get("tab"), {}
    if tab in TASK_TABS and tab in registry.models and query.get("view"):
        variant = query["controls"].get("variant") or registry.default_variant(tab)
        asked[tab] = (tab, variant, *check_view(registry, tab, variant, query["view"]))
    if tab == "compare":
        task = query["task"]
        for side in ("a", "b"):
            if query.get(f"{side}_view"):
                first = next(iter(registry.variants(task)), (None, None))[1]
                default = compare_tab.defaults[side] if task == compare_tab.start else first
                variant = query[side].get("variant") or default
                asked[side] = (task, variant, *check_view(registry, task, variant, query[f"{side}_view"]))
    return asked


def known_variants(registry: ModelRegistry, query: dict, compare_start: str = "translation") -> tuple[dict, list[str]]:
    """A URL query without the variants (models) that are not loaded here, and a message for each.

    Args:
        registry: Loaded models.
        query: What [`parse_query`][demo.links.parse_query] read.
        compare_start: The task Compare starts with (its sides' choices when the query names none).

    Returns:
        ``(query, problems)``: the query with each unknown ``variant`` dropped (the tab keeps its own), and
        without its ``tab`` when that tab's models are not loaded (``tab=own`` without models of your own).
    """
    tab, problems = query.get("tab"), []
    if tab in TASK_TABS and tab not in registry.models:
        where = "--models DIR or --hub-repo ID" if tab == OWN else "the bundled zoo"
        return {}, [f"tab={tab}: 这里没有这类模型 / no such models are loaded here (start the app with {where})"]
    places = [(tab, "controls", "")] if tab in TASK_TABS else []
    if tab == "compare":
        places = [(query.get("task") if query.get("task") in registry.models else compare_start, side, f"{side}_")
                  for side in ("a", "b")]
    query = dict(query)
    for task, key, prefix in places:
        wanted = query.get(key, {}).get("variant")
        have = [v for _, v in registry.variants(task)]
        if wanted is not None and wanted not in have:
            query[key] = {k: v for k, v in query[key].items() if k != "variant"}
            shown = ", ".join(have) or "none"
            problems.append(f"{prefix}{'model' if task == OWN else 'variant'}={wanted[:60]}: 没有这个模型 / no such "
                            f"model is loaded here (available: {shown})")
    return query, problems


def _view_restored(asked: tuple | None, registry: ModelRegistry) -> list:
    """Updates of a layer and a head selector to the checked view of a URL query (skips when none)."""
    if not asked or asked[2] is None:
        return [gr.skip(), gr.skip()]
    task, variant, (layer, head), _ = asked
    layers, heads = view_choices(*registry.transformer_shape(task, variant))
    return [gr.update(choices=layers, value=layer), gr.update(choices=heads, value=head)]


GOLD_ASKED = ("name", "number", "rule")
"""The gold panel's inputs a URL query sets (``gold_set``, ``gold``, ``links``), in the gold handler's order."""


def _restore_tabs(registry: ModelRegistry, tabs: gr.Tabs, task_tabs: dict[str, TaskTab], compare_tab: CompareTab,
                  live: LiveTab, app: gr.Blocks) -> None:
    """Open the tab named in the URL query with its input and settings, and run it (``demo.links``).

    A malformed or inapplicable Transformer ``layer``/``head`` leaves its selector as it is and is
    reported in a warning (a queued event: the restore itself runs unqueued, for speed).
    """
    targets: list = [tabs]
    for tab in task_tabs.values():
        targets += [tab.text, *tab.controls.values(), tab.layer, tab.head, tab.shown]
        targets += [tab.gold[key] for key in GOLD_ASKED if tab.gold]
    targets += [compare_tab.task, compare_tab.text, *compare_tab.a.values(), *compare_tab.b.values(),
                *compare_tab.views["a"], *compare_tab.views["b"]]
    targets += list(live.controls.values())

    def restore(request: gr.Request) -> list:
        query, _ = known_variants(registry, parse_query(dict(request.query_params) if request else {}),
                                  compare_tab.start)
        tab = query.get("tab")
        asked = _asked_views(registry, query, compare_tab)
        updates: list = [gr.Tabs(selected=tab) if tab else gr.skip()]
        for name, task_tab in task_tabs.items():
            mine = tab == name
            updates.append(gr.update(value=query["text"]) if mine and query.get("text") else gr.skip())
            updates += _restored(task_tab.controls, query.get("controls", {}) if mine else {})
            updates += _view_restored(asked.get(name), registry)
            updates.append(gr.update(value=query["shown"]) if mine and query.get("shown") else gr.skip())
            if task_tab.gold:
                gold = query.get("gold", {}) if mine else {}
                updates += [gr.update(value=gold[key]) if key in gold else gr.skip() for key in GOLD_ASKED]
        mine = tab == "compare"
        choices = None
        if mine and query.get("task") != compare_tab.start and query.get("task") in registry.models:
            choices = variant_choices(registry, query["task"])
            updates.append(gr.update(value=query["task"]))
        else:
            updates.append(gr.skip())
        updates.append(gr.update(value=query["text"]) if mine and query.get("text") else gr.skip())
        for side in ("a", "b"):
            wanted = query.get(side, {}) if mine else {}
            side_updates = _restored(getattr(compare_tab, side), wanted)
            if choices is not None:
                side_updates[0] = gr.update(choices=choices, value=wanted.get("variant", choices[0][1]))
            updates += side_updates
        updates += _view_restored(asked.get("a"), registry) + _view_restored(asked.get("b"), registry)
        updates += _restored(live.controls, query.get("live", {}) if tab == "live" else {})
        return updates

    def warn(request: gr.Request) -> None:
        """Say what in the URL query could not be used (a warning each), instead of ignoring it."""
        query, unknown = known_variants(registry, parse_query(dict(request.query_params) if request else {}),
                                        compare_tab.start)
        problems = [*query.get("problems", []), *unknown,
                    *(p for *_, p in _asked_views(registry, query, compare_tab).values() if p)]
        for problem in problems:
            gr.Warning(html.escape(problem), title="URL")

    def run_if_asked(tab: str, handler: Callable, outputs: list, key: str = "text") -> Callable:
        """``handler`` when the query opens ``tab`` with ``key`` (a text, or a ``gold`` sentence), else no update."""
        def run(request: gr.Request, *values: object):
            query = parse_query(dict(request.query_params) if request else {})
            if query.get("tab") != tab or not query.get(key):
                return tuple(gr.skip() for _ in outputs)
            return handler(*values)
        return run

    loaded = app.load(restore, None, targets, api_visibility="private", queue=False)
    loaded.then(warn, None, None, api_visibility="private")

    for name, task_tab in task_tabs.items():
        ran = loaded.then(run_if_asked(name, task_tab.handler, task_tab.outputs),
                          [task_tab.text, *task_tab.controls.values(), task_tab.pieces, task_tab.layer,
                           task_tab.head], task_tab.outputs, api_visibility="private")
        ran.then(task_tab.follow, task_tab.viewing, task_tab.drawn, api_visibility="private")  # show=gradient
        if task_tab.gold:
            loaded.then(run_if_asked(name, task_tab.gold_handler, task_tab.gold_outputs, "gold"),
                        [task_tab.controls["variant"], *(task_tab.gold[key] for key in GOLD_ASKED)],
                        task_tab.gold_outputs, api_visibility="private")
    loaded.then(run_if_asked("compare", compare_tab.handler, compare_tab.outputs),
                [compare_tab.task, compare_tab.text, *compare_tab.a.values(), *compare_tab.b.values(),
                 *compare_tab.views["a"], *compare_tab.views["b"]],
                compare_tab.outputs, api_visibility="private")


def build_app(registry: ModelRegistry) -> gr.Blocks:
    """The whole app (not launched); its models are read on first use, or by [`preload`][demo.ui.preload]."""
    transformer = any(registry.transformer_shape(t, v) for t in registry.tasks() for _, v in registry.variants(t))
    with gr.Blocks(title="Attention Lab 注意力实验室") as app:
        gr.Markdown(
            "# Attention Lab 注意力实验室\n"
            "See where an RNN encoder–decoder" + (" (and a Transformer, head by head)" if transformer else "")
            + " looks while it writes each word: translation 中文 → English "
            "and couplets 上联 → 下联" + (", and the models you trained yourself" if OWN in registry.models else "")
            + ", with every classic attention mechanism. "
            f"Models 模型: {model_counts(registry)} · " + docs_link("", text=("文档", "documentation"))
        )
        task_tabs: dict[str, TaskTab] = {}
        with gr.Tabs(overflow_behavior="wrap") as tabs:  # a phone: every tab in sight, none behind "⋯"
            if OWN in registry.models:  # first: the app was started on them
                task_tabs[OWN] = build_task_tab(registry, OWN, "你的模型 Your models", [])
            if "translation" in registry.models:
                task_tabs["translation"] = build_task_tab(registry, "translation", "翻译 Translation",
                                                          TRANSLATION_EXAMPLES)
            if "couplet" in registry.models:
                task_tabs["couplet"] = build_task_tab(registry, "couplet", "对联 Couplet", COUPLET_EXAMPLES)
            compare_tab = build_compare_tab(registry)
            live = build_live_tab()
        _restore_tabs(registry, tabs, task_tabs, compare_tab, live, app)
        remember_details(app, {key: box for tab in [*task_tabs.values(), compare_tab] for key, box in
                               tab.details.items()})
    return app


def preload(registry: ModelRegistry, report: Callable[[str], None] = print) -> int:
    """Once the page answers: what the first requests need, then every other model, one after the other.

    The names dictionary (the names switch is on by default), each tab's default model, a first run of each
    through the path a click takes ([`warm`][demo.ui.warm]), then the rest of the models: a visitor who asks for
    one before it is loaded waits for that one only.

    Args:
        registry: The app's models (a lazy registry: weights not loaded yet).
        report: Where to say what could not be loaded.

    Returns:
        How many models are loaded.
    """
    if any(registry.card(task, variant).reads_names for task in registry.tasks() for variant in registry.models[task]):
        names.dictionary()
    registry.load_all([(task, registry.default_variant(task)) for task in registry.tasks()], report)
    try:
        warm(registry)
    except ModelLoadError as err:  # a broken default model: said by load_all already
        report(f"warming up failed: {err}")
    return registry.load_all(report=report)


def warm(registry: ModelRegistry) -> None:
    """Run each task once before serving, through the same path a click takes (decode, figures, JSON).

    The first request otherwise pays for plotly's validators and Gradio's plot serialisation.
    """
    plot = gr.Plot()
    own = registry.card(OWN, registry.default_variant(OWN))
    own_example = DataInfo.read(own.meta.get("data")).example if own is not None else None
    for task, example in (("translation", TRANSLATION_EXAMPLES[1]), ("couplet", COUPLET_EXAMPLES[1]),
                          (OWN, own_example)):
        if task not in registry.models or not isinstance(example, str) or not example.strip():
            continue
        try:
            result = run(registry, task, example, Settings(registry.default_variant(task)))
        except gr.Error:  # a model of your own may record an example it cannot read: nothing to warm
            continue
        plot.postprocess(result.figure)
        plot.postprocess(result.steps)
