"""Issue #54, the app as a visitor meets it: their own words on the heatmap, settings that apply, a calm page.

Handler tests build their outputs by hand or use small untrained models (``app_fixtures.small_registry``); the
browser tests run the real app on the bundled models (Debian Chromium; skipped with the reason where it is missing).
"""

import json
import re
import threading
from contextlib import contextmanager

import gradio as gr
import pytest
import torch
from app_fixtures import launch_app, open_details, small_registry
from corpus import SCREENSHOTS, chromium

from app import STAGES
from attention_core.decoding.translator import Output
from attention_core.editing.names import Carried, Prepared, restore
from attention_core.editing.rare import RareWord
from demo.handlers import (
    Settings,
    attention_view,
    axis,
    drawn,
    inserted_rows,
    model_summary,
    run,
    self_attention_figures,
    sentence_state,
    spread,
    typed_axes,
)
from demo.models import BUNDLED, OWN, LazyModels, ModelRegistry
from demo.plots import INSERTED, alignment_figure
from demo.ui import MODEL_OWN, ModelResetJS, applies, build_app, say_reset, window_info

TYPED = "我在北京见张伟。"
READ = "我在波士顿见汤姆。"
"""A sentence as typed, and as the model reads it with the names switch: 北京 → 波士顿, 张伟 → 汤姆."""


def _carried_output(tokens: list[str], weights: torch.Tensor | None = None) -> Output:
    """The model's output for ``READ`` (``tokens``), restored by the library: the names written over the stand-ins."""
    source = list(READ)
    if weights is None:
        weights = torch.full((len(tokens) + 1, len(source)), 1 / len(source))
    prepared = Prepared(TYPED, READ, [
        Carried(RareWord("北京", 2, "Beijing", "dictionary", "place"), "波士顿", "Boston", 2),
        Carried(RareWord("张伟", 4, "Zhang Wei", "pinyin"), "汤姆", "Tom", 6),
    ])
    out = Output(source, [None] * len(source), tokens, " ".join(tokens), weights, None, -1.0, True)
    return restore(out, prepared, list)


def _state(out: Output, window: str | int = "config", maps=None) -> dict:
    """The state of one output, as a run keeps it (a small untrained model: only its settings count here)."""
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model

    model = build_model(ModelConfig(src_vocab_size=12, tgt_vocab_size=12, hidden_size=8, emb_size=8)).eval()
    return sentence_state(out, model, window, maps, tokenize=list)


def test_spread_lays_a_name_over_its_stand_ins_rows():
    assert spread(list("北京南站"), 3) == ["北京", "南", "站"]
    assert spread(["Zhang", "Wei"], 1, " ") == ["Zhang Wei"]
    assert spread(["9:45", "p.m."], 2, " ") == ["9:45", "p.m."]
    assert spread(["Beijing"], 2) == ["Beijing 1/2", "Beijing 2/2"]  # no row left without a label


def test_the_library_records_where_it_wrote_each_name():
    out = _carried_output(["i", "see", "tom", "in", "boston", "."])
    assert out.text == "i see Zhang Wei in Beijing ."
    assert out.names.written == {2: (1, "Zhang Wei"), 4: (1, "Beijing")} and out.names.inserted == {}


def test_the_axes_show_what_was_typed_and_the_notes_the_stand_ins():
    out = _carried_output(["i", "see", "tom", "in", "bos", "##ton", "."])  # boston in two pieces
    axes = typed_axes(out, list)
    # 北京 over the three columns of 波士顿: 北 over 波士, 京 over 顿; no column is left over
    assert axes["source"][0] == list(TYPED)
    assert axes["columns"] == [0, 1, 2, 2, 3, 4, 5, 6, 7]
    assert "波士" in axes["source"][1][2] and "北京" in axes["source"][1][2] and "added" in axes["source"][1][2]
    assert "顿" in axes["source"][1][3] and axes["source"][1][0] == ""
    assert axes["words"][0] == ["i", "see", "Zhang Wei", "in", "Beijing", ".", "<eos>"]
    assert axes["output"][0] == ["i", "see", "Zhang Wei", "in", "Beijing 1/2", "Beijing 2/2", ".", "<eos>"]
    assert "tom" in axes["words"][1][2] and "boston" in axes["words"][1][4]
    # without the names switch (or a tokeniser) the model's tokens stay
    plain = Output(list(READ), [None] * len(READ), ["x"], "x", torch.ones(2, len(READ)) / len(READ), None, 0.0, True)
    assert typed_axes(plain, list)["source"][0] == list(READ) and typed_axes(plain, list)["columns"] is None
    assert typed_axes(out)["source"][0] == list(READ)


