"""Atomic writes: the destination holds the old file or the whole new one, never a part."""

import os
import stat

import pytest

from attention_core.data.atomic import atomic_write, atomic_write_text


def test_replaces_whole_and_leaves_no_temporary(tmp_path) -> None:
    target = tmp_path / "deep" / "report.json"
    atomic_write_text(target, "first")
    atomic_write_text(target, "second")
    assert target.read_text(encoding="utf-8") == "second"
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path) -> None:
    target = tmp_path / "model.safetensors"
    target.write_text("old", encoding="utf-8")

    def half_then_fail(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("half")
        raise KeyboardInterrupt  # an interrupted run

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, half_then_fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]


def test_the_file_gets_the_usual_mode(tmp_path) -> None:
    """Not mkstemp's 0600: other users and services (a web server) read what was written."""
    umask = os.umask(0o022)
    os.umask(umask)
    atomic_write_text(tmp_path / "a.txt", "x")
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666 & ~umask
