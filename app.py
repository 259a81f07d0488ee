"""Start the Attention Lab app (and its documentation site at /docs) on the bundled models and your own.

Every option also reads an environment variable, named in its help. The heavy imports (PyTorch,
Gradio) happen only after the options are read, so ``--help`` and option errors answer at once.

The page answers before the models' weights are loaded: at start-up each model's config is read (a broken folder
still stops the start with one line), the weights load in the background once the page is up (a request for one
not loaded yet loads it), and a missing docs site is built after that too. Each stage prints a line
(``benchmarks/app_start.py`` measures them).
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported in main(), after the options are read
    from demo.docs_site import DocsSite
    from demo.models import ModelRegistry

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parent
CONCURRENCY = 4
"""Requests decoded at once; the rest wait in the queue (each takes tens of milliseconds on a CPU)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options, defaulting to the environment variables."""
    env = os.environ.get
    p = argparse.ArgumentParser(
        prog="python app.py",
        description="Attention Lab: watch RNN seq2seq attention translate (中文 → English), write couplets "
        "(上联 → 下联) and learn. Serves the app at http://HOST:PORT/ and the documentation at /docs.",
        epilog="Links: ATTENTION_LAB_DOCS_URL makes the app's hints point to a docs site hosted elsewhere "
        "(default: the /docs this app serves). The app always loads the bundled models offline unless "
        "--hub-repo is given. Models you trained (attention-lab train --task parallel …) open in their own tab: "
        "python app.py --models DIR, or --hub-repo ID for a repo that holds one model at its root.",
    )
    p.add_argument("--host", default=env("ATTENTION_LAB_HOST", env("GRADIO_SERVER_NAME", "127.0.0.1")),
                   help="address to listen on; 0.0.0.0 for every interface [ATTENTION_LAB_HOST] (default %(default)s)")
    port = env("ATTENTION_LAB_PORT", env("GRADIO_SERVER_PORT", "7860"))
    p.add_argument("--port", type=int, default=int(port) if port.isdigit() else 7860,
                   help="port to listen on [ATTENTION_LAB_PORT] (default %(default)s)")
    p.add_argument("--share", action="store_true", default=env("ATTENTION_LAB_SHARE", "") == "1",
                   help="also create a public gradio.live link [ATTENTION_LAB_SHARE=1]")
    p.add_argument("--hub-repo", default=env("ATTENTION_LAB_HUB_REPO"), metavar="ID",
                   help="load models from a Hugging Face Hub repo: one model at its root (shown in the tab "
                   "'Your models', beside the bundled ones) or a zoo laid out as <task>/<variant>/ "
                   "[ATTENTION_LAB_HUB_REPO]")
    p.add_argument("--models", default=env("ATTENTION_LAB_MODELS", str(ROOT / "models")), metavar="DIR",
                   help="a model folder you trained, or a folder of such folders (shown in the tab 'Your "
                   "models', beside the bundled ones), or a model zoo laid out as <task>/<variant>/ "
                   "[ATTENTION_LAB_MODELS] (default: the bundled models/)")
    p.add_argument("--docs", default=env("ATTENTION_LAB_DOCS_DIR", str(ROOT / "site")), metavar="DIR",
                   help="built documentation site served at /docs; built there with mkdocs at start-up when "
                   "missing (delete it to rebuild) [ATTENTION_LAB_DOCS_DIR] (default: site/)")
    p.add_argument("--device", default=env("ATTENTION_LAB_DEVICE"),
                   help="cpu or cuda [ATTENTION_LAB_DEVICE] (default: CUDA if available)")
    return p.parse_args(argv)


def port_in_use(host: str, port: int) -> bool:
    """Whether ``host:port`` cannot be bound (another server is there)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no conflict
        try:
            s.bind((host, port))
        except OSError as err:
            return err.errno in (errno.EADDRINUSE, errno.EACCES)
    return False


