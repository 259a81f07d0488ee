"""Decoders: Bahdanau (query = previous state), Luong (query = current state) and no attention.

Every decoder has the same [`step`][attention_core.model.decoder.Decoder.step]: it consumes the embedded
previous target token ([`embed`][attention_core.model.decoder.Decoder.embed]) and returns an output
vector (fed to the vocabulary projection), the new state, the step's attention weights and, for
local attention, the window centre. Greedy and beam search loop over this one method, and so does
teacher forcing in its reference form ([`teacher_force`][attention_core.model.decoder.Decoder.teacher_force]);
training on a CPU takes each decoder's override of ``teacher_force``, which computes the same values
with the work that does not depend on the previous step done once for the whole sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from attention_core.model.attention import Attention
from attention_core.model.config import ModelConfig
from attention_core.model.encoder import RNN_CLASSES, EncoderOutput
from attention_core.model.rnn_steps import GoldLSTM, run_cells

CELL_KERNEL_MAX_BATCH = 8
"""Inference batches up to this size step the RNN with the cell kernels (see ``Decoder.run_rnn``)."""


@dataclass
class Memory:
    """The encoded source, as every decoder step reads it.

    Attributes:
        values: Encoder outputs ``h̄_s``, shape ``(B, S, H)``.
        keys: Keys prepared once per sentence by the score function (``None`` without attention).
        mask: ``True`` for real source tokens, shape ``(B, S)``.
        tgt_lengths: Real (teacher forcing) or expected (decoding) target lengths, shape ``(B,)``;
            places local-m windows.
        summary: The fixed-length summary of the source (the bridged final encoder state of the top
            layer), shape ``(B, H)``; the only thing the no-attention decoder sees.
    """

    values: Tensor
    keys: Tensor | None
    mask: Tensor
    tgt_lengths: Tensor
    summary: Tensor

    def index_select(self, index: Tensor) -> Memory:
        """Pick (or repeat) batch rows, e.g. to expand a batch into beams."""
        return Memory(
            values=self.values.index_select(0, index),
            keys=None if self.keys is None else self.keys.index_select(0, index),
            mask=self.mask.index_select(0, index),
            tgt_lengths=self.tgt_lengths.index_select(0, index),
            summary=self.summary.index_select(0, index),
        )


@dataclass
class DecoderState:
    """Recurrent state, batch first so beams can be reordered with one ``index_select``.

    Attributes:
        hidden: RNN hidden state, shape ``(B, L, H)``.
        cell: LSTM cell state ``(B, L, H)``, or ``None`` for a GRU.
        feed: The previous output vector ``h̃_{t−1}`` for input feeding (Luong), shape ``(B, H)``,
            or ``None``.
    """

    hidden: Tensor
    cell: Tensor | None = None
    feed: Tensor | None = None

    def index_select(self, index: Tensor) -> DecoderState:
        """Pick (or repeat) batch rows."""

        def pick(x: Tensor | None) -> Tensor | None:
            return None if x is None else x.index_select(0, index)

        return DecoderState(pick(self.hidden), pick(self.cell), pick(self.feed))


@dataclass
class StepOutput:
    """One decoder step.

    Attributes:
        output: Vector fed to the vocabulary projection, shape ``(B, H)``.
        state: The new state.
        weights: Attention weights, shape ``(B, S)`` (all zero for the no-attention decoder).
        centre: Local window centres ``p_t``, shape ``(B,)``, or ``None`` when attending globally.
    """

    output: Tensor
    state: DecoderState
    weights: Tensor
    centre: Tensor | None


class Decoder(nn.Module):
    """What every decoder shares: target embeddings, the RNN, and the bridge from the encoder.

    The initial state is ``s_0 = tanh(W_b [→h_S; ←h_1] + b_b)`` (``self.bridge``; the LSTM cell state has
    its own, ``bridge_cell``), computed for each layer with the same ``W_b, b_b``. It is a variant of
    Bahdanau et al. 2014, Appendix A.2.2, which bridges only the backward state, with no bias:
    ``s_0 = tanh(W_s ←h_1)`` (their ``W_s``; in this site's notation ``W_s`` is Luong's output layer).

    Args:
        cfg: The model config.
        attention: The attention module (``None`` for the no-attention decoder).
    """

    def __init__(self, cfg: ModelConfig, attention: Attention | None) -> None:
        super().__init__()
        H = cfg.hidden_size
        self.cfg = cfg
        self.attention = attention
        self.embedding = nn.Embedding(cfg.tgt_vocab_size, cfg.emb_size, padding_idx=cfg.pad_id)
        self.dropout = nn.Dropout(cfg.dropout)
        self.rnn = RNN_CLASSES[cfg.rnn](
            self.rnn_input_size(cfg),
            H,
            num_layers=cfg.num_layers,
            batch_first=True,
            dropout=cfg.dropout if cfg.num_layers > 1 else 0.0,
        )
        self.bridge = nn.Linear(2 * H, H)
        self.bridge_cell = nn.Linear(2 * H, H) if cfg.rnn == "lstm" else None
        self.output_size = H

    def rnn_input_size(self, cfg: ModelConfig) -> int:
        """Size of the RNN input at each step: the embedding plus one ``H``-vector.

        That vector is the context ``c_i`` (Bahdanau), the previous attentional vector ``h̃_{t−1}``
        (Luong) or the fixed summary ``c`` (no attention).
        """
        return cfg.emb_size + cfg.hidden_size

    def embed(self, tokens: Tensor) -> Tensor:
        """Embed target tokens (with dropout): ``(B,)`` → ``(B, E)``, or ``(B, T)`` → ``(B, T, E)``.

        Teacher forcing embeds the whole target once, outside the step loop (one embedding
        backward instead of one per step).
        """
        return self.dropout(self.embedding(tokens))

    def init_state(self, enc: EncoderOutput) -> tuple[DecoderState, Tensor]:
        """Bridge the encoder's final states into the decoder's initial state.

        Args:
            enc: The encoder output.

        Returns:
            ``(state, summary)``: the initial state and the top layer's bridged state ``(B, H)``,
            the fixed-length source summary.
        """
        hidden = torch.tanh(self.bridge(enc.final))  # (B, L, H)
        cell = None
        if self.bridge_cell is not None and enc.final_cell is not None:
            cell = torch.tanh(self.bridge_cell(enc.final_cell))  # (B, L, H)
        return DecoderState(hidden, cell), hidden[:, -1]

    def run_rnn(self, x: Tensor, state: DecoderState) -> tuple[Tensor, DecoderState]:
        """Advance the RNN one step.

        Two paths, each chosen where ``benchmarks/bench.py`` measured it faster on a CPU:

        * the cell path ([`run_cells`][attention_core.model.rnn_steps.run_cells]) for small inference batches (up to
          ``CELL_KERNEL_MAX_BATCH`` rows: one visitor's sentence or beam), where the sequence kernel's
          set-up costs more than the step (greedy decoding of one sentence 8.6 ms → 5.7 ms), and for CPU mixed precision
          (``torch.autocast``), where its bfloat16 products beat the bfloat16 sequence kernel's slow
          backward (≈ 1.08× per training step, in-process A/B) and the state stays in float32;
        * ``nn.LSTM``/``nn.GRU`` otherwise (float32 training, large batches, CUDA).

        Args:
            x: Step input, shape ``(B, I)``.
            state: Current state.

        Returns:
            ``(h_t, state)``: top-layer output ``(B, H)`` and the new state (``feed`` untouched).
        """
        mixed = x.device.type == "cpu" and torch.is_autocast_enabled("cpu")
        if mixed or (x.size(0) <= CELL_KERNEL_MAX_BATCH and not torch.is_grad_enabled()):
            output, hidden, cell = run_cells(self.rnn, x, state.hidden, state.cell, mixed, self.training)
            return output, DecoderState(hidden, cell, state.feed)
        hx = state.hidden.transpose(0, 1).contiguous()  # (L, B, H)
        if state.cell is not None:
            hx = (hx, state.cell.transpose(0, 1).contiguous())
        out, new = self.rnn(x.unsqueeze(1), hx)  # out: (B, 1, H)
        hidden, cell = new if isinstance(new, tuple) else (new, None)
        return out.squeeze(1), DecoderState(
            hidden.transpose(0, 1), None if cell is None else cell.transpose(0, 1), state.feed
        )

    def attend(
        self, query: Tensor, memory: Memory, t: int, window: int | None, hard: bool
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Attend from one query per sentence.

        Args:
            query: Shape ``(B, H)``.
            memory: The encoded source.
            t: Target position (0-based) of this step.
            window: Half-width ``D`` or ``None`` (global).
            hard: Hard (argmax) attention.

        Returns:
            ``(context (B, H), weights (B, S), centre (B,) or None)``.
        """
        assert self.attention is not None and memory.keys is not None
        steps = torch.full((1,), t, device=query.device)
        context, weights, centre = self.attention(
            query.unsqueeze(1),
            memory.keys,
            memory.values,
            memory.mask,
            steps,
            memory.tgt_lengths,
            window,
            hard,
        )
        return context.squeeze(1), weights.squeeze(1), None if centre is None else centre.squeeze(1)

    def teacher_force(
        self, gold: Tensor, state: DecoderState, memory: Memory, window: int | None, hard: bool = False
    ) -> tuple[Tensor, Tensor]:
        """All ``T`` steps of teacher forcing: the gold inputs are known before the first step.

        This is the reference: ``step`` once per position, exactly as decoding runs. The RNN decoders
        override it (on a CPU, for a one-layer LSTM) with a loop that computes the same values with less
        work a step: whatever does not depend on the previous step is computed once for all ``T``
        positions (see [`GoldLSTM`][attention_core.model.rnn_steps.GoldLSTM]); attention is the same ``attend``.
        ``tests/test_teacher_force.py`` holds every override to this loop's loss, gradients and weights.

        Args:
            gold: The embedded decoder inputs ``E y_{t−1}`` for every step, shape ``(B, T, E)``.
            state: The initial state.
            memory: The encoded source.
            window: Half-width ``D`` or ``None`` for global attention.
            hard: Hard (argmax) attention.

        Returns:
            ``(outputs, weights)``: the vectors fed to the vocabulary projection ``(B, T, H)`` and the
            attention weights ``(B, T, S)``.
        """
        outputs, weights = [], []
        for t in range(gold.size(1)):
            out = self.step(gold[:, t], state, memory, t, window, hard)
            state = out.state
            outputs.append(out.output)
            weights.append(out.weights)
        return torch.stack(outputs, dim=1), torch.stack(weights, dim=1)

    def _hoistable(self, gold: Tensor, hard: bool) -> bool:
        """Whether ``teacher_force`` may take the hoisted loop: a one-layer LSTM on a CPU, soft attention.

        On CUDA the reference loop steps cuDNN's LSTM, which the hoisted loop has not been measured against.
        """
        return self.cfg.rnn == "lstm" and self.cfg.num_layers == 1 and gold.device.type == "cpu" and not hard

    def _step_dropout(self, shape: tuple[int, ...], like: Tensor) -> Tensor | None:
        """Every step's dropout multiplier at once, ``(T, B, H)``: 0 or ``1/(1 − p)``, or ``None`` when off.

        One random draw for the whole loop instead of one per step; the same distribution as
        ``nn.Dropout`` (a kept unit is scaled by ``1/(1 − p)`` in ``like``'s type, as ``F.dropout`` does).
        """
        p = self.dropout.p
        if not self.training or p == 0:
            return None
        keep = torch.rand(shape, device=like.device) >= p
        return keep.to(like.dtype).div_(1 - p)

    def step(
        self,
        emb: Tensor,
        state: DecoderState,
        memory: Memory,
        t: int,
        window: int | None,
        hard: bool = False,
    ) -> StepOutput:
        """One decoding step.

        Args:
            emb: The embedded previous target tokens ``E y_{t−1}``, shape ``(B, E)`` (from ``embed``).
            state: Current state.
            memory: The encoded source.
            t: Position of the token being predicted (0-based).
            window: Half-width ``D`` or ``None`` for global attention.
            hard: Hard (argmax) attention.

        Returns:
            The [`StepOutput`][attention_core.model.decoder.StepOutput].
        """
        raise NotImplementedError


class BahdanauDecoder(Decoder):
    """Bahdanau et al. 2014: the query is the *previous* state ``s_{i−1}``.

    * ``e_ij = a(s_{i−1}, h_j)`` (defined under Eq. 6), ``α_ij = softmax_j(e_ij)`` (Eq. 6),
      ``c_i = Σ_j α_ij h_j`` (Eq. 5); in this site's notation ``e_{t,s}``, ``a_{t,s}``, ``c_t`` with
      query ``s_{t−1}`` and ``h̄_s`` for ``h_j``;
    * ``s_i = f(s_{i−1}, y_{i−1}, c_i)`` (defined under Eq. 4): the context joins the input embedding;
    * ``p(y_i | …) = g(y_{i−1}, s_i, c_i)`` (Eq. 4): here ``g`` is ``tanh(W_o [s_i; c_i; E y_{i−1}] + b_o)``
      followed by the vocabulary projection (a tanh layer instead of the paper's maxout).
    """

    def __init__(self, cfg: ModelConfig, attention: Attention | None) -> None:
        super().__init__(cfg, attention)
        H = cfg.hidden_size
        self.readout = nn.Linear(2 * H + cfg.emb_size, H)

    def teacher_force(self, gold, state, memory, window, hard=False):  # noqa: D102
        if not self._hoistable(gold, hard):
            return super().teacher_force(gold, state, memory, window, hard)
        lstm = GoldLSTM(self.rnn, gold)
        h, c = state.hidden[:, 0], state.cell[:, 0]
        states, contexts, weights = [], [], []
        for t in range(gold.size(1)):
            context, w, _ = self.attend(h, memory, t, window, hard)  # the query is s_{i-1}
            h, c = lstm(t, context, h, c)
            states.append(h)
            contexts.append(context)
            weights.append(w)
        return self._read_out(torch.stack(states, 1), torch.stack(contexts, 1), gold), torch.stack(weights, 1)

    def _read_out(self, states: Tensor, contexts: Tensor, gold: Tensor) -> Tensor:
        """The readout of every step at once (it feeds nothing back): ``(B, T, H)`` each → ``(B, T, H)``."""
        return self.dropout(torch.tanh(self.readout(torch.cat([states, contexts, gold], dim=-1))))

    def step(self, emb, state, memory, t, window, hard=False):  # noqa: D102
        query = state.hidden[:, -1]  # s_{i-1}: (B, H)
        context, weights, centre = self.attend(query, memory, t, window, hard)
        h, state = self.run_rnn(torch.cat([emb, context], dim=-1), state)  # s_i: (B, H)
        output = torch.tanh(self.readout(torch.cat([h, context, emb], dim=-1)))
        return StepOutput(self.dropout(output), state, weights, centre)


class LuongDecoder(Decoder):
    """Luong et al. 2015: the query is the *current* state ``h_t``.

    * ``h_t = RNN([E y_{t−1}; h̃_{t−1}], h_{t−1})`` — input feeding (§3.3);
    * ``a_t(s) = align(h_t, h̄_s)`` (Eq. 7, with a score of Eq. 8), ``c_t = Σ_s a_t(s) h̄_s``;
    * ``h̃_t = tanh(W_c [c_t; h_t])`` — the attentional vector (Eq. 5), fed to the softmax (Eq. 6).
    """

    def __init__(self, cfg: ModelConfig, attention: Attention | None) -> None:
        super().__init__(cfg, attention)
        H = cfg.hidden_size
        self.W_c = nn.Linear(2 * H, H, bias=False)

    def teacher_force(self, gold, state, memory, window, hard=False):  # noqa: D102
        if not self._hoistable(gold, hard):
            return super().teacher_force(gold, state, memory, window, hard)
        lstm = GoldLSTM(self.rnn, gold)
        h, c = state.hidden[:, 0], state.cell[:, 0]
        feed = torch.zeros_like(h)
        drop = None
        outputs, weights = [], []
        for t in range(gold.size(1)):
            h, c = lstm(t, feed, h, c)  # h_t
            context, w, _ = self.attend(h, memory, t, window, hard)
            feed = torch.tanh(self.W_c(torch.cat([context, h], dim=-1)))  # h̃_t: (B, H)
            if t == 0:
                drop = self._step_dropout((gold.size(1), *feed.shape), feed)
            if drop is not None:
                feed = feed * drop[t]
            outputs.append(feed)
            weights.append(w)
        return torch.stack(outputs, 1), torch.stack(weights, 1)

    def step(self, emb, state, memory, t, window, hard=False):  # noqa: D102
        feed = state.feed if state.feed is not None else torch.zeros_like(state.hidden[:, -1])
        h, state = self.run_rnn(torch.cat([emb, feed], dim=-1), state)  # h_t: (B, H)
        context, weights, centre = self.attend(h, memory, t, window, hard)
        attentional = torch.tanh(self.W_c(torch.cat([context, h], dim=-1)))  # h̃_t: (B, H)
        attentional = self.dropout(attentional)
        return StepOutput(attentional, replace(state, feed=attentional), weights, centre)


class NoAttentionDecoder(BahdanauDecoder):
    """The fixed-context baseline (Cho et al. 2014; Sutskever et al. 2014).

    The decoder sees the source only through one fixed-length vector ``c`` — the bridged final
    encoder state — as its initial state and as an extra input at every step (Cho et al. 2014, §2.2,
    the RNN Encoder–Decoder). However long the sentence, ``c`` has ``H`` numbers:
    this is the bottleneck attention removes. Its attention weights are all zero.

    In code it is the Bahdanau decoder with the context ``c_i`` replaced by the fixed ``c``: same
    RNN input and readout, no attention.
    """

    def __init__(self, cfg: ModelConfig, attention: Attention | None) -> None:
        super().__init__(cfg, None)

    def teacher_force(self, gold, state, memory, window, hard=False):  # noqa: D102
        if not self._hoistable(gold, hard):
            return super().teacher_force(gold, state, memory, window, hard)
        lstm = GoldLSTM(self.rnn, gold, constant=memory.summary)  # the whole input is known: one product
        h, c = state.hidden[:, 0], state.cell[:, 0]
        states = []
        for t in range(gold.size(1)):
            h, c = lstm(t, None, h, c)
            states.append(h)
        states = torch.stack(states, 1)  # (B, T, H)
        summary = memory.summary.unsqueeze(1).expand(-1, gold.size(1), -1)  # (B, T, H)
        outputs = self._read_out(states, summary.to(states.dtype), gold)
        weights = torch.zeros(*gold.shape[:2], memory.mask.size(1), dtype=outputs.dtype, device=gold.device)
        return outputs, weights

    def step(self, emb, state, memory, t, window, hard=False):  # noqa: D102
        h, state = self.run_rnn(torch.cat([emb, memory.summary], dim=-1), state)
        output = torch.tanh(self.readout(torch.cat([h, memory.summary, emb], dim=-1)))
        weights = torch.zeros_like(memory.mask, dtype=output.dtype)  # (B, S)
        return StepOutput(self.dropout(output), state, weights, None)


DECODERS: dict[str, type[Decoder]] = {
    "bahdanau": BahdanauDecoder,
    "luong": LuongDecoder,
    "none": NoAttentionDecoder,
}
"""Decoders by name."""
