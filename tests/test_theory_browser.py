"""Issue #53's figure and tables, in a real browser, in both editions.

The site is built strictly (as ``test_docs.py`` builds it) and served on 127.0.0.1; Chromium opens the pages:

* the local page's soft-vs-hard figure: plotly drew both panels in a frame as tall as the figure, the two panel titles
  do not run into each other (their boxes do not overlap, at the page's own width and at a narrow one), and the source
  characters under each panel stand upright;
* the new tables: the summary table of scores and attention families on the scores page; the notation box with the
  course notes' column and the library-vs-paper box on the steps page, each opened by a link to its anchor (Material
  opens a folded box when the address names an anchor inside it);
* the Contributing page, in both editions.

Screenshots go to ``corpus.SCREENSHOTS``.
"""

import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from corpus import SCREENSHOTS, chromium

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = ("", "en/")
SLACK = 40
"""How much taller than its figure a frame may be (px), as in ``test_new_figures_browser.py``."""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


GRAPH = "() => { const g = document.querySelector('.js-plotly-plot'); return g && g._fullLayout && " \
        "g.querySelector('.main-svg') !== null; }"
TITLES = """() => [...document.querySelectorAll('.annotation')]
    .filter(a => a.textContent.includes('soft 软') || a.textContent.includes('hard 硬'))
    .map(a => { const r = a.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })"""
TICKS = """() => [...document.querySelectorAll('.xaxislayer-above text')]
    .map(t => [t.textContent, t.getAttribute('transform') || ''])"""


def _soft_hard_frame(page, base: str, edition: str):
    page.goto(f"{base}/{edition}theory/local/", wait_until="load")
    iframe = page.locator('article iframe[src$="figures/theory-soft-hard.html"]')
    assert iframe.count() == 1, f"/{edition}theory/local/ has no soft-vs-hard figure"
    iframe.scroll_into_view_if_needed()
    frame = iframe.element_handle().content_frame()
    frame.wait_for_function(GRAPH, timeout=30_000)
    return iframe, frame


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("width", (1280, 900))
def test_the_soft_hard_figure_has_apart_titles_and_upright_characters(served, browser, edition, width):
    page = browser.new_page(viewport={"width": width, "height": 1400})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        iframe, frame = _soft_hard_frame(page, served, edition)
        drawn = frame.evaluate("document.querySelector('.js-plotly-plot')._fullLayout.height")
        height = int(iframe.get_attribute("height"))
        assert drawn <= height <= drawn + SLACK, f"frame {height} px, figure {drawn} px"
        assert frame.locator(".heatmaplayer").count() >= 2  # both panels drawn
        left, right = frame.evaluate(TITLES)  # one title a panel
        assert left[1] <= right[0], f"the panel titles overlap at {width} px: {left} {right}"
        ticks = frame.evaluate(TICKS)
        characters = [(text, transform) for text, transform in ticks if text in "如果明天下雨我们就不去爬山了"]
        assert len(characters) >= 2 * 13, ticks  # every character under both panels
        assert not [c for c in characters if "rotate" in c[1]], characters  # upright, not turned sideways
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        iframe.screenshot(path=str(SCREENSHOTS / f"issue53-{(edition or 'zh/').strip('/')}-{width}-soft-hard.png"))
    finally:
        page.close()
    assert not errors, errors


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_summary_table_and_the_notation_and_departure_boxes_render(served, browser, edition):
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    try:
        page.goto(f"{served}/{edition}theory/scores/#at-a-glance", wait_until="load")
        table = page.locator("article table").first  # the page's first table is the summary
        assert table.locator("tbody tr").count() == 12
        text = table.inner_text()
        for name in ('score="concat"', 'score="location"', 'attention="local-m"', "hard=True", "Graves et al. 2014"):
            assert name in text, (edition, name)
        page.wait_for_function("() => document.querySelector('article mjx-container')", timeout=30_000)

        for anchor, must in (("notation", ("Course notes", "课程讲义")), ("library-vs-paper", ("maxout",))):
            page.goto(f"{served}/{edition}theory/steps/#{anchor}", wait_until="load")
            box = page.locator(f"details:has(#{anchor})")
            page.wait_for_function(f"() => document.querySelector('details:has(#{anchor})').open", timeout=10_000)
            assert box.locator("table").first.is_visible(), anchor  # the link opened the folded box
            assert any(m in box.inner_text() for m in must), (edition, anchor)
        header = page.locator("details:has(#notation) table thead").first.inner_text()
        assert ("Course notes" if edition else "课程讲义") in header
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("details:has(#library-vs-paper)").screenshot(
            path=str(SCREENSHOTS / f"issue53-{(edition or 'zh/').strip('/')}-library-vs-paper.png"))

        page.goto(f"{served}/{edition}contributing/", wait_until="load")
        assert "pytest" in page.locator("article").inner_text()
    finally:
        page.close()
