"""Watch attention learn: train a small model on a toy task and stream its alignment.

The generator [`train_live`][demo.live.train_live] uses the library's own
``attention_core.training.loop.train_step`` and ``attention_core.decoding.search.greedy`` (no second training
loop) and yields an update every ``every`` steps: loss and accuracy curves and the heatmap of one
fixed example, which sharpens from a uniform smear into the task's alignment (anti-diagonal for
*reverse*, diagonal for *copy*). Work per request is bounded in steps, sizes and seconds.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
from torch import nn

from attention_core.data.toy import TASKS, make_batch, sample_batch, toy_vocab
from attention_core.decoding.search import greedy
from attention_core.model.config import ModelConfig
from attention_core.model.scores import SCORES
from attention_core.model.seq2seq import Seq2Seq, build_model
from attention_core.training.loop import train_step
from demo.errors import refuse
from demo.plots import alignment_figure, message_figure, second_line

SYMBOLS = 10
"""Alphabet size: the digits 0–9."""
MAX_STEPS, MAX_LEN, MAX_SECONDS = 3000, 30, 120
"""Bounds on one training request."""


@dataclass
class LiveSettings:
    """The live-training controls.

    Attributes:
        task: ``reverse``, ``copy`` or ``sort``.
        min_len: Shortest sequence.
        max_len: Longest sequence (at most ``MAX_LEN``).
        score: Score function name.
        window: Local-m half-width ``D``, or ``None`` for global attention.
        attention: Use attention (``False``: the no-attention baseline).
        steps: Training steps (at most ``MAX_STEPS``).
        every: Steps between updates.
        seed: Random seed.
    """

    task: str = "reverse"
    min_len: int = 5
    max_len: int = 12
    score: str = "dot"
    window: int | None = None
    attention: bool = True
    steps: int = 600
    every: int = 100
    seed: int = 0

    def validate(self) -> LiveSettings:
        """Refuse out-of-range settings with a clear bilingual message (``demo.errors.refuse``)."""
        if self.task not in TASKS:
            raise refuse(f"未知任务 / unknown task {self.task!r}; choose {', '.join(TASKS)}")
        if self.score not in SCORES:
            raise refuse(f"未知打分函数 / unknown score {self.score!r}; choose {', '.join(SCORES)}")
        if not 1 <= self.min_len <= self.max_len <= MAX_LEN:
            raise refuse(f"最短长度不能超过最长长度 / lengths must satisfy 1 ≤ min ≤ max ≤ {MAX_LEN}, "
                           f"got {self.min_len}–{self.max_len}")
        if not 1 <= self.steps <= MAX_STEPS:
            raise refuse(f"步数应在 1–{MAX_STEPS} / steps must be between 1 and {MAX_STEPS}, got {self.steps}")
        if self.window is not None and not 1 <= self.window <= 10:
            raise refuse(f"窗口应为 1–10 或全局 / window must be 1–10 or global, got {self.window}")
        if self.every < 1:
            raise refuse("更新间隔至少 1 步 / update interval must be at least 1 step")
        return self


@dataclass
class LiveUpdate:
    """One streamed update.

    Attributes:
        step: Steps done.
        loss: Training loss of the last step.
        accuracy: Greedy token accuracy on a fixed dev batch.
        curves: Loss and accuracy figure.
        heatmap: Alignment of the fixed example.
        status: Markdown status line.
        model: The model so far (kept in the visitor's session).
        weights: The fixed example's attention matrix ``(T, S)``.
    """

    step: int
    loss: float
    accuracy: float
    curves: go.Figure
    heatmap: go.Figure
    status: str
    model: Seq2Seq
    weights: list[list[float]]


def _curves(history: list[tuple[int, float, float]]) -> go.Figure:
    steps = [h[0] for h in history]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=[h[1] for h in history], name="loss 损失", mode="lines+markers"))
    fig.add_trace(go.Scatter(x=steps, y=[h[2] for h in history], name="accuracy 准确率", mode="lines+markers",
                             yaxis="y2"))
    fig.update_layout(title=dict(text="loss & accuracy 损失与准确率", x=0.5, xanchor="center"),
                      xaxis_title="step", yaxis=dict(title="loss"),
                      yaxis2=dict(title="accuracy", overlaying="y", side="right", range=[0, 1]),
                      height=340, margin=dict(l=50, r=50, t=50, b=80),
                      legend=dict(orientation="h", x=0.5, xanchor="center", y=-0.22, yanchor="top"))
    return fig


def evaluate_toy(model: Seq2Seq, batch, window: int | None) -> float:
    """Greedy token accuracy on a toy batch."""
    model.eval()
    hyps = greedy(model, batch.src, batch.src_lengths, window=window)
    correct = total = 0
    for b, hyp in enumerate(hyps):
        n = int(batch.tgt_lengths[b]) - 1
        gold = batch.tgt_out[b, :n].tolist()
        correct += sum(x == y for x, y in zip(hyp.tokens[:n], gold))
        total += n
    return correct / max(1, total)


def initialise(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """Draw every parameter from ``generator`` with PyTorch's default distributions.

    Embeddings ``N(0, 1)`` (padding row zero), RNNs ``U(±1/√H)``, linear layers ``U(±1/√fan_in)``.
    Used instead of ``torch.manual_seed`` so a request never touches the process-wide random state
    the other visitors' requests share.

    Args:
        model: A model whose parameters may be uninitialised (e.g. after ``to_empty``).
        generator: The session's generator.

    Returns:
        The model, initialised in place.
    """
    with torch.no_grad():
        for module in model.modules():
            own = list(module.parameters(recurse=False))
            if not own:
                continue
            if isinstance(module, nn.Embedding):
                module.weight.normal_(generator=generator)
                if module.padding_idx is not None:
                    module.weight[module.padding_idx].zero_()
                continue
            if isinstance(module, nn.RNNBase):
                fan_in = module.hidden_size
            elif isinstance(module, nn.Linear):
                fan_in = module.in_features
            else:
                raise TypeError(f"no initialisation rule for {type(module).__name__}")
            for param in own:
                param.uniform_(-fan_in**-0.5, fan_in**-0.5, generator=generator)
    return model


def build_toy_model(settings: LiveSettings, generator: torch.Generator | None = None) -> Seq2Seq:
    """The small model the tab trains (hidden 64), from the settings.

    It is built on the ``meta`` device and initialised from ``generator`` (default: one seeded with
    ``settings.seed``), so the global torch seed is neither read nor set.
    """
    generator = generator or torch.Generator().manual_seed(settings.seed)
    cfg = ModelConfig(
        src_vocab_size=4 + SYMBOLS, tgt_vocab_size=4 + SYMBOLS,
        decoder="luong" if settings.attention else "none", score=settings.score,
        attention="local-m" if settings.window else "global", window=settings.window,
        hidden_size=64, emb_size=32, dropout=0.0,
    )
    with torch.device("meta"):
        model = build_model(cfg)
    return initialise(model.to_empty(device="cpu"), generator)


def train_live(settings: LiveSettings, max_seconds: float = MAX_SECONDS) -> Iterator[LiveUpdate]:
    """Train a toy model, yielding an update every ``settings.every`` steps.

    Args:
        settings: The controls (validated here).
        max_seconds: Time bound of the run (the app's ``MAX_SECONDS``; offline figures may lift it so
            a busy machine does not cut a recorded run short).

    Yields:
        [`LiveUpdate`][demo.live.LiveUpdate]s; the last one comes at ``settings.steps`` or after
        ``max_seconds``, whichever is first.
    """
    settings.validate()
    data = torch.Generator().manual_seed(settings.seed)  # this session's randomness: init, then batches
    model = build_toy_model(settings, data)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    dev = sample_batch(settings.task, 64, settings.min_len, settings.max_len, SYMBOLS,
                       torch.Generator().manual_seed(settings.seed + 1))
    n = settings.max_len
    example = [4 + (i * 7) % SYMBOLS for i in range(n)]
    fixed = make_batch([(example, TASKS[settings.task](example))])
    vocab = toy_vocab(SYMBOLS)
    history: list[tuple[int, float, float]] = []
    started = time.perf_counter()
    step = 0
    while step < settings.steps:
        chunk = min(settings.every, settings.steps - step)
        for _ in range(chunk):
            batch = sample_batch(settings.task, 32, settings.min_len, settings.max_len, SYMBOLS, data)
            loss = train_step(model, batch, optimizer, clip=1.0)
        loss = float(loss)  # the chunk's last loss, read once
        step += chunk
        accuracy = evaluate_toy(model, dev, settings.window)
        history.append((step, loss, accuracy))
        hyp = greedy(model, fixed.src, fixed.src_lengths, window=settings.window)[0]
        source = vocab.decode(example)
        output = [vocab.itos[i] for i in hyp.tokens] + (["<eos>"] if hyp.finished else [])
        weights = hyp.weights.tolist()
        if model.has_attention:
            heat = alignment_figure(source, output, weights, settings.window,
                                    hyp.centres.tolist() if hyp.centres is not None else None,
                                    title=f"{settings.task}: step {step}")
        else:
            heat = message_figure("No attention: nothing to align. 无注意力：没有对齐可看。")
        elapsed = time.perf_counter() - started
        out_of_time = elapsed > max_seconds
        status = (f"step {step}/{settings.steps} · loss {loss:.3f} · accuracy 准确率 {accuracy:.1%} · "
                  f"{elapsed:.0f} s" + (" · stopped at the time limit 已达时间上限" if out_of_time else "")
                  + (" · ✓ done 完成" if step == settings.steps else ""))
        yield LiveUpdate(step, loss, accuracy, _curves(history), heat, status, model, weights)
        if out_of_time:
            return


class SequenceError(ValueError):
    """A "try your own sequence" input the toy model cannot read (the message is bilingual)."""


def parse_sequence(text: str) -> list[int]:
    """``"3 1 4 1 5"`` (digits; spaces or commas optional; full-width ``１２３`` and ``，`` too) → symbol ids.

    Raises:
        SequenceError: With a bilingual message, for empty input, other symbols or too many digits.

    >>> parse_sequence("３，１ ４")
    [7, 5, 8]
    """
    text = unicodedata.normalize("NFKC", text or "")  # full-width digits and commas → ASCII
    digits = [ch for ch in text if not ch.isspace() and ch != ","]
    if not digits:
        raise SequenceError("请输入数字序列 / type a sequence of digits, e.g. 3 1 4 1 5 9")
    wrong = sorted({ch for ch in digits if ch not in "0123456789"})
    if wrong:
        raise SequenceError(f"只能输入数字 0–9 / only the digits 0–9 are symbols here (got {' '.join(wrong)[:40]})")
    if len(digits) > MAX_LEN:
        raise SequenceError(f"最多 {MAX_LEN} 个数字 / at most {MAX_LEN} symbols, got {len(digits)}")
    return [4 + int(ch) for ch in digits]


def stopped_status(progress: dict | None) -> str:
    """The status line after Stop: where the run was when it was stopped (or that it had finished)."""
    if not progress or not progress.get("step"):
        return "■ stopped before the first update 已在首次更新前停止"
    if progress["step"] >= progress["steps"]:  # Stop after the end changes nothing: say the run is complete
        return (f"✓ done 已完成: step {progress['step']}/{progress['steps']} · accuracy 准确率 "
                f"{progress['accuracy']:.1%} · press Train for a new run 按训练重新开始")
    return (f"■ stopped at step {progress['step']}/{progress['steps']} 已停止 · accuracy 准确率 "
            f"{progress['accuracy']:.1%} · press Train for a new run 按训练重新开始")


def try_sequence(model: Seq2Seq | None, text: str, window: int | None = None,
                 trained: dict | None = None) -> tuple[str, go.Figure]:
    """Run the visitor's trained model on their own sequence.

    A problem (no model yet, a bad sequence) is said in the output box and the figure, in Chinese and
    English, instead of an error badge with no text.

    Args:
        model: The model the last run trained (``None`` before one).
        text: The visitor's digits.
        window: The local window ``D`` (``None``: global).
        trained: What the model was trained on (``task``, ``step``, ``max_len``, from the run's progress): the
            heatmap's title says it, since the controls may have changed since, and a sequence longer than the
            training ones is said to be so.
    """
    if model is None:
        message = "请先训练模型 / train a model first (press Train above)"
        return f"⚠️ {message}", message_figure(message)
    try:
        ids = parse_sequence(text)
    except SequenceError as err:
        return f"⚠️ {err}", message_figure(str(err))
    batch = make_batch([(ids, ids)])
    model.eval()
    hyp = greedy(model, batch.src, batch.src_lengths, window=window)[0]
    vocab = toy_vocab(SYMBOLS)
    source = vocab.decode(ids)
    output = [vocab.itos[i] for i in hyp.tokens]
    rows = output + (["<eos>"] if hyp.finished else [])
    title = "your sequence 你的序列"
    if trained and trained.get("task"):
        title += f" · model trained on {trained['task']} 训练任务, step {trained.get('step')}"
        if len(ids) > trained.get("max_len", MAX_LEN):
            title += second_line(f"longer than its training sequences (≤ {trained['max_len']}): watch it fail "
                                 "比训练序列长")
    if model.has_attention:
        fig = alignment_figure(source, rows, hyp.weights.tolist(), window, title=title)
    else:
        fig = message_figure("No attention: nothing to align.")
    return " ".join(output), fig