def test_the_heatmap_draws_the_typed_words_and_hovers_the_stand_ins():
    out = _carried_output(["i", "see", "tom", "in", "boston", "."])
    state = _state(out)
    assert state["source"] == list(READ)  # what the model read stays in the state (the gradients feed it back)
    view = attention_view(state, 1)
    ticks = list(view.heatmap.layout.xaxis.ticktext)
    assert ticks == list(TYPED) and "·" not in ticks  # issue #54: no column without a typed character
    assert "Beijing" in view.heatmap.layout.yaxis.ticktext and "boston" not in view.heatmap.layout.yaxis.ticktext
    hover = view.heatmap.data[0].text[4][2]  # row "Beijing", column 北
    assert "the model read 波士" in hover and "the model wrote boston" in hover
    assert axis(state, "source")[0] == list(view.bars.layout.xaxis.ticktext)
    # the stand-in's columns are added up under the characters typed: rows and coverage keep their totals
    weights = torch.tensor(state["weights"])
    z = torch.tensor(view.heatmap.data[0].z)
    assert z.shape == (weights.size(0), len(TYPED))
    torch.testing.assert_close(z[:, 2], weights[:, 2] + weights[:, 3], atol=1e-3, rtol=0)
    torch.testing.assert_close(z.sum(dim=1), weights.sum(dim=1), atol=1e-3, rtol=0)
    coverage = next(trace for trace in view.heatmap.data if trace.type == "bar").y
    assert len(coverage) == len(TYPED) and sum(coverage) == pytest.approx(sum(state["coverage"]), abs=1e-3)
    assert len(view.bars.data[0].y) == len(TYPED)


def test_a_window_on_merged_columns_keeps_its_edges():
    """A local window's band over columns drawn merged still covers the model's p_t ± D (on the columns drawn)."""
    out = _carried_output(["i", "see", "tom", "in", "boston", "."])
    state = {**_state(out, 1), "centres": [3.0] * 7, "word_centres": [3.0] * 7}  # D = 1 around 士
    shown = drawn(state)
    assert shown["centres"][0] == pytest.approx(2.25)  # 士 is the second half of 北 (over 波士)
    assert shown["bands"][0] == (pytest.approx(1.5), pytest.approx(3.5))  # the model's 波士顿: 北 and 京 whole
    assert drawn(shown) is shown  # drawn once


def _left_out_name() -> Output:
    """The model left out 汤姆: the library places Zhang Wei by attention, before the word after the peak."""
    tokens = ["i", "see", "in", "boston", "."]
    weights = torch.full((len(tokens) + 1, len(READ)), 0.01)
    for row, column in enumerate([0, 5, 1, 2, 8, 8]):  # each word's peak: 我 见 在 波 。 。
        weights[row, column] = 1.0
    return _carried_output(tokens, weights / weights.sum(dim=1, keepdim=True))


def test_a_name_placed_by_attention_has_a_row_of_its_own():
    """Issue #54: the output says Zhang Wei, so the heatmap has a row for it: empty, shaded, marked and explained."""
    out = _left_out_name()
    assert out.names.placed == ["carried", "attention"]
    assert out.text == "i see in Beijing Zhang Wei ." and out.names.inserted == {4: [("Zhang Wei", "汤姆")]}
    state = _state(out)
    assert [row[:2] for row in inserted_rows(state, "words")] == [(4, "Zhang Wei")]
    for step in (None, 5):
        heat = attention_view(state, step).heatmap
        rows = list(heat.layout.yaxis.ticktext)
        assert rows == ["i", "see", "in", "Beijing", "Zhang Wei", ".", "&lt;eos&gt;"]
        words = {w.lower() for row in rows for w in re.findall(r"\w+", row)}
        assert {w.lower() for w in re.findall(r"\w+", out.text)} <= words  # every word the visitor sees has a row
        assert list(heat.data[0].z[4]) == [None] * len(TYPED) and "汤姆" in heat.data[0].text[4][0]
        assert [a.text for a in heat.layout.annotations if a.y == 4] == [INSERTED]
        if step == 5:  # the step's row (the model's 5th, ".") is outlined below the inserted row
            outline = [shape for shape in heat.layout.shapes if shape.line.color == "crimson"]
            assert [(shape.y0, shape.y1) for shape in outline] == [(4.5, 5.5)]


