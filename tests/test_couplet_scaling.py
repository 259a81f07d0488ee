"""benchmarks/couplet_scaling.py: the "for scale" sentence names the zoo it measured; old studies still render."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from attention_core.decoding.folder import FORMAT
from attention_core.model.config import ModelConfig

spec = importlib.util.spec_from_file_location(
    "couplet_scaling", Path(__file__).resolve().parents[1] / "benchmarks" / "couplet_scaling.py")
couplet_scaling = importlib.util.module_from_spec(spec)
spec.loader.exec_module(couplet_scaling)


def _zoo(root: Path, scores: dict[str, dict[str, float]], hidden: int, pairs: int) -> None:
    """A fake bundled zoo: beam-5 reports per variant and set, and the default model's config."""
    (root / "results" / "eval").mkdir(parents=True)
    for stem, by_variant in scores.items():
        for variant, bleu in by_variant.items():
            (root / "results" / "eval" / f"{stem}--{variant}--beam5.json").write_text(json.dumps({"bleu": bleu}))
    config = root / "models" / "couplet" / "luong-general" / "config.json"
    config.parent.mkdir(parents=True)
    model = asdict(ModelConfig(src_vocab_size=10, tgt_vocab_size=10, hidden_size=hidden))
    config.write_text(json.dumps({"format": FORMAT, "task": "couplet", "model": model,
                                  "meta": {"data": {"sizes": {"train": pairs}}}}))


def test_the_spread_leaves_out_none_and_names_the_zoo(tmp_path, monkeypatch):
    monkeypatch.setattr(couplet_scaling, "ROOT", tmp_path)
    _zoo(tmp_path, {"couplet": {"luong-general": 1.87, "luong-scaled_dot": 0.95, "none": 0.10, "transformer": 3.0},
                    "couplet-poetry-test": {"luong-general": 0.52, "luong-scaled_dot": 0.17}}, 352, 946087)
    spread = couplet_scaling.variant_spread()
    assert spread == {"test": 0.92, "poetry-test": 0.35, "zoo": "hidden 352, 946,087 training pairs an epoch"}


def test_a_refreshed_study_keeps_its_arms_and_takes_the_zoo_bundled_now(tmp_path, monkeypatch):
    monkeypatch.setattr(couplet_scaling, "ROOT", tmp_path)
    _zoo(tmp_path, {"couplet": {"a": 2.0, "b": 1.0}, "couplet-poetry-test": {"a": 0.6, "b": 0.5}}, 352, 946087)
    arm = {"train_pairs": 946087, "epochs": 2, "pairs_seen": 1892174,
           "test": {"bleu": 1.35}, "poetry-test": {"bleu": 0.26}}
    old = {"train_pairs": 302304, "epochs": 5, "pairs_seen": 1511520,
           "test": {"bleu": 0.93, "vs_reference": {"delta": -0.42, "low": -0.65, "high": -0.18}},
           "poetry-test": {"bleu": 0.34, "vs_reference": {"delta": 0.08, "low": -0.12, "high": 0.29}}}
    study = couplet_scaling.STUDIES["scaling"]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "couplet_scaling.json").write_text(json.dumps({  # measured before arms had "parameters"
        "reference": "whole", "arms": {"55k": old, "whole": arm}, "variant_spread": {"test": 0.55,
                                                                                     "poetry-test": 0.17}}))
    monkeypatch.setattr(couplet_scaling, "figure", lambda *a: None)  # no plotly image export in a unit test
    couplet_scaling.refresh(tmp_path / "out", "couplet_scaling", study)
    text = (tmp_path / "out" / "couplet_scaling.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len({row.count("|") for row in rows}) == 1  # header, rule and rows: the same number of cells
    assert "parameters" not in rows[0]
    assert "| 55k | 302,304 | 5 | 1,511,520 | 0.93 | -0.42 [-0.65, -0.18] | 0.34 | +0.08 [-0.12, +0.29] |" in rows
    assert "couplet zoo (hidden 352, 946,087 training pairs an epoch), beam 5: 1.00 on the modern set, 0.10" in text
    assert "0.55" not in text
    saved = json.loads((tmp_path / "out" / "couplet_scaling.json").read_text())
    assert saved["arms"]["55k"] == old and saved["variant_spread"]["test"] == 1.0


def test_a_refresh_without_the_zoo_s_reports_stops_with_one_line_and_keeps_the_study(tmp_path, monkeypatch):
    monkeypatch.setattr(couplet_scaling, "ROOT", tmp_path)  # no results/eval at all
    (tmp_path / "couplet_scaling.json").write_text('{"reference": "a", "arms": {}, "variant_spread": {"test": 0.5}}')
    with pytest.raises(SystemExit, match="fewer than two beam-5 reports"):
        couplet_scaling.refresh(tmp_path, "couplet_scaling", couplet_scaling.STUDIES["scaling"])
    assert json.loads((tmp_path / "couplet_scaling.json").read_text())["variant_spread"] == {"test": 0.5}
