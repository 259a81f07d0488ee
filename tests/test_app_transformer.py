"""The Transformer in the app: every layer and head from the state, its self-attention maps, Compare and URLs.

A tiny untrained zoo is written with ``save_pretrained`` and loaded by ``ModelRegistry.load``, as the app
loads the bundled one: a subword translation Transformer and a couplet Transformer (2 layers × 4 heads)
beside a small RNN (``luong-dot``) per task.
"""

import copy
import html
import json
from pathlib import Path

import gradio as gr
import pytest
import torch
from app_fixtures import launch_app, open_details

from attention_core.data.subword import Subwords
from attention_core.data.tasks import get_task
from attention_core.data.text import tokenize_english
from attention_core.data.vocab import Vocab
from attention_core.decoding.folder import save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from demo.handlers import MEAN, Settings, attention_view, check_view, compare, parse_view, run, sentence_view
from demo.links import parse_query
from demo.models import ModelRegistry

L, H = 2, 4
TEXT = "我喜欢自然语言处理"
PARAGRAPH = "我喜欢自然语言处理。今天天气很好！"


def _zoo(root: Path) -> Path:
    """Write ``<task>/{transformer,luong-dot}/`` model folders under ``root``."""
    english = ["unbelievable weather today .", "i like natural language processing ."] * 3
    subwords = Subwords.train([tokenize_english(s) for s in english], vocab_size=30)
    zh = Vocab(list(dict.fromkeys("两个黄鹂鸣翠柳我喜欢自然语言处理今天气很好春风，。！")))
    en = Vocab(sorted(p for p in subwords.tokenizer.get_vocab() if not p.startswith("<")))  # a fixed order
    tasks = {"translation": (en, get_task("translation").with_subwords(subwords)), "couplet": (zh, get_task("couplet"))}
    for task, (tgt, spec) in tasks.items():
        for variant, options in (("transformer", dict(decoder="transformer", score="scaled_dot", hidden_size=24,
                                                      emb_size=24, heads=H, ff_size=48, num_layers=L, dropout=0.0)),
                                 ("luong-dot", dict(decoder="luong", score="dot", hidden_size=16, emb_size=8))):
            torch.manual_seed(0)
            cfg = ModelConfig(src_vocab_size=len(zh), tgt_vocab_size=len(tgt), **options)
            save_pretrained(Translator(build_model(cfg).eval(), zh, tgt, spec), root / task / variant)
    return root


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> Path:
    return _zoo(tmp_path_factory.mktemp("zoo"))


@pytest.fixture(scope="module")
def registry(zoo) -> ModelRegistry:
    return ModelRegistry.load(zoo, "cpu")


@pytest.fixture(scope="module")
def result(registry):
    return run(registry, "translation", TEXT, Settings("transformer", window="3"))


def test_the_label_gives_heads_and_layers_after_the_rnn_variants(registry):
    assert registry.variants("translation") == [("Luong · dot 点积", "luong-dot"),
                                                 ("Transformer · 4 heads × 2 layers 多头", "transformer")]
    assert registry.transformer_shape("couplet", "transformer") == (L, H)
    assert registry.transformer_shape("couplet", "luong-dot") is None


def test_the_state_keeps_every_layer_and_head_small(result):
    s = result.state
    S, T = len(s["source"]), len(s["output"])
    maps = s["maps"]
    assert (s["layers"], s["heads"]) == (L, H)
    assert maps["encoder"].shape == (L, H, S, S)
    assert maps["decoder"].shape == (L, H, T, T)
    assert maps["cross"].shape == (L, H, T, S)
    assert all(m.dtype == torch.float16 for m in maps.values())  # 2 bytes a weight
    json.dumps({k: v for k, v in s.items() if k not in ("maps", "sentences")})  # the rest stays plain values
    torch.testing.assert_close(maps["cross"].float().sum(-1), torch.ones(L, H, T), atol=2e-3, rtol=0)