def test_the_gradient_and_a_transformers_maps_draw_the_same_rows_and_columns():
    """The gradient view, and a Transformer's maps, take the same typed columns and inserted rows as the heatmap."""
    from attention_core.model.transformer import AttentionMaps
    from demo.handlers import gradient_figure

    out = _left_out_name()
    T, S = len(out.row_labels), len(READ)
    maps = AttentionMaps(torch.softmax(torch.randn(2, 2, S, S), -1), torch.softmax(torch.randn(2, 2, T, T), -1),
                         torch.softmax(torch.randn(2, 2, T, S), -1))
    state = {**_state(out, maps=maps), "gradient": out.weights.tolist(), "agreement": [0.5] * T}
    rows = ["i", "see", "in", "Beijing", "Zhang Wei", ".", "&lt;eos&gt;"]
    gradient = gradient_figure(state, None, False)
    assert list(gradient.layout.yaxis.ticktext) == rows and list(gradient.layout.xaxis.ticktext) == list(TYPED)
    taus = [a for a in gradient.layout.annotations if a.text == "+0.50"]
    assert sorted(a.y for a in taus) == [0, 1, 2, 3, 5, 6]  # no τ on the inserted row
    encoder, decoder = self_attention_figures(state, 2, "mean", False)
    assert list(encoder.layout.xaxis.ticktext) == list(encoder.layout.yaxis.ticktext) == list(TYPED)
    assert torch.tensor(encoder.data[0].z).sum(dim=1).tolist() == pytest.approx([1.0] * len(TYPED), abs=2e-3)
    assert list(decoder.layout.yaxis.ticktext) == rows
    heat = attention_view(state).heatmap  # the cross-attention
    assert list(heat.layout.xaxis.ticktext) == list(TYPED) and list(heat.layout.yaxis.ticktext) == rows


def test_hover_notes_are_escaped():
    figure = alignment_figure(["a"], ["b"], [[1.0]], x_notes=["<i>x</i>"], y_notes=[""])
    assert "&lt;i&gt;x&lt;/i&gt;" in figure.data[0].text[0][0]


def _registry_with_a_transformer():
    """The small untrained models, and a small Transformer beside them."""
    from attention_core.data.tasks import get_task
    from attention_core.decoding.translator import Translator
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model

    registry = small_registry()
    rnn = registry.models["translation"]["luong-dot"]
    cfg = ModelConfig(src_vocab_size=len(rnn.src_vocab), tgt_vocab_size=len(rnn.tgt_vocab), decoder="transformer",
                      score="scaled_dot", hidden_size=8, emb_size=8, heads=2, ff_size=16)
    registry.models["translation"]["transformer"] = Translator(build_model(cfg).eval(), rnn.src_vocab,
                                                               rnn.tgt_vocab, get_task("translation"))
    return registry


def test_each_model_says_which_settings_apply_to_it():
    registry = _registry_with_a_transformer()
    assert applies(registry, "translation", "none") == {"window": False, "hard": False, "names": True}
    assert applies(registry, "translation", "luong-dot") == {"window": True, "hard": True, "names": True}
    assert applies(registry, "couplet", "luong-dot")["names"] is False  # a couplet model reads no names
    assert "Transformer" in window_info(registry, "translation", "transformer")
    assert "p_t" in window_info(registry, "translation", "luong-general-local-p")
    assert "D = 2" in window_info(registry, "translation", "luong-general-local-p")
    assert "no window" in window_info(registry, "translation", "none")
    for variant in ("luong-dot", "transformer"):  # issue #54, F7: a window on a model trained global costs it
        assert "small D" in window_info(registry, "translation", variant)


def test_another_model_says_so_when_its_window_or_hard_were_put_back(monkeypatch):
    said = []
    monkeypatch.setattr(gr, "Info", lambda message, **_: said.append(message))
    say_reset(json.dumps(["8", True]))
    assert "window D 8" in said[0] and "hard" in said[0]
    say_reset(json.dumps(list(MODEL_OWN)))  # the model's own already: nothing to say
    assert len(said) == 1


