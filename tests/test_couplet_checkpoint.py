"""benchmarks/couplet_checkpoint.py: the bundled row describes whichever model the evaluation reports measured."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "couplet_checkpoint", Path(__file__).resolve().parents[1] / "benchmarks" / "couplet_checkpoint.py")
couplet_checkpoint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(couplet_checkpoint)


def test_the_bundled_row_is_labelled_by_the_measured_model_not_a_fixed_recipe(tmp_path):
    folder = tmp_path / "results" / "eval"
    assert couplet_checkpoint.bundled_row(tmp_path) is None  # no reports: no row
    folder.mkdir(parents=True)
    figures = {k: 0.5 for k in couplet_checkpoint.KEYS}
    for stem, bleu in (("couplet", 1.87), ("couplet-poetry-test", 0.52)):
        (folder / f"{stem}--luong-general--beam5.json").write_text(json.dumps({
            "bleu": bleu, "chrf": 3.0, "couplet": figures, "model": {"hidden_size": 352},
            "weights_sha256": "6f52f1debda4128b"}))
    row = couplet_checkpoint.bundled_row(tmp_path)
    assert row["label"] == "bundled default (hidden 352, weights 6f52f1de)"
    assert (row["test"]["bleu"], row["poetry-test"]["bleu"]) == (1.87, 0.52)
    assert "train-55k" not in couplet_checkpoint.markdown([row])
