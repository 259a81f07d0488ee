"""The training loop: a run trains, checkpoints, resumes exactly, continues a model, refuses what would lose work."""

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from corpus import data_dir
from interrupt import stop_at_step

from attention_core.analysis.metrics import couplet_metrics
from attention_core.data.tasks import Splits, get_task, load_splits, split_couplet
from attention_core.data.text import repetition_pattern, tone_class
from attention_core.data.vocab import Vocab, is_punctuation
from attention_core.decoding.folder import load_folder
from attention_core.decoding.translator import Translator
from attention_core.editing.namecache import cached_known_names
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import TrainConfig, TrainError, fit

ROOT = Path(__file__).resolve().parents[1]


def test_real_pairs_train_with_falling_loss(tmp_path):
    splits = load_splits("translation", data_dir())
    cfg = TrainConfig(epochs=2, max_train=2000, max_dev=200, batch_size=64)
    started = time.perf_counter()
    result = fit(
        get_task("translation"),
        splits,
        tmp_path / "m",
        dict(decoder="luong", score="general"),
        cfg,
        progress=False,
    )
    seconds = time.perf_counter() - started
    first, second = result["history"]
    assert first["train_loss"] < 7.0  # well below ln(V) ≈ 7.6 of an untrained model
    assert second["train_loss"] < first["train_loss"] - 0.3
    assert (tmp_path / "m" / "model.safetensors").is_file()
    translator = load_folder(tmp_path / "m")
    assert translator.meta["data"]["sizes"] == {"train": 27055, "dev": 1000, "test": 1000}
    print(f"2 epochs on 2,000 real pairs: {seconds:.1f} s")


def test_refuses_to_overwrite_a_run(tmp_path):
    splits = load_splits("translation", data_dir())
    cfg = TrainConfig(epochs=1, max_train=200, max_dev=20)
    opts = dict(hidden_size=16, emb_size=8)
    fit(get_task("translation"), splits, tmp_path, opts, cfg, progress=False)
    with pytest.raises(TrainError, match="--resume"):
        fit(get_task("translation"), splits, tmp_path, opts, cfg, progress=False)


def _cli_train(out: Path, *options: str) -> list[str]:
    """``-m attention_core.cli train`` on the translation corpus into ``out``, with ``options``."""
    return ["-m", "attention_core.cli", "train", "--task", "translation", "--data", str(data_dir()),
            "--out", str(out), "--quiet", *options]


def _train_cmd(out: Path, *extra: str) -> list[str]:
    return [sys.executable, *_cli_train(out, "--max-train", "1500", "--max-dev", "50", "--epochs", "3",
                                        "--hidden", "64", "--emb", "32", "--dropout", "0.3",
                                        "--teacher-forcing", "0.8", *extra)]


def _checkpoint(out: Path) -> dict:
    return torch.load(out / "checkpoint.pt", weights_only=True)


