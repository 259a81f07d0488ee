"""The documentation site builds strictly and renders formulas and diagrams offline."""

import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "tests" / "screenshots"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return out


def test_strict_build_has_theory_and_api_pages(site):
    for page in ("theory/scores/index.html", "theory/local/index.html", "api/attention/index.html",
                 "results/index.html", "figures/bleu-by-length-translation.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "attention" / "index.html").read_text(encoding="utf-8")
    assert "Luong et al. 2015" in api and "attention_core.attention.attention" in api
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis.com" not in text and "cdn.jsdelivr.net" not in text, html
        assert "unpkg.com" not in text, html


def test_browser_renders_math_and_mermaid_without_leaving_the_site(site):
    from playwright.sync_api import sync_playwright

    if not Path("/usr/bin/chromium").exists():
        pytest.fail("the browser test needs Debian chromium: apt-get install chromium fonts-noto-cjk")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    outside = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--headless", "--no-sandbox", "--disable-gpu",
                                              "--disable-background-networking", "--disable-component-update"])
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            page.on("request", lambda r: None if r.url.startswith((base, "data:", "blob:")) else outside.append(r.url))
            for path, diagram in (("/theory/steps/", True), ("/theory/scores/", False)):
                page.goto(base + path, wait_until="load")
                page.wait_for_selector("mjx-container", timeout=30_000)
                if diagram:  # Material draws Mermaid into a closed shadow root: the source text goes, a box stays
                    page.wait_for_function(
                        "() => { const m = document.querySelector('.mermaid');"
                        " return m && !m.textContent.includes('flowchart') && m.offsetHeight > 100; }",
                        timeout=30_000)
                body = page.locator("article").inner_text()
                assert "$$" not in body and "\\(" not in body and "\\[" not in body, path
            SCREENSHOTS.mkdir(exist_ok=True)
            page.goto(base + "/theory/steps/", wait_until="load")
            page.wait_for_selector("mjx-container", timeout=30_000)
            page.wait_for_timeout(1000)
            page.screenshot(path=str(SCREENSHOTS / "docs-steps.png"), full_page=True)
            browser.close()
    finally:
        server.shutdown()
    assert not outside, outside