def test_every_layer_and_head_has_its_three_maps(result):
    s = result.state
    S, T, W = len(s["source"]), len(s["output"]), len(s["words"])
    assert W < T  # the subword model wrote pieces: the word view merges them
    for layer in range(1, L + 1):
        for head in (MEAN, *[str(k) for k in range(1, H + 1)]):
            for pieces, rows, keys in ((True, T, T), (False, W, None)):
                view = attention_view(s, None, pieces, layer, head)
                assert view.view == (layer, head)
                assert len(view.heatmap.data[0].z) == rows and len(view.heatmap.data[0].z[0]) == S
                assert len(view.encoder.data[0].z) == S and len(view.encoder.data[0].z[0]) == S
                decoder = view.decoder.data[0].z
                assert len(decoder) == rows and (keys is None or len(decoder[0]) == keys)
                for row in (*view.heatmap.data[0].z, *view.encoder.data[0].z, *decoder):
                    assert sum(row) == pytest.approx(1, abs=2e-3)  # merged rows stay distributions


def test_decoder_self_attention_is_causal_with_shifted_keys(result):
    s = result.state
    view = attention_view(s, None, True, 1, "2")
    z = view.decoder.data[0].z
    assert all(w == 0 for t, row in enumerate(z) for w in row[t + 1:])  # no look-ahead
    assert list(view.decoder.layout.xaxis.ticktext) == [html.escape(t) for t in ["<bos>", *s["output"][:-1]]]
    words = attention_view(s, None, False, 1, "2").decoder
    assert words.layout.xaxis.ticktext[0] == "&lt;bos&gt;"
    assert list(words.layout.yaxis.ticktext) == [html.escape(w) for w in s["words"]]


def test_last_layer_mean_is_the_heatmap_the_decoder_reported(result):
    default = attention_view(result.state, None, False, None, None)
    chosen = attention_view(result.state, None, False, L, MEAN)
    assert chosen.heatmap.data[0].z == default.heatmap.data[0].z == result.figure.data[0].z
    assert list(chosen.bars.data[0].y) == result.state["weights"][0]
    mean = result.state["maps"]["cross"][-1].float().mean(0)
    torch.testing.assert_close(mean, torch.tensor(result.state["weights"]), atol=1e-3, rtol=0)


def test_switching_layer_or_head_re_plots_from_the_state_alone(result):
    s = copy.deepcopy(result.state)  # what the tab keeps: no model, no decoding
    figures = {(layer, head): attention_view(s, 2, False, layer, head) for layer in (1, 2) for head in (MEAN, "1", "2")}
    data = {key: view.heatmap.data[0].z for key, view in figures.items()}
    assert len({json.dumps(z) for z in data.values()}) == len(data)  # every layer and head differs
    assert figures[(1, "1")].encoder.data[0].z != figures[(1, "2")].encoder.data[0].z
    assert figures[(1, "1")].decoder.data[0].z != figures[(2, "1")].decoder.data[0].z
    assert "layer 层 1/2 · head 头 2/4" in figures[(1, "2")].heatmap.layout.title.text
    assert figures[(1, "2")].heatmap.layout.shapes[-1].y0 == s["word_of"][1] - 0.5  # step 2's word is outlined


def test_info_line_names_layer_head_and_where_the_window_applies(result):
    assert "Transformer · 4 heads × 2 layers 多头" in result.info
    assert "Transformer: layer 层 2/2 · mean of 4 heads 平均" in result.info
    assert "local-m window D = 3 on every cross-attention" in result.info and "at decode time" in result.info
    other = attention_view(result.state, 1, False, 1, "3").info
    assert "Transformer: layer 层 1/2 · head 头 3/4" in other and other.count("Transformer:") == 1


def test_hard_attention_and_a_window_apply_to_every_head(registry):
    hard = run(registry, "couplet", "两个黄鹂鸣翠柳", Settings("transformer", hard=True, window="1"))
    for layer in hard.state["maps"]["cross"].tolist():
        for head in layer:
            for row in head:
                assert sorted(row)[-1] == 1.0 and sum(row) == 1.0  # one-hot
    assert len(hard.figure.layout.shapes) == len(hard.state["output"])  # the window band is drawn


