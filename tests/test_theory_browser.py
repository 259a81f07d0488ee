"""Issue #53's figures and tables, in a real browser, in both editions.

The site is built strictly (as ``test_docs.py`` builds it) and served on 127.0.0.1; Chromium opens the pages:

* the figures of panels side by side (the local page's soft vs hard, masking, greedy vs beam, qkv, Bahdanau vs Luong,
  scores, couplet rules, transformer): plotly drew every panel in a frame as tall as the figure, no text runs into
  another or into a panel's cells (titles, tick labels, colour bars; at a 1400 px window, whose content column is
  about 690 px, and at 900 px), and the source tokens under each panel are all written, upright;
* the new tables: the summary table of scores and attention families on the scores page; the notation box with the
  course notes' column and the library-vs-paper box on the steps page, each opened by a link to its anchor (Material
  opens a folded box when the address names an anchor inside it);
* the Contributing page, in both editions.

Screenshots go to ``corpus.SCREENSHOTS``.
"""

from pathlib import Path

import pytest
from corpus import SCREENSHOTS, chromium

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = ("", "en/")
SLACK = 40
"""How much taller than its figure a frame may be (px), as in ``test_new_figures_browser.py``."""


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
FIGURES = {
    "theory-soft-hard": "local",
    "theory-greedy-beam": "decoding",
    "theory-couplet-rules": "decoding",
    "theory-masking": "masking",
    "theory-qkv": "qkv",
    "theory-bahdanau-luong": "bahdanau-luong",
    "theory-scores": "scores",
    "theory-transformer": "transformer",
}
"""The theory figures of panels side by side (``reports.theory_figures.side_by_side``) → the page embedding each."""
CLASHES = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };
    const hit = (a, b) => a[0] < b[1] - 1 && b[0] < a[1] - 1 && a[2] < b[3] - 1 && b[2] < a[3] - 1;
    const texts = [...plot.querySelectorAll('.main-svg text')]
        .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0 && !t.closest('.hoverlayer'))
        .map(t => [t.textContent.trim().slice(0, 30), box(t)]);
    const areas = [...plot.querySelectorAll('.nsewdrag')].map(box);
    const clashes = [];
    texts.forEach(([text, b], i) => {
        texts.slice(i + 1).forEach(([other, c]) => { if (hit(b, c)) clashes.push([text, other]); });
        areas.forEach(a => { if (hit(b, a)) clashes.push([text, 'a panel']); });
    });
    return clashes;
}"""
"""Pairs of texts drawn over each other (titles, tick labels, colour bars), or a text over a panel's cells."""
TICKS = """() => [...document.querySelectorAll('.xaxislayer-above text')]
    .map(t => [t.textContent, t.getAttribute('transform') || ''])"""
LABELS = """() => { const l = document.querySelector('.js-plotly-plot')._fullLayout;
    return l._subplots.xaxis.map(x => (l[x.replace('x', 'xaxis')].ticktext || []).length)
        .reduce((a, b) => a + b, 0); }"""
"""How many source tokens the figure's x axes name."""


def _figure_frame(page, base: str, edition: str, stem: str):
    page.goto(f"{base}/{edition}theory/{FIGURES[stem]}/", wait_until="load")
    iframe = page.locator(f'article iframe[src$="figures/{stem}.html"]')
    assert iframe.count() == 1, f"/{edition}theory/{FIGURES[stem]}/ has no {stem}"
    iframe.scroll_into_view_if_needed()
    frame = iframe.element_handle().content_frame()
    frame.wait_for_function(GRAPH, timeout=30_000)
    return iframe, frame


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("width", (1400, 900))
@pytest.mark.parametrize("stem", FIGURES)
def test_side_by_side_figures_draw_no_text_over_another_and_upright_characters(served, browser, stem, edition, width):
    """At 1400 px the docs' column is about 690 px: before issue #53's fix, panel titles ran into each other (masking,
    greedy vs beam, qkv, Bahdanau vs Luong, couplet rules), a panel's row labels into the panel on its left, a colour
    bar's title into the next panel (transformer), and the source characters turned sideways into one block."""
    page = browser.new_page(viewport={"width": width, "height": 1400})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        iframe, frame = _figure_frame(page, served, edition, stem)
        drawn = frame.evaluate("document.querySelector('.js-plotly-plot')._fullLayout.height")
        height = int(iframe.get_attribute("height"))
        assert drawn <= height <= drawn + SLACK, f"{stem}: frame {height} px, figure {drawn} px"
        assert frame.locator(".heatmaplayer").count() >= 2  # every panel drawn
        clashes = frame.evaluate(CLASHES)
        assert not clashes, f"{stem} at {width} px: {clashes[:10]}"
        ticks = frame.evaluate(TICKS)
        assert len(ticks) == frame.evaluate(LABELS), ticks  # every source token written under its panel
        assert not [t for t in ticks if "rotate" in t[1]], ticks  # upright, not turned sideways
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        iframe.screenshot(path=str(SCREENSHOTS / f"issue53-{(edition or 'zh/').strip('/')}-{width}-{stem}.png"))
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