def fail(message: str) -> None:
    """One ``error:`` line on stderr and exit status 2, like the ``attention-lab`` command."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def say(message: str) -> None:
    """One line of progress on the console: the seconds since the start, and the stage."""
    print(f"[{time.perf_counter() - STARTED:5.1f} s] {message}", flush=True)


STAGES = ("libraries", "models", "page", "ready", "docs", "weights")
"""The first word of each stage's line, in the order they come (``benchmarks/app_start.py`` reads them)."""


def main(argv: list[str] | None = None) -> None:
    """Check the options, read the models, build the app and serve it; then load the weights and build the docs."""
    args = parse_args(argv)
    if not 1 <= args.port <= 65535:
        fail(f"--port must be 1–65535, got {args.port}")
    if port_in_use(args.host, args.port):
        fail(f"port {args.port} on {args.host} is already in use; start with --port N "
             "(or ATTENTION_LAB_PORT=N), or stop the other server")
    say("Attention Lab: starting (PyTorch and Gradio first) …")

    import gradio as gr
    from starlette.routing import Mount

    from attention_core.decoding.folder import ModelLoadError
    from attention_core.training.loop import pick_device
    from demo.docs_site import DocsSite
    from demo.models import ModelRegistry
    from demo.ui import CSS, JS, build_app, model_counts, preload

    say("libraries loaded")
    try:
        pick_device(args.device)  # a typo, or cuda on a machine without one: one line, not a traceback
        registry = ModelRegistry.start(args.models, args.hub_repo, device=args.device, lazy=True)
    except (ModelLoadError, ValueError) as err:
        fail(str(err))
    say(f"models found: {model_counts(registry)}; their weights load once the page is up")
    docs = DocsSite(args.docs, build=False)  # built once the page is up: it would slow the start down
    app = build_app(registry)
    say("page built")
    app.queue(default_concurrency_limit=CONCURRENCY, max_size=256)
    theme = gr.themes.Soft(
        # local fonts only: the app must work offline, and Chinese needs a CJK font
        font=["Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "system-ui", "sans-serif"],
        font_mono=["Noto Sans Mono CJK SC", "ui-monospace", "monospace"],
    )
    try:
        app.launch(server_name=args.host, server_port=args.port, share=args.share, theme=theme, css=CSS, js=JS,
                   max_file_size="1mb",  # the app takes no uploads: a stranger's upload must not fill the disk
                   footer_links=["api"], app_kwargs={"routes": [Mount("/docs", app=docs, name="docs")]},
                   prevent_thread_lock=True, quiet=True)
    except OSError as err:  # the port was taken between the check and the launch
        fail(f"cannot listen on {args.host}:{args.port} ({err}); start with --port N")
    say(f"ready: {app.local_url}" + (f" · public link {app.share_url}" if args.share and app.share_url else "")
        + " (documentation at /docs)")
    threading.Thread(target=after_start, args=(registry, docs, preload), name="after-start", daemon=True).start()
    app.block_thread()


def after_start(registry: ModelRegistry, docs: DocsSite, preload: Callable[..., int]) -> None:
    """What waits until the page answers: every model's weights (the tabs' defaults first), then the docs site.

    Args:
        registry: The app's models, their weights not loaded yet.
        docs: The docs site, built here when its folder holds none.
        preload: [`demo.ui.preload`][demo.ui.preload] (imported with the heavy libraries).
    """
    started = time.perf_counter()
    say("weights: loading in the background (the tabs' default models first) …")
    loaded = preload(registry, lambda problem: say(f"weights: {problem}"))
    total = sum(len(models) for models in registry.models.values())
    say(f"weights: {loaded} of {total} models loaded in {time.perf_counter() - started:.1f} s")

    def built(site: DocsSite) -> None:
        say(f"docs: {site.error}" if site.error else f"docs: built in {site.folder}, served at /docs")

    if docs.start(built):
        say(f"docs: building {docs.folder} in the background (/docs says so meanwhile) …")
    else:
        say(f"docs: serving {docs.folder} at /docs")


if __name__ == "__main__":
    main()