def test_kill_and_resume_reaches_the_same_state(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    straight = tmp_path / "straight"
    subprocess.run(_train_cmd(straight), env=env, check=True, capture_output=True, timeout=300)

    killed = tmp_path / "killed"
    proc = subprocess.Popen(_train_cmd(killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and not (killed / "metrics.jsonl").exists():
        time.sleep(0.02)
    proc.kill()  # during epoch 2
    proc.wait()
    assert len(json.loads(_checkpoint(killed)["state"])["history"]) == 1, "killed too late to test resume"
    resumed = subprocess.run(
        _train_cmd(killed, "--resume"), env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert '"resumed_at_epoch": 1' in resumed.stdout

    a, b = _checkpoint(straight), _checkpoint(killed)
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"{name} differs after resume"
    strip = lambda h: [{k: v for k, v in r.items() if k not in ("seconds", "pairs_per_s")} for r in h]  # noqa: E731
    assert strip(json.loads(a["state"])["history"]) == strip(json.loads(b["state"])["history"])


def test_torchrun_two_cpu_processes(tmp_path):
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           *_cli_train(out, "--max-train", "1024", "--max-dev", "30", "--epochs", "2", "--hidden", "32",
                       "--emb", "16")]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    start = next(e for e in events if e.get("event") == "start")
    assert start["processes"] == 2
    assert [e["event"] for e in events if e.get("event") == "done"] == ["done"]  # one summary, from rank 0
    epochs = [e for e in events if "epoch" in e and "train_loss" in e]
    assert len(epochs) == 2 and epochs[1]["train_loss"] < epochs[0]["train_loss"]
    assert load_folder(out).model.cfg.hidden_size == 32


def test_couplet_constraints_hold_on_every_test_input():
    splits = split_couplet(data_dir())
    task = get_task("couplet")
    vocab = Vocab.build((task.tokenize_src(s) for pair in splits.train for s in pair), min_freq=3)
    cfg = ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), hidden_size=32, emb_size=16)
    translator = Translator(build_model(cfg).eval(), vocab, vocab, task)  # untrained: the hardest case
    sources = [s for s, _ in splits.test]
    for beam, subset in ((1, sources), (3, sources[:300])):
        outputs = translator.translate(subset, beam_size=beam, batch_size=128)
        raw = [task.tokenize_src(s) for s in subset]
        metrics = couplet_metrics(raw, [out.tokens for out in outputs])
        assert metrics["length_match"] == metrics["punctuation_aligned"] == metrics["no_unk"] == 1.0
        assert metrics["repetition_mirrored"] == metrics["no_extra_repetition"] == metrics["no_reuse"] == 1.0
        for src, out in zip(raw, outputs):  # the tone rule yields only to a mirrored repetition at the end
            last = max(i for i, ch in enumerate(src) if not is_punctuation(ch))
            if tone_class(src[last]) == "仄" and repetition_pattern(src)[last] == last:  # 仄起平收
                assert tone_class(out.tokens[last]) == "平", (src, out.tokens)


def test_curriculum_trains_on_everything_then_on_own_pairs_plus_a_fresh_extra_draw(tmp_path):
    own = [("天高云淡", "地阔山青"), ("春风送暖", "秋雨迎凉")] * 20  # 40 pairs of the task's own corpus
    extra = [("白日依山尽", "黄河入海流"), ("明月松间照", "清泉石上流")] * 40  # 80 extra pairs
    splits = Splits(own + extra, own[:4], own[:4], {"task": "couplet"}, main_train_size=len(own))
    cfg = TrainConfig(epochs=3, batch_size=16, full_data_epochs=1, extra_ratio=0.5, min_freq=1)
    opts = dict(hidden_size=16, emb_size=8, share_embeddings=True)
    result = fit(get_task("couplet"), splits, tmp_path / "c", opts, cfg, progress=False)
    assert [r["pairs"] for r in result["history"]] == [120, 60, 60]  # all; then 40 own + 20 drawn
    vocab = load_folder(tmp_path / "c").tgt_vocab
    assert vocab.counts[vocab.stoi["流"]] == 80 and "黄" in vocab  # the vocabulary covers the extra data
    with pytest.raises(ValueError, match="extra_ratio"):
        TrainConfig(extra_ratio=-1).validate()


def test_main_repeat_up_samples_the_own_pairs_in_every_epoch(tmp_path):
    own = [("天高云淡", "地阔山青"), ("春风送暖", "秋雨迎凉")] * 20  # 40 pairs of the task's own corpus
    extra = [("白日依山尽", "黄河入海流"), ("明月松间照", "清泉石上流")] * 40  # 80 extra pairs
    splits = Splits(own + extra, own[:4], own[:4], {"task": "couplet"}, main_train_size=len(own))
    cfg = TrainConfig(epochs=2, batch_size=16, main_repeat=3, full_data_epochs=1, extra_ratio=0.5, min_freq=1)
    opts = dict(hidden_size=16, emb_size=8, share_embeddings=True)
    result = fit(get_task("couplet"), splits, tmp_path / "c", opts, cfg, progress=False)
    assert [r["pairs"] for r in result["history"]] == [200, 140]  # 3 x 40 own + all 80; then + 20 drawn
    vocab = load_folder(tmp_path / "c").tgt_vocab
    assert vocab.counts[vocab.stoi["凉"]] == 20  # the vocabulary counts each pair once
    with pytest.raises(ValueError, match="main_repeat"):
        TrainConfig(main_repeat=0).validate()


def _small_run(out: Path, epochs: int, **cfg) -> tuple[Splits, dict]:
    splits = load_splits("translation", data_dir())
    train_cfg = TrainConfig(epochs=epochs, max_dev=30, batch_size=32, **{"max_train": 600, **cfg})
    return splits, fit(get_task("translation"), splits, out, dict(hidden_size=32, emb_size=16), train_cfg,
                       progress=False)


def test_continuing_a_model_keeps_its_weights_vocabularies_and_history(tmp_path):
    splits, first = _small_run(tmp_path / "first", 1, max_train=300)
    init = load_folder(tmp_path / "first")
    more = TrainConfig(epochs=3, max_train=1200, max_dev=30, batch_size=32, lr=5e-4)
    result = fit(get_task("translation"), splits, tmp_path / "more", {}, more, progress=False, init=init)

    assert [r["epoch"] for r in result["history"]] == [1, 2, 3]
    assert result["history"][0] == first["history"][0]
    continued = load_folder(tmp_path / "more")
    # 1,200 pairs would build a larger vocabulary; the continued model keeps the one it was trained with
    assert continued.src_vocab.itos == init.src_vocab.itos and continued.tgt_vocab.itos == init.tgt_vocab.itos
    assert continued.meta["continued_from"]["epochs"] == 1
    assert continued.meta["continued_from"]["train"]["max_train"] == 300
    assert continued.meta["train"]["max_train"] == 1200 and continued.meta["train"]["lr"] == 5e-4


def test_a_continued_run_that_never_improves_keeps_the_model_it_started_from(tmp_path):
    splits, _ = _small_run(tmp_path / "first", 1)
    init = load_folder(tmp_path / "first")
    # a learning rate of ~0 cannot beat the model's own dev score, measured before the first epoch
    result = fit(get_task("translation"), splits, tmp_path / "more", {},
                 TrainConfig(epochs=2, max_train=600, max_dev=30, lr=1e-7, min_lr=1e-12), progress=False, init=init)
    assert not result["history"][1]["improved"]
    assert result["history"][1]["lr"] == 1e-7  # the decay starts afresh: the first continued epoch is its best
    kept = load_folder(tmp_path / "more")  # written before the first epoch, from the model that trains
    for name, tensor in init.model.state_dict().items():
        assert torch.equal(tensor, kept.model.state_dict()[name]), name
    assert len(kept.meta["history"]) == 1
    assert kept.meta["continued_from"]["dev_bleu"] == kept.meta["best_dev_bleu"]
    with pytest.raises(TrainError, match="same --init"):  # resuming it needs the model it continues
        fit(get_task("translation"), splits, tmp_path / "more", {}, TrainConfig(epochs=2, max_train=600, max_dev=30),
            resume=True, progress=False)


def test_a_continued_subword_model_keeps_its_subwords(tmp_path):
    splits, _ = _small_run(tmp_path / "first", 1, subword_vocab=60)
    init = load_folder(tmp_path / "first")
    fit(get_task("translation"), splits, tmp_path / "more", {}, TrainConfig(epochs=2, max_train=600, max_dev=30),
        progress=False, init=init)
    continued = load_folder(tmp_path / "more")
    assert continued.task.subwords is not None and continued.meta["train"]["subword_vocab"] == 60
    assert continued.task.subwords.encode(["hello", "there"]) == init.task.subwords.encode(["hello", "there"])


def test_continuing_refuses_another_task_architecture_or_too_few_epochs(tmp_path):
    splits, _ = _small_run(tmp_path / "first", 1)
    init = load_folder(tmp_path / "first")
    task, cfg = get_task("translation"), TrainConfig(epochs=2, max_train=600, max_dev=30)
    with pytest.raises(TrainError, match="couplet"):
        fit(get_task("couplet"), splits, tmp_path / "a", {}, cfg, progress=False, init=init)
    with pytest.raises(TrainError, match="hidden_size=64"):
        fit(task, splits, tmp_path / "b", dict(hidden_size=64, emb_size=16), cfg, progress=False, init=init)
    with pytest.raises(TrainError, match="already trained 1 epochs"):
        fit(task, splits, tmp_path / "c", {}, TrainConfig(epochs=1), progress=False, init=init)
    assert not any((tmp_path / name).exists() for name in "abc")
    fit(task, splits, tmp_path / "d", dict(hidden_size=32), cfg, progress=False, init=init)  # repeating is fine


def test_cli_continues_a_model_on_its_own_split(tmp_path):
    first = tmp_path / "first"
    ok = subprocess.run([sys.executable, *_cli_train(first, "--max-train", "300", "--max-dev", "20", "--epochs", "1",
                                                     "--hidden", "16", "--emb", "8", "--split-seed", "7")],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    more = tmp_path / "more"
    run = subprocess.run([sys.executable, *_cli_train(more, "--init", str(first), "--max-train", "300",
                                                      "--max-dev", "20", "--epochs", "2")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    meta = load_folder(more).meta
    assert meta["data"]["seed"] == 7 and meta["continued_from"]["epochs"] == 1
    for options, message in ((["--init", str(tmp_path / "nowhere")], "nowhere"),
                             (["--init", str(first), "--hidden", "64", "--epochs", "2"], "hidden_size=64"),
                             (["--init", str(first), "--hidden=256", "--epochs", "2"], "hidden_size=256"),  # default
                             (["--init", str(first), "--rnn", "lstm", "--emb", "256"], "emb_size=256"),
                             (["--init", str(first), "--task", "couplet", "--epochs", "2"], "--task translation")):
        bad = subprocess.run([sys.executable, *_cli_train(tmp_path / "x", *options)],
                             capture_output=True, text=True, timeout=300)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and message in bad.stderr, bad.stderr


def test_continuing_on_a_corpus_that_changed_needs_it_named(tmp_path):
    """``--init`` without ``--data`` reuses the model's split: if the data folder's corpus changed since (the couplet
    corpus grew 13-fold), the continuation is refused (its dev set would be drawn anew) until ``--data`` names it."""
    same, changed = tmp_path / "same", tmp_path / "changed"
    lines = (data_dir() / "cmn-eng" / "cmn.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    for folder, kept in ((same, lines), (changed, lines[:-50])):
        (folder / "cmn-eng").mkdir(parents=True)
        (folder / "cmn-eng" / "cmn.txt").write_text("".join(kept), encoding="utf-8")
    first = tmp_path / "first"
    tiny = ["--max-train", "200", "--max-dev", "10", "--hidden", "16", "--emb", "8", "--quiet"]
    train = [sys.executable, "-m", "attention_core.cli", "train", "--task", "translation", *tiny]
    done = subprocess.run([*train, "--out", str(first), "--epochs", "1", "--data", str(same)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    def more(out: str, data: Path, *named: str) -> subprocess.CompletedProcess:
        return subprocess.run([*train, "--out", str(tmp_path / out), "--epochs", "2", "--init", str(first), *named],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "ATTENTION_LAB_DATA": str(data)})

    refused = more("refused", changed)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"trained on another cmn-eng/cmn.txt than the one in {changed}" in refused.stderr
    assert f"--data {changed}" in refused.stderr and not (tmp_path / "refused").exists()
    assert more("named", changed, "--data", str(changed)).returncode == 0
    assert more("unchanged", same).returncode == 0  # its own corpus, wherever the data folder is


def test_a_location_model_gets_a_row_per_trainable_source_position_and_keeps_it_on_reload(tmp_path):
    words = "一二三四五六七八九十"
    pairs = [(words[i:i + n], " ".join(str(k) for k in range(i, i + n))) for i in range(6) for n in range(1, 5)]
    splits = Splits(pairs, pairs[:4], pairs[:4], {"task": "translation"})
    fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=16, emb_size=8, score="location"),
        TrainConfig(epochs=1, batch_size=8, max_len=7, min_freq=1), progress=False)
    model = load_folder(tmp_path / "m").model
    assert model.cfg.max_source_len == 7
    assert model.decoder.attention.score.W_a.out_features == 7


def test_a_translation_run_saves_the_names_its_sources_hold_often(tmp_path):
    from attention_core.data.tasks import Splits

    pairs = [(f"{name}今天来了。", f"{english} came today.") for name, english in
             [("谢尔顿", "Sheldon")] * 25 + [("张伟", "Zhang Wei")] * 3 + [("我", "I")] * 12]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=8, emb_size=8),
        TrainConfig(epochs=1, max_dev=5), progress=False, find_names=cached_known_names)
    assert load_folder(tmp_path / "m").meta["known_names"] == ["谢尔顿"]  # 25 sources; 张伟 only 3
    assert json.loads((tmp_path / "m" / "known_names.json").read_text(encoding="utf-8")) == ["谢尔顿"]


def test_training_knows_no_names_of_its_own_a_run_without_find_names_lists_none(tmp_path):
    """The names are the editing layer's: training finds them only through the ``find_names`` it is given."""
    from attention_core.data.tasks import Splits

    pairs = [("谢尔顿今天来了。", "Sheldon came today.")] * 25
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=8, emb_size=8),
        TrainConfig(epochs=1, max_dev=5), progress=False)
    meta = load_folder(tmp_path / "m").meta
    assert "known_names" not in meta and "truecase" in meta  # the case is the detokeniser's, learned all the same
    assert not (tmp_path / "m" / "known_names.json").exists()


