"""The decoder RNN's step written out, for speed on a CPU: the same values as ``nn.LSTM``/``nn.GRU``.

The teaching code in [`decoder`][attention_core.model.decoder] calls these where they measured faster
(``benchmarks/bench.py``, ``benchmarks/train_step.py``):

* [`run_cells`][attention_core.model.rnn_steps.run_cells]: one step, layer by layer, on the RNN's own parameters —
  for a visitor's small batch and for CPU mixed precision (bfloat16 products, float32 gates and cell state);
* [`GoldLSTM`][attention_core.model.rnn_steps.GoldLSTM]: a one-layer LSTM stepped through teacher forcing, with the
  share of the gates that comes from the gold inputs computed once for the whole sentence.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def run_cells(
    rnn: nn.LSTM | nn.GRU, x: Tensor, hidden: Tensor, cell: Tensor | None, mixed: bool, training: bool
) -> tuple[Tensor, Tensor, Tensor | None]:
    """One step of ``rnn``, one layer at a time on its own parameters.

    Args:
        rnn: The decoder's ``nn.LSTM`` or ``nn.GRU`` (batch first).
        x: Step input, shape ``(B, I)``.
        hidden: Hidden state, shape ``(B, L, H)``.
        cell: LSTM cell state ``(B, L, H)``, or ``None`` for a GRU.
        mixed: Mixed precision: the two matrix products run in the autocast type while the gates,
            the cell state and the output are computed and kept in float32. Otherwise the fused
            ``torch.lstm_cell``/``torch.gru_cell`` kernels do the whole step.
        training: Apply the RNN's dropout between layers (as ``nn.LSTM`` does in training mode).

    Returns:
        ``(h_t, hidden, cell)``: the top layer's output ``(B, H)`` and the new states ``(B, L, H)``.
    """
    hiddens, cells = [], []
    inp = x
    for layer in range(rnn.num_layers):
        if layer > 0:
            inp = F.dropout(inp, rnn.dropout, training)
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        w_ih, w_hh, b_ih, b_hh = (getattr(rnn, f"{name}_l{layer}") for name in names)
        h = hidden[:, layer]
        if cell is None:  # GRU: h' = (1 − z) ⊙ n + z ⊙ h
            if mixed:
                i_r, i_z, i_n = F.linear(inp, w_ih, b_ih).float().chunk(3, 1)
                h_r, h_z, h_n = F.linear(h, w_hh, b_hh).float().chunk(3, 1)
                r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
                n = torch.tanh(i_n + r * h_n)
                inp = n + z * (h - n)
            else:
                inp = torch.gru_cell(inp, h, w_ih, w_hh, b_ih, b_hh)
        else:  # LSTM: c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
            c = cell[:, layer]
            if mixed:
                gates = (F.linear(inp, w_ih, b_ih) + F.linear(h, w_hh, b_hh)).float()  # (B, 4H)
                i, f, g, o = gates.chunk(4, 1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                inp = torch.sigmoid(o) * torch.tanh(c)
            else:
                inp, c = torch.lstm_cell(inp, (h, c), w_ih, w_hh, b_ih, b_hh)
            cells.append(c)
        hiddens.append(inp)
    return inp, torch.stack(hiddens, dim=1), torch.stack(cells, dim=1) if cells else None


class GoldLSTM:
    """A one-layer LSTM stepped through teacher forcing, with the gold inputs' share of the gates hoisted.

    The step input is ``[E y_{t−1}; x_t]``. With the gold tokens known before the first step, the gates'
    ``W_e E y_{t−1} + b_ih + b_hh`` is one product for all ``T`` steps (``pre``); each step adds
    ``[W_x W_hh] [x_t; h_{t−1}]``, one product instead of two. An input that is the same at every step
    (the no-attention decoder's summary ``c``) folds into ``pre`` too. Under mixed precision the gate
    arithmetic and the cell state are float32, as [`run_cells`][attention_core.model.rnn_steps.run_cells] keeps
    them; a float64 model stays float64.

    Args:
        rnn: The decoder's one-layer ``nn.LSTM``.
        gold: The embedded gold inputs, shape ``(B, T, E)``.
        constant: An input the same at every step, shape ``(B, X)``, or ``None``; it follows the
            embedding in the step input, and then the step takes no ``x_t``.
    """

    def __init__(self, rnn: nn.LSTM, gold: Tensor, constant: Tensor | None = None) -> None:
        E = gold.size(-1)
        w_ih, w_hh = rnn.weight_ih_l0, rnn.weight_hh_l0
        pre = F.linear(gold, w_ih[:, :E], rnn.bias_ih_l0 + rnn.bias_hh_l0)  # (B, T, 4H)
        if constant is not None:
            pre = pre + F.linear(constant, w_ih[:, E:]).unsqueeze(1)
            w_step = w_hh
        else:
            w_step = torch.cat([w_ih[:, E:], w_hh], dim=1)  # (4H, X + H)
        # unbound once: one gradient stack in the backward pass, not a (B, T, 4H) zero tensor per step
        self.pre = pre.unbind(1)
        # cast once: autocast caches the casts of parameters, not of tensors made from them
        self.w_step = w_step.to(pre.dtype)

    def __call__(self, t: int, x: Tensor | None, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        """Step ``t``: ``x_t`` ``(B, X)`` (``None`` with a constant input), ``h, c`` ``(B, H)`` → new ``(h, c)``."""
        xh = h if x is None else torch.cat([x, h], dim=-1)
        gates = self.pre[t] + F.linear(xh.to(self.w_step.dtype), self.w_step)  # (B, 4H)
        gates = gates.to(torch.promote_types(gates.dtype, torch.float32))  # bfloat16 → float32; float64 stays
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
