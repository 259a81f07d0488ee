"""A run's checkpoint: everything a resumed run needs comes back, and a damaged or foreign one is refused in words."""

import random
from pathlib import Path

import pytest
import torch

from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.training.checkpoint import CHECKPOINT, Run, read_checkpoint, restore, save_checkpoint
from attention_core.training.trainconfig import TrainConfig, TrainError


def _run(out: Path, hidden: int = 8) -> Run:
    torch.manual_seed(0)
    model = build_model(ModelConfig(12, 10, hidden_size=hidden, emb_size=8))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max")
    return Run(model, model, optimizer, scheduler, None, None, {"epoch": 2, "history": [1.5]}, TrainConfig(),
               torch.device("cpu"), out)


def test_a_saved_run_comes_back_whole_weights_optimiser_state_and_random_streams(tmp_path):
    run = _run(tmp_path)
    loss = run.model(torch.tensor([[4, 5, 6]]), torch.tensor([3]), torch.tensor([[1, 4, 5]]))[0].sum()
    loss.backward()
    run.optimizer.step()  # an optimiser with moments to keep
    random.seed(5)
    torch.manual_seed(5)
    save_checkpoint(run)
    expected = (random.random(), torch.rand(3))
    other = _run(tmp_path)
    restore(other, read_checkpoint(tmp_path, resume=True, init=None, device=torch.device("cpu")))
    assert all(torch.equal(a, b) for a, b in zip(run.model.state_dict().values(), other.model.state_dict().values()))
    assert other.optimizer.state_dict()["state"][0]["exp_avg"].equal(run.optimizer.state_dict()["state"][0]["exp_avg"])
    assert other.state == {"epoch": 2, "history": [1.5]}
    assert random.random() == expected[0] and torch.equal(torch.rand(3), expected[1])  # the streams as saved


def test_no_checkpoint_or_no_resume_is_a_new_run(tmp_path):
    assert read_checkpoint(tmp_path, resume=True, init=None, device=torch.device("cpu")) is None
    save_checkpoint(_run(tmp_path))
    assert read_checkpoint(tmp_path, resume=False, init=None, device=torch.device("cpu")) is None


def test_a_damaged_or_foreign_checkpoint_is_refused_with_the_way_out(tmp_path):
    (tmp_path / CHECKPOINT).write_bytes(b"not a checkpoint")
    with pytest.raises(TrainError, match="is damaged and cannot be resumed .*move it away"):
        read_checkpoint(tmp_path, resume=True, init=None, device=torch.device("cpu"))
    save_checkpoint(_run(tmp_path, hidden=8))
    with pytest.raises(TrainError, match="does not fit this model and data .*resume with the options"):
        restore(_run(tmp_path, hidden=16), read_checkpoint(tmp_path, True, None, torch.device("cpu")))