def test_a_translation_run_saves_its_targets_case(tmp_path):
    from attention_core.data.tasks import Splits

    pairs = [("我说英语。", "I speak English."), ("他说英语。", "He speaks English."),
             ("你说英语吗？", "Do you speak English?"), ("我们走吧。", "Let's go.")] * 3
    splits = Splits(pairs, pairs[:2], pairs[:2], {"task": "translation"})
    fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=8, emb_size=8),
        TrainConfig(epochs=1, max_dev=2), progress=False)
    assert load_folder(tmp_path / "m").meta["truecase"] == {"english": "English"}


def test_a_pairs_budget_stops_mid_epoch_and_a_larger_one_resumes_the_finished_run(tmp_path):
    from attention_core.data.tasks import Splits

    pairs = [(f"我{i % 7}你", f"i {i % 5} you") for i in range(100)]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    opts = dict(hidden_size=8, emb_size=8)
    cfg = TrainConfig(epochs=5, batch_size=16, max_pairs=150, max_dev=5, patience=9)
    result = fit(get_task("translation"), splits, tmp_path / "m", opts, cfg, progress=False)
    seen = [h["pairs"] for h in result["history"]]
    assert len(seen) == 2 and seen[0] == 100 and 150 <= sum(seen) < 150 + 16 and result["finished"]
    more = fit(get_task("translation"), splits, tmp_path / "m", opts, dataclasses.replace(cfg, max_pairs=400),
               resume=True, progress=False)
    assert 400 <= sum(h["pairs"] for h in more["history"]) < 416 and len(more["history"]) == 5
    with pytest.raises(ValueError, match="max_pairs"):
        TrainConfig(max_pairs=0).validate()


