"""The documentation site builds strictly in both editions (中文 at /, English at /en/) and renders offline.

The browser test visits every page but the API reference, in both languages, on the site served under a
prefix (``/docs``, as the app serves it): formulas typeset, Mermaid diagrams drawn, figures and embedded
plots loaded, the language switch, Chinese search, and no request leaving the site.
"""

import functools
import gzip
import http.server
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from corpus import SCREENSHOTS, chromium

ROOT = Path(__file__).resolve().parents[1]
THEORY = ("why", "steps", "scores", "qkv", "bahdanau-luong", "local", "masking", "decoding", "transformer",
          "alignment")
TRANSLATED = ("", "quickstart", "walkthrough", *(f"theory/{page}" for page in THEORY), "cli", "results", "benchmarks",
              "contributing",
              "guide/training", "guide/own-data", "guide/names", "guide/hub", "guide/space")
"""Pages with an English file (``page.en.md``); the others (the API pages) fall back to the Chinese page under /en/."""
NOT_PAGES = ("api", "assets", "figures", "search", "javascripts", "stylesheets", "images")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return out


def _pages(site: Path) -> list[str]:
    """Every page of both editions except the API reference, as URL paths ("/", "/en/theory/why/", …)."""
    pages = []
    for html in sorted(site.rglob("index.html")):
        parts = html.parent.relative_to(site).parts
        in_edition = parts[1:] if parts[:1] == ("en",) else parts
        if not in_edition or in_edition[0] not in NOT_PAGES:
            pages.append("/" + "".join(part + "/" for part in parts))
    return pages


def test_strict_build_has_theory_and_api_pages(site):
    for page in ("theory/scores/index.html", "theory/local/index.html", "api/model/attention/index.html",
                 "results/index.html", "figures/bleu-by-length-translation.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "model" / "attention" / "index.html").read_text(encoding="utf-8")
    assert "Luong et al. 2015" in api and "attention_core.model.attention.attention" in api
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis.com" not in text and "cdn.jsdelivr.net" not in text, html
        assert "unpkg.com" not in text, html


def test_api_section_titles_are_in_the_edition_language(site):
    """mkdocstrings titles a docstring's sections in the locale it was given: each edition its own language."""
    title = re.compile(r'<span class="doc-section-title">([^<]+)</span>')
    chinese = set(title.findall((site / "api" / "editing" / "rare" / "index.html").read_text(encoding="utf-8")))
    english = set(title.findall((site / "en" / "api" / "editing" / "rare" / "index.html").read_text(encoding="utf-8")))
    assert chinese == {"示例：", "属性："}, chinese
    assert english == {"Examples:", "Attributes:"}, english


def test_english_edition_has_every_page(site):
    pages = _pages(site)
    chinese = {p for p in pages if not p.startswith("/en/")}
    assert {"/en" + p for p in chinese} == {p for p in pages if p.startswith("/en/")}
    for md in ROOT.joinpath("docs").rglob("*.en.md"):  # every English page translates a Chinese one
        chinese = md.with_name(md.name.replace(".en.md", ".md"))
        assert chinese.is_file(), md
        for anchor in re.findall(r"\{ #([\w-]+) \}", chinese.read_text(encoding="utf-8")):  # links point to these
            assert "{ #" + anchor + " }" in md.read_text(encoding="utf-8"), (md.name, anchor)
    for path in TRANSLATED:
        html = (site / "en" / path / "index.html").read_text(encoding="utf-8")
        assert '<html lang="en"' in html, path
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1)
        assert not re.search(r"[\u4e00-\u9fff]", h1), (path, h1)  # an English title, not the fallback
        assert 'hreflang="zh"' in html and 'hreflang="en"' in html
    # the API in both editions
    api = (site / "en" / "api" / "model" / "attention" / "index.html").read_text(encoding="utf-8")
    assert "attention_core.model.attention.attention" in api and '<html lang="en"' in api
    home = (site / "en" / "index.html").read_text(encoding="utf-8")
    # /en/api/…: cross-references stay in their edition
    assert 'href="api/model/scores/#attention_core.model.scores"' in home
    for page in THEORY:  # the English theory pages end with the English exercises
        html = (site / "en" / "theory" / page / "index.html").read_text(encoding="utf-8")
        assert '<h2 id="exercises">Exercises' in html and "<summary>Solution</summary>" in html, page
        assert "练习" not in html and "答案" not in html, page


