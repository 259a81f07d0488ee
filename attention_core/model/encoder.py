"""Bidirectional RNN encoder (Bahdanau et al. 2014, §3.2 and Appendix A.1.1)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attention_core.model.step import padding_mask

RNN_CLASSES: dict[str, type[nn.RNNBase]] = {"lstm": nn.LSTM, "gru": nn.GRU}
BY_LENGTH_DEVICES = frozenset({"cpu"})
"""Device types on which the encoder runs each group of equal-length sentences unpacked (``Encoder._run_by_length``:
1.08× a training step on a CPU, ``results/step_ways.md``); elsewhere (cuDNN) one packed batch sorted on the host
(``Encoder._run_packed``), which reads nothing back from the device."""


@dataclass
class EncoderOutput:
    """What the encoder hands to the decoder.

    Attributes:
        outputs: Annotations ``h_j`` projected to the decoder size, shape ``(B, S, H)``
            (``(B, S, 2H)`` unprojected when ``project=False``).
        final: Final states of both directions, concatenated, per layer: ``(B, L, 2H)``.
        final_cell: The same for the LSTM cell state, or ``None`` for a GRU.
        mask: ``True`` for real tokens, shape ``(B, S)``.
    """

    outputs: Tensor
    final: Tensor
    final_cell: Tensor | None
    mask: Tensor


class Encoder(nn.Module):
    """Embeddings and a bidirectional LSTM/GRU (on a CPU over each group of equal-length sentences, else packed).

    Each annotation ``h_j = [→h_j; ←h_j]`` (Bahdanau et al. 2014, §3.2 and Appendix A.1.1) is
    projected from ``2H`` back to ``H`` so every score function can compare it with a decoder
    state of size ``H``.

    Args:
        vocab_size: Source vocabulary size.
        emb_size: Embedding size.
        hidden_size: Units per direction (and output size after projection).
        num_layers: Stacked RNN layers.
        rnn: ``lstm`` or ``gru``.
        dropout: Dropout on embeddings and between layers.
        pad_id: Padding index.
        project: Project the ``2H`` outputs to ``H``. The no-attention baseline never reads the
            outputs (only the final states), so it builds no projection.
    """

    def __init__(
        self,
        vocab_size: int,
        emb_size: int,
        hidden_size: int,
        num_layers: int = 1,
        rnn: str = "lstm",
        dropout: float = 0.0,
        pad_id: int = 0,
        project: bool = True,
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.rnn = RNN_CLASSES[rnn](
            emb_size,
            hidden_size,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.project = nn.Linear(2 * hidden_size, hidden_size) if project else nn.Identity()
        self.pad_id = pad_id

    def _run_by_length(self, embedded: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor | tuple[Tensor, Tensor]]:
        """The RNN over each group of equal-length sentences, unpacked: the same values as a packed batch.

        On a CPU, oneDNN runs a packed batch of mixed lengths on a slower path than a plain one; a
        length-bucketed training batch holds one to three lengths, so a plain run per length is faster
        (``benchmarks/train_step.py``). Padding positions of the outputs are zero, as ``pad_packed_sequence``
        leaves them.

        Args:
            embedded: ``(B, S, E)``.
            src_lengths: ``(B,)``.

        Returns:
            ``(outputs (B, S, 2H), state)`` as ``nn.LSTM``/``nn.GRU`` return them, rows in the batch's order.
        """
        S = embedded.size(1)
        lengths = src_lengths.cpu()
        if bool((lengths == S).all()):
            return self.rnn(embedded)
        outputs, states, rows = [], [], []
        for length in lengths.unique().tolist():
            picked = (lengths == length).nonzero().squeeze(1).to(embedded.device)
            out, state = self.rnn(embedded.index_select(0, picked)[:, :length])
            outputs.append(F.pad(out, (0, 0, 0, S - length)))
            states.append(state if isinstance(state, tuple) else (state,))
            rows.append(picked)
        order = torch.cat(rows).argsort()  # back to the batch's order
        state = tuple(torch.cat(parts, dim=1).index_select(1, order) for parts in zip(*states))
        return torch.cat(outputs).index_select(0, order), state if len(state) == 2 else state[0]

    def _run_packed(self, embedded: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor | tuple[Tensor, Tensor]]:
        """The RNN over one packed batch, sorted by length on the host: nothing is read back from the device.

        ``pack_padded_sequence(..., enforce_sorted=False)`` would copy its sort order to the device with a
        blocking copy; here the order is computed from the host lengths and copied without waiting, the batch
        packed already sorted, and the rows put back in the batch's order afterwards. The same values as
        ``pack_padded_sequence(..., enforce_sorted=False)``.

        Args:
            embedded: ``(B, S, E)``.
            src_lengths: ``(B,)``, on the host (a device tensor is copied back first).

        Returns:
            ``(outputs (B, S, 2H), state)`` as ``nn.LSTM``/``nn.GRU`` return them, rows in the batch's order.
        """
        S = embedded.size(1)
        lengths, order = src_lengths.cpu().sort(descending=True)
        back = order.argsort()
        order, back = order.to(embedded.device, non_blocking=True), back.to(embedded.device, non_blocking=True)
        packed = pack_padded_sequence(embedded.index_select(0, order), lengths, batch_first=True)
        out, state = self.rnn(packed)
        outputs = pad_packed_sequence(out, batch_first=True, total_length=S)[0].index_select(0, back)  # (B, S, 2H)
        if isinstance(state, tuple):
            return outputs, tuple(part.index_select(1, back) for part in state)
        return outputs, state.index_select(1, back)

    def forward(self, src: Tensor, src_lengths: Tensor) -> EncoderOutput:
        """Encode a padded batch.

        Args:
            src: Token ids, shape ``(B, S)``, padded with ``pad_id``.
            src_lengths: Real lengths, shape ``(B,)``; every length must be at least 1.

        Returns:
            The [`EncoderOutput`][attention_core.model.encoder.EncoderOutput].
        """
        B, S = src.shape
        embedded = self.dropout(self.embedding(src))  # (B, S, E)
        run = self._run_by_length if src.device.type in BY_LENGTH_DEVICES else self._run_packed
        outputs, state = run(embedded, src_lengths)  # (B, S, 2H)
        hidden, cell = state if isinstance(state, tuple) else (state, None)

        def merge(h: Tensor) -> Tensor:  # (2L, B, H) -> (B, L, 2H), directions side by side
            h = h.view(-1, 2, B, h.size(-1))  # (L, 2, B, H)
            return torch.cat([h[:, 0], h[:, 1]], dim=-1).transpose(0, 1)

        mask = padding_mask(src_lengths, S, src.device)  # (B, S)
        return EncoderOutput(
            outputs=self.project(outputs),  # (B, S, H)
            final=merge(hidden),
            final_cell=None if cell is None else merge(cell),
            mask=mask,
        )
