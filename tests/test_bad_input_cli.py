"""What a user who gets things wrong meets on the command line: one clear ``error:`` line, and nothing of theirs lost.

Each test is a mistake a real user makes (a second ``train`` into the same folder, a damaged checkpoint, a typo in
``--device``, a file saved by Notepad …), found by trying to break the command line; the corpora are synthetic.
"""

import json
from pathlib import Path

import pytest
from test_parallel import german_english, write_tsv

from attention_core.cli import main
from attention_core.data.parallel import read_parallel
from attention_core.data.text import strip_invisible
from attention_core.decoding.folder import load_folder, save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.training.loop import TrainConfig, pick_device

TINY = ["--hidden", "8", "--emb", "8", "--batch-size", "32", "--max-dev", "10", "--quiet"]


def _train(corpus: Path, out: Path | str, *extra: str) -> int:
    return main(["train", "--task", "parallel", "--corpus", str(corpus), "--out", str(out), "--epochs", "1",
                 *TINY, *extra])


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_tsv(tmp_path / "de-en.tsv", german_english())


@pytest.fixture
def run(tmp_path, corpus) -> Path:
    """A finished one-epoch run with learned pieces on both sides."""
    out = tmp_path / "run"
    assert _train(corpus, out, "--source-tokenizer", "bpe", "--source-bpe", "60",
                  "--target-tokenizer", "bpe", "--target-bpe", "60") == 0
    return out


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_refused_second_run_leaves_the_first_one_untouched(tmp_path, run, capsys):
    before = _snapshot(run)
    other = write_tsv(tmp_path / "other.tsv", [(s.upper(), t.upper()) for s, t in german_english()])
    capsys.readouterr()
    for corpus, size in ((other, "60"), (tmp_path / "de-en.tsv", "90")):  # another corpus; other piece counts
        assert _train(corpus, run, "--source-tokenizer", "bpe", "--source-bpe", size,
                      "--target-tokenizer", "bpe", "--target-bpe", size) == 2
        assert "--resume" in _error(capsys)
        assert _snapshot(run) == before  # the pieces were not learned again into the run's folder
    assert main(["translate", "--model", str(run), "ich mag die Katze ."]) == 0


def test_resuming_on_other_data_is_refused(tmp_path, corpus, capsys):
    out = tmp_path / "run"
    assert _train(corpus, out) == 0
    renamed = write_tsv(tmp_path / "renamed.tsv",  # the same shape, every word another
                        [(" ".join("x" + w for w in s.split()), " ".join("y" + w for w in t.split()))
                         for s, t in german_english()])
    capsys.readouterr()
    assert main(["train", "--task", "parallel", "--corpus", str(renamed), "--out", str(out), "--epochs", "2",
                 "--resume", *TINY]) == 2
    assert "other data" in _error(capsys)
    assert _train(corpus, out, "--epochs", "2", "--resume") == 0  # the same corpus goes on


