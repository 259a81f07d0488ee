"""mkdocs hooks: publish the zoo's figures, and put an "open in the app" link under each of them.

The figures are produced by ``attention-lab report``; adding them as site files (instead of
copying them into docs/) keeps one copy in the repository and lets ``mkdocs build --strict``
check every link to them.

The report also writes ``results/figures/app-links.json``: for each figure, the app query that
opens the app with the figure's input and settings. Every figure a page shows (an image or an
embedded plot from ``figures/``) gets a link to ``ATTENTION_LAB_APP_URL`` + that query (default: a
local ``python app.py``; the site the app serves itself is built with ``/``). A figure without a
query fails the build, so no figure goes without its link.
"""

import html
import json
import os
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "results" / "figures"
DEFAULT_APP_URL = "http://127.0.0.1:7860/"  # demo.links.DEFAULT_APP_URL (the hook runs without the package)
FIGURE = re.compile(r'<(?:img|iframe)\b[^>]*\bsrc="(?:[^"]*/)?figures/(?P<stem>[\w.-]+?)\.(?:png|html)"[^>]*>')


def on_files(files, config, **kwargs):
    """Add every file of results/figures to the site as figures/<name>."""
    for path in sorted(FIGURES.glob("*")):
        if path.is_file() and path.name != "app-links.json":
            files.append(File(f"figures/{path.name}", src_dir=str(FIGURES.parent), dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    return files


def _links() -> dict:
    path = FIGURES / "app-links.json"
    if not path.is_file():
        raise PluginError(f"{path} is missing: run `attention-lab report` to write the figures and their app links")
    return json.loads(path.read_text(encoding="utf-8"))


def on_page_content(content, page, config, files, **kwargs):
    """After each figure of the page, a link that opens the app on the same input and settings."""
    links = _links()
    base = os.environ.get("ATTENTION_LAB_APP_URL", "") or DEFAULT_APP_URL

    def add_link(match):
        stem = match.group("stem")
        if stem not in links:
            raise PluginError(f"{page.file.src_uri}: figure {stem!r} has no entry in app-links.json; "
                              "add it to demo.report.figure_links and run `attention-lab report`")
        href = html.escape(base + links[stem], quote=True)
        return (f'{match.group(0)}<a class="open-in-app" href="{href}" target="_blank" rel="noopener">'
                "在应用中打开 Open in the app ↗</a>")

    return FIGURE.sub(add_link, content)
