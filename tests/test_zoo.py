"""The zoo's per-model pipeline: train (two stages when the recipe says so), export, evaluate, skip when done."""

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
from corpus import data_dir
from interrupt import stop_at_step

from attention_core.data.subword import Subwords
from attention_core.data.tasks import TASKS, Splits, get_task, load_splits
from attention_core.decoding.folder import WEIGHTS, load_folder
from attention_core.hub import zoo
from attention_core.training.loop import CHECKPOINT, TrainConfig, TrainError, fit

ROOT = Path(__file__).resolve().parents[1]


def _tiny_translation(monkeypatch, continued: TrainConfig | None) -> Splits:
    small = dict(max_train=300, max_dev=20, batch_size=32)
    recipe = replace(zoo.RECIPES["translation"], model=dict(hidden_size=16, emb_size=8),
                     train=TrainConfig(epochs=1, **small), window=2, extra=[], continued=continued)
    monkeypatch.setitem(zoo.RECIPES, "translation", recipe)
    monkeypatch.setitem(zoo.DECODINGS, "translation", [("greedy", 1, None)])
    splits = load_splits("translation", data_dir())
    return Splits(splits.train, splits.dev, splits.test[:40], splits.info)


def test_a_two_stage_recipe_continues_the_first_stage_and_ships_the_result(tmp_path, monkeypatch):
    splits = _tiny_translation(monkeypatch, TrainConfig(epochs=3, lr=5e-4, max_train=300, max_dev=20, batch_size=32))
    runs, models, results = tmp_path / "runs", tmp_path / "models", tmp_path / "results"
    zoo.build_one("translation", "luong-general", splits, runs, models, results, str(data_dir()), progress=False)

    first = load_folder(runs / "translation" / "luong-general")
    shipped = load_folder(models / "translation" / "luong-general")
    assert len(first.meta["history"]) == 1
    continued_run = runs / "translation" / "luong-general-continued"
    history = [json.loads(line) for line in (continued_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in history] == [1, 2, 3] and history[0] == first.meta["history"][0]
    assert shipped.meta["history"] == history[: len(shipped.meta["history"])]  # the best epoch's model
    assert shipped.meta["continued_from"]["train"]["lr"] == 1e-3 and shipped.meta["train"]["lr"] == 5e-4
    assert (continued_run / "checkpoint.pt").is_file()
    card = (models / "translation" / "luong-general" / "README.md").read_text()
    assert "Two stages: after 1 epoch (learning rate 0.001)" in card and "learning rate 0.0005" in card
    report = json.loads((results / "eval" / "translation--luong-general--greedy.json").read_text())
    assert report["n"] == 40

    # a finished model is not trained again
    stamps = {p: p.stat().st_mtime_ns for p in runs.rglob("checkpoint.pt")}
    zoo.build_one("translation", "luong-general", splits, runs, models, results, str(data_dir()), progress=False)
    assert {p: p.stat().st_mtime_ns for p in runs.rglob("checkpoint.pt")} == stamps and len(stamps) == 2


def test_a_one_stage_recipe_ships_the_first_stage(tmp_path, monkeypatch):
    splits = _tiny_translation(monkeypatch, None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    zoo.build_one("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False)
    assert len(load_folder(tmp_path / "models" / "translation" / "none").meta["history"]) == 1
    assert not (tmp_path / "runs" / "translation" / "none-continued").exists()


def test_reports_of_other_weights_are_measured_again(tmp_path, monkeypatch):
    splits = _tiny_translation(monkeypatch, None)
    args = ("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
            str(data_dir()))
    zoo.build_one(*args, progress=False)
    path = tmp_path / "results" / "eval" / "translation--none--greedy.json"
    report = json.loads(path.read_text())
    report.update(weights_sha256="0" * 64, bleu=-1.0)  # as if an earlier model had been measured
    path.write_text(json.dumps(report))
    zoo.build_one(*args, progress=False)
    again = json.loads(path.read_text())
    assert again["bleu"] >= 0 and again["weights_sha256"] != "0" * 64
    assert again["decoding"]["loop_guard"] is True  # translation decodes with the loop guard

    del again["decoding"]["loop_guard"]  # a report from before the guard: decoded without it
    path.write_text(json.dumps({**again, "bleu": -1.0}))
    zoo.build_one(*args, progress=False)
    assert json.loads(path.read_text())["bleu"] >= 0


def test_the_cliche_table_is_measured_once_per_trained_weights(tmp_path, monkeypatch):
    small = dict(max_train=200, max_dev=10, batch_size=32)
    recipe = replace(zoo.RECIPES["couplet"], model=dict(hidden_size=16, emb_size=8),
                     train=TrainConfig(epochs=1, **small), window=2, extra=[])
    monkeypatch.setitem(zoo.RECIPES, "couplet", recipe)
    monkeypatch.setitem(zoo.DECODINGS, "couplet", [("greedy", 1, True)])
    full = load_splits("couplet", data_dir())
    splits = Splits(full.train[:2000], full.dev, full.test[:20], full.info)
    calls = []

    def measure(translator, pairs):
        calls.append(len(pairs))
        return zoo_calibrate(translator, pairs[:50], rounds=1, beam_size=1)

    zoo_calibrate = zoo.calibrate_overproduction
    monkeypatch.setattr(zoo, "calibrate_overproduction", measure)
    args = ("couplet", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results", str(data_dir()))
    zoo.build_one(*args, progress=False)
    saved = json.loads((tmp_path / "runs" / "couplet" / "none" / zoo.OVERPRODUCTION).read_text())
    shipped = load_folder(tmp_path / "models" / "couplet" / "none")
    assert len(calls) == 1 and shipped.meta["overproduction"] == saved["table"]

    zoo.build_one(*args, progress=False)  # a finished model: its table is read, not measured again
    assert len(calls) == 1
    assert load_folder(tmp_path / "models" / "couplet" / "none").meta["overproduction"] == saved["table"]

    path = tmp_path / "runs" / "couplet" / "none" / zoo.OVERPRODUCTION
    path.write_text(json.dumps({**saved, "weights_sha256": "0" * 64}))  # measured on other weights
    zoo.build_one(*args, progress=False)
    assert len(calls) == 2 and json.loads(path.read_text())["weights_sha256"] != "0" * 64


def test_a_model_card_names_the_corpora_and_licenses_its_model_trained_on():
    from attention_core.data.info import DataInfo
    from attention_core.hub.zoo import data_licenses

    def licenses(task, data):  # from the record, as a model folder holds it
        return data_licenses(task, DataInfo.read(data))

    whole = {"sources": [{"path": "../shared/data/couplet/train",
                          "sha256": "ca0503e9af48b997e771723930ff375ad31c2d6977ae03a0cf77297d7371b2b3"}],
             "extra": ["poetry-couplet"]}
    line = licenses("couplet", whole)
    assert "the whole training set, cleaned (699,109 pairs)" in line and "poetry-couplet" in line and "MIT" in line
    subset = {**whole, "sources": [{"path": "/data/couplet/train",
                                    "sha256": "01335f2b1fe3a8b429538a0a0c24815cd3b4e4e6aa6f9f6dd877ce5ea26c0105"}],
              "extra": []}
    assert "55,326-pair" in licenses("couplet", subset) and "poetry" not in licenses("couplet", subset)
    dialogue = licenses("translation", {"extra": ["cmn-eng-extra", "tv4dialog"]})
    assert dialogue.startswith("Tatoeba") and "TV4Dialog" in dialogue and "CC BY 2.0" in dialogue
    assert "tv4dialog" not in licenses("translation", {"extra": ["cmn-eng-extra"]})


def test_zoo_trains_only_the_named_models_in_zoo_order_and_a_wrong_name_is_a_clear_error(
        monkeypatch, tmp_path, capsys):
    from attention_core.cli import main

    built = []
    monkeypatch.setattr(zoo, "load_splits", lambda task, data, extra=(): task)
    monkeypatch.setattr(zoo, "build_one", lambda task, variant, *args, **kwargs: built.append(f"{task}/{variant}"))
    zoo.run_zoo("data", runs=str(tmp_path), only=["couplet/luong-location", "translation/none"])
    assert built == ["translation/none", "couplet/luong-location"]  # zoo order, not the order asked
    built.clear()
    zoo.run_zoo("data", runs=str(tmp_path))
    assert built == [f"{task}/{variant}" for task, variant in zoo.ZOO_ORDER] and len(set(built)) == 18
    assert main(["zoo", "--only", "couplet/lung-general", "--runs", str(tmp_path)]) == 2
    assert "no zoo model couplet/lung-general" in capsys.readouterr().err


def test_a_beam_report_decoded_with_another_coverage_penalty_is_stale_a_greedy_one_is_not(tmp_path):
    path = tmp_path / "report.json"
    for beam, coverage, expected, current in ((5, 0.0, 0.0, True), (5, 0.0, 0.01, False), (5, 0.01, 0.01, True),
                                              (1, 0.0, 0.01, True)):
        path.write_text(json.dumps({"decoding": {"beam_size": beam, "loop_guard": True, "coverage": coverage},
                                    "weights_sha256": "a"}))
        assert (zoo._current_report(path, "a", True, expected) is not None) == current, (beam, coverage, expected)
    path.write_text(json.dumps({"decoding": {"beam_size": 5, "loop_guard": True}, "weights_sha256": "a"}))
    assert zoo._current_report(path, "a", True, 0.0) is not None  # from before the penalty: decoded without it


def test_a_model_trained_on_one_machine_is_packed_and_finished_on_another(tmp_path, monkeypatch):
    """A GPU machine trains (``--stage train``), ``scripts/zoo_pack.py`` packs, a CPU one finishes (``finish``)."""
    splits = _tiny_translation(monkeypatch, TrainConfig(epochs=2, lr=5e-4, max_train=300, max_dev=20, batch_size=32))
    work = tmp_path / "gpu"
    zoo.build_one("translation", "luong-general", splits, work / "runs", work / "models", work / "results",
                  str(data_dir()), progress=False, stage="train")
    assert not (work / "models").exists() and not (work / "results").exists()  # trained only
    final = zoo.final_run(work / "runs", "translation", "luong-general")
    assert final.name == "luong-general-continued" and (final / "checkpoint.pt").is_file()

    (work / "logs").mkdir()
    (work / "logs" / "worker.log").write_text('{"event": "zoo-trained", "model": "translation/luong-general"}\n')
    still = work / "runs" / "translation" / "none"  # a model whose worker has not written its last event
    shutil.copytree(work / "runs" / "translation" / "luong-general", still)
    out = tmp_path / "out"
    out.mkdir()
    packed = subprocess.run([sys.executable, "scripts/zoo_pack.py", "--work", str(work), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True)
    assert packed.returncode == 0, packed.stderr
    assert sorted(p.name for p in out.iterdir()) == ["logs-1.tar.xz", "models-1-1.tar"]
    here = tmp_path / "cpu"
    assert _finish_unpack(here / "runs", out) == ["unpacked translation--luong-general.tar.xz"]
    assert not (here / "runs" / "translation" / "luong-general-continued" / "checkpoint.pt").exists()

    zoo.build_one("translation", "luong-general", splits, here / "runs", here / "models", here / "results",
                  str(data_dir()), progress=False, stage="finish")
    shipped, trained = load_folder(here / "models" / "translation" / "luong-general"), load_folder(final)
    for name, tensor in trained.model.state_dict().items():  # the trained weights, in float16
        assert (shipped.model.state_dict()[name] == tensor.half().float()).all(), name
    assert shipped.meta["history"] == trained.meta["history"] and shipped.meta["known_names"] == \
        trained.meta["known_names"]
    assert (here / "results" / "eval" / "translation--luong-general--greedy.json").is_file()

    with pytest.raises(TrainError, match="--recipe it was trained with"):  # finished as another recipe's model
        zoo.build_one("translation", "luong-general", splits, here / "runs", here / "models", here / "results",
                      str(data_dir()), progress=False, stage="finish", recipe="gpu")
    with pytest.raises(TrainError, match="holds no trained model"):  # a model nobody trained
        zoo.build_one("translation", "none", splits, here / "runs", here / "models", here / "results",
                      str(data_dir()), progress=False, stage="finish")

    calls = []
    for out in (tmp_path / "out2", tmp_path / "out3"):  # the last call takes the rest, as far as it got
        out.mkdir()
        final = subprocess.run([sys.executable, "scripts/zoo_pack.py", "--work", str(work), "--out", str(out),
                                "--final"], cwd=ROOT, capture_output=True, text=True)
        assert final.returncode == 0, final.stderr
        calls.append(json.loads(final.stdout.splitlines()[-1]))
    assert calls[0]["call"] == 2 and not {"translation/luong-general", "translation/none"} & set(calls[0]["left"])
    assert sorted(p.name for p in (tmp_path / "out2").iterdir()) == ["logs-2.tar.xz", "models-2-1.tar"]
    assert sorted(p.name for p in (tmp_path / "out3").iterdir()) == ["logs-3.tar.xz"]  # nothing twice
    assert calls[1]["bytes"] == 0 and calls[1]["left"] == calls[0]["left"]
    assert _finish_unpack(here / "runs", tmp_path / "out2") == ["unpacked translation--none.tar.xz"]
    assert (here / "runs" / "translation" / "none" / zoo.PARTIAL).is_file()
    with pytest.raises(TrainError, match="only partly"):  # first-stage weights of a two-stage recipe, unfinished
        zoo.build_one("translation", "none", splits, here / "runs", here / "models", here / "results",
                      str(data_dir()), progress=False, stage="finish")
    resent = tmp_path / "resent"
    resent.mkdir()
    subprocess.run([sys.executable, "scripts/zoo_pack.py", "--work", str(work), "--out", str(resent), "--resend", "1"],
                   cwd=ROOT, check=True, capture_output=True)
    assert sorted(p.name for p in resent.iterdir()) == ["logs-1.tar.xz", "models-1-1.tar"]
    only = subprocess.run([sys.executable, "scripts/zoo_pack.py", "--work", str(work), "--out", str(resent), "--final",
                           "--only", "translation/luong-general", "translation/none"],
                          cwd=ROOT, capture_output=True, text=True)  # a call that trained two models: none is left
    assert only.returncode == 0 and json.loads(only.stdout.splitlines()[-1])["left"] == [], only.stderr


def _finish_unpack(runs: Path, *folders: Path) -> list[str]:
    """``scripts/zoo_finish.sh --unpack-only`` of the calls' folders into ``runs``: what it said."""
    done = subprocess.run(["bash", "scripts/zoo_finish.sh", "--unpack-only", *map(str, folders)], cwd=ROOT,
                          env={**os.environ, "ZOO_RUNS": str(runs)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _call_folder(folder: Path, runs: dict[str, dict[str, str]]) -> Path:
    """A call's folder as ``zoo_pack.py`` writes it: each ``task/run`` folder's files in ``<task>--<variant>.tar.xz``,
    gathered in ``models-1-1.tar``."""
    folder.mkdir(parents=True)
    archives = []
    for run, files in runs.items():
        stage = folder / "stage" / run
        stage.mkdir(parents=True)
        for name, text in files.items():
            (stage / name).write_text(text)
        archive = folder / (run.split("/")[0] + "--" + run.split("/")[1].removesuffix("-continued") + ".tar.xz")
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(stage, arcname=run)
        archives.append(archive)
    with tarfile.open(folder / "models-1-1.tar", "w") as tar:
        for archive in archives:
            tar.add(archive, arcname=archive.name)
            archive.unlink()
    shutil.rmtree(folder / "stage")
    return folder


def test_a_finished_model_brought_back_is_never_replaced_by_a_partial_one(tmp_path):
    """Whatever the order of the calls' folders, the finished run stays and an older partial first stage goes."""
    partial = {"model.safetensors": "early", "PARTIAL.json": "{}"}
    for order in ("old first", "new first"):
        old = _call_folder(tmp_path / order / "old", {"translation/none": partial, "translation/luong-dot": partial})
        new = _call_folder(tmp_path / order / "new", {"translation/none-continued": {"model.safetensors": "done"},
                                                      "translation/luong-dot-continued": partial})
        runs = tmp_path / order / "runs"
        said = _finish_unpack(runs, *((old, new) if order == "old first" else (new, old)))
        assert (runs / "translation" / "none-continued" / "model.safetensors").read_text() == "done"
        assert not (runs / "translation" / "none").exists(), said  # finish would refuse the model while it stayed
        assert (runs / "translation" / "luong-dot" / "PARTIAL.json").is_file()  # partial both times: both kept
        assert (runs / "translation" / "luong-dot-continued" / "PARTIAL.json").is_file()
    assert any("kept" in line and "translation/none" in line for line in said)  # the old partial, after the new
    local = tmp_path / "local"  # a run of this machine is replaced only by a finished one
    (local / "translation" / "bahdanau").mkdir(parents=True)
    (local / "translation" / "bahdanau" / "model.safetensors").write_text("trained here")
    later = _call_folder(tmp_path / "later", {"translation/bahdanau": partial})
    assert _finish_unpack(local, later)[0].startswith("kept")
    assert (local / "translation" / "bahdanau" / "model.safetensors").read_text() == "trained here"


def test_a_calls_models_are_gathered_into_few_files(tmp_path):
    """At most 8 files come back a call, 16 MiB each: the models' archives share files, and none comes out over."""
    spec = importlib.util.spec_from_file_location("zoo_pack", ROOT / "scripts" / "zoo_pack.py")
    pack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pack)
    mib = 2**20
    files: list[int] = []
    for size in (6 * mib, 6 * mib, 9 * mib, 6 * mib, 3 * mib):
        where = pack.place(size, files, max_files=7)
        files.append(0) if where == len(files) else None
        files[where] += pack.in_tar(size)
    assert files == [15 * mib + 3 * 512, 15 * mib + 2 * 512]  # 6 + 6 + 3 and 9 + 6: the first file with room
    assert pack.place(17 * mib, [], max_files=7) is None  # over a file's limit: never
    assert pack.place(2 * mib, [pack.in_tar(15 * mib)], max_files=1) is None
    # two archives whose bytes alone fit (100 under 16 MiB) make a tar over it: they go to two files
    first, second = 8 * mib, 8 * mib - 100
    assert pack.place(second, [pack.in_tar(first)], max_files=7) == 1
    # whatever place() lets share a file makes a tar of 16 MiB or less
    a, b = tmp_path / "a.tar.xz", tmp_path / "b.tar.xz"
    a.write_bytes(b"a" * (8 * mib - 20_000))
    b.write_bytes(b"b" * (8 * mib - 20_000))
    assert pack.place(b.stat().st_size, [pack.in_tar(a.stat().st_size)], max_files=1) == 0
    with tarfile.open(tmp_path / "models-1-1.tar", "w") as tar:
        tar.add(a, arcname=a.name)
        tar.add(b, arcname=b.name)
    assert (tmp_path / "models-1-1.tar").stat().st_size <= pack.MAX_FILE


def test_a_second_stage_takes_the_first_stages_known_names_instead_of_finding_them_again(tmp_path, monkeypatch):
    from attention_core.training import loop as training

    splits = _tiny_translation(monkeypatch, TrainConfig(epochs=2, lr=5e-4, max_train=300, max_dev=20, batch_size=32))
    zoo.build_one("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False, stage="train")
    first = load_folder(tmp_path / "runs" / "translation" / "none")

    def found_again(sources, **_):
        raise AssertionError("the second stage looked for the names again")

    monkeypatch.setattr(zoo, "cached_known_names", found_again)
    shutil.rmtree(tmp_path / "runs" / "translation" / "none-continued")
    zoo.build_one("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False, stage="train")
    assert load_folder(tmp_path / "runs" / "translation" / "none-continued").meta["known_names"] == \
        first.meta["known_names"]
    other = replace(zoo.RECIPES["translation"].continued, max_train=200)  # other pairs: found again
    with pytest.raises(AssertionError, match="looked for the names again"):
        training.fit(TASKS["translation"], splits, tmp_path / "other", zoo.model_options("translation", "none"), other,
                     device="cpu", progress=False, init=first, find_names=found_again)


def test_another_variant_on_the_same_pairs_reads_the_names_from_the_cache(tmp_path, monkeypatch, capsys):
    from attention_core.editing import namecache

    splits = _tiny_translation(monkeypatch, None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    zoo.build_one("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False, stage="train")
    first = load_folder(tmp_path / "runs" / "translation" / "none")
    kept = list((namecache.cache_home() / namecache.FOLDER).glob("*.json"))
    assert [json.loads(p.read_text(encoding="utf-8")) for p in kept] == [first.meta["known_names"]]

    def found_again(sources, min_count):
        raise AssertionError("a variant on the same pairs looked for the names again")

    monkeypatch.setattr(namecache, "known_names", found_again)
    capsys.readouterr()
    zoo.build_one("translation", "luong-dot", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False, stage="train")
    said = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"known-names"' in line]
    assert [e["cached"] for e in said] == [True]  # the run's log says it read them
    assert load_folder(tmp_path / "runs" / "translation" / "luong-dot").meta["known_names"] == \
        first.meta["known_names"]


def test_the_gpu_recipes_are_the_cpu_ones_at_larger_batches_and_learning_rates():
    for task, cpu in zoo.RECIPES.items():
        gpu = zoo.RECIPE_SETS["gpu"][task]
        assert gpu.model == cpu.model and gpu.extra == cpu.extra and gpu.transformer == cpu.transformer
        for a, b in ((cpu.train, gpu.train), (cpu.continued, gpu.continued)):
            if a is None:
                assert b is None
                continue
            assert b.batch_size == a.batch_size * zoo.GPU_BATCH_SCALE and b.lr == a.lr * zoo.GPU_LR_SCALE
            assert replace(b, batch_size=a.batch_size, lr=a.lr) == a  # nothing else differs
    with pytest.raises(ValueError, match="recipe 'tpu'"):
        zoo.run_zoo("data", recipe="tpu")


def test_a_trained_only_model_records_its_recipe_in_its_command(tmp_path, monkeypatch):
    splits = _tiny_translation(monkeypatch, None)
    monkeypatch.setitem(zoo.RECIPE_SETS, "gpu", {"translation": zoo.on_gpu(zoo.RECIPES["translation"])})
    zoo.build_one("translation", "none", splits, tmp_path / "runs", tmp_path / "models", tmp_path / "results",
                  str(data_dir()), progress=False, stage="train", recipe="gpu")
    trained = load_folder(tmp_path / "runs" / "translation" / "none")
    assert trained.meta["command"].endswith("--only translation/none --recipe gpu")
    assert trained.meta["train"]["batch_size"] == 32 * zoo.GPU_BATCH_SCALE and (tmp_path / "runs" / "translation" /
                                                                              "none" / WEIGHTS).is_file()


def _zoo_cpu(runs: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``scripts/zoo_cpu.sh ARGS`` on the runs folder ``runs``."""
    return subprocess.run(["bash", "scripts/zoo_cpu.sh", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "ZOO_RUNS": str(runs), **env})


def test_the_cpu_zoo_script_reports_each_run_and_refuses_what_it_cannot_start(tmp_path, monkeypatch):
    import torch

    runs = tmp_path / "zoo"
    run = runs / "translation" / "luong-general"
    pairs = [(f"我{i % 7}你{i % 3}", f"i {i % 5} you {i % 3}") for i in range(160)]
    cfg = TrainConfig(epochs=2, batch_size=16, max_dev=5, checkpoint_minutes=1e-9)  # a checkpoint after every batch
    stop_at_step(monkeypatch, 10 + 4)  # the fourth batch of epoch 2 (epoch 1 has 10 batches)
    with pytest.raises(KeyboardInterrupt):
        fit(get_task("translation"), Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"}), run,
            dict(hidden_size=8, emb_size=8), cfg, progress=False)
    state = json.loads(torch.load(run / CHECKPOINT, weights_only=True)["state"])
    bleu = state["history"][0]["dev_bleu"]
    (runs / "cpu-1.log").write_text('{"event": "zoo"}\n 10%|#| 5/50 [00:10<01:30, pairs_s=250]\r'
                                    ' 12%|#| 6/50 [00:12<01:28, pairs_s=262]')
    (runs / "models" / "translation" / "none").mkdir(parents=True)
    pids = runs / "cpu-workers.pid"
    pids.write_text(f"{os.getpid()}\n")  # a live process, but no zoo worker: its pid was handed on

    status = _zoo_cpu(runs, "status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    best = str(round(state["best_bleu"], 2))
    assert lines[0].split() == ["translation/luong-general", "epochs", "done", "1", "last", "dev", "BLEU", str(bleu),
                                "best", best, "training,", "48", "pairs", "into", "epoch", "2", "at", "its", "last",
                                "checkpoint"]
    assert f"{runs}/cpu-1.log: pairs_s=262" in lines  # the bar's latest speed, not its first
    assert "exported: translation/none" in status.stdout and lines[-1] == "workers alive: 0"

    unknown = _zoo_cpu(runs, "start", ZOO_ONLY="translation/luong-genral", ATTENTION_LAB_DATA=str(tmp_path))
    assert unknown.returncode == 2 and "ZOO_ONLY: no zoo model translation/luong-genral;" in unknown.stderr
    no_data = _zoo_cpu(runs, "start", ATTENTION_LAB_DATA=str(tmp_path / "missing"))
    assert no_data.returncode == 2 and "no data folder at" in no_data.stdout
    assert pids.read_text() == f"{os.getpid()}\n"  # nothing was started

    usage = _zoo_cpu(runs, "stop-everything")
    assert usage.returncode == 2 and usage.stdout.startswith("Train the model zoo on this machine's CPU cores")
    assert not any(line.startswith("#") for line in usage.stdout.splitlines()) and "set -u" not in usage.stdout


def test_the_cpu_zoo_script_starts_a_worker_a_core_whatever_omp_num_threads_says(tmp_path):
    """nproc counts OMP_NUM_THREADS instead of the cores, and the script sets it to one for its workers."""
    fake = tmp_path / "bin" / "attention-lab"  # a worker that waits: its command line is a real worker's
    fake.parent.mkdir()
    fake.write_text("#!/usr/bin/env bash\nsleep 60 & trap 'kill $!; exit' TERM; wait\n", encoding="utf-8")
    fake.chmod(0o755)
    runs = tmp_path / "zoo"
    env = dict(ZOO_STAGGER="0", ZOO_WORKERS="", OMP_NUM_THREADS="1", ATTENTION_LAB_DATA=str(tmp_path),
               PATH=f"{fake.parent}{os.pathsep}{os.environ['PATH']}")  # ZOO_WORKERS empty: the default
    cores = len(os.sched_getaffinity(0))
    try:
        started = _zoo_cpu(runs, "start", **env)
        assert started.returncode == 0, started.stderr
        assert [line.split(":")[0] for line in started.stdout.splitlines()] == [f"worker {w}"
                                                                               for w in range(1, cores + 1)]
        again = _zoo_cpu(runs, "start", **env)
        assert again.stdout.startswith(f"{cores} worker(s) already running, left alone")
        assert "worker 1:" not in again.stdout
        assert len((runs / "cpu-workers.pid").read_text().split()) == cores
    finally:  # stop what was started; a start that failed before writing the pid file started nothing
        pids = runs / "cpu-workers.pid"
        for pid in pids.read_text().split() if pids.is_file() else []:
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass


def test_zoo_models_checks_names_and_keeps_the_training_order():
    assert zoo.zoo_models() == [f"{task}/{variant}" for task, variant in zoo.ZOO_ORDER]
    translation = zoo.zoo_models(task="translation")
    assert translation[:2] == ["translation/luong-general", "translation/none"]
    assert len(translation) == len(zoo.VARIANTS)
    assert zoo.zoo_models(["couplet/none", "translation/none"]) == ["couplet/none", "translation/none"]
    with pytest.raises(ValueError, match="no zoo model couplet/lung-general, x; the zoo has translation/luong-general"):
        zoo.zoo_models(["couplet/none", "couplet/lung-general", "x"])


def test_the_zoo_scripts_keep_their_runs_outside_the_checkout_by_default(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ZOO_RUNS", "ATTENTION_LAB_RUNS")}
    for name, runs_env in (("XDG_CACHE_HOME", tmp_path / "cache"), ("ATTENTION_LAB_RUNS", tmp_path / "runs")):
        status = subprocess.run(["bash", "scripts/zoo_cpu.sh", "status"], cwd=ROOT, capture_output=True, text=True,
                                env={**env, name: str(runs_env)})
        where = runs_env / "attention-lab" / "runs" / "zoo" if name == "XDG_CACHE_HOME" else runs_env / "zoo"
        assert status.returncode == 0 and f"no zoo in {where}:" in status.stdout, status.stdout + status.stderr


def test_the_card_says_a_first_stage_decayed_its_learning_rate():
    from attention_core.hub.zoo import _stages_line

    meta = {"continued_from": {"epochs": 7, "train": {"lr": 0.001, "decay_epochs": 2, "final_lr_ratio": 0.1}},
            "train": {"lr": 0.00025}, "history": [{}] * 9}
    assert _stages_line(meta).startswith("Two stages: after 7 epochs (learning rate 0.001, falling linearly over the "
                                         "last 2 to 0.0001), the model was continued with a fresh optimiser at "
                                         "learning rate 0.00025")


def test_the_other_variants_are_encoded_with_the_shipped_default_models_pieces(tmp_path, monkeypatch):
    splits = _tiny_translation(monkeypatch, None)
    tiny = zoo.RECIPES["translation"]
    monkeypatch.setitem(zoo.RECIPES, "translation", replace(tiny, train=replace(tiny.train, subword_vocab=100)))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs, models, results = tmp_path / "runs", tmp_path / "models", tmp_path / "results"
    zoo.build_one("translation", "luong-general", splits, runs, models, results, str(data_dir()), progress=False)
    default = models / "translation" / "luong-general"
    # the default was shipped from another machine: no encoded corpus here, and pieces no run here learned
    shutil.rmtree(runs / zoo.ENCODED)
    task = get_task("translation")
    theirs = Subwords.train((task.tokenize_tgt(t) for _, t in splits.train[:300]), 150)
    theirs.save(default / "subwords.json")
    assert zoo.shipped_pieces(models, "translation", "cpu").tokenizer.to_str() == theirs.tokenizer.to_str()
    assert zoo.shipped_pieces(models, "translation", "gpu") is None  # another recipe's model lends none
    zoo.build_one("translation", "none", splits, runs, models, results, str(data_dir()), progress=False,
                  stage="train")
    none = load_folder(runs / "translation" / "none")
    assert none.task.subwords.tokenizer.to_str() == theirs.tokenizer.to_str()
    assert (runs / "translation" / "none" / "subwords.json").read_text() == (default / "subwords.json").read_text()
    # a default trained at another recipe lends nothing: the corpus already saved is read as it is
    config = json.loads((default / "config.json").read_text())
    config["meta"]["train"]["lr"] = 0.123
    (default / "config.json").write_text(json.dumps(config))
    assert zoo.shipped_pieces(models, "translation", "cpu") is None


def test_the_card_of_the_baseline_names_no_score():
    from attention_core.hub.card import architecture
    from attention_core.model.config import ModelConfig

    none = architecture(ModelConfig(src_vocab_size=10, tgt_vocab_size=10, decoder="none"))
    assert "no attention" in none and "score" not in none
    dot = architecture(ModelConfig(src_vocab_size=10, tgt_vocab_size=10, decoder="luong", score="dot"))
    assert "score `dot`, attention `global`" in dot