def test_switching_models_resets_in_the_page_before_it_runs_in_every_tab():
    """Wiring: a visitor's choice of model first resets window and soft/hard (in the page), then runs again."""
    app = build_app(_registry_with_a_transformer())
    config = app.get_config_file()
    ids = {block.elem_id: i for i, block in app.blocks.items() if getattr(block, "elem_id", None)}
    deps = config["dependencies"]
    for prefix in ("translation", "couplet", "compare-A", "compare-B"):
        variant, window, hard = (ids[f"{prefix}-{name}"] for name in ("variant", "window", "hard"))
        chosen = [d for d in deps if (variant, "input") in [tuple(t) for t in d["targets"]]]
        reset = [d for d in chosen if set(d["outputs"]) == {window, hard}]
        assert len(reset) == 1, prefix
        # in the page at once (no server call a window chosen meanwhile could lose to), against the model entered
        page_js = ModelResetJS(f"{prefix}-variant")
        assert reset[0]["js"] == page_js.reset and not reset[0]["backend_fn"], prefix
        entered = [d for d in deps if (variant, "focus") in [tuple(t) for t in d["targets"]]]
        assert [d["js"] for d in entered] == [page_js.entered], prefix
        # nothing else a choice of model starts reads the window or soft/hard (the gold panel reads the model only)
        assert not [d for d in chosen if d is not reset[0] and {window, hard} & set(d["inputs"])], prefix
        runs = [d for d in deps if d["trigger_after"] == reset[0]["id"]]
        assert len(runs) == 1 and runs[0]["js"] == page_js.take, prefix  # it runs only on what was put back
        assert {window, hard} <= set(runs[0]["inputs"]), prefix  # and reads the values reset
    # the settings follow the model: greyed without attention, the window's line names what it does
    follows = [d for d in deps if (ids["translation-variant"], "change") in [tuple(t) for t in d["targets"]]]
    assert any({ids["translation-window"], ids["translation-hard"]} <= set(d["outputs"]) for d in follows)


def test_the_page_side_reset_in_a_browser():
    """ModelResetJS's three functions, run in Chromium as the page runs them (no app): the cases a visitor makes."""
    from playwright.sync_api import sync_playwright

    skip = {"__type__": "update"}  # an output left as it is
    js, other = ModelResetJS("translation-variant"), ModelResetJS("compare-A-variant")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page()

        def call(function: str, *args: object) -> list:
            return page.evaluate(f"(args) => ({function})(...args)", list(args))

        call(js.entered, "luong-general")
        assert call(js.reset, "luong-general", "8", True) == [skip, skip]  # the list only opened and left
        assert call(js.take, "", "text") == ["", "text"]  # no run
        assert call(js.reset, "transformer", "8", True) == list(MODEL_OWN)  # another model: its own, at once
        assert call(js.reset, "transformer", "default", False) == [skip, skip]  # the second input, as it is left
        assert call(js.take, "", "text") == [json.dumps(["8", True], separators=(",", ":")), "text"]
        assert call(js.take, "", "text") == ["", "text"]  # handed to one run only
        call(other.entered, "none")  # each drop-down has its own record
        call(js.entered, "transformer")
        assert call(js.reset, "luong-dot", "4", False) == list(MODEL_OWN)
        assert call(js.reset, "bahdanau", "default", False) == list(MODEL_OWN)  # a second choice before a run
        assert call(other.reset, "none", "2", True) == [skip, skip]
        assert json.loads(call(js.take, "")[0]) == ["4", False]  # the visitor's window is the one told of
        browser.close()


def test_couplet_rules_are_greyed_without_the_constraints():
    app = build_app(small_registry())
    ids = {block.elem_id: i for i, block in app.blocks.items() if getattr(block, "elem_id", None)}
    rules = {ids[f"couplet-{name}"] for name in ("mirror", "no-reuse", "tone", "cliche")}
    deps = app.get_config_file()["dependencies"]
    assert any(set(d["outputs"]) == rules for d in deps)


