"""Where the real corpora are; tests that need them fail with a clear message if they are missing."""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dir() -> Path:
    """The shared data folder, or a test failure that says what is missing."""
    if not (DATA / "cmn-eng" / "cmn.txt").is_file() or not (DATA / "couplet" / "test" / "in.txt").is_file():
        pytest.fail(f"this test needs the corpora in {DATA} (cmn-eng/, couplet/); see shared/data/README.md")
    return DATA