def test_every_local_link_and_figure_resolves(site):
    """Every relative src/href of every page points at a file of the site (raw <iframe>s included)."""
    broken = []
    for html in site.rglob("*.html"):
        if "figures" in html.relative_to(site).parts:
            continue
        text = html.read_text(encoding="utf-8", errors="replace")
        for link in re.findall(r'\b(?:src|href)="([^"#?]*)', text):
            if not link or re.match(r"[a-z][\w+.-]*:|/", link):
                continue
            target = (html.parent / link).resolve()
            if not (target / "index.html" if link.endswith("/") or target.is_dir() else target).is_file():
                broken.append(f"{html.relative_to(site)}: {link}")
    assert not broken, broken[:20]
    english = (site / "en" / "results" / "index.html").read_text(encoding="utf-8")
    assert 'src="../../figures/bleu-by-length-translation.html"' in english
    assert "Open in the app ↗" in english and "在应用中打开" not in english


def test_every_docs_link_of_the_app_reaches_its_section_in_both_editions(site, monkeypatch):
    """The app's hints and its notes' links name pages and anchors that exist in the 中文 and the English edition."""
    monkeypatch.delenv("ATTENTION_LAB_DOCS_URL", raising=False)
    from app_fixtures import small_registry

    from demo.handlers import NOTE_DOCS
    from demo.links import docs_markdown_link
    from demo.ui import build_app

    config = json.dumps(build_app(small_registry()).config, ensure_ascii=False, default=str)
    links = set(re.findall(r'href=\\"docs/([^"\\]*)', config))
    for page, anchor in NOTE_DOCS.values():
        links |= set(re.findall(r"\]\(docs/([^)]*)\)", docs_markdown_link(page, anchor)))
    english = {link for link in links if link.startswith("en/")}
    assert len(links) >= 8 and {f"en/{link}" for link in links - english} == english, sorted(links)
    missing = []
    for link in sorted(links):
        path, _, anchor = link.partition("#")
        page = site / path / "index.html"
        if not page.is_file() or (anchor and f'id="{anchor}"' not in page.read_text(encoding="utf-8")):
            missing.append(link)
    assert not missing, missing


def test_search_index_has_chinese_words(site):
    """jieba cut the Chinese text into words, so a search for 输入 or 局部注意力 finds pages."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    pages = {}
    for doc in index["docs"]:
        for token in separator.split(doc["title"] + " " + doc["text"]):
            pages.setdefault(token, set()).add(doc["location"].split("#")[0])
    for word in ("输入", "局部注意力", "打分函数", "注意力"):
        assert pages.get(word), word
    assert not any(p.startswith("en/") for p in set().union(*pages.values()))  # the English edition has its own


def test_search_snippets_show_formulas_without_latex_markup(site):
    """Material shows a result's indexed text as it is: formulas are plain characters there (hooks.plain_math)."""
    for path in (site / "search" / "search_index.json", site / "en" / "search" / "search_index.json"):
        docs = json.loads(path.read_text(encoding="utf-8"))["docs"]
        latex = re.compile(r"\\[(\[]|\\(?:frac|bar|mathrm|cdot|sum)\b")
        raw = [d["location"] for d in docs if latex.search(d["title"] + d["text"])]
        assert not raw, (path.parent.parent.name, raw[:5])
    local = next(d for d in docs if d["location"] == "theory/local/")  # the English index, the last one read
    assert "window [p_t - D, p_t + D] of half-width D" in local["text"]