# the real app, in a browser ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app_url():
    chromium()  # skipped (or failed under CI) before the app starts, where there is no browser
    if not list(BUNDLED.glob("*/*/config.json")):
        pytest.fail(f"no bundled models under {BUNDLED}; train them with 'attention-lab zoo'")
    proc, url = launch_app()
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@contextmanager
def _page(app_url: str, height: int = 1400, width: int = 1400):
    """A browser page on the app (Debian Chromium, headless); fails the test on a script error in the page."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(app_url, wait_until="load")
        page.locator("textarea").first.wait_for(state="attached", timeout=120_000)  # Gradio draws the page late
        yield page
        browser.close()
    assert not errors, errors


def _ticks(page, elem: str, axis_class: str) -> list[str]:
    """The tick labels a heatmap draws on one axis (``xtick`` or ``ytick``), as the browser shows them."""
    return page.locator(f"#{elem} .main-svg .{axis_class} text").all_text_contents()


def test_browser_the_heatmap_shows_the_name_and_place_as_typed(app_url):
    with _page(app_url) as page:
        page.locator("#translation-input textarea").fill("张伟明天在北京见面。")
        page.locator("#translation-run").click()
        page.wait_for_function(
            "() => { const t = document.querySelector('#translation-output textarea'); return t && t.value; }",
            timeout=120_000)
        page.wait_for_function("() => document.querySelector('#translation-heatmap .xtick text')", timeout=60_000)
        columns, rows = _ticks(page, "translation-heatmap", "xtick"), _ticks(page, "translation-heatmap", "ytick")
        assert {"张", "伟", "北", "京"} <= set(columns), columns  # the typed characters, not the stand-ins
        assert not {"汤", "姆", "波", "士", "顿"} & set(columns), columns
        assert not {"tom", "boston"} & {row.lower() for row in rows}, rows
        assert {"Zhang Wei", "Beijing"} & set(rows), rows
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "app-typed-names.png"), full_page=True)


def _wait_text(page, elem: str, text: str, present: bool = True, timeout: int = 120_000) -> str:
    """Wait until ``#elem`` holds (or no longer holds) ``text``, folded or not (``textContent``); return it."""
    page.wait_for_function(
        "([elem, text, present]) => { const e = document.querySelector('#' + elem);"
        " return e && e.textContent.includes(text) === present; }", arg=[elem, text, present], timeout=timeout)
    return page.locator(f"#{elem}").text_content()


def test_browser_another_model_never_takes_the_window_chosen_for_the_last(app_url):
    with _page(app_url) as page:
        page.locator("#translation-variant input").click()
        page.get_by_role("option", name=re.compile("local-p")).click()
        page.locator("#translation-window input").click()
        page.get_by_role("option", name="8", exact=True).click()
        page.locator("#translation-input textarea").fill("我们每天早上七点吃早饭。")
        page.locator("#translation-run").click()
        _wait_text(page, "translation-summary", "window D = 8")
        page.locator("#translation-variant input").click()
        page.get_by_role("option", name=re.compile("^Transformer")).click()  # runs again by itself
        summary = _wait_text(page, "translation-summary", "Transformer")
        assert "D = 8" not in summary
        said = page.get_by_text("back to the new model's own")
        said.first.wait_for(timeout=30_000)
        assert page.locator("#translation-window input").input_value() == "default"
        assert "D windows every cross-attention layer" in page.locator("#translation-window").text_content()
        open_details(page, "translation")
        details = _wait_text(page, "translation-info", "Transformer")
        assert "window 窗口: global" in details and "D = 8" not in details
        # said once, though the drop-down fires twice (on the choice and as it is left): counted once all has run
        page.wait_for_function("() => !document.querySelector('.progress-text, .eta-bar')", timeout=60_000)
        assert said.count() == 1


def test_browser_opening_the_model_list_and_leaving_it_keeps_the_window(app_url):
    """A drop-down fires ``input`` when it is only entered and left: that is not another model."""
    with _page(app_url) as page:
        page.locator("#translation-window input").click()
        page.get_by_role("option", name="8", exact=True).click()
        page.locator("#translation-variant input").click()
        page.get_by_role("option", name=re.compile("local-p")).wait_for()
        page.locator("#translation-input textarea").fill("我们每天早上七点吃早饭。")  # leaves it without a choice
        page.locator("#translation-run").click()
        _wait_text(page, "translation-summary", "window D = 8")
        assert page.locator("#translation-window input").input_value() == "8"


def test_browser_a_summary_line_and_the_details_folded_until_opened(app_url):
    with _page(app_url) as page:
        page.locator("#translation-input textarea").fill("张伟明天在北京见面。")
        page.locator("#translation-run").click()
        summary = _wait_text(page, "translation-summary", " ms")
        assert "carried" in summary and "\n" not in summary.strip()
        line = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#translation-summary p'))"
                             ".lineHeight)")
        assert page.locator("#translation-summary").bounding_box()["height"] < 2.5 * line  # one line at 1400 px
        assert not page.locator("#translation-info").is_visible()  # folded by default
        stored = "() => localStorage.getItem('attention-lab-details')"
        before = page.evaluate(stored)
        page.locator("#translation-details").get_by_text("details 详情").click()
        page.locator("#translation-info").get_by_text("what the model read").wait_for(timeout=30_000)
        # the box opens in the page at once; the server's answer that stores it comes after (slow on a busy machine)
        page.wait_for_function(f"(before) => ({stored})() !== before", arg=before, timeout=60_000)
        # remembered in this browser: open again after a reload, and the next run keeps it open
        page.reload(wait_until="load")
        page.locator("textarea").first.wait_for(state="attached", timeout=120_000)  # Gradio draws the page late
        page.locator("#translation-input textarea").fill("今天天气很好")
        page.locator("#translation-run").click()
        page.locator("#translation-info").get_by_text("what the model read").wait_for(timeout=120_000)
        assert not page.locator("#couplet-info").is_visible()  # each box is remembered on its own