def test_paragraph_sentences_and_steps_keep_the_chosen_view(registry):
    paragraph = run(registry, "translation", PARAGRAPH, Settings("transformer"), layer=1, head="2")
    assert paragraph.view == (1, "2") and len(paragraph.state["sentences"]) == 2
    state, heat, bars = sentence_view(paragraph.state, 1, False, 1, "2")
    assert state["sentence"] == 1 and state["info"] == paragraph.state["info"]
    assert "sentence 句 2/2" in heat.layout.title.text and "head 头 2/4" in heat.layout.title.text
    view = attention_view(state, 2, True, 1, "2")
    assert list(view.bars.data[0].y) == view.heatmap.data[0].z[1]
    assert len(view.encoder.data[0].z) == len(state["source"])


def test_rnn_variants_hide_the_selectors(registry):
    from demo.ui import _view_updates

    rnn = run(registry, "translation", TEXT, Settings("luong-dot"), layer=9, head="nonsense")  # ignored for an RNN
    assert rnn.view is None and rnn.encoder is None and rnn.decoder is None and rnn.state["maps"] is None
    assert "Transformer:" not in rnn.info
    *_, group = _view_updates(rnn)
    assert group.visible is False
    *_, shown = _view_updates(run(registry, "translation", TEXT, Settings("transformer")))
    assert shown.visible is True
    assert attention_view(rnn.state, 1, False, 2, "3").view is None


@pytest.mark.parametrize("layer,head,message", [(0, None, "choose 1–2"), ("3", None, "2 layers"),
                                                (None, "5", "choose 1–4 or mean"), (None, "x", "invalid head")])
def test_bad_layer_or_head_is_a_clear_message(registry, result, layer, head, message):
    with pytest.raises(gr.Error, match=message):
        parse_view(L, H, layer, head)
    with pytest.raises(gr.Error, match=message):
        run(registry, "translation", TEXT, Settings("transformer"), layer=layer, head=head)
    with pytest.raises(gr.Error, match=message):
        attention_view(result.state, 1, False, layer, head)


def test_url_layer_and_head(registry):
    query = parse_query({"tab": "translation", "text": TEXT, "variant": "transformer", "layer": "1", "head": "3"})
    assert query["view"] == {"layer": 1, "head": 3} and "problems" not in query
    assert check_view(registry, "translation", "transformer", query["view"]) == ((1, "3"), None)
    assert "view" not in parse_query({"tab": "translation", "text": TEXT})
    bad = parse_query({"tab": "couplet", "layer": "-1", "head": "first"})
    assert "view" not in bad and len(bad["problems"]) == 2
    assert bad["problems"][0].startswith("layer=-1:") and "whole number" in bad["problems"][0]
    assert bad["problems"][1].startswith("head=first:") and "mean" in bad["problems"][1]
    view, problem = check_view(registry, "translation", "transformer", {"layer": 7})
    assert view is None and "this Transformer has 2 layers" in problem
    view, problem = check_view(registry, "translation", "luong-dot", {"head": "mean"})
    assert view is None and "apply only to the Transformer" in problem and "luong-dot" in problem
    assert check_view(registry, "translation", "luong-dot", {}) == (None, None)
    sides = parse_query({"tab": "compare", "b_variant": "transformer", "b_layer": "2", "b_head": "mean", "a_head": "0"})
    assert sides["b_view"] == {"layer": 2, "head": "mean"} and "a_view" not in sides
    assert sides["problems"] == ["a_head=0: 注意力头须为正整数或 mean / the head must be a whole number from 1, "
                                 "or mean (the mean of the heads)"]


