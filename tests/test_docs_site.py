"""The app's docs site: a build stopped half-way leaves no lasting folder behind."""

import os
import time
from pathlib import Path

from demo.docs_site import BUILD_TIMEOUT_S, partial_prefix, remove_stale_partials


def test_stale_partial_builds_are_removed_and_live_ones_kept(tmp_path):
    site = tmp_path / "site"
    stale = tmp_path / (partial_prefix(site) + "dead")
    (stale / "assets").mkdir(parents=True)
    (stale / "assets" / "main.css").write_text("body{}", encoding="utf-8")
    old = time.time() - BUILD_TIMEOUT_S - 60
    os.utime(stale, (old, old))
    live = tmp_path / (partial_prefix(site) + "running")
    live.mkdir()
    other_site = tmp_path / (partial_prefix(tmp_path / "other") + "dead")  # another site's build: not ours
    other_site.mkdir()
    os.utime(other_site, (old, old))
    stale_file = tmp_path / (partial_prefix(site) + "file")  # not a build folder
    stale_file.write_text("x", encoding="utf-8")
    os.utime(stale_file, (old, old))

    assert remove_stale_partials(site) == [stale]
    assert not stale.exists()
    assert live.is_dir() and other_site.is_dir() and stale_file.is_file()


def test_the_default_sites_partial_builds_are_ignored_by_git():
    ignored = (Path(__file__).resolve().parents[1] / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert partial_prefix(Path("site")) + "*/" in ignored
