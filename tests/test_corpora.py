"""The corpora travel like the models: a manifest, ``attention-lab data push`` / ``pull`` / ``verify`` through a Hub
dataset repo (a local server here), byte-identical, and a training run that starts on what was pulled."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import data_dir

from attention_core.cli import main
from attention_core.data import corpora
from attention_core.data.corpora import (
    CorpusError,
    Entry,
    build_manifest,
    check,
    data_home,
    manifest_json,
    read_manifest,
)

COUPLETS = ["春 风 送 暖", "秋 雨 迎 凉", "山 高 水 长", "月 明 星 稀", "花 开 富 贵", "竹 报 平 安"]
ANSWERS = ["夏 日 生 辉", "冬 雪 含 香", "天 阔 云 低", "风 清 夜 静", "燕 舞 吉 祥", "梅 开 瑞 气"]


def _corpora(root: Path) -> Path:
    """A small data folder in the real layout: couplet/{train,test} (with a README) and poetry-couplet/test."""
    for split, n in (("train", 1100), ("test", 6)):  # dev takes 1,000 of train
        folder = root / "couplet" / split
        folder.mkdir(parents=True)
        (folder / "in.txt").write_text("\n".join((COUPLETS * 200)[:n]) + "\n", encoding="utf-8")
        (folder / "out.txt").write_text("\n".join((ANSWERS * 200)[:n]) + "\n", encoding="utf-8")
    (root / "couplet" / "README.md").write_text("# couplet\nsynthetic\n", encoding="utf-8")
    (root / "poetry-couplet" / "test").mkdir(parents=True)
    for name, lines in (("in.txt", COUPLETS), ("out.txt", ANSWERS)):
        (root / "poetry-couplet" / "test" / name).write_text("\n".join(lines), encoding="utf-8")
    return root


def _manifest(root: Path, path: Path) -> list[Entry]:
    entries = build_manifest(root, ["couplet", "poetry-couplet"])
    path.write_text(manifest_json(entries), encoding="utf-8")
    return entries


def test_the_shipped_manifest_lists_every_corpus_the_code_reads():
    entries = read_manifest()
    paths = {e.path for e in entries}
    for needed in ("cmn-eng/cmn.txt", "cmn-eng-extra/cmn-extra.txt", "couplet/train/in.txt", "couplet/test/out.txt",
                   "couplet/train-55k/in.txt", "poetry-couplet/train/out.txt", "poetry-couplet/test/in.txt",
                   "tv4dialog/tv4dialog.tsv", "align-zh-en/tsinghua/zhen.gold", "align-zh-en/denero/train.align"):
        assert needed in paths, needed
    assert all(len(e.sha256) == 64 and e.size > 0 for e in entries)
    # the sizes the corpora's own READMEs state
    sizes = {e.path: e.size for e in entries}
    assert sizes["couplet/train/in.txt"] == 26_452_285 and sizes["cmn-eng/cmn.txt"] == 4_151_383
    assert corpora.CARD.read_text(encoding="utf-8").startswith("---\n")  # the dataset card has Hub metadata


def test_the_data_folder_matches_the_manifest():
    """Every corpus file the tests and the zoo read has the manifest's size and sha256 (CI: ../shared/data)."""
    entries = read_manifest()
    folder = data_dir(*sorted({e.corpus for e in entries}))
    corpora.verify(folder, entries, progress=False)


def test_check_names_missing_resized_and_altered_files(tmp_path):
    root = _corpora(tmp_path / "data")
    entries = _manifest(root, tmp_path / "m.json")
    assert check(root, entries, progress=False) == []
    (root / "couplet" / "README.md").unlink()
    (root / "couplet" / "test" / "in.txt").write_text("短", encoding="utf-8")
    original = (root / "couplet" / "train" / "out.txt").read_bytes()
    (root / "couplet" / "train" / "out.txt").write_bytes(original.replace("夏".encode(), "冬".encode(), 1))
    assert check(root, entries, progress=False) == [
        "missing: couplet/README.md",
        f"wrong size: couplet/test/in.txt has 3 bytes, expected {entries[1].size:,}",
        "wrong sha256: couplet/train/out.txt (the file differs from the manifest's)",
    ]
    with pytest.raises(CorpusError, match="3 of 7 files fail the check.*attention-lab data pull"):
        corpora.verify(root, entries, progress=False)
    with pytest.raises(CorpusError, match=r"corpora couplet poetry-couplet are not in .*data pull couplet poetry"):
        corpora.verify(tmp_path / "empty", entries, progress=False)


