"""Training: the loss, one optimisation step, and token accuracy.

[`train_step`][attention_core.training.train_step] is the only place where a model is updated;
the corpus trainer, the tests and the app's live-training tab all call it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from attention_core.batch import Batch
from attention_core.seq2seq import Seq2Seq


def sequence_loss(logits: Tensor, tgt_out: Tensor, pad_id: int, label_smoothing: float = 0.0) -> Tensor:
    """Mean cross-entropy over real (non-padding) target tokens.

    Args:
        logits: ``(B, T, V)``.
        tgt_out: Gold ids ``(B, T)``, padded with ``pad_id``.
        pad_id: Padding id, ignored.
        label_smoothing: Label smoothing ``ε``.

    Returns:
        A scalar tensor.
    """
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(),
        tgt_out.reshape(-1),
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
    )


def token_accuracy(logits: Tensor, tgt_out: Tensor, pad_id: int) -> float:
    """Share of real target tokens whose argmax prediction is correct."""
    real = tgt_out != pad_id
    correct = (logits.argmax(dim=-1) == tgt_out) & real
    return correct.sum().item() / max(1, real.sum().item())


def train_step(
    model: Seq2Seq,
    batch: Batch,
    optimizer: torch.optim.Optimizer,
    clip: float = 1.0,
    teacher_forcing: float = 1.0,
    label_smoothing: float = 0.0,
    scaler: torch.amp.GradScaler | None = None,
) -> float:
    """One teacher-forced update: forward, loss, backward, gradient clipping, optimiser step.

    Args:
        model: The model (set to train mode here).
        batch: A batch on the model's device.
        optimizer: The optimiser.
        clip: Maximum gradient norm (``0`` disables clipping).
        teacher_forcing: Probability of feeding gold tokens.
        label_smoothing: Label smoothing ``ε``.
        scaler: A ``GradScaler`` for mixed precision on CUDA, or ``None``.

    Returns:
        The batch loss.
    """
    model.train()
    optimizer.zero_grad(set_to_none=True)
    device_type = batch.src.device.type
    with torch.autocast(device_type, dtype=torch.float16, enabled=scaler is not None):
        logits, _ = model(
            batch.src,
            batch.src_lengths,
            batch.tgt_in,
            batch.tgt_lengths,
            teacher_forcing=teacher_forcing,
        )
        loss = sequence_loss(logits, batch.tgt_out, model.cfg.pad_id, label_smoothing)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
    else:
        loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss.item()
