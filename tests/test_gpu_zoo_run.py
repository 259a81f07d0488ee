"""benchmarks/gpu_zoo_run.py reads a GPU worker's log: its stages, epochs and whether the model's training ended."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("gpu_zoo_run", ROOT / "benchmarks" / "gpu_zoo_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _epoch(n: int, bleu: float, seconds: float, pairs_per_s: float) -> str:
    return json.dumps({"epoch": n, "train_loss": 3.0, "dev_bleu": bleu, "lr": 0.002, "pairs": 1000,
                       "pairs_per_s": pairs_per_s, "seconds": seconds, "improved": True})


def test_a_two_stage_log_gives_each_stages_epochs_and_the_end(tmp_path):
    run = _module()
    log = tmp_path / "translation--luong-general.log"
    log.write_text("\n".join([
        json.dumps({"event": "zoo", "model": "translation/luong-general", "train": {"epochs": 3}}),
        "/site/jieba/__init__.py:44: SyntaxWarning: invalid escape sequence",  # a warning between the events
        json.dumps({"event": "start", "train_pairs": 1000, "resumed_at_epoch": 0}),
        _epoch(1, 10.0, 50.0, 5000), _epoch(2, 20.0, 40.0, 6000),
        json.dumps({"event": "start", "train_pairs": 1000, "resumed_at_epoch": 2}),
        _epoch(3, 21.5, 30.0, 7000),
        '{"epoch": 4, "dev_bleu": 2',  # a line cut off when the log was packed
        json.dumps({"event": "zoo-trained", "model": "translation/luong-general"}),
    ]) + "\n")
    summary = run.summary(run.read_log(log))
    assert summary["epochs"] == [2, 1] and summary["dev_bleu"] == [[10.0, 20.0], [21.5]]
    assert summary["best_dev_bleu"] == 21.5 and summary["seconds_per_epoch"] == 40.0 and summary["pairs_per_s"] == 6000
    assert summary["ended"] is True
    log.write_text(json.dumps({"event": "zoo", "model": "translation/none"}) + "\n")  # nothing trained yet
    assert run.summary(run.read_log(log)) == {"epochs": [], "seconds_per_epoch": None, "pairs_per_s": None,
                                              "best_dev_bleu": None, "dev_bleu": [], "ended": False}
