"""Start the Attention Lab app: ``python app.py [--host H] [--port P] [--share] [--hub-repo ID]``.

Every flag also reads an environment variable: ``ATTENTION_LAB_HOST``, ``ATTENTION_LAB_PORT``,
``ATTENTION_LAB_SHARE=1``, ``ATTENTION_LAB_HUB_REPO`` and ``ATTENTION_LAB_MODELS`` (a local zoo folder).
"""

from __future__ import annotations

import argparse
import os
import sys

import gradio as gr

from attention_core.hub import ModelLoadError
from demo.models import BUNDLED, ModelRegistry
from demo.ui import CSS, build_app

CONCURRENCY = 4
"""Requests decoded at once; the rest wait in the queue (each takes tens of milliseconds on a CPU)."""


THEME = gr.themes.Soft(
    # local fonts only: the app must work offline, and Chinese needs a CJK font
    font=["Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "system-ui", "sans-serif"],
    font_mono=["Noto Sans Mono CJK SC", "ui-monospace", "monospace"],
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags, defaulting to the environment variables."""
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default=env("ATTENTION_LAB_HOST", env("GRADIO_SERVER_NAME", "127.0.0.1")))
    port = env("ATTENTION_LAB_PORT", env("GRADIO_SERVER_PORT", "7860"))
    p.add_argument("--port", type=int, default=int(port))
    p.add_argument("--share", action="store_true", default=env("ATTENTION_LAB_SHARE", "") == "1",
                   help="create a public gradio.live link")
    p.add_argument("--hub-repo", default=env("ATTENTION_LAB_HUB_REPO"), help="load the zoo from a Hub repo")
    p.add_argument("--models", default=env("ATTENTION_LAB_MODELS", str(BUNDLED)), help="local zoo folder")
    p.add_argument("--device", default=None, help="cpu or cuda (default: CUDA if available)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Load the models once, build the app and serve it."""
    args = parse_args(argv)
    try:
        if args.hub_repo:
            registry = ModelRegistry.from_hub(args.hub_repo, device=args.device)
        else:
            registry = ModelRegistry.load(args.models, device=args.device)
    except ModelLoadError as err:
        sys.exit(f"error: {err}")
    app = build_app(registry)
    app.queue(default_concurrency_limit=CONCURRENCY, max_size=256)
    app.launch(server_name=args.host, server_port=args.port, share=args.share,
               theme=THEME, css=CSS, footer_links=["api"])


if __name__ == "__main__":
    main()