def _gold_box(app):
    return next(block for block in app.blocks.values() if getattr(block, "elem_id", None) == "translation-gold")


def test_the_gold_section_is_folded_and_says_how_to_get_its_data_when_it_is_absent(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    box = _gold_box(build_app(small_registry()))
    assert isinstance(box, gr.Accordion) and not box.open
    assert "attention-lab data pull align-zh-en" in box.label
    for name in ("tsinghua", "denero"):
        (tmp_path / "align-zh-en" / name).mkdir(parents=True)
    box = _gold_box(build_app(small_registry()))
    assert box.open and "data pull" not in box.label


def test_the_self_attention_titles_reserve_their_own_room():
    """The layer/head line is the title's subtitle, and the title pushes the margin (it ran into the axis title)."""
    from demo.handlers import self_attention_figures

    registry = _registry_with_a_transformer()
    result = run(registry, "translation", "我喜欢自然语言处理", Settings("transformer"))
    state = result.state
    encoder, decoder = self_attention_figures(state, state["layers"], "mean", False)
    for figure in (encoder, decoder):
        assert figure.layout.title.subtitle.text.startswith("layer 层")
        assert figure.layout.title.automargin and figure.layout.title.yref == "container"
        assert figure.layout.xaxis.automargin


OVERLAPPING = """(root) => {
  const texts = [...document.querySelectorAll(root + ' .js-plotly-plot text')].filter(t => t.textContent.trim())
     .map(t => [t, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const found = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++)
    if (hit(texts[i][1], texts[j][1]) && !texts[i][0].contains(texts[j][0]) && !texts[j][0].contains(texts[i][0]))
      found.push(texts[i][0].textContent + ' <> ' + texts[j][0].textContent);
  return found;
}"""
"""The pairs of texts of a figure in the page whose boxes overlap (titles, axis titles, tick labels, legends)."""


@pytest.mark.parametrize("width", [1400, 390])
def test_browser_no_text_runs_into_another_in_the_transformer_maps(app_url, width):
    with _page(app_url, 1200, width) as page:
        page.locator("#translation-variant input").click()
        page.get_by_role("option", name=re.compile("^Transformer")).click()
        page.locator("#translation-input textarea").fill("我们每天早上七点吃早饭，然后一起去学校。")
        page.locator("#translation-run").click()
        page.locator("#translation-decoder .js-plotly-plot .xtick text").first.wait_for(timeout=120_000)
        page.wait_for_timeout(1000)  # plotly settles its margins
        # a phone's 20 characters share 250 px: the page thins the crowded labels (issue #54)
        for plot in ("translation-decoder", "translation-heatmap", "translation-encoder", "translation-steps"):
            assert page.evaluate(OVERLAPPING, f"#{plot}") == [], plot
            assert page.evaluate(CLIPPED, f"#{plot}") == [], plot
        page.screenshot(path=str(SCREENSHOTS / f"app-transformer-{width}.png"), full_page=True)


CLIPPED = """(root) => {
  const plot = document.querySelector(root + ' .js-plotly-plot').getBoundingClientRect();
  return [...document.querySelectorAll(root + ' .js-plotly-plot text')].filter(t => t.textContent.trim())
    .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0)
    .filter(([, r]) => r.left < plot.left - 1 || r.right > plot.right + 1).map(([text]) => text);
}"""
"""The texts of a figure in the page that run past its edges (a title wider than a phone was cut at both)."""

NAME_SENTENCE = "我的朋友张伟住在北京。"
"""The newcomer's sentence of issue #54: the model reads 汤姆 for 张伟 and 波士顿 (three columns) for 北京 (two)."""


def _words(texts: list[str]) -> set[str]:
    return {word.lower() for text in texts for word in re.findall(r"\w+", text)}


def _wait_heatmap(page, elem: str, output: str) -> None:
    page.wait_for_function(
        "(elem) => { const t = document.querySelector('#' + elem + ' textarea'); return t && t.value; }",
        arg=output, timeout=120_000)
    page.wait_for_function("(elem) => document.querySelector('#' + elem + ' .xtick text')", arg=elem,
                           timeout=60_000)
    page.wait_for_timeout(1000)  # plotly settles its margins, and the page thins crowded labels


def test_browser_every_output_word_has_a_row_and_every_column_is_typed(app_url):
    """Issue #54 (F2): the output says Zhang Wei, so a row does; 北京 takes the stand-in 波士顿's columns, no "·" left
    over; in the translation tab and in Compare (the same code draws both)."""
    with _page(app_url) as page:
        page.locator("#translation-input textarea").fill(NAME_SENTENCE)
        page.locator("#translation-run").click()
        _wait_heatmap(page, "translation-heatmap", "translation-output")
        output = page.locator("#translation-output textarea").input_value()
        assert "Zhang Wei" in output and "Beijing" in output, output
        assert _ticks(page, "translation-heatmap", "xtick") == list(NAME_SENTENCE)
        rows = _ticks(page, "translation-heatmap", "ytick")
        assert _words([output]) <= _words(rows), (output, rows)
        page.get_by_role("tab", name="对比 Compare").click()
        page.locator("#compare-input textarea").fill(NAME_SENTENCE)
        page.locator("#compare-run").click()
        page.wait_for_function("() => document.querySelector('#compare-B-output textarea').value.includes('Zhang')",
                               timeout=120_000)
        page.wait_for_function("() => [...document.querySelectorAll('#compare-B-heatmap .xtick text')]"
                               ".some(t => t.textContent === '张')", timeout=60_000)
        output = page.locator("#compare-B-output textarea").input_value()
        assert _ticks(page, "compare-B-heatmap", "xtick") == list(NAME_SENTENCE)
        assert _words([output]) <= _words(_ticks(page, "compare-B-heatmap", "ytick")), output
        page.screenshot(path=str(SCREENSHOTS / "app-name-rows.png"), full_page=True)


NARROW = """() => {
  const narrow = [];
  document.querySelectorAll('#translation-shown, #translation-pieces, #translation-sentence').forEach(b => {
    const w = b.getBoundingClientRect().width, row = b.closest('.row').getBoundingClientRect().width;
    if (w < 0.9 * row) narrow.push(b.id + ': ' + Math.round(w) + ' of ' + Math.round(row) + ' px'); });
  return narrow;
}"""
"""The translation tab's controls that share a row with another (side by side) instead of taking its width."""


@pytest.mark.parametrize("width", [1400, 390])
def test_browser_figures_and_controls_read_on_a_phone(app_url, width):
    """Issue #54 (F4, F5): at 390 px no tick label runs into another and no title is cut (the page thins crowded
    labels, titles break into lines), the controls take one column, and a folded box's title stays clear of its
    arrow; at 1400 px the same figures read as before and controls stay side by side."""
    with _page(app_url, 1200, width) as page:
        page.locator("#translation-input textarea").fill(NAME_SENTENCE)
        page.locator("#translation-run").click()
        _wait_heatmap(page, "translation-heatmap", "translation-output")
        for plot in ("translation-heatmap", "translation-steps"):
            assert page.evaluate(OVERLAPPING, f"#{plot}") == [], plot
            assert page.evaluate(CLIPPED, f"#{plot}") == [], plot
        narrow = page.evaluate(NARROW)
        assert (narrow == []) if width < 640 else len(narrow) == 3, narrow
        label = page.locator("#translation-details .label-wrap")
        text, arrow = label.locator("span").first.bounding_box(), label.locator(".icon").bounding_box()
        assert text["x"] + text["width"] <= arrow["x"], (text, arrow)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # no sideways scrolling
        page.screenshot(path=str(SCREENSHOTS / f"app-phone-translation-{width}.png"), full_page=True)
        page.get_by_role("tab", name="对比 Compare").click()
        page.locator("#compare-run").click()  # its 26-character example
        _wait_heatmap(page, "compare-B-heatmap", "compare-B-output")
        page.locator("#compare-entropy .gtitle").wait_for(timeout=60_000)
        for plot in ("compare-B-heatmap", "compare-entropy"):
            assert page.evaluate(OVERLAPPING, f"#{plot}") == [], plot
            assert page.evaluate(CLIPPED, f"#{plot}") == [], plot
        columns = [t for t in page.locator("#compare-B-heatmap .xtick text").all() if t.is_visible()]
        assert len(columns) >= (26 if width >= 1000 else 8)  # thinned on a phone, never to nothing
        page.screenshot(path=str(SCREENSHOTS / f"app-phone-compare-{width}.png"), full_page=True)


# a fast first start: the page before the weights ---------------------------------------------------------------


def _zoo(folder):
    """The small models saved as a zoo (``<task>/<variant>/``), with a small Transformer among them."""
    from attention_core.decoding.folder import save_pretrained

    registry = _registry_with_a_transformer()
    for task in registry.models:
        for variant, translator in registry.models[task].items():
            save_pretrained(translator, folder / task / variant)
    return folder


def test_a_lazy_registry_reads_configs_now_and_weights_on_first_use(tmp_path):
    zoo = _zoo(tmp_path / "zoo")
    eager, lazy = ModelRegistry.load(zoo), ModelRegistry.load(zoo, lazy=True)
    models = lazy.models["translation"]
    assert isinstance(models, LazyModels) and not any(models.is_loaded(v) for v in models)
    for task in eager.tasks():  # the page's words come from the configs alone, the same as from the models
        assert lazy.variants(task) == eager.variants(task)
        for _, variant in eager.variants(task):
            assert lazy.transformer_shape(task, variant) == eager.transformer_shape(task, variant)
            assert applies(lazy, task, variant) == applies(eager, task, variant)
            assert window_info(lazy, task, variant) == window_info(eager, task, variant)
    app = build_app(lazy)  # the whole page, and still nothing loaded
    assert app is not None and not any(models.is_loaded(v) for v in models)
    result = run(lazy, "translation", "我喜欢自然语言处理", Settings("luong-dot"))  # a request loads its model
    assert models.is_loaded("luong-dot") and not models.is_loaded("bahdanau")
    assert result.text == run(eager, "translation", "我喜欢自然语言处理", Settings("luong-dot")).text
    assert lazy.load_all() == sum(len(m) for m in lazy.models.values())


def test_a_model_whose_weights_break_after_the_start_is_a_message(tmp_path):
    from attention_core.decoding.folder import WEIGHTS, ModelLoadError

    zoo = _zoo(tmp_path / "zoo")
    registry = ModelRegistry.load(zoo, lazy=True)
    (zoo / "translation" / "bahdanau" / WEIGHTS).write_bytes(b"not a safetensors file")
    with pytest.raises(gr.Error, match="could not be loaded"):
        run(registry, "translation", "我喜欢自然语言处理", Settings("bahdanau"))
    said = []
    assert registry.load_all(report=said.append) == sum(len(m) for m in registry.models.values()) - 1
    assert len(said) == 1 and "translation/bahdanau" in said[0]
    (zoo / "couplet" / "none" / "config.json").write_text("{}")  # a broken config still stops the start
    with pytest.raises(ModelLoadError):
        ModelRegistry.load(zoo, lazy=True)


def test_models_of_your_own_join_the_zoo_without_loading(model_dir, tmp_path):
    registry = ModelRegistry.start(model_dir, lazy=True)  # one model of your own, and the bundled zoo
    own = registry.models[OWN]
    assert list(own) == [model_dir.name] and not own.is_loaded(model_dir.name)
    assert model_dir.name in model_summary(registry, model_dir.name)
    assert not any(registry.models["translation"].is_loaded(v) for v in registry.models["translation"])


def test_the_start_says_each_stage_and_the_page_answers_before_the_weights_load():
    """``python app.py`` prints a line per stage; its page answered (``launch_app``) before every weight was in."""
    proc, url = launch_app()
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            lines.append(line.rstrip())
            if "docs: " in line:  # the last stage
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=180)
    proc.terminate()
    proc.wait(timeout=30)
    stages = [found[1] for line in lines if (found := re.match(r"^\[\s*[\d.]+ s\] (\w+)", line))]
    assert [stage for stage in stages if stage in STAGES] == list(STAGES[:3]) + ["ready", "weights", "weights",
                                                                                 "docs"], lines
    ready = next(line for line in lines if "ready:" in line)
    assert url.rstrip("/") in ready and "/docs" in ready
    assert any(re.search(r"weights: 18 of 18 models loaded in [\d.]+ s", line) for line in lines), lines
