"""Issue #28 in the app: coverage under the heatmap, attention ↔ input × gradient, and gold alignments.

Handler tests on small untrained models (``app_fixtures.small_registry``), and one browser test on the bundled
models (Debian Chromium; skipped with the reason where it or the gold data is missing).
"""

import json
import math
import urllib.request

import gradio as gr
import pytest
import torch
from app_fixtures import ROOT, launch_app, open_details, small_registry, subword_registry
from corpus import SCREENSHOTS, chromium, data_dir

from attention_core.analysis.alignment import Gold, argmax_links, evaluate_links, force_decode, threshold_links
from attention_core.analysis.attribution import input_x_gradient, kendall_tau
from attention_core.data.subword import word_rows
from attention_core.decoding.coverage import Word
from attention_core.decoding.translator import SENTENCE_TOKENS
from demo.handlers import (
    ARGMAX,
    GOLD_PULL,
    GOLD_THRESHOLDS,
    GRADIENT,
    THRESHOLD,
    Settings,
    attention_view,
    link_marks,
    run,
    show_gold,
    with_gradient,
    with_sentence,
)
from demo.links import app_query, parse_query
from demo.models import BUNDLED
from demo.plots import FLAGGED, LINK_MARKS

REGISTRY = small_registry()
TEXT = "我喜欢自然语言处理"


def _bars(figure):
    """The coverage bars under a heatmap (the trace on the second y axis)."""
    found = [t for t in figure.data if t.type == "bar" and t.yaxis == "y2"]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("variant", ["bahdanau", "luong-dot", "luong-general-local-p"])
def test_the_coverage_row_is_output_coverage(variant):
    result = run(REGISTRY, "translation", TEXT, Settings(variant))
    translator = REGISTRY.get("translation", variant)
    (out,) = translator.translate_paragraph(TEXT, SENTENCE_TOKENS, beam_size=1, window="config", hard=False)
    bars = _bars(result.figure)
    assert list(bars.x) == list(range(len(out.source_tokens)))  # one bar under each heatmap column
    torch.testing.assert_close(torch.tensor(bars.y, dtype=torch.float32), out.coverage)
    # a plain reference: every row but <eos>, summed per source token
    reference = [sum(row[s] for row in out.weights[: len(out.tokens)].tolist()) for s in range(len(out.source_tokens))]
    assert bars.y == pytest.approx(reference, abs=1e-5)
    flagged = {t for word in translator.untranslated(out) for t in word.tokens}  # the library's flags
    assert [c == FLAGGED for c in bars.marker.color] == [j in flagged for j in bars.x]
    assert [bool(t) for t in bars.text] == [j in flagged for j in bars.x]


def test_flagged_words_are_red_and_named_in_the_info_line(monkeypatch):
    translator = REGISTRY.get("translation", "luong-dot")
    monkeypatch.setattr(type(translator), "untranslated",
                        lambda self, out: [Word("自然", "n", [3, 4])] if self is translator else [])
    result = run(REGISTRY, "translation", TEXT, Settings("luong-dot"))
    assert result.state["flagged"] == [3, 4]
    bars = _bars(result.figure)
    assert [c == FLAGGED for c in bars.marker.color] == [j in (3, 4) for j in range(len(bars.x))]
    assert [bool(t) for t in bars.text] == [j in (3, 4) for j in range(len(bars.x))]
    assert "possibly untranslated: 自然" in result.info  # the library's note, shown as it is
    note = next(line for line in result.info.splitlines() if "possibly untranslated" in line)
    assert note.endswith("theory/alignment/#coverage))")  # the page that explains the flag, not BLEU by length


def test_the_baseline_has_no_coverage_row():
    result = run(REGISTRY, "translation", TEXT, Settings("none"))
    assert not [t for t in result.figure.data if t.type == "bar"]


