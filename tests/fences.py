"""The fenced code blocks of a Markdown page, as the docs tests read them."""

from __future__ import annotations

import re

FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
"""A fenced block: its language (``lang``, may be empty) and its text (``body``)."""