def test_the_budget_cut_is_the_same_step_on_every_process():
    from attention_core.training.loop import budgeted

    sizes = [64, 64, 50, 64, 30, 64, 64, 12]
    batches = [type("B", (), {"size": n})() for n in sizes]
    assert [b.size for b in budgeted(batches)] == sizes
    assert [b.size for b in budgeted(batches, world=3)] == sizes[:6]  # a multiple of the processes
    two = budgeted(batches, world=2, left=150)  # steps of 2 batches: 128, then 114 more reaches 150
    assert [b.size for b in two] == sizes[:4] and len(two) % 2 == 0
    assert budgeted(batches, world=2, left=0) == []


def test_a_continued_model_without_pairs_in_its_history_and_an_exhausted_budget(tmp_path):
    from attention_core.training.loop import _extend

    old = {"epoch": 3, "finished": True, "bad_epochs": 0, "history": [{"epoch": e, "dev_bleu": 1.0} for e in (1, 2, 3)]}
    _extend(old, TrainConfig(epochs=6))  # a bundled model's history has no "pairs": no KeyError
    assert old["finished"] is False
    history = [{"epoch": 1, "pairs": 90}, {"epoch": 2, "pairs": 90}]
    spent = {"epoch": 2, "finished": False, "bad_epochs": 0, "history": history}
    _extend(spent, TrainConfig(epochs=6, max_pairs=150))  # interrupted after its budget: nothing left to train
    assert spent["finished"] is True