def test_compare_an_rnn_with_the_transformer(registry):
    from demo.handlers import entropy_view

    result = compare(registry, "translation", "今天天气很好", Settings("luong-dot", beam_size=2),
                     Settings("transformer", window="2"), b_view=(1, "4"))
    a, b = result.a, result.b
    assert a.figure.data[0].type == b.figure.data[0].type == "heatmap"
    assert a.view is None and b.view == (1, "4")
    assert "head 头 4/4" in b.figure.layout.title.text and "Transformer: layer 层 1/2 · head 头 4/4" in b.info
    assert "beam 2" in a.info and "Transformer:" not in a.info
    names = [trace.name for trace in result.entropy.data]
    assert names == ["A: luong-dot", "B: transformer · layer 层 1/2 · head 头 4/4", "uniform 均匀 (log 6)"]
    again = entropy_view({"A": a.state, "B": b.state}, {"B": (2, MEAN)})  # re-plotted for another head
    assert again.data[1].name.endswith("layer 层 2/2 · mean of 4 heads 平均")
    assert list(again.data[1].y) != list(result.entropy.data[1].y)


def test_the_app_builds_with_a_transformer(registry):
    from demo.ui import build_app

    app = build_app(registry)
    assert {"translation-layer", "translation-head", "couplet-encoder", "compare-B-layer"} <= {
        block.elem_id for block in app.blocks.values()}


def test_browser_layer_and_head_change_the_heatmap(zoo, tmp_path):
    """Translation tab, Transformer selected: run, switch layer and head, and the heatmap changes."""
    from test_app_live import _app_page

    proc, url = launch_app(models=zoo)  # a stub docs site: no mkdocs build at start-up
    heat = "#translation-heatmap .js-plotly-plot"
    try:
        with _app_page(url, 2200) as page:
            assert not page.locator("#translation-layer").is_visible()  # no Transformer run yet
            page.locator("#translation-variant input").click()
            page.get_by_role("option", name="Transformer · 4 heads × 2 layers 多头").click()
            page.locator("#translation-input textarea").fill(TEXT)
            page.locator("#translation-run").click()
            open_details(page, "translation")  # folded until opened; remembered open for the URL below
            page.wait_for_function(
                "() => document.querySelector('#translation-info').innerText.includes('Transformer: layer')",
                timeout=120_000)
            page.locator(f"{heat} svg.main-svg").first.wait_for(timeout=60_000)
            page.locator("#translation-layer").wait_for(state="visible", timeout=30_000)  # shown for a Transformer
            page.locator("#translation-head").wait_for(state="visible", timeout=30_000)
            page.locator("#translation-encoder .js-plotly-plot").wait_for(timeout=30_000)
            page.locator("#translation-decoder .js-plotly-plot").wait_for(timeout=30_000)
            z = f"() => JSON.stringify(document.querySelector('{heat}').data[0].z)"
            before = page.evaluate(z)
            page.locator("#translation-layer").get_by_text("1", exact=True).click()
            page.wait_for_function(f"() => ({z})() !== {json.dumps(before)}", timeout=30_000)
            after_layer = page.evaluate(z)
            page.locator("#translation-head").get_by_text("3", exact=True).click()
            page.wait_for_function(f"() => ({z})() !== {json.dumps(after_layer)}", timeout=30_000)
            title = page.locator(f"{heat} .gtitle").text_content()
            assert "layer 层 1/2" in title and "head 头 3/4" in title, title
            assert "Transformer: layer 层 1/2 · head 头 3/4" in page.locator("#translation-info").inner_text()
            assert page.locator(".toast-body.error").count() == 0
            page.screenshot(path="/tmp/transformer-app.png", full_page=True)

            # a URL with a bad head: a clear warning, and the run goes on with the mean of heads
            page.goto(url + f"?tab=translation&variant=transformer&layer=1&head=x&text={TEXT}", wait_until="load")
            page.get_by_text("head=x", exact=False).first.wait_for(timeout=60_000)
            page.wait_for_function(
                "() => document.querySelector('#translation-info')?.innerText.includes('layer 层 1/2 · mean')",
                timeout=120_000)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