@pytest.mark.parametrize("variant", ["none", "luong-dot", "luong-general-local-p"])
def test_the_gradient_view_is_input_x_gradient(variant):
    result = run(REGISTRY, "translation", TEXT, Settings(variant))
    assert "gradient" not in result.state  # not computed on a run
    translator = REGISTRY.get("translation", variant)
    (out,) = translator.translate_paragraph(TEXT, SENTENCE_TOKENS, beam_size=1, window="config", hard=False)
    expected = input_x_gradient(translator, out)
    state = with_gradient(REGISTRY, result.state)
    assert "gradient" not in result.state  # the old state is left as it was
    view = attention_view(state, None, True, shown=GRADIENT)
    heat = view.heatmap.data[0]
    torch.testing.assert_close(torch.tensor(heat.z, dtype=torch.float32), expected.gradient, atol=1e-6, rtol=0)
    assert len(heat.y) == len(out.row_labels) and len(heat.x) == len(out.source_tokens)
    notes = [a.text for a in view.heatmap.layout.annotations if a.yref == "y"][:-1]  # one per row, then the heading
    taus = expected.agreement.tolist()
    assert notes == ["—" if math.isnan(t) else f"{t:+.2f}" for t in taus]
    kept = [t for t in taus if not math.isnan(t)]
    if kept:
        assert f"mean τ = {sum(kept) / len(kept):+.2f}" in view.info
    else:
        assert "no attention to compare with" in view.info
    # switching back draws attention (with its coverage) from the same state
    back = attention_view(state, None, True)
    if variant != "none":
        assert back.heatmap.data[0].z == result.figure.data[0].z
        assert _bars(back.heatmap).y == _bars(result.figure).y


@pytest.fixture(scope="module")
def pieces_registry(tmp_path_factory):
    return subword_registry(tmp_path_factory.mktemp("zoo"))


@pytest.mark.parametrize("variant", ["transformer", "luong-dot"])
def test_the_gradient_word_view_merges_pieces_as_attention_does(pieces_registry, variant):
    registry = pieces_registry
    result = run(registry, "translation", TEXT, Settings(variant))
    translator = registry.get("translation", variant)
    (out,) = translator.translate_paragraph(TEXT, SENTENCE_TOKENS, beam_size=1, window="config", hard=False)
    expected = input_x_gradient(translator, out)
    state = with_gradient(registry, result.state)
    pieces = attention_view(state, None, True, shown=GRADIENT).heatmap
    torch.testing.assert_close(torch.tensor(pieces.data[0].z, dtype=torch.float32), expected.gradient, atol=1e-6,
                               rtol=0)
    labels, merged = word_rows(out.row_labels, expected.gradient)
    assert len(labels) < len(out.row_labels)  # the untrained model wrote pieces: rows are merged
    words = attention_view(state, None, False, shown=GRADIENT).heatmap
    torch.testing.assert_close(torch.tensor(words.data[0].z, dtype=torch.float32), merged, atol=1e-6, rtol=0)
    _, attention = word_rows(out.row_labels, out.weights)
    tau = kendall_tau(attention, merged).tolist()
    notes = [a.text for a in words.layout.annotations if a.yref == "y"][:-1]
    assert notes == ["—" if math.isnan(t) else f"{t:+.2f}" for t in tau]
    assert list(words.data[0].y) == list(range(len(labels)))


def test_each_sentence_of_a_paragraph_gets_its_own_gradients():
    result = run(REGISTRY, "translation", "我喜欢自然语言处理。今天天气很好。", Settings("luong-dot"))
    first = with_gradient(REGISTRY, result.state)
    second = with_sentence(first, 1)
    assert "gradient" not in second  # not the first sentence's
    second = with_gradient(REGISTRY, second)
    translator = REGISTRY.get("translation", "luong-dot")
    outs = translator.translate_paragraph("我喜欢自然语言处理。今天天气很好。", SENTENCE_TOKENS, beam_size=1,
                                          window="config", hard=False)
    torch.testing.assert_close(torch.tensor(second["gradient"]), input_x_gradient(translator, outs[1]).gradient,
                               atol=1e-6, rtol=0)
    again = with_sentence(second, 0)  # kept with each sentence: coming back computes nothing
    assert again["gradient"] == first["gradient"]