def test_each_edition_searches_its_own_pages_and_the_api_weighs_less(site):
    """English pages load en/search/ (their __config.base is /en/); both indexes list the API, at a lower weight."""
    chinese = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    english = json.loads((site / "en" / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    assert {d["location"].split("#")[0] for d in english} >= {"theory/local/", "quickstart/", "api/model/scores/"}
    for docs, source in ((english, "local.en.md"), (chinese, "local.md")):
        heading = (ROOT / "docs" / "theory" / source).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        titles = [d["title"].replace("\u200b", "") for d in docs if d["location"] == "theory/local/"]  # jieba's cuts
        assert titles == [heading], source
    for docs in (chinese, english):
        assert {d.get("boost", 1) for d in docs if d["location"].startswith("api/")} == {0.2}
        assert all("boost" not in d for d in docs if not d["location"].startswith("api/"))
    for path, base in (("en/theory/local/index.html", "../.."), ("en/index.html", "."),
                       ("theory/local/index.html", "../..")):
        html = (site / path).read_text(encoding="utf-8")
        assert f'"base": "{base}"' in html, path
        assert 'hreflang="en">' not in html.split("</head>")[0]  # Material would fetch <link href>/sitemap.xml


def _site_url() -> str:
    return re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M).group(1)


def test_sitemap_urls_are_absolute_at_the_apps_docs_address(site):
    """Without ``site_url`` every ``<loc>`` and alternate read ``None…`` (issue #53); pages name no canonical URL."""
    url = _site_url()
    assert urlsplit(url).path == "/docs/", url  # where the app mounts the site (app.py: Mount("/docs", …))
    text = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert text == gzip.decompress((site / "sitemap.xml.gz").read_bytes()).decode("utf-8")
    assert "None" not in text
    locations = re.findall(r"<loc>([^<]*)</loc>", text) + re.findall(r'xhtml:link [^>]*href="([^"]*)"', text)
    assert len(locations) > 2 * len(TRANSLATED) and all(loc.startswith(url) for loc in locations), locations[:5]
    assert f"<loc>{url}en/theory/why/</loc>" in text
    for page in ("index.html", "theory/why/index.html", "en/theory/why/index.html"):
        assert 'rel="canonical"' not in (site / page).read_text(encoding="utf-8"), page


def test_the_404_page_works_under_the_apps_prefix_and_switches_to_the_home_pages(site):
    """The app serves 404.html for any missing path under /docs/, at any depth: its assets and links are absolute
    from /docs/ and exist; its language switch goes to the two home pages (it went to the last page built)."""
    html = (site / "404.html").read_text(encoding="utf-8")
    root = urlsplit(_site_url()).path
    local = [u for u in re.findall(r'(?:href|src)="([^"]*)"', html) if not u.startswith(("http", "#", "data:"))]
    assert len(local) > 20
    for u in local:
        assert u.startswith(root), u
        path = u.removeprefix(root).split("#")[0]
        assert (site / path).is_file() or (site / path / "index.html").is_file(), u
    switch = dict(re.findall(r'<a href="([^"]*)" hreflang="(\w+)" class="md-select__link">', html))
    assert switch == {root: "zh", root + "en/": "en"}, switch
    assert 'rel="alternate" href=' not in html and 'rel="canonical"' not in html


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve_under_docs(site: Path, tmp_path: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve the site at /docs/ (as the app does), so every link must work under a prefix."""
    (tmp_path / "docs").symlink_to(site, target_is_directory=True)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/docs"


MERMAID_DRAWN = ("() => [...document.querySelectorAll('article .mermaid')].every("
                 "m => m.tagName === 'DIV' && !m.textContent.trim() && m.offsetHeight > 50)")
"""Material draws each Mermaid diagram into a closed shadow root: the <pre> source becomes an empty, tall <div>."""
IMAGES_LOADED = "() => [...document.querySelectorAll('article img')].every(i => i.complete && i.naturalWidth > 0)"


def _check_page(page, html: str, path: str) -> None:
    if "arithmatex" in html:
        # every formula typeset, including those in closed <details> (exercise solutions)
        page.wait_for_function("() => document.querySelector('article mjx-container')"
                               " && !document.querySelector('article .arithmatex:not(:has(mjx-container))')",
                               timeout=30_000)
        body = page.locator("article").inner_text()
        assert "$$" not in body and "\\(" not in body and "\\[" not in body, path
    if 'class="mermaid"' in html:
        page.wait_for_function(MERMAID_DRAWN, timeout=30_000)
    page.wait_for_function(IMAGES_LOADED, timeout=30_000)
    for i in range(page.locator("article iframe").count()):
        frame = page.locator("article iframe").nth(i).element_handle().content_frame()
        frame.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)


def _switch_language(page, lang: str) -> None:
    page.locator(".md-header__option .md-select").hover()
    page.locator(f"a.md-select__link[hreflang={lang}]").click()
    page.wait_for_load_state("load")


def _search(page, query: str) -> list[str]:
    """Type a query into Material's search box; the links of the results."""
    box = page.locator("input.md-search__input")
    box.click()
    box.fill(query)
    box.press("End")  # a key press, as a person typing
    page.wait_for_function(  # results, or the "none found" message (the other messages have no digit)
        "() => { const m = document.querySelector('.md-search-result__meta');"
        " return m && /\\d|没有|No matching/.test(m.textContent); }", timeout=30_000)
    links = [a.get_attribute("href") for a in page.locator(".md-search-result__item > a").all()]
    box.fill("")
    page.keyboard.press("Escape")
    return links


def test_browser_renders_every_page_in_both_languages_without_leaving_the_site(site, tmp_path):
    from playwright.sync_api import sync_playwright

    executable = chromium()
    pages = _pages(site)
    server, base = _serve_under_docs(site, tmp_path)
    origin = base.removesuffix("/docs")
    outside, errors, missing = [], [], []
    start = time.monotonic()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable,
                                        args=["--headless", "--no-sandbox", "--disable-gpu",
                                              "--disable-background-networking", "--disable-component-update"])
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            page.on("request", lambda r: None if r.url.startswith((base + "/", "data:", "blob:", "about:"))
                    else outside.append(r.url))
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
            page.on("response", lambda r: missing.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            for path in pages:
                page.goto(base + path, wait_until="load")
                _check_page(page, (site / path.strip("/") / "index.html").read_text(encoding="utf-8"), path)

            # the language switch goes to the same page in the other language and back, home page included
            for zh, en, title in (("/results/", "/en/results/", "Results"), ("/", "/en/", "Attention Lab")):
                page.goto(base + zh, wait_until="load")
                _switch_language(page, "en")
                assert page.url == base + en and page.locator("html").get_attribute("lang") == "en"
                assert page.locator("article h1").first.inner_text().replace("¶", "").strip() == title
                _switch_language(page, "zh")
                assert page.url == base + zh and page.locator("html").get_attribute("lang") == "zh"

            # Chinese search finds words inside sentences; the English edition searches in English
            page.goto(base + "/", wait_until="load")
            assert _search(page, "输入"), "输入"
            assert any("/theory/local/" in link for link in _search(page, "局部注意力"))
            page.goto(base + "/en/quickstart/", wait_until="load")
            assert _search(page, "precision")
            # an English multi-word query finds its theory page first, and stays in the English edition
            for query, first in (("local attention", "/en/theory/local/"), ("masking", "/en/theory/masking/"),
                                 ("positional encoding", "/en/theory/transformer/"),
                                 ("query key value", "/en/theory/qkv/")):
                links = _search(page, query)
                assert links and links[0].startswith(base + first), (query, links[:3])
                assert all(link.startswith(base + "/en/") for link in links), (query, links)

            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.goto(base + "/theory/steps/", wait_until="load")
            page.wait_for_selector("mjx-container", timeout=30_000)
            page.wait_for_timeout(1000)
            page.screenshot(path=str(SCREENSHOTS / "docs-steps.png"), full_page=True)
            browser.close()
    finally:
        server.shutdown()
    assert not outside, [url.replace(origin, "") for url in outside][:20]
    assert not missing, missing[:20]  # e.g. <page>/sitemap.xml, which Material asked for on every page
    assert not errors, errors
    print(f"{len(pages)} pages in {time.monotonic() - start:.0f} s")
