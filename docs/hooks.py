"""mkdocs hooks: publish the zoo's figures, and put an "open in the app" link under each of them.

The figures are produced by ``python -m reports``; adding them as site files (instead of
copying them into docs/) keeps one copy in the repository and lets ``mkdocs build --strict``
check every link to them.

The report also writes ``results/figures/app-links.json``: for each figure, the app query that
opens the app with the figure's input and settings. Every figure a page shows (an image or an
embedded plot from ``figures/``) gets a link to ``ATTENTION_LAB_APP_URL`` + that query (default: a
local ``python app.py``; the site the app serves itself is built with ``/``). A figure without a
query fails the build, so no figure goes without its link.

The site has two editions (mkdocs-static-i18n): Chinese at ``/`` and English at ``/en/``. The figures
exist once, at ``/figures/``; a figure's ``src`` is rewritten to the figure's URL relative to the page, so
the same markup (``../figures/x.html`` in a raw ``<iframe>``, which mkdocs does not rewrite) works one
level deeper on the English pages. The language switch links to the other edition of the same page by a
relative URL, so the site also works under a prefix (the app serves it at ``/docs``). The 404 page cannot be
relative (it answers for a missing path at any depth): its links start at ``site_url``'s path, ``/docs/``.
"""

import html
import json
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "results" / "figures"
DEFAULT_APP_URL = "http://127.0.0.1:7860/"  # a local `python app.py`; ATTENTION_LAB_APP_URL overrides it
FIGURE = re.compile(r'<(?:img|iframe)\b[^>]*\bsrc="(?P<src>(?:[^"]*/)?figures/(?P<stem>[\w.-]+?)\.(?P<ext>png|html))"'
                    r'[^>]*>(?:[^<]*</iframe>)?')  # an iframe with its closing tag: the link goes after it
OPEN_IN_APP = {"en": "Open in the app ↗"}
"""The link's text by page language; the Chinese pages (and their fallbacks under /en/) keep both languages."""


def on_page_markdown(markdown, page, config, files, **kwargs):
    """The API pages' section titles (Examples, Attributes …) in the edition's language.

    mkdocstrings takes its locale once, from the theme's language when the site's configuration is loaded (zh);
    mkdocs-static-i18n then builds the English edition with the same plugins, so without this the English API
    pages said 示例 and 属性. Each page is rendered after this event, with the locale of the edition being built.
    """
    i18n, docstrings = config.plugins.get("i18n"), config.plugins.get("mkdocstrings")
    if i18n is not None and docstrings is not None:
        docstrings.handlers._locale = i18n.current_language  # no public setter in mkdocstrings 1.0
    return markdown


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
        raise PluginError(f"{path} is missing: run `python -m reports` to write the figures and their app links")
    return json.loads(path.read_text(encoding="utf-8"))


def on_page_content(content, page, config, files, **kwargs):
    """After each figure of the page, a link that opens the app on the same input and settings."""
    links = _links()
    base = os.environ.get("ATTENTION_LAB_APP_URL", "") or DEFAULT_APP_URL

    def add_link(match):
        stem = match.group("stem")
        if stem not in links:
            raise PluginError(f"{page.file.src_uri}: figure {stem!r} has no entry in app-links.json; "
                              "add it to reports.report.figure_links and run `python -m reports`")
        tag = match.group(0)
        if "://" not in match.group("src") and not match.group("src").startswith("/"):
            name = f"figures/{stem}.{match.group('ext')}"
            figure = files.get_file_from_path(name)
            if figure is None:
                raise PluginError(f"{page.file.src_uri}: {match.group('src')} is not in results/figures")
            tag = tag.replace(f'src="{match.group("src")}"', f'src="{get_relative_url(figure.url, page.url)}"', 1)
        href = html.escape(base + links[stem], quote=True)
        text = OPEN_IN_APP.get(getattr(page.file, "locale", None), "在应用中打开 Open in the app ↗")
        return f'{tag}<a class="open-in-app" href="{href}" target="_blank" rel="noopener">{text}</a>'

    return FIGURE.sub(add_link, content)


def on_page_context(context, page, config, nav, **kwargs):
    """Language switch: link each language to this page's edition in it, relative to the page.

    mkdocs-static-i18n (which runs first) links the home pages to the absolute ``/`` and ``/en/``, which
    miss the site when it is served under a prefix; a relative link works at any prefix.
    """
    alternates = getattr(page.file, "alternates", None)
    if alternates:
        for alternate in _switch(config):
            if alternate.get("lang") in alternates:
                alternate["link"] = alternates[alternate["lang"]].url
    return context


