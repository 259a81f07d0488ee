"""The faster allocator: when ``attention-lab`` starts itself again under tcmalloc, and that the run then has it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import require

from attention_core.cli import main
from attention_core.training.allocator import ENV, AllocatorError, find_allocator, loaded, plan

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def libs(tmp_path):
    """A library folder holding a (fake) tcmalloc and no jemalloc."""
    (tmp_path / "libtcmalloc_minimal.so.4").write_bytes(b"")
    return [tmp_path]


def test_train_and_zoo_restart_under_tcmalloc_and_nothing_else_does(libs):
    new = plan(["train", "--task", "couplet"], {"PATH": "/bin"}, "system", libs)
    assert new is not None and new["LD_PRELOAD"] == str(libs[0] / "libtcmalloc_minimal.so.4")
    assert new["PATH"] == "/bin"  # the rest of the environment is kept
    assert plan(["zoo", "--only", "couplet/none"], {}, "system", libs) is not None
    for argv in (["translate", "你好"], ["evaluate"], ["couplet", "春风"], []):
        assert plan(argv, {}, "system", libs) is None


def test_no_restart_when_running_it_or_told_not_to_or_already_restarted(libs):
    assert plan(["train"], {}, "tcmalloc", libs) is None  # already preloaded
    assert plan(["train"], {ENV: "system"}, "system", libs) is None
    once = plan(["train"], {}, "system", libs)
    assert plan(["train"], once, "system", libs) is None  # the preload did not take: no second restart, no loop


def test_an_existing_preload_is_kept_after_the_allocator(libs):
    new = plan(["train"], {"LD_PRELOAD": "/opt/libother.so"}, "system", libs)
    assert new["LD_PRELOAD"] == f"{libs[0] / 'libtcmalloc_minimal.so.4'} /opt/libother.so"


def test_missing_library_keeps_glibc_unless_asked_for_by_name(tmp_path):
    assert plan(["train"], {}, "system", [tmp_path]) is None  # the default: quietly as before
    with pytest.raises(AllocatorError, match="libjemalloc.so.2.*not installed"):
        plan(["train"], {ENV: "jemalloc"}, "system", [tmp_path])


def test_an_unknown_allocator_is_a_clear_error_line(monkeypatch, capsys):
    with pytest.raises(AllocatorError, match="choose one of system, tcmalloc, jemalloc"):
        plan(["train"], {ENV: "mimalloc"}, "system")
    monkeypatch.setenv(ENV, "mimalloc")
    monkeypatch.setattr(sys, "argv", ["attention-lab", "train", "--task", "couplet"])
    assert main() == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ATTENTION_LAB_ALLOCATOR='mimalloc'") and "Traceback" not in err


def test_loaded_reads_the_memory_map(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.10\n")
    assert loaded(maps) == "tcmalloc"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    assert loaded(maps) == "system"
    assert loaded(tmp_path / "no-such-file") == "system"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD and /proc/self/maps are Linux's")
def test_a_training_started_from_the_shell_runs_under_tcmalloc(tmp_path):
    """The real thing: ``attention-lab train`` restarts itself, and its start event names the allocator."""
    if find_allocator("tcmalloc") is None:
        require("needs tcmalloc: apt-get install libtcmalloc-minimal4")
    from test_app_own_models import TINY, write_he_en

    write_he_en(tmp_path / "he-en.tsv")
    env = {k: v for k, v in os.environ.items() if k not in (ENV, "LD_PRELOAD")}
    events = {}
    for allocator in ("tcmalloc", "system"):
        command = [sys.executable, "-m", "attention_core.cli", "train", "--task", "parallel", "--corpus",
                   str(tmp_path / "he-en.tsv"), "--source-tokenizer", "word", "--target-tokenizer", "word",
                   "--out", str(tmp_path / allocator), "--epochs", "1", *TINY]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**env, ENV: allocator},
                              timeout=300)
        assert done.returncode == 0, done.stderr
        start = next(json.loads(line) for line in done.stdout.splitlines() if '"event": "start"' in line)
        events[allocator] = start["allocator"]
    assert events == {"tcmalloc": "tcmalloc", "system": "system"}