def test_a_fresh_run_finds_its_own_names_even_where_a_crashed_one_left_a_list(tmp_path):
    from attention_core.data.tasks import Splits

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "known_names.json").write_text('["谢尔顿", "张伟"]', encoding="utf-8")
    pairs = [("李娜来了。", "Li Na came.")] * 25
    splits = Splits(pairs, pairs[:2], pairs[:2], {"task": "translation"})
    fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=8, emb_size=8),
        TrainConfig(epochs=1, max_dev=2), progress=False, find_names=cached_known_names)
    assert load_folder(tmp_path / "m").meta["known_names"] == ["李娜"]


def test_a_run_killed_within_an_epoch_resumes_at_its_batch_and_ends_where_an_unbroken_run_ends(tmp_path, monkeypatch):
    import attention_core.training.loop as training
    from attention_core.data.tasks import Splits

    pairs = [(f"我{i % 7}你{i % 3}", f"i {i % 5} you {i % 3}") for i in range(160)]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    opts = dict(hidden_size=8, emb_size=8, dropout=0.3)
    cfg = TrainConfig(epochs=2, batch_size=16, max_dev=5, patience=9, teacher_forcing=0.7,
                      checkpoint_minutes=1e-9)  # a checkpoint after every batch
    unbroken = fit(get_task("translation"), splits, tmp_path / "a", opts, cfg, progress=False)

    real_step = stop_at_step(monkeypatch, 10 + 4)  # the fourth batch of epoch 2 (epoch 1 has 10 batches)
    with pytest.raises(KeyboardInterrupt):
        fit(get_task("translation"), splits, tmp_path / "b", opts, cfg, progress=False)
    state = json.loads(_checkpoint(tmp_path / "b")["state"])
    assert state["epoch"] == 1 and state["partial"]["epoch"] == 2 and state["partial"]["step"] == 3
    monkeypatch.setattr(training, "train_step", real_step)
    resumed = fit(get_task("translation"), splits, tmp_path / "b", opts, cfg, resume=True, progress=False)

    a, b = _checkpoint(tmp_path / "a"), _checkpoint(tmp_path / "b")
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"{name} differs after a resume within the epoch"
    strip = lambda h: [{k: v for k, v in r.items() if k not in ("seconds", "pairs_per_s")} for r in h]  # noqa: E731
    assert strip(resumed["history"]) == strip(unbroken["history"])
    assert "partial" not in json.loads(b["state"])  # the epoch's end replaced it


