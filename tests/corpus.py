"""What a test needs from the machine: the corpora, a browser. Missing means skipped, with the reason and the fix.

``ATTENTION_LAB_REQUIRE_ALL=1`` (set by ``.ci/run``) turns those skips into failures, so CI cannot pass while
silently skipping a test. The corpora are looked for where the command line looks
([`data_home`][attention_core.data.corpora.data_home]: ``$ATTENTION_LAB_DATA``, else the user cache folder).
"""

import os
import tempfile
from pathlib import Path

import pytest

from attention_core.data.corpora import data_home, missing_message, read_manifest, select

REQUIRE_ALL = "ATTENTION_LAB_REQUIRE_ALL"
CHROMIUM = Path("/usr/bin/chromium")


def require(reason: str) -> None:
    """Skip the test with ``reason`` — or fail it when ``ATTENTION_LAB_REQUIRE_ALL=1`` (CI)."""
    if os.environ.get(REQUIRE_ALL) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ALL}=1: nothing may be skipped)")
    pytest.skip(reason)


def data_dir(*corpora: str) -> Path:
    """The data folder, holding every file of ``corpora`` (default: cmn-eng and couplet); else skip (or fail)."""
    folder = data_home()
    entries = select(read_manifest(), corpora or ("cmn-eng", "couplet"))
    if not all((folder / e.path).is_file() for e in entries):
        require("needs corpora: " + missing_message(folder, entries))
    return folder


def chromium() -> str:
    """The path of Debian's Chromium; else skip (or fail)."""
    if not CHROMIUM.exists():
        require("needs a browser: apt-get install chromium fonts-noto-cjk (Debian's /usr/bin/chromium)")
    return str(CHROMIUM)


SCREENSHOTS = Path(os.environ.get("ATTENTION_LAB_SCREENSHOTS")
                   or Path(tempfile.gettempdir()) / "attention-lab-screenshots")
"""Where browser tests leave their screenshots for a person to look at: ``$ATTENTION_LAB_SCREENSHOTS``, else a
temporary folder (never inside the repository)."""
README_SCREENSHOT = os.environ.get("ATTENTION_LAB_README_SCREENSHOT")
"""Where to write the README's screenshot of the app, when asked: the explicit command is
``ATTENTION_LAB_README_SCREENSHOT=docs/images/app.png python -m pytest tests/test_app_live.py -k lab``."""
