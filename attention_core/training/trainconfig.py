"""How to train: the typed settings a run is started with (saved with its model), and the error a run stops with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attention_core.training.precision import PRECISIONS


class TrainError(RuntimeError):
    """Training cannot start or continue (e.g. a checkpoint would be overwritten)."""


_FIELD_RULES: tuple[tuple[tuple[str, ...], Callable[[Any], bool], str], ...] = (
    (("epochs", "batch_size", "max_len", "min_freq", "dev_beam", "main_repeat", "patience"), lambda v: v >= 1,
     "must be at least 1"),
    (("max_train", "max_dev", "max_pairs"), lambda v: v is None or v >= 1, "must be at least 1 (or unset: all)"),
    (("clip", "min_lr", "lr_patience", "checkpoint_minutes", "full_data_epochs", "extra_ratio"), lambda v: v >= 0,
     "must not be negative"),
    (("label_smoothing",), lambda v: 0 <= v < 1, "must be in [0, 1)"),
    (("lr_decay",), lambda v: 0 < v < 1, "(the factor the learning rate is multiplied by) must be in (0, 1)"),
    (("subword_vocab",), lambda v: v == 0 or v > 4, "must be 0 (whole words) or more than 4"),
    (("lr",), lambda v: v > 0, "must be positive"),
    (("final_lr_ratio",), lambda v: 0 < v <= 1, "must be in (0, 1]"),
    (("teacher_forcing",), lambda v: 0 <= v <= 1, "must be in [0, 1]"),
    (("precision",), lambda v: v in PRECISIONS, f"must be one of {', '.join(PRECISIONS)}"),
)
"""What ``TrainConfig.validate`` checks field by field: ``(fields, check, the rule as the message says it)``."""


@dataclass
class TrainConfig:
    """How to train (saved with the model).

    Attributes:
        epochs: Maximum epochs.
        batch_size: Pairs per batch (per process under ``torchrun``).
        lr: Adam learning rate.
        clip: Gradient-norm clip.
        teacher_forcing: Probability of feeding gold tokens.
        label_smoothing: Label smoothing.
        lr_decay: Factor applied to the learning rate when dev BLEU stops improving (the plateau schedule,
            ``decay_epochs=0``).
        lr_patience: Epochs without improvement before decaying.
        min_lr: Floor of the learning rate (the plateau schedule).
        decay_epochs: ``0``: the plateau schedule (the learning rate is multiplied by ``lr_decay`` after each
            epoch that does not raise dev BLEU). ``N ≥ 1``: the learning rate stays at ``lr`` and then falls
            linearly, batch by batch, over the last ``N`` of ``epochs`` to ``lr × final_lr_ratio``, whatever dev
            BLEU does (a warmup-stable-decay schedule without the warmup; see
            [`scheduled_lr`][attention_core.training.loop.scheduled_lr]): a budget that ends with its schedule.
        final_lr_ratio: The learning rate at the end of the decay, as a fraction of ``lr``.
        patience: Early stopping: epochs without dev BLEU improvement before stopping.
        seed: Seed of weights, data order, dropout and teacher forcing.
        max_len: Training pairs with a longer side (tokens) are dropped.
        min_freq: Minimum token count for the vocabularies (with subword targets: the source's only;
            every target piece is kept, so any word can be spelled).
        subword_vocab: Learn a BPE model of this many target pieces from the training split
            ([`Subwords`][attention_core.data.subword.Subwords]); ``0`` keeps whole-word targets.
        max_train: Use only the first ``max_train`` training pairs (quick runs, tests).
        max_pairs: A training budget in pairs over the whole run (every epoch's pairs counted; the last epoch
            stops at the batch that reaches it): runs of different data or sizes compared at the same budget.
            ``None``: ``epochs`` full epochs.
        full_data_epochs: A curriculum over extra data (``Splits.main_train_size``): the first
            ``full_data_epochs`` epochs train on every pair; each later epoch on the task's own
            corpus plus a fresh random draw of ``extra_ratio`` extra pairs per own pair. ``0``
            (the default) trains on everything every epoch.
        extra_ratio: Extra pairs per own pair after the full-data epochs.
        main_repeat: Up-sampling of the task's own corpus: its training pairs appear this many times in
            every epoch, beside the extra data (e.g. Tatoeba's 27,055 pairs 4 times beside tv4dialog's
            232,140). The vocabularies and ``extra_ratio``'s draw count them once; ``1`` (the default)
            changes nothing.
        max_dev: Score only the first ``max_dev`` dev pairs each epoch.
        dev_beam: Beam size for dev BLEU (1 = greedy).
        precision: ``auto``, ``fp32``, ``bf16`` or ``fp16`` (see
            [`resolve_precision`][attention_core.training.precision.resolve_precision]): ``auto`` is
            float16 mixed precision on CUDA, bfloat16 on a CPU that multiplies it natively, float32
            otherwise.
        checkpoint_minutes: Within an epoch, write the resumable state at most this many minutes apart, so
            a killed run loses at most that much work (an epoch of the whole couplet corpus is most of an
            hour on a CPU); a resumed run continues from the batch it stopped at, and its result is the one an
            uninterrupted run reaches. ``0``: at the end of each epoch only. One process only (a ``torchrun``
            run checkpoints at the end of each epoch).
    """

    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    clip: float = 1.0
    teacher_forcing: float = 1.0
    label_smoothing: float = 0.1
    lr_decay: float = 0.5
    lr_patience: int = 0
    min_lr: float = 1e-5
    decay_epochs: int = 0
    final_lr_ratio: float = 0.1
    patience: int = 3
    seed: int = 1
    max_len: int = 60
    min_freq: int = 1
    subword_vocab: int = 0
    max_train: int | None = None
    max_pairs: int | None = None
    full_data_epochs: int = 0
    extra_ratio: float = 1.0
    main_repeat: int = 1
    max_dev: int | None = None
    dev_beam: int = 1
    precision: str = "auto"
    checkpoint_minutes: float = 10.0

    def validate(self) -> TrainConfig:
        """Raise ``ValueError`` naming the first bad field."""
        for names, ok, rule in _FIELD_RULES:
            for name in names:
                if not ok(getattr(self, name)):
                    raise ValueError(f"{name} {rule}, got {getattr(self, name)!r}")
        if not 0 <= self.decay_epochs <= self.epochs:
            raise ValueError(f"decay_epochs must be between 0 and epochs ({self.epochs}), got {self.decay_epochs}")
        return self