def test_data_folder_and_repo_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv(corpora.DATA_ENV, raising=False)
    monkeypatch.delenv(corpora.REPO_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_home() == tmp_path / "cache" / "attention-lab" / "data"
    monkeypatch.setenv(corpora.DATA_ENV, str(tmp_path / "env"))
    assert data_home() == tmp_path / "env"
    assert data_home(tmp_path / "flag") == tmp_path / "flag"
    assert corpora.data_repo() == corpora.DEFAULT_REPO
    monkeypatch.setenv(corpora.REPO_ENV, "me/mirror")
    assert corpora.data_repo() == "me/mirror" and corpora.data_repo("you/x") == "you/x"


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["data", "verify", "--data", str(tmp_path), "nosuch"]) == 2
    assert "error: unknown corpus nosuch; the manifest holds align-zh-en" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert main(["data", "verify", "--data", str(tmp_path), "--manifest", str(tmp_path / "bad.json")]) == 2
    assert "is not a corpus manifest" in capsys.readouterr().err
    assert main(["data", "verify", "--data", str(tmp_path / "none"), "--quiet", "cmn-eng"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Run `attention-lab data pull cmn-eng`" in err and "Traceback" not in err


ROUND_TRIP = """
import json, os, sys
from attention_core.cli import main
src, dst, manifest = sys.argv[1:4]
m = ["--manifest", manifest, "--quiet"]
codes = [main(["data", "push", "--data", src, "--repo", "lab/corpora", *m])]
codes.append(main(["data", "pull", "--data", dst, "--repo", "lab/corpora", *m]))
codes.append(main(["data", "verify", "--data", dst, *m]))
codes.append(main(["data", "pull", "--data", dst, "--repo", "lab/corpora", *m]))  # nothing left to fetch
codes.append(main(["data", "pull", "--data", dst + "-2", "--repo", "lab/nothere", *m]))
os.environ["ATTENTION_LAB_DATA_REPO"] = "lab/corpora"
codes.append(main(["data", "pull", "couplet", "--data", dst + "-3", *m]))
print(json.dumps(codes))
"""


def _hub_env(tmp_path: Path, endpoint: str) -> dict:
    return {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
            "HF_TOKEN": "secret", "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}


def test_push_pull_verify_round_trip_through_a_local_hub_server_then_training_starts(tmp_path):
    """``data push`` → ``data pull`` into an empty folder gives byte-identical corpora; ``train`` starts on them."""
    from hub_server import serve

    src, dst, manifest = _corpora(tmp_path / "src"), tmp_path / "dst", tmp_path / "manifest.json"
    entries = _manifest(src, manifest)
    (src / "couplet" / "notes.txt").write_text("not in the manifest", encoding="utf-8")  # never uploaded
    server, endpoint = serve(tmp_path / "repos", tokens=frozenset({"secret"}))
    try:
        result = subprocess.run([sys.executable, "-c", ROUND_TRIP, str(src), str(dst), str(manifest)],
                                env=_hub_env(tmp_path, endpoint), capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [0, 0, 0, 0, 2, 0]
    assert "7 of 7 files already verified" in result.stdout and "downloading 0 from lab/corpora" in result.stdout
    assert "error: cannot download from 'lab/nothere'" in result.stderr
    [(repo, _, paths)] = server.commits
    assert repo == "lab/corpora" and sorted(paths) == sorted([e.path for e in entries] + ["README.md", "manifest.json"])
    for e in entries:
        assert (dst / e.path).read_bytes() == (src / e.path).read_bytes(), e.path
    assert not (dst / "couplet" / "notes.txt").exists()
    assert (tmp_path / "repos" / "datasets" / "lab" / "corpora" / "README.md").read_bytes() == corpora.CARD.read_bytes()
    assert sorted(p.name for p in (tmp_path / "dst-3").iterdir() if not p.name.startswith(".")) == ["couplet"]

    out = tmp_path / "model"
    train = subprocess.run(
        [sys.executable, "-m", "attention_core.cli", "train", "--task", "couplet", "--data", str(dst), "--out",
         str(out), "--epochs", "1", "--hidden", "16", "--emb", "8", "--share-embeddings", "--quiet"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert train.returncode == 0, train.stderr[-2000:]
    assert json.loads(train.stdout.strip().splitlines()[-1])["event"] == "done"


def test_a_file_that_arrives_altered_is_deleted_and_named(tmp_path):
    from hub_server import serve

    src, manifest = _corpora(tmp_path / "src"), tmp_path / "manifest.json"
    _manifest(src, manifest)
    repo = tmp_path / "repos" / "datasets" / "lab" / "corpora"
    for path in src.rglob("*.txt"):
        (repo / path.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
        (repo / path.relative_to(src)).write_bytes(path.read_bytes())
    (repo / "couplet" / "README.md").write_text("# another card\n", encoding="utf-8")
    code = ("import sys; from attention_core.cli import main; "
            "sys.exit(main(['data', 'pull', '--data', sys.argv[1], '--repo', 'lab/corpora', '--manifest', sys.argv[2],"
            " '--quiet']))")
    server, endpoint = serve(tmp_path / "repos")
    try:
        result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dst"), str(manifest)],
                                env=_hub_env(tmp_path, endpoint), capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert result.returncode == 2
    assert "error: couplet/README.md from lab/corpora does not match the manifest's sha256; it was deleted" \
        in result.stderr
    assert not (tmp_path / "dst" / "couplet" / "README.md").exists()
    assert "Traceback" not in result.stderr


def test_push_refuses_a_folder_that_fails_the_check(tmp_path, capsys):
    src, manifest = _corpora(tmp_path / "src"), tmp_path / "manifest.json"
    _manifest(src, manifest)
    (src / "couplet" / "test" / "out.txt").write_text("坏", encoding="utf-8")
    assert main(["data", "push", "--data", str(src), "--repo", "lab/c", "--manifest", str(manifest), "--quiet"]) == 2
    assert "wrong size: couplet/test/out.txt" in capsys.readouterr().err  # refused before any request


def test_manifest_command_writes_what_verify_then_accepts(tmp_path, capsys):
    src, manifest = _corpora(tmp_path / "src"), tmp_path / "m.json"
    manifest.write_text(manifest_json([]), encoding="utf-8")
    assert main(["data", "manifest", "couplet", "--data", str(src), "--manifest", str(manifest)]) == 0
    assert [e.path for e in read_manifest(manifest)] == [
        "couplet/README.md", "couplet/test/in.txt", "couplet/test/out.txt", "couplet/train/in.txt",
        "couplet/train/out.txt"]
    assert main(["data", "verify", "--data", str(src), "--manifest", str(manifest), "--quiet"]) == 0
    assert "5 files verified" in capsys.readouterr().out


def test_hub_errors_tell_offline_from_unreachable_and_leave_local_errors_alone(monkeypatch):
    from huggingface_hub import constants
    from huggingface_hub.errors import LocalEntryNotFoundError

    from attention_core.data.hubio import HubError, hub_errors

    def not_cached(cause: Exception | None):
        raise LocalEntryNotFoundError("not in the local cache") from cause

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(HubError, match=r"^cannot reach the Hub to download from 'lab/x': refused$"):
        with hub_errors("download from", "lab/x"):
            not_cached(ConnectionError("refused"))  # how hf_hub_download reports a network failure
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(HubError, match=r"offline \(HF_HUB_OFFLINE is set\)"):
        with hub_errors("download from", "lab/x"):
            not_cached(None)
    with pytest.raises(PermissionError):  # a local disk error is not blamed on the network
        with hub_errors("download from", "lab/x"):
            raise PermissionError("read-only folder")


def test_runs_live_outside_the_checkout_unless_told_otherwise(tmp_path, monkeypatch):
    monkeypatch.delenv(corpora.RUNS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert corpora.runs_home() == tmp_path / "cache" / "attention-lab" / "runs"
    monkeypatch.setenv(corpora.RUNS_ENV, str(tmp_path / "elsewhere"))
    assert corpora.runs_home() == tmp_path / "elsewhere"
    assert corpora.runs_home(tmp_path / "given") == tmp_path / "given"


def test_train_without_out_trains_into_the_runs_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(corpora.RUNS_ENV, str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--task", "translation", "--data", str(tmp_path / "no-data"), "--score", "dot"]) == 2
    err = capsys.readouterr().err
    assert f"training into {tmp_path / 'runs' / 'translation' / 'luong-dot-global'}" in err
    assert "error:" in err and "Traceback" not in err
    assert not (tmp_path / "runs" / "translation" / "luong-dot-global" / "checkpoint.pt").exists()