def test_url_parameters_of_the_new_views():
    query = parse_query({"tab": "translation", "show": "gradient", "gold": "12"})
    assert query["shown"] == "gradient"
    assert query["gold"] == {"name": "tsinghua", "number": 12, "rule": THRESHOLD}
    query = parse_query({"tab": "translation", "gold": "150", "gold_set": "denero", "links": "argmax"})
    assert query["gold"] == {"name": "denero", "number": 150, "rule": ARGMAX}
    for bad in ({"gold": "151", "gold_set": "denero"}, {"gold": "0"}, {"gold": "x"}, {"gold": "3", "gold_set": "y"}):
        query = parse_query({"tab": "translation", **bad})
        assert "gold" not in query and len(query["problems"]) == 1  # said to the visitor, not ignored
    assert "shown" not in parse_query({"tab": "translation", "show": "nonsense"})
    assert parse_query({"tab": "own", "show": "gradient"})["shown"] == "gradient"
    assert "gold" not in parse_query({"tab": "couplet", "gold": "3"})  # only the translation tab has the panel


GOLD = Gold(("我", "喜欢", "自然语言"), ("i", "like", "natural", "language"),
            frozenset({(0, 0), (1, 1)}), frozenset({(0, 0), (1, 1), (2, 2), (2, 3)}))


def test_link_marks_by_hand():
    predicted = {(0, 0), (2, 2), (0, 1), (1, 3)}
    hit_sure, hit_possible, miss, unlinked, extra = LINK_MARKS
    assert link_marks(predicted, GOLD) == {hit_sure: {(0, 0)}, hit_possible: {(2, 2)}, miss: {(1, 1)},
                                           unlinked: {(2, 3)}, extra: {(0, 1), (1, 3)}}


@pytest.mark.parametrize("rule", [ARGMAX, THRESHOLD])
def test_the_gold_overlay_marks_hits_misses_and_extras_exactly(rule):
    translator = REGISTRY.get("translation", "luong-dot")
    weights = force_decode(translator, GOLD).weights
    links = argmax_links(weights) if rule == ARGMAX else threshold_links(weights, GOLD_THRESHOLDS["luong-dot"])
    view = show_gold(REGISTRY, "translation", "luong-dot", "", None, rule, gold=GOLD)
    assert view.links == links
    drawn = {t.name.rsplit(" (", 1)[0]: {(x, y) for x, y in zip(t.x, t.y)} for t in view.figure.data
             if t.type == "scatter"}
    hit_sure, hit_possible, miss, unlinked, extra = LINK_MARKS
    assert drawn == {hit_sure: {ln for ln in links if ln in GOLD.sure},
                     hit_possible: {ln for ln in links if ln in GOLD.possible and ln not in GOLD.sure},
                     miss: {ln for ln in GOLD.sure if ln not in links},
                     unlinked: {ln for ln in GOLD.possible if ln not in GOLD.sure and ln not in links},
                     extra: {ln for ln in links if ln not in GOLD.possible}}
    scores = evaluate_links([links], [GOLD], samples=0)
    assert view.scores == scores
    assert f"AER {scores['aer']:.1%}" in view.info and f"recall {scores['recall']:.1%}" in view.info
    heat = view.figure.data[0]
    torch.testing.assert_close(torch.tensor(heat.z, dtype=torch.float32), weights)
    assert list(heat.x) == [0, 1, 2] and list(heat.y) == [0, 1, 2, 3]


def test_the_gold_view_of_the_baseline_and_without_the_data(tmp_path):
    view = show_gold(REGISTRY, "translation", "none", "", None, gold=GOLD)
    assert "no alignment" in view.info and not view.links
    missing = show_gold(REGISTRY, "translation", "luong-dot", "tsinghua", 1, data=tmp_path)
    assert GOLD_PULL in missing.info and GOLD_PULL == "attention-lab data pull align-zh-en"
    assert str(tmp_path) in missing.info
    (tmp_path / "align-zh-en" / "denero").mkdir(parents=True)  # a partial copy: the files are missing
    partial = show_gold(REGISTRY, "translation", "luong-dot", "denero", 1, data=tmp_path)
    assert "could not be read" in partial.info and GOLD_PULL in partial.info
    with pytest.raises(gr.Error, match="unknown gold set"):
        show_gold(REGISTRY, "translation", "luong-dot", "nonsense", 1, data=tmp_path)


