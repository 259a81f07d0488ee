"""DataInfo: a model's meta["data"] read once, the same whatever the folder holds, a mistyped field named."""

import json
from pathlib import Path

import pytest

from attention_core.data.info import DataInfo

MODELS = Path(__file__).resolve().parents[1] / "models"


@pytest.mark.parametrize("task", ["translation", "couplet"])
def test_a_bundled_models_record_reads_whole(task):
    record = json.loads((MODELS / task / "luong-general" / "config.json").read_text(encoding="utf-8"))["meta"]["data"]
    info = DataInfo.read(record)
    assert info.task == task and info.seed == 1234 and info.unreadable == () and info.record is record
    assert info.sizes["dev"] == 1000 and info.sizes["train"] > 100_000
    assert info.corpus_names()[0] == {"translation": "cmn-eng", "couplet": "couplet"}[task]
    assert list(info.extra) == record["extra"] and info.own_sources == {} and info.train_paths() == []
    assert all(len(place.split("/")) == 2 and len(sha) == 64 for place, sha in info.checksums().items())


def test_a_corpus_of_your_own_record_gives_its_files_and_example():
    info = DataInfo.read({"task": "parallel", "sources": {"train": {"paths": ["/x/de-fr.tsv"], "format": "tsv"},
                                                          "dev": "not a record"},
                          "sizes": {"train": 90, "dev": 5}, "example": "Hallo Welt", "skipped_lines": 2})
    assert info.train_paths() == ["/x/de-fr.tsv"] and list(info.own_sources) == ["train"]
    assert info.corpus_files == () and info.corpus_names() == [] and info.example == "Hallo Welt"
    assert info.skipped_lines == 2


@pytest.mark.parametrize("record", [None, [], "data", {}])
def test_no_record_reads_as_nothing_known(record):
    info = DataInfo.read(record)
    assert (info.task, info.seed, info.sizes, info.corpus_files, info.extra, info.example) == (
        None, None, {}, (), (), None)
    assert info.unreadable == ()


def test_a_mistyped_field_reads_as_empty_and_is_named():
    info = DataInfo.read({"seed": "1234", "extra": "tv4dialog", "sizes": {"train": "9", "dev": 3}, "example": "  ",
                          "skipped_lines": True, "sources": [{"path": 3}, {"path": "/d/couplet/train", "sha256": "a"}]})
    assert info.seed is None and info.extra == () and info.sizes == {"dev": 3} and info.example is None
    assert set(info.unreadable) == {"seed", "extra", "skipped_lines"}
    assert info.checksums() == {"couplet/train": "a"}  # the file without a path is left out
