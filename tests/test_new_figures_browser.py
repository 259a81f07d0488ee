"""The figures added for issue #30 render inside their theory pages, in both editions, in a real browser.

The site is built strictly (as ``test_docs.py`` builds it) and served on 127.0.0.1; Chromium opens the Transformer
and steps pages in Chinese and English and checks, inside each new figure's iframe, that plotly drew a graph, that
the frame is as tall as the figure (not cut, no gap), that the tiny step-through opens on its first stage and that
its last stage, animated in the page, writes the context the library computes. Screenshots of every figure go to
``corpus.SCREENSHOTS``.
"""

from pathlib import Path

from corpus import SCREENSHOTS, chromium

from reports.theory_figures import tiny_steps

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {
    "theory/steps": ("theory-tiny-steps",),
    "theory/transformer": ("theory-positions", "theory-causal-mask"),
}
"""Page → the new figures it embeds."""
EDITIONS = ("", "en/")
SLACK = 40
"""How much taller than its figure a frame may be (px): the pages add a little room, never a blank band."""


def test_every_page_embeds_its_new_figures_in_both_editions(site):
    for page, stems in FIGURES.items():
        for edition in EDITIONS:
            html = (site / edition / page / "index.html").read_text(encoding="utf-8")
            for stem in stems:
                assert f'figures/{stem}.html"' in html, f"/{edition}{page}/ has no iframe of {stem}"
                assert (site / "figures" / f"{stem}.html").is_file(), stem


GRAPH = "() => { const g = document.querySelector('.js-plotly-plot'); return g && g._fullLayout && " \
        "g.querySelector('.main-svg') !== null; }"


def test_new_figures_draw_inside_their_frames_in_both_editions(served):
    from playwright.sync_api import sync_playwright

    executable = chromium()
    steps = tiny_steps()
    context = [f"{v:.2f}" for v in steps.context.tolist()]
    errors, shots = [], []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
            for path, stems in FIGURES.items():
                for edition in EDITIONS:
                    page.goto(f"{served}/{edition}{path}/", wait_until="load")
                    for stem in stems:
                        iframe = page.locator(f'article iframe[src$="figures/{stem}.html"]')
                        assert iframe.count() == 1, f"/{edition}{path}/: {stem}"
                        iframe.scroll_into_view_if_needed()
                        frame = iframe.element_handle().content_frame()
                        frame.wait_for_function(GRAPH, timeout=30_000)
                        drawn = frame.evaluate("document.querySelector('.js-plotly-plot')._fullLayout.height")
                        height = int(iframe.get_attribute("height"))
                        assert drawn <= height <= drawn + SLACK, f"{stem}: frame {height} px, figure {drawn} px"
                        if stem == "theory-tiny-steps":
                            _check_tiny_steps(frame, context)
                        shot = SCREENSHOTS / f"issue30-{(edition or 'zh/').strip('/')}-{stem}.png"
                        iframe.screenshot(path=str(shot))
                        shots.append(shot)
        finally:
            browser.close()
    assert not errors, errors
    assert all(s.stat().st_size > 10_000 for s in shots)  # a drawn figure, not a blank frame


def _check_tiny_steps(frame, context: list[str]) -> None:
    """It opens on stage 1 (the context still '?'); animated to stage 4 it writes the library's context."""
    gd = "document.querySelector('.js-plotly-plot')"
    opened = frame.evaluate(f"[{gd}.layout.sliders[0].active, {gd}.data[5].text[0]]")
    assert opened == [0, ["?"] * len(context)], opened
    frame.evaluate(f"Plotly.animate({gd}, ['3'], {{mode: 'immediate', frame: {{duration: 0, redraw: true}}, "
                   "transition: {duration: 0}})")
    frame.wait_for_function(f"() => {gd}.data[5].text[0][0] !== '?'", timeout=10_000)
    assert frame.evaluate(f"{gd}.data[5].text[0]") == context
    frame.evaluate(f"Plotly.animate({gd}, ['0'], {{mode: 'immediate', frame: {{duration: 0, redraw: true}}, "
                   "transition: {duration: 0}})")  # back to stage 1 for the screenshot
    frame.wait_for_function(f"() => {gd}.data[5].text[0][0] === '?'", timeout=10_000)