def _switch(config) -> list[dict]:
    """The language switch's entries, read as the theme reads ``config.extra.alternate``.

    As Jinja does: the attribute (which the i18n plugin sets per page), else the item.
    """
    switch = getattr(config.extra, "alternate", None)
    return config.extra.get("alternate", []) if switch is None else switch


NOT_FOUND = "404.html"
HOMES = {"en": "en/"}
"""Each edition's home page, from the site root (the default edition's, Chinese, is the root itself)."""


def on_template_context(context, template_name, config, **kwargs):
    """The 404 page's language switch goes to each edition's home page.

    The 404 page is rendered after every page and is no page itself, so it kept the switch of the last page built
    ([`on_page_context`][hooks.on_page_context] sets it per page): "English" led to ``/en/theory/why/``. Its links
    are absolute from ``site_url``'s path (``/docs/``): the app serves it for any missing path under ``/docs/``.
    """
    if template_name == NOT_FOUND:
        root = urlsplit(config.site_url or "/").path  # where mkdocs roots the 404 page's links
        for alternate in _switch(config):
            alternate["link"] = root + HOMES.get(alternate.get("lang"), "")
    return context


def on_post_template(output, template_name, config, **kwargs):
    """The 404 page drops the ``hreflang`` links as every page does ([`on_post_page`][hooks.on_post_page])."""
    return HREFLANG_LINK.sub("", output) if template_name == NOT_FOUND else output


HREFLANG_LINK = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')
CANONICAL_LINK = re.compile(r'\s*<link rel="canonical" href="[^"]*">')
CONFIG_BASE = re.compile(r'"base": "(?P<base>[./]*)"')
ENGLISH = "en/"
"""Where the English edition lives in the site (mkdocs-static-i18n, ``docs_structure: suffix``)."""
SEARCH_INDEX = Path("search") / "search_index.json"
API = "api/"
API_BOOST = 0.2
"""Search weight of an API section against 1 for the other pages. Every API title starts with
``attention_core.``, which Material's trailing wildcard matches for any query word "attention…", and a title
match weighs 1000 times a text match: "local attention" listed 40 API sections before the theory page."""


def _edition_base(match: re.Match) -> str:
    """``"../../.."`` (the site root, seen from ``en/theory/local/``) → ``"../.."`` (``/en/``)."""
    parts = match.group("base").split("/")
    return f'"base": "{"/".join(parts[1:]) if len(parts) > 1 else "."}"'


def on_post_page(output, page, config, **kwargs):
    """Three fixes to the page Material writes.

    * Drop the theme's ``<link rel="alternate" hreflang>`` tags. Material's script fetches ``sitemap.xml``
      relative to each of them to find the same page in the other language; the i18n plugin points them at
      this page's own editions (``../../en/theory/why/``), so every page asked for ``<page>/sitemap.xml`` and
      got a 404. The language switch does not need them: it links to the other edition of the same page
      ([`on_page_context`][hooks.on_page_context]).
    * An English page's ``__config.base`` points at ``/en/`` instead of the site root. Material loads
      ``search/search_index.json`` relative to ``base`` and resolves every result against it; with one index
      for both editions, an English reader's "local attention" listed Chinese pages. The English pages now
      read ``en/search/search_index.json`` ([`on_post_build`][hooks.on_post_build]) and stay in their edition.
    * Drop the ``<link rel="canonical">`` that ``site_url`` brings. ``site_url`` is the app's local address (for
      sitemap.xml and the 404 page); the same site is also served by a Space on its own host, whose pages must not
      name ``127.0.0.1`` as their true address.
    """
    output = CANONICAL_LINK.sub("", HREFLANG_LINK.sub("", output))
    if page.file.dest_uri.startswith(ENGLISH):
        output = CONFIG_BASE.sub(_edition_base, output, count=1)
    return output


MATH = re.compile(r"\\\((?P<inline>.+?)\\\)|\\\[(?P<display>.+?)\\\]", re.S)
r"""A formula as arithmatex leaves it in the search index: ``\(…\)`` inline, ``\[…\]`` displayed."""
SYMBOLS = {
    "alpha": "α", "beta": "β", "kappa": "κ", "gamma": "γ", "sigma": "σ", "varepsilon": "ε", "epsilon": "ε", "tau": "τ",
    "pi": "π", "Delta": "Δ", "lambda": "λ", "cdot": "·", "times": "×", "top": "ᵀ", "sum": "Σ", "le": "≤",
    "leq": "≤", "ge": "≥", "geq": "≥", "in": "∈", "infty": "∞", "to": "→", "mid": "|", "odot": "⊙",
    "cap": "∩", "cup": "∪", "supseteq": "⊇", "approx": "≈", "lVert": "‖", "rVert": "‖", "sqrt": "√",
    "dots": "…", "ldots": "…", "partial": "∂", "mathbb{R}": "ℝ", "notin": "∉", "neq": "≠", "ne": "≠",
}
"""LaTeX commands a search snippet shows as the character they typeset."""
ACCENTS = {"bar": "\u0304", "tilde": "\u0303", "hat": "\u0302"}
CALLIGRAPHIC = {"S": "𝒮", "P": "𝒫", "A": "𝒜", "L": "ℒ"}
DROPPED = re.compile(r"\\(?:left|right|[Bb]ig{1,2}[lr]?|quad|qquad|displaystyle|[,;:! ])")


