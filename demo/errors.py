"""The app's answer to input it cannot take: a message for the visitor, not a traceback in the server's log."""

from __future__ import annotations

import gradio as gr


def refuse(message: str) -> gr.Error:
    """The error to raise for an expected mistake (bad input, an out-of-range setting, an unknown name).

    The visitor sees ``message``; the server's log stays free of a traceback for it (a Space's log would
    otherwise fill with one per empty input). Unexpected failures still raise their own exceptions and are
    logged in full.

    Args:
        message: What went wrong and what to do instead, bilingual (``中文 / English``).

    Returns:
        A ``gr.Error`` to ``raise``.
    """
    return gr.Error(message, print_exception=False)
