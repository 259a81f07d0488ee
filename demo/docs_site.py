"""The documentation site, served by the app itself at ``/docs`` (so a Space shows both).

The site is the output of ``mkdocs build``. When the folder holds no built site yet, the app builds
it in a background thread at start-up (about 15 s on a 2-core CPU; the app answers meanwhile and
``/docs`` says the site is being built), with ``ATTENTION_LAB_APP_URL=/`` so the docs' "open in the
app" links point back to this same server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SITE = ROOT / "site"
"""Where ``mkdocs build`` writes the site by default (ignored by git)."""

BUILD_TIMEOUT_S = 600
"""The longest a build may take; a partial folder older than this belongs to no running build."""

PENDING = """<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>Attention Lab docs</title><body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>文档正在生成 · The documentation is being built</h1><p>{detail}</p></body>"""


def partial_prefix(folder: Path) -> str:
    """The name prefix of the temporary folders a build of ``folder`` writes into, beside it."""
    return f".{folder.name}-building-"


def remove_stale_partials(folder: Path, older_than_s: float = BUILD_TIMEOUT_S) -> list[Path]:
    """Delete the partial builds of ``folder`` that no running build owns.

    An app stopped while it builds (Ctrl-C in its first quarter minute) leaves its partial folder behind;
    one older than the build timeout cannot belong to a build still running, so the next start removes it.
    Younger ones are left to the build that may still be writing them.

    Args:
        folder: The built site's folder (the partials lie beside it).
        older_than_s: Age, by last modification, from which a partial counts as stale.

    Returns:
        The folders removed.
    """
    removed = []
    now = time.time()
    for partial in folder.parent.glob(partial_prefix(folder) + "*"):
        try:
            stale = partial.is_dir() and now - partial.stat().st_mtime > older_than_s
        except OSError:  # removed meanwhile by another app
            continue
        if stale:
            shutil.rmtree(partial, ignore_errors=True)
            removed.append(partial)
    return removed


class DocsSite:
    """An ASGI app serving a built mkdocs site, building it first if needed.

    Args:
        folder: The built site (``index.html`` at its top); built there in the background when missing.
        build: Start that build now; ``False``: when [`start`][demo.docs_site.DocsSite.start] is called.
    """

    def __init__(self, folder: str | Path = DEFAULT_SITE, build: bool = True) -> None:
        self.folder = Path(folder)
        self.error: str | None = None
        self._static: StaticFiles | None = None
        if build:
            self.start()

    def start(self, done: Callable[[DocsSite], None] | None = None) -> bool:
        """Build the site in a background thread unless it is there (the app starts it once its page answers).

        Args:
            done: Called from that thread when the build has ended (``error`` says whether it failed).

        Returns:
            Whether a build was started.
        """
        if self.ready:
            return False

        def build() -> None:
            self._build()
            if done is not None:
                done(self)

        threading.Thread(target=build, name="docs-build", daemon=True).start()
        return True

    @property
    def ready(self) -> bool:
        """Whether the built site is there."""
        return (self.folder / "index.html").is_file()

    def _build(self) -> None:
        """Build into a temporary folder beside the target, then rename it into place.

        A half-built site is never served, and two apps starting at once never write into the same folder.
        """
        env = {**os.environ, "ATTENTION_LAB_APP_URL": "/", "NO_MKDOCS_2_WARNING": "1"}
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(self.folder)
        partial = Path(tempfile.mkdtemp(prefix=partial_prefix(self.folder), dir=self.folder.parent))
        cmd = [sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(partial.resolve())]
        try:
            done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            if done.returncode != 0 or not (partial / "index.html").is_file():
                lines = done.stderr.strip().splitlines() or ["no output"]
                self.error = "mkdocs build failed: " + lines[-1]
                return
            try:
                partial.rename(self.folder)
            except OSError:  # another app finished first (or the folder exists): serve what is there
                if not self.ready:
                    raise
        except (OSError, subprocess.TimeoutExpired) as err:
            self.error = f"mkdocs build failed: {err}"
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a file of the site, or a page saying it is being built (HTTP 503, reloads itself)."""
        if self.ready:
            if self._static is None:
                self._static = StaticFiles(directory=self.folder, html=True)
            await self._static(scope, receive, send)
            return
        detail = self.error or "This takes about a quarter of a minute; the page reloads by itself. 请稍候。"
        await HTMLResponse(PENDING.format(detail=detail), status_code=503)(scope, receive, send)