def plain_math(latex: str) -> str:
    r"""A formula in plain characters, for search snippets: ``\bar h_s`` → ``h̄_s``, ``\frac{a}{b}`` → ``a/b``.

    Material shows the indexed text as it is, so a snippet read ``\(p_t\)``; this keeps the letters, subscripts and
    operators a reader recognises and drops the markup.

    Examples:
        >>> plain_math(r"a_t = \mathrm{softmax}(W_a h_t),\ \sigma = \frac{D}{2}")
        'a_t = softmax(W_a h_t), σ = D/2'
        >>> plain_math(r"|A \cap \mathcal S| \le \lVert \bar h_s \rVert")
        '|A ∩ 𝒮| ≤ ‖ h̄_s ‖'
    """
    text = latex.replace("\\{", "\x00").replace("\\}", "\x01")  # a set's braces stay
    text = re.sub(r"\\underbrace\{((?:[^{}]|\{[^{}]*\})*)\}_\{(?:[^{}]|\{[^{}]*\})*\}", r"\1", text)
    for _ in range(3):  # nested fractions
        text = re.sub(r"\\[dt]?frac\{((?:[^{}]|\{[^{}]*\})*)\}\{((?:[^{}]|\{[^{}]*\})*)\}", r"(\1)/(\2)", text)
    text = re.sub(r"\(([\w.]+)\)/\(([\w.]+)\)", r"\1/\2", text)  # (D)/(2) → D/2
    text = re.sub(r"\\mathcal\s*\{?([A-Z])\}?", lambda m: CALLIGRAPHIC.get(m.group(1), m.group(1)), text)
    text = re.sub(r"\\(?:mathrm|texttt|text|operatorname|mathbf|boldsymbol|textbf)\s*\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\(bar|tilde|hat)\s*\{?\\?(\w)\}?", lambda m: m.group(2) + ACCENTS[m.group(1)], text)
    text = DROPPED.sub(" ", text)
    text = re.sub(r"\\(mathbb\{R\}|[A-Za-z]+)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    text = text.replace("^ᵀ", "ᵀ").replace("{", "").replace("}", "").replace("\x00", "{").replace("\x01", "}")
    return re.sub(r"\s+", " ", text).strip()


def _plain(text: str) -> str:
    return MATH.sub(lambda m: plain_math(m.group("inline") or m.group("display")), text)


@event_priority(-100)  # after the search plugin wrote the index (and after every i18n build)
def on_post_build(config, **kwargs):
    r"""Split the search index by edition: ``search/`` for the Chinese pages, ``en/search/`` for the English.

    With mkdocs-static-i18n this runs after each edition's build; the last run sees the whole index.
    The API reference is built once (its docstrings are English) and falls back under ``/en/api/``; both
    indexes list it, each pointing at its own edition's copy, with a lower weight
    ([`API_BOOST`][hooks.API_BOOST]). Formulas are written in plain characters
    ([`plain_math`][hooks.plain_math]): Material shows a result's text as indexed, and ``\(S\)`` read as markup.
    """
    site = Path(config["site_dir"])
    index = json.loads((site / SEARCH_INDEX).read_text(encoding="utf-8"))
    docs = index["docs"]
    english = [{**d, "location": d["location"].removeprefix(ENGLISH)} for d in docs
               if d["location"].startswith((ENGLISH, API))]
    chinese = [d for d in docs if not d["location"].startswith(ENGLISH)]
    for d in english + chinese:
        if d["location"].startswith(API):
            d["boost"] = API_BOOST
        d["title"], d["text"] = _plain(d["title"]), _plain(d["text"])  # snippets without LaTeX markup
    for path, entries in ((site / SEARCH_INDEX, chinese), (site / ENGLISH / SEARCH_INDEX, english)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**index, "docs": entries}, ensure_ascii=False, separators=(",", ":")),
                        encoding="utf-8")