def test_gold_sentences_from_the_data_and_their_range():
    data = data_dir("align-zh-en")
    view = show_gold(REGISTRY, "translation", "luong-dot", "denero", 150, ARGMAX, data=data)
    assert "Macherey 150/150" in view.sentence and "AER" in view.info
    for bad in (0, 151, "x", 1.5):
        with pytest.raises(gr.Error, match="1–150"):
            show_gold(REGISTRY, "translation", "luong-dot", "denero", bad, data=data)
    assert "Tsinghua 450/450" in show_gold(REGISTRY, "translation", "luong-dot", "tsinghua", 450.0,
                                           data=data).sentence


def test_the_thresholds_are_those_the_benchmark_chose():
    path = ROOT / "results" / "alignment.json"
    if not path.is_file():
        pytest.skip("results/alignment.json not written (python benchmarks/alignment.py)")
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    chosen = {r["system"]: float(r["rule"].split("=")[1]) for r in rows
              if r["set"] == "denero" and r["rule"].startswith("threshold")
              and r["view"] in ("attention", "layer 2, head mean")}
    assert chosen == {k: v for k, v in GOLD_THRESHOLDS.items() if k in chosen}
    assert set(chosen) <= set(GOLD_THRESHOLDS)


def _wait_text(page, elem: str, text: str, present: bool = True, timeout: int = 60_000) -> None:
    """Wait until the element's text does (or does not) contain ``text``."""
    page.wait_for_function(
        "([id, text, present]) => { const e = document.querySelector('#' + id);"
        " return e && e.innerText.includes(text) === present; }", arg=[elem, text, present], timeout=timeout)


def _bar_count(page, elem: str) -> int:
    return page.locator(f"#{elem} .js-plotly-plot .barlayer .point").count()


