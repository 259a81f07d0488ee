"""A training run's moving parts, and the checkpoint that lets it stop anywhere and go on.

A run is written atomically at the end of every epoch and, within one, every ``TrainConfig.checkpoint_minutes``:
the weights, the optimiser, the schedule, the state (epoch, best dev BLEU, history, how far into the epoch) and the
random states, so a resumed run rebuilds the same batches and continues from the batch it had reached.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import torch

from attention_core.data.atomic import atomic_write
from attention_core.decoding.translator import Translator
from attention_core.model.seq2seq import Seq2Seq
from attention_core.training.trainconfig import TrainConfig, TrainError

CHECKPOINT = "checkpoint.pt"
"""The resumable training state inside a run folder."""


@dataclass
class Run:
    """A training run: its moving parts, the state a checkpoint keeps, and where and how it runs.

    Attributes:
        model: The model being trained.
        train_model: What the step calls: the model, or its ``DistributedDataParallel`` wrapper.
        optimizer: The optimiser.
        scheduler: The plateau schedule of the learning rate.
        scaler: The float16 gradient scaler (CUDA), or ``None``.
        amp_dtype: The autocast type, or ``None`` for float32.
        state: Epoch, best dev BLEU, history and the rest of what a resumed run needs (JSON).
        cfg: The run's training settings.
        device: Where it trains.
        out: Its folder (the model, the checkpoint, the metrics).
        rank: This process's rank under ``torchrun`` (0 alone).
        world: How many processes train it.
        progress: Show a progress bar (rank 0).
    """

    model: Seq2Seq
    train_model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau
    scaler: torch.amp.GradScaler | None
    amp_dtype: torch.dtype | None
    state: dict
    cfg: TrainConfig
    device: torch.device
    out: Path
    rank: int = 0
    world: int = 1
    progress: bool = False

    @property
    def checkpoint(self) -> Path:
        """The run's checkpoint file."""
        return self.out / CHECKPOINT


def read_checkpoint(out: Path, resume: bool, init: Translator | None, device: torch.device) -> dict | None:
    """The checkpoint to resume from (``None`` for a new run) in a claimed folder; refuses to lose its ``init``."""
    path = out / CHECKPOINT
    if not (resume and path.exists()):
        return None
    try:
        ckpt = torch.load(path, map_location=device, weights_only=True)
        continued = json.loads(ckpt["state"]).get("continued")
    except Exception as err:  # truncated, empty or not a checkpoint: one line, and the way out
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TrainError(f"{path} is damaged and cannot be resumed ({reason}); restore a copy, or move it away "
                         "to start the run again") from None
    if continued and init is None:
        raise TrainError(f"{out} continues a trained model: resume it with the same --init as the run began with")
    return ckpt


def restore(run: Run, ckpt: dict) -> None:
    """Load a checkpoint's weights, optimiser, schedule, state and random states into the run."""
    try:
        run.model.load_state_dict(ckpt["model"])
    except RuntimeError as err:  # the first line only says "Error(s) in loading state_dict"; the next names one
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise TrainError(f"{run.checkpoint} does not fit this model and data ({lines[min(1, len(lines) - 1)]}): "
                         "resume with the options and data the run began with (its command is in the model's "
                         "config.json, meta.command)") from None
    run.optimizer.load_state_dict(ckpt["optimizer"])
    run.scheduler.load_state_dict(ckpt["scheduler"])
    run.state = json.loads(ckpt["state"])
    torch.set_rng_state(ckpt["torch_rng"].cpu())
    random.setstate(_as_random_state(ckpt["python_rng"]))
    if ckpt.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(ckpt["cuda_rng"].cpu(), run.device)


def save_checkpoint(run: Run) -> None:
    """Write the run's resumable training state atomically."""
    ckpt = {
        "model": run.model.state_dict(),
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "state": json.dumps(run.state),
        "torch_rng": torch.get_rng_state(),
        "python_rng": list(random.getstate()),
        "cuda_rng": torch.cuda.get_rng_state(run.device) if run.device.type == "cuda" else None,
    }
    atomic_write(run.checkpoint, lambda tmp: torch.save(ckpt, tmp))


def _as_random_state(value: object) -> tuple:
    """Python's ``random`` state, rebuilt from the lists a checkpoint stores."""
    version, internal, gauss = value  # type: ignore[misc]
    return (int(version), tuple(int(x) for x in internal), gauss)