def test_a_checkpoint_within_an_epoch_refuses_other_batches(tmp_path, monkeypatch):
    import attention_core.training.loop as training
    from attention_core.data.tasks import Splits

    pairs = [(f"我{i % 7}你", f"i {i % 5} you") for i in range(64)]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    opts = dict(hidden_size=8, emb_size=8)
    cfg = TrainConfig(epochs=1, batch_size=16, max_dev=5, checkpoint_minutes=1e-9)
    real_step = stop_at_step(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        fit(get_task("translation"), splits, tmp_path / "m", opts, cfg, progress=False)
    monkeypatch.setattr(training, "train_step", real_step)
    with pytest.raises(TrainError, match="same settings"):
        fit(get_task("translation"), splits, tmp_path / "m", opts, dataclasses.replace(cfg, batch_size=8),
            resume=True, progress=False)
    with pytest.raises(ValueError, match="checkpoint_minutes"):
        TrainConfig(checkpoint_minutes=-1).validate()


def test_a_decay_schedule_ends_at_its_final_rate_resumes_exactly_and_ignores_dev_bleu(tmp_path, monkeypatch):
    import attention_core.training.loop as training

    pairs = [(f"我{i % 7}你{i % 3}", f"i {i % 5} you {i % 3}") for i in range(160)]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    opts = dict(hidden_size=8, emb_size=8, dropout=0.3)
    cfg = TrainConfig(epochs=3, batch_size=16, max_dev=5, patience=9, lr=2e-3, decay_epochs=2, final_lr_ratio=0.25,
                      checkpoint_minutes=1e-9)
    seen = []
    real = training.train_step

    def spy(model, batch, optimizer, *args, **kwargs):
        seen.append(optimizer.param_groups[0]["lr"])
        return real(model, batch, optimizer, *args, **kwargs)

    monkeypatch.setattr(training, "train_step", spy)
    unbroken = fit(get_task("translation"), splits, tmp_path / "a", opts, cfg, progress=False)
    monkeypatch.setattr(training, "train_step", real)
    assert len(seen) == 30  # 10 batches an epoch
    assert seen[:11] == [2e-3] * 11  # the full rate through epoch 1 and at the decay's first batch
    assert all(b < a for a, b in zip(seen[10:], seen[11:], strict=False))  # then falling every batch
    assert seen[-1] == pytest.approx(2e-3 * (1 - 0.75 * 19 / 20))  # the last batch is one step short of the end
    assert [r["lr"] for r in unbroken["history"]][:1] == [2e-3]  # dev BLEU never halved it

    real_step = stop_at_step(monkeypatch, 10 + 6)  # within the decay: a resumed run takes the same rates
    with pytest.raises(KeyboardInterrupt):
        fit(get_task("translation"), splits, tmp_path / "b", opts, cfg, progress=False)
    monkeypatch.setattr(training, "train_step", real_step)
    fit(get_task("translation"), splits, tmp_path / "b", opts, cfg, resume=True, progress=False)
    a, b = _checkpoint(tmp_path / "a"), _checkpoint(tmp_path / "b")
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), f"{name} differs after a resume within the decay"


def test_a_decay_longer_than_the_run_or_a_final_rate_out_of_range_is_refused():
    with pytest.raises(ValueError, match="decay_epochs"):
        TrainConfig(epochs=3, decay_epochs=4).validate()
    with pytest.raises(ValueError, match="final_lr_ratio"):
        TrainConfig(epochs=3, decay_epochs=1, final_lr_ratio=0).validate()


def test_run_options_come_as_one_value_or_by_name_and_a_wrong_one_is_named():
    from attention_core.training.loop import RunOptions

    assert RunOptions.of(resume=True, progress=False) == RunOptions(resume=True, progress=False)
    assert RunOptions.of(RunOptions(command="x"), resume=True) == RunOptions(command="x", resume=True)
    with pytest.raises(TypeError, match="unknown run setting.*resumed.*RunOptions has resume"):
        fit(get_task("translation"), None, "out", {}, TrainConfig(), resumed=True)
    with pytest.raises(TypeError, match="options must be a RunOptions, got bool: pass settings by name"):
        fit(get_task("translation"), None, "out", {}, TrainConfig(), True)