def test_a_damaged_checkpoint_is_named_with_the_way_out(tmp_path, corpus, capsys):
    out = tmp_path / "run"
    assert _train(corpus, out) == 0
    whole = (out / "checkpoint.pt").read_bytes()
    for damaged in (b"", whole[: len(whole) // 3]):
        (out / "checkpoint.pt").write_bytes(damaged)
        capsys.readouterr()
        assert _train(corpus, out, "--epochs", "2", "--resume") == 2
        err = _error(capsys)
        assert err.startswith("error:") and "checkpoint.pt is damaged" in err and "move it away" in err


def test_a_model_that_is_not_a_run_is_never_replaced(tmp_path, run, corpus, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where an empty --out would write
    exported = tmp_path / "mine"
    assert main(["export", "--model", str(run), "--out", str(exported)]) == 0
    before = _snapshot(exported)
    capsys.readouterr()
    assert _train(corpus, exported) == 2  # train into a model folder
    assert "holds a model" in _error(capsys)
    assert main(["export", "--model", str(exported), "--out", str(run)]) == 2  # export over a run
    assert "new or empty folder" in _error(capsys)
    assert _snapshot(exported) == before and (run / "checkpoint.pt").is_file()
    assert _train(corpus, "") == 2  # an empty --out (an unset variable) is not the current folder
    assert "--out" in _error(capsys)


def test_places_that_cannot_be_written_fail_before_the_work(tmp_path, run, corpus, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert _train(corpus, a_file) == 2
    assert "is a file" in _error(capsys)
    assert _train(corpus, a_file / "run") == 2
    assert _error(capsys).startswith("error: cannot write in")
    test = write_tsv(tmp_path / "t.tsv", german_english()[:5])
    for report, says in ((tmp_path, "is a folder"), (a_file / "r.json", "is a file")):
        assert main(["evaluate", "--model", str(run), "--test", str(test), "--report", str(report)]) == 2
        captured = capsys.readouterr()
        assert says in captured.err and captured.out == ""  # refused before decoding anything


@pytest.mark.parametrize("argv,message", [
    (["--label-smoothing", "2"], "label_smoothing must be in [0, 1)"),
    (["--label-smoothing", "-0.5"], "label_smoothing"),
    (["--lr-decay", "2"], "lr_decay"),
    (["--patience", "0"], "patience must be at least 1"),
    (["--max-train", "-5"], "max_train must be at least 1"),
    (["--clip", "-1"], "clip must not be negative"),
    (["--device", "gpu"], "unknown device 'gpu'"),
])
def test_a_bad_setting_is_refused_before_training(tmp_path, corpus, capsys, argv, message):
    assert _train(corpus, tmp_path / "run", *argv) == 2
    err = _error(capsys)
    assert err.startswith("error:") and message in err
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_a_device_this_machine_lacks_is_named(monkeypatch):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA GPU"):
        pick_device("cuda")
    with pytest.raises(ValueError, match="unknown device"):
        pick_device("gpu")
    assert str(pick_device("cpu")) == "cpu"


def test_unicode_line_separators_inside_a_sentence_do_not_shift_the_pairs(tmp_path):
    pairs = german_english()[:40]
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]
    sources[4] = sources[4].replace(" ", "\u2028", 1)  # scraped and subtitle text holds these
    targets[30] = targets[30].replace(" ", "\x85", 1)
    (tmp_path / "src.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("\r\n".join(targets) + "\r\n", encoding="utf-8")  # one file from Windows
    corpus = read_parallel([str(tmp_path / "src.txt"), str(tmp_path / "tgt.txt")])
    assert corpus.pairs == pairs  # the separator became a space, every pair is still its own
    tsv = tmp_path / "c.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in zip(sources, targets)), encoding="utf-8")
    assert read_parallel([str(tsv)]).pairs == pairs


def test_a_byte_order_mark_on_stdin_is_not_read_as_a_token(run, capsys, monkeypatch):
    import io

    capsys.readouterr()
    assert main(["translate", "--model", str(run), "ich mag die Katze ."]) == 0
    plain = capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("\ufeffich mag die Katze .\n"))
    assert main(["translate", "--model", str(run), "--show-attention"]) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[0] == plain.strip() and "\ufeff" not in shown and "<unk>" not in shown
    assert strip_invisible("\ufeff春风\u200e得意") == "春风得意"


def test_input_that_is_not_utf8_is_named(run, capsys):
    assert main(["translate", "--model", str(run), b"\xce\xd2".decode("utf-8", "surrogateescape")]) == 2
    assert "not UTF-8" in _error(capsys)


def test_an_interrupted_command_says_only_what_is_true(tmp_path, run, monkeypatch, capsys):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Translator, "translate", interrupt)
    assert main(["translate", "--model", str(run), "ich mag die Katze ."]) == 130
    assert _error(capsys).strip() == "interrupted"  # nothing about epochs or --resume
    monkeypatch.setattr("attention_core.cli.fit", interrupt)
    assert _train(tmp_path / "de-en.tsv", tmp_path / "new") == 130
    assert "nothing was saved yet" in _error(capsys)


def test_model_files_are_readable_by_other_users(tmp_path, run):
    translator = load_folder(run)
    save_pretrained(translator, tmp_path / "shared")
    for path in (tmp_path / "shared").iterdir():
        assert path.stat().st_mode & 0o044 == 0o044, path  # mkstemp's 0600 would hide them


def test_a_report_is_written_after_the_summary_is_shown(tmp_path, run, capsys):
    test = write_tsv(tmp_path / "t.tsv", german_english()[:5])
    capsys.readouterr()
    assert main(["evaluate", "--model", str(run), "--test", str(test), "--report", str(tmp_path / "r" / "r.json"),
                 "--limit", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 3 == json.loads((tmp_path / "r" / "r.json").read_text())["n"]
    assert main(["evaluate", "--model", str(run), "--test", str(test), "--limit", "-1"]) == 2
    assert "--limit must be at least 1" in _error(capsys)


def test_train_config_still_accepts_the_recipes():
    from attention_core.hub.zoo import RECIPES

    for recipe in RECIPES.values():  # the zoo's runs resume with these: the new checks must not refuse them
        assert isinstance(recipe.train.validate(), TrainConfig)


def test_an_argument_mistake_is_one_line_and_a_pointer_to_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--task", "parallel", "--out", "x", "--score", "bilinear"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: argument --score") and "--help" in err
    assert len(err.splitlines()) == 2  # not the 40-line usage block first


def test_train_help_explains_every_training_setting(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "TRAIN_" not in text  # the metavars read LR_DECAY, not TRAIN_LR_DECAY
    for flag, words in (("--lr-decay", "Factor applied"), ("--patience", "Early stopping"),
                        ("--subword-vocab", "BPE model")):
        assert words in text.split(flag + " ", 2)[-1][:200], flag
    assert "][attention_core" not in text  # the docs' cross-references become plain names


def test_a_corpus_of_ones_own_without_task_parallel_is_refused(tmp_path, corpus, capsys):
    assert main(["train", "--task", "translation", "--corpus", str(corpus), "--out", str(tmp_path / "o")]) == 2
    assert "--task parallel" in _error(capsys)


def test_a_min_freq_no_token_reaches_is_refused(tmp_path, corpus, capsys):
    assert _train(corpus, tmp_path / "o", "--min-freq", "100000") == 2
    assert "vocabulary is empty" in _error(capsys)


def test_a_bad_line_among_many_is_named_and_stdin_that_is_not_utf8_is_refused(model_dir, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("我喜欢\nhello\n今天很好\n"))
    assert main(["translate", "--model", str(model_dir)]) == 2
    assert _error(capsys).startswith("error: input 2: the input has no Chinese characters")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("我喜欢".encode("gbk")), encoding="utf-8"))
    assert main(["translate", "--model", str(model_dir)]) == 2
    assert "stdin is not UTF-8" in _error(capsys)


def test_a_file_given_as_a_model_or_a_folder_as_a_corpus_is_named(tmp_path, corpus, capsys):
    assert main(["translate", "--model", str(corpus), "你好"]) == 2
    assert "is a file: a model is a folder" in _error(capsys)
    assert main(["train", "--task", "parallel", "--corpus", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "is a folder" in _error(capsys)


def test_a_repo_id_the_hub_cannot_hold_is_named_before_the_token_is_asked_for(run, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["push", "--model", str(run), "--repo", "bad name!!"]) == 2
    err = _error(capsys)
    assert "is not a Hub repo id" in err and "token" not in err


def test_a_folder_another_process_trains_in_is_refused_and_a_stale_lock_taken_over(tmp_path, corpus, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("1")  # process 1 is alive: a second training would overwrite its checkpoints
    assert _train(corpus, out) == 2
    assert "being trained by another process (pid 1)" in _error(capsys)
    assert not (out / "checkpoint.pt").exists()
    (out / ".lock").write_text("999999999")  # no such process: a run that was killed
    assert _train(corpus, out) == 0
    assert (out / "checkpoint.pt").is_file() and not (out / ".lock").exists()


def test_a_folder_lock_is_held_again_by_its_own_process_and_leaves_no_trace(tmp_path):
    from attention_core.training.runlock import hold, owner

    folder = tmp_path / "new" / "run"
    with hold(folder) as outer:
        with hold(folder) as inner:  # the zoo holds a model's folder, then trains in it
            assert outer and inner
        assert (folder / ".lock").is_file()  # the inner block does not release the outer one's lock
    assert not folder.exists() and owner(folder) is None  # made and left empty: removed


def test_an_abbreviated_option_is_refused_by_name(tmp_path, capsys):
    """``--dat`` was read as ``--data`` while the checks that ask whether ``--data`` was given did not see it."""
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--task", "couplet", "--dat", str(tmp_path), "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and "unrecognized arguments: --dat" in _error(capsys)


def _closed_after_one_line(args: list[str], stdin: str | None = None, merged: bool = False) -> tuple[int, str]:
    """Run the CLI with a reader that takes its first line and goes away (``attention-lab … | head -1``; with
    ``merged``, ``… 2>&1 | head -1``: stderr goes too)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "attention_core.cli", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                            text=True)
    proc.stdin.write(stdin or "")
    proc.stdin.close()
    assert proc.stdout.readline()
    proc.stdout.close()
    err = "" if merged else proc.stderr.read()
    return proc.wait(timeout=300), err


def test_a_reader_that_goes_away_stops_a_translation_quietly_but_not_a_training(tmp_path, corpus, model_dir):
    """``translate … | head -1`` ends quietly as a Unix filter does (141, nothing on stderr); ``train … | head -1``
    trains on to the end, says so once, and keeps every epoch in metrics.jsonl (it used to stop with an error)."""
    code, err = _closed_after_one_line(["translate", "--model", str(model_dir)], "我喜欢今天\n" * 2000)
    assert (code, err) == (141, "")
    out = tmp_path / "piped"
    code, err = _closed_after_one_line(["train", "--task", "parallel", "--corpus", str(corpus), "--out", str(out),
                                        "--epochs", "3", *TINY])
    assert code == 0, err
    assert "Traceback" not in err and err.count("training goes on") == 1
    assert [json.loads(line)["epoch"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
    load_folder(out)
    both = tmp_path / "both"  # `… 2>&1 | head -1`: the note itself meets the closed pipe, and training goes on
    code, _ = _closed_after_one_line(["train", "--task", "parallel", "--corpus", str(corpus), "--out", str(both),
                                      "--epochs", "3", *TINY], merged=True)
    assert code == 0
    assert [json.loads(line)["epoch"] for line in (both / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