def test_browser_coverage_gradient_and_gold_alignment():
    """On the bundled models: coverage bars, the gradient view and back, a flagged word, one gold sentence."""
    executable = chromium()
    data = data_dir("align-zh-en")
    if not list(BUNDLED.glob("translation/*/config.json")):
        pytest.fail(f"no bundled models under {BUNDLED}; train them with 'attention-lab zoo'")
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    proc, url = launch_app(env={"ATTENTION_LAB_DATA": str(data)})
    errors: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=["--headless", "--no-sandbox",
                                                                           "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, wait_until="load")
            box = page.locator("#translation-input textarea")
            box.fill("我的朋友张伟是一名麻醉师。")
            box.press("Enter")
            open_details(page, "translation")  # folded until opened; then open for the rest of the test
            _wait_text(page, "translation-info", "what the model read")
            heatmap = page.locator("#translation-heatmap")
            heatmap.locator(".js-plotly-plot svg.main-svg").first.wait_for(timeout=60_000)
            assert _bar_count(page, "translation-heatmap") == 13  # one coverage bar per source character
            assert "覆盖度" in heatmap.inner_text()
            heatmap.screenshot(path=str(SCREENSHOTS / "app-coverage.png"))

            page.locator("#translation-shown").get_by_text("gradient 梯度").click()
            _wait_text(page, "translation-info", "mean τ =")
            _wait_text(page, "translation-heatmap", "τ vs attn")
            assert _bar_count(page, "translation-heatmap") == 0
            assert "input × gradient" in heatmap.inner_text()
            heatmap.screenshot(path=str(SCREENSHOTS / "app-gradient.png"))

            page.locator("#translation-shown").get_by_text("attention 注意力").click()
            _wait_text(page, "translation-heatmap", "τ vs attn", present=False)
            _wait_text(page, "translation-info", "mean τ", present=False)
            assert _bar_count(page, "translation-heatmap") == 13

            # a sentence whose content word the default model hardly looked at: named, and its bars marked
            box.fill("这艘船太大，没法通过运河。")  # "This ship is too big.": the canal is left out
            box.press("Enter")
            _wait_text(page, "translation-info", "possibly untranslated: 运河")
            _wait_text(page, "translation-heatmap", "⚠")
            page.screenshot(path=str(SCREENSHOTS / "app-flagged.png"), full_page=True)

            page.locator("#translation-gold-number input").fill("12")
            page.locator("#translation-gold-run").click()
            _wait_text(page, "translation-gold-info", "AER")
            assert "Tsinghua 12/450" in page.locator("#translation-gold-sentence").inner_text()
            gold = page.locator("#translation-gold-heatmap")
            gold.locator(".js-plotly-plot svg.main-svg").first.wait_for(timeout=60_000)
            legend = gold.inner_text()
            for kind in ("hit (sure)", "miss (sure)", "extra"):
                assert kind in legend
            page.locator("#translation-gold").first.screenshot(path=str(SCREENSHOTS / "app-gold.png"))

            # the same views from a URL: the gradient view and a DeNero sentence with Luong's argmax
            page.goto(url + app_query("translation", text="我的朋友张伟是一名麻醉师。", show="gradient", gold=3,
                                      gold_set="denero", links="argmax"), wait_until="load")
            _wait_text(page, "translation-info", "mean τ =", timeout=120_000)
            _wait_text(page, "translation-gold-info", "argmax")
            assert "Macherey 3/150" in page.locator("#translation-gold-sentence").inner_text()
            page.screenshot(path=str(SCREENSHOTS / "app-url-gradient-gold.png"), full_page=True)
            # a number past the set's end: a message, and the panel back as it was (it kept a bare "Error" badge)
            page.locator("#translation-gold-number input").fill("200")
            page.locator("#translation-gold-number input").press("Enter")
            _wait_text(page, "translation-gold-heatmap", "Choose a sentence", timeout=60_000)
            assert page.get_by_text("句号无效").count() > 0  # the app's bilingual message, not Gradio's own
            assert page.locator("#translation-gold-sentence").inner_text().strip() == ""
            assert "AER" not in page.locator("#translation-gold-info").inner_text()  # no stale sentence's numbers
            assert "Error" not in page.locator("#translation-gold-heatmap").inner_text()
            page.locator("#translation-gold").first.screenshot(path=str(SCREENSHOTS / "app-gold-refused.png"))

            # Compare: switching the task leaves nothing of the last task's run on screen (it left English outputs,
            # heatmaps and entropy under the couplet task)
            page.goto(url + "?tab=compare", wait_until="load")
            page.locator("#compare-run").click()
            page.wait_for_function("() => document.querySelector('#compare-A-output textarea')?.value.length > 0",
                                   timeout=120_000)
            open_details(page, "compare-A")
            example = page.locator("#compare-input textarea").input_value()
            page.locator("#compare-task").get_by_text("对联 Couplet").click()
            page.wait_for_function(
                "() => document.querySelector('#compare-A-output textarea').value === ''"
                " && document.querySelector('#compare-B-output textarea').value === ''"
                " && !document.querySelector('#compare-A-info').innerText.trim()"
                " && !document.querySelector('#compare-A-summary').innerText.trim()", timeout=60_000)
            assert page.locator("#compare-input textarea").input_value() != example  # the couplet example came
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not errors, errors


def test_the_real_app_without_the_gold_data_says_how_to_get_it(tmp_path):
    """``python app.py`` on an empty data folder: the gold endpoint answers with the command, not a traceback."""
    from gradio_client import Client

    if not list(BUNDLED.glob("translation/*/config.json")):
        pytest.fail(f"no bundled models under {BUNDLED}; train them with 'attention-lab zoo'")
    proc, url = launch_app(env={"ATTENTION_LAB_DATA": str(tmp_path)})
    try:
        with urllib.request.urlopen(url + "config", timeout=30) as page:  # the panel says it before any click
            assert GOLD_PULL in page.read().decode("utf-8")
        sentence, info, _ = Client(url, verbose=False).predict("luong-general", "tsinghua", 12, THRESHOLD,
                                                               api_name="/translation_gold")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert sentence == "" and GOLD_PULL in info and str(tmp_path) in info


def test_the_gradient_view_says_when_it_explains_other_attention_than_shown():
    note = "the gradient goes through the model's own soft attention and window"
    for settings, said in ((Settings("luong-dot"), False), (Settings("luong-dot", hard=True), True),
                           (Settings("luong-dot", window="2"), True)):
        state = with_gradient(REGISTRY, run(REGISTRY, "translation", TEXT, settings).state)
        assert (note in attention_view(state, shown=GRADIENT).info) is said
