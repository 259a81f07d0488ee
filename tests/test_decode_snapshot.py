"""The bundled models decode a fixed sample exactly as they did when the snapshot was written.

A refactoring of the library (moving modules, one decode config, the editing layer split from generation) must not
change one output. ``tests/data/decode_snapshot.json`` holds, for every bundled model, the greedy and beam-5 outputs
of a fixed sample (and, for the translation default, the names switch's), with the sha256 of the model's weights;
and, under ``test_splits``, the greedy and beam-5 outputs of the first ten sources of each task's test split (read
from the corpora: that half skips, saying so, where they are not installed).
A model replaced on purpose (a retrained one) changes its weights' hash: the test then says so, and the snapshot is
written again in the same commit (``python tests/test_decode_snapshot.py --write``), which the diff shows.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "data" / "decode_snapshot.json"
MODELS = ROOT / "models"
SAMPLE = {
    "translation": [
        "我喜欢自然语言处理。",
        "这家餐厅的菜又便宜又好吃，就是服务员态度不太好。",
        "欧盟委员会对这家科技巨头处以创纪录的罚款。",
        "我的朋友张伟是一名麻醉师。",
        "你明天几点来？",
        "他昨天买了三本书。",
        "请把窗户关上。",
        "我们在北京住了十年。",
    ],
    "couplet": ["春回大地千山秀", "风吹杨柳绿", "明月照松间", "海阔凭鱼跃", "书山有路勤为径", "一帆风顺年年好"],
}
"""Everyday sentences and common 上联, written here so that the test needs no corpus."""
DEFAULT = "translation/luong-general"
SPLIT_SAMPLE = 10
"""Test-split sources decoded per task: the first ones of ``load_splits(task).test``."""


def weights_sha256(folder: Path) -> str:
    """The sha256 of a model folder's ``model.safetensors``."""
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def decode(folder: Path, task: str, names: bool) -> dict:
    """A model's outputs on its task's sample: greedy, beam 5 and (``names``) beam 5 with the names switch on."""
    from attention_core.decoding.folder import load_folder
    from attention_core.editing import switch

    translator = load_folder(folder)
    sample = SAMPLE[task]
    out = {
        "sha256": weights_sha256(folder),
        "greedy": [o.text for o in translator.translate(sample)],
        "beam5": [o.text for o in translator.translate(sample, beam_size=5)],
    }
    if names:
        out["names"] = [o.text for o in switch.translate(translator, sample, beam_size=5)]
    return out


def bundled() -> list[str]:
    """Every bundled model, as ``task/variant``."""
    return sorted(f"{p.parent.name}/{p.name}" for p in MODELS.glob("*/*") if (p / "model.safetensors").is_file())


def split_sources(task: str) -> list[str] | None:
    """The first test-split sources of a task, or ``None`` without the corpora."""
    from attention_core.data.corpora import data_home
    from attention_core.data.tasks import DataError, load_splits

    try:
        return [s for s, _ in load_splits(task, data_home()).test[:SPLIT_SAMPLE]]
    except (DataError, OSError):
        return None


def decode_split(folder: Path, sources: list[str]) -> dict:
    """A model's greedy and beam-5 outputs on test-split sources."""
    from attention_core.decoding.folder import load_folder

    translator = load_folder(folder)
    return {"greedy": [o.text for o in translator.translate(sources)],
            "beam5": [o.text for o in translator.translate(sources, beam_size=5)]}


def write() -> None:
    """Write the snapshot from the models and code as they are now (the corpora must be installed)."""
    snapshot = {name: decode(MODELS / name, name.split("/")[0], name == DEFAULT) for name in bundled()}
    sources = {task: split_sources(task) for task in SAMPLE}
    if any(s is None for s in sources.values()):
        sys.exit("the test-split sample needs the corpora: attention-lab data pull, or ATTENTION_LAB_DATA")
    snapshot["test_splits"] = {name: decode_split(MODELS / name, sources[name.split("/")[0]]) for name in bundled()}
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(snapshot, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def test_the_snapshot_covers_every_bundled_model():
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert sorted(set(snapshot) - {"test_splits"}) == bundled() == sorted(snapshot["test_splits"])
    assert len(bundled()) == 18


@pytest.mark.parametrize("name", bundled())
def test_a_bundled_model_decodes_the_sample_as_in_the_snapshot(name):
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))[name]
    assert weights_sha256(MODELS / name) == want["sha256"], (
        f"{name}'s weights changed since the snapshot: a model replaced on purpose is snapshotted again in the same "
        "commit (python tests/test_decode_snapshot.py --write)")
    got = decode(MODELS / name, name.split("/")[0], "names" in want)
    assert got == want


@pytest.mark.parametrize("name", bundled())
def test_a_bundled_model_decodes_its_test_split_sample_as_in_the_snapshot(name):
    sources = split_sources(name.split("/")[0])
    if sources is None:
        pytest.skip("needs the corpora for the test split: attention-lab data pull (or set ATTENTION_LAB_DATA)")
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert weights_sha256(MODELS / name) == snapshot[name]["sha256"], f"{name}'s weights changed: write the snapshot"
    assert decode_split(MODELS / name, sources) == snapshot["test_splits"][name]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_decode_snapshot.py --write   (writes tests/data/decode_snapshot.json)")
    sys.path.insert(0, str(ROOT))
    write()
