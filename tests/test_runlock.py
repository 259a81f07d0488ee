"""The run-folder lock: one live process at a time; a dead owner's lock is taken over; re-entrant."""

import os
import subprocess
import sys

from attention_core.training.runlock import LOCK, hold, owner


def test_hold_and_release(tmp_path) -> None:
    run = tmp_path / "run"
    with hold(run) as held:
        assert held and owner(run) == os.getpid()
        (run / "checkpoint.pt").write_text("x")
    assert not (run / LOCK).exists() and (run / "checkpoint.pt").exists()


def test_a_folder_made_and_left_empty_is_removed(tmp_path) -> None:
    with hold(tmp_path / "run") as held:
        assert held
    assert not (tmp_path / "run").exists()


def test_the_same_process_holds_it_again(tmp_path) -> None:
    with hold(tmp_path) as outer, hold(tmp_path) as inner:
        assert outer and inner
    assert owner(tmp_path) is None


def test_a_live_owner_keeps_it_and_a_dead_one_loses_it(tmp_path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / LOCK).write_text(str(sleeper.pid))
        assert owner(tmp_path) == sleeper.pid
        with hold(tmp_path) as held:
            assert not held
    finally:
        sleeper.kill()
        sleeper.wait()
    assert owner(tmp_path) is None  # its process is gone: stale
    with hold(tmp_path) as held:
        assert held and owner(tmp_path) == os.getpid()
