import gradio as gr
import plotly.graph_objects as go
import pytest
from app_fixtures import small_registry

from demo.handlers import Settings, compare, parse_window, run, step_view
from demo.plots import alignment_figure

REGISTRY = small_registry()


@pytest.mark.parametrize("task", ["translation", "couplet"])
@pytest.mark.parametrize("variant", list(REGISTRY.models["translation"]))
def test_every_variant_returns_text_and_a_figure(task, variant):
    result = run(REGISTRY, task, "两个黄鹂鸣翠柳", Settings(variant, beam_size=2))
    assert isinstance(result.text, str)
    assert isinstance(result.figure, go.Figure) and isinstance(result.steps, go.Figure)
    if variant == "none":
        assert "no attention" in result.info
    else:
        heat = result.figure.data[0]
        assert heat.type == "heatmap"
        assert len(heat.z) == len(result.state["output"]) and len(heat.z[0]) == 7
    if task == "couplet":
        assert len(result.text) == 7  # constraints on by default


def test_window_band_and_local_p_centre_are_drawn():
    result = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-general-local-p"))
    assert any(t.type == "scatter" and t.name.startswith("p_t") for t in result.figure.data)
    assert len(result.figure.layout.shapes) == len(result.state["output"])
    global_ = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot", window="global"))
    assert not global_.figure.layout.shapes
    local = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot", window="2"))
    assert len(local.figure.layout.shapes) == len(local.state["output"])
    for row in local.state["weights"]:
        assert sum(w > 0 for w in row) <= 5


@pytest.mark.parametrize(
    "task,text,message",
    [
        ("translation", "", "Please type"),
        ("couplet", "   \n ", "Please type"),
        ("translation", "好" * 10_000, "10000 characters"),
        ("couplet", "hello world", "Chinese"),
        ("translation", "😀😀", "Chinese"),
    ],
)
def test_bad_input_gets_a_clear_message(task, text, message):
    with pytest.raises(gr.Error, match=message):
        run(REGISTRY, task, text, Settings("luong-dot"))


def test_unknown_html_and_emoji_are_escaped_and_shown_as_unk():
    result = run(REGISTRY, "translation", "我喜欢<b>猫</b>😀", Settings("luong-dot"))
    assert "<" not in result.info and "&lt;" in result.info
    ticks = result.figure.layout.xaxis.ticktext
    assert "&lt;unk&gt;" in ticks and not any("<" in t for t in ticks)


def test_traditional_input_is_normalised():
    a = run(REGISTRY, "translation", "兩個黃鸝", Settings("luong-dot"))
    b = run(REGISTRY, "translation", "两个黄鹂", Settings("luong-dot"))
    assert a.text == b.text and a.state["source"] == b.state["source"] == list("两个黄鹂")


def test_bad_settings():
    with pytest.raises(gr.Error, match="window"):
        parse_window("11")
    with pytest.raises(gr.Error, match="beam"):
        run(REGISTRY, "translation", "今天", Settings("luong-dot", beam_size=50))
    with pytest.raises(gr.Error, match="available"):
        run(REGISTRY, "translation", "今天", Settings("luong-transformer"))


def test_step_view_outlines_the_chosen_row():
    result = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot"))
    heat, bars = step_view(result.state, 3)
    outline = heat.layout.shapes[-1]
    assert outline.y0 == 1.5 and outline.y1 == 2.5
    assert list(bars.data[0].y) == result.state["weights"][2]
    empty, _ = step_view({}, 1)
    assert "Run a sentence first" in empty.layout.annotations[0].text


def test_compare_returns_two_outputs():
    text_a, fig_a, text_b, fig_b = compare(REGISTRY, "translation", "今天天气很好", "none", "luong-dot")
    assert isinstance(text_a, str) and isinstance(text_b, str)
    assert fig_b.data[0].type == "heatmap"


def test_heatmap_keeps_repeated_tokens_apart():
    fig = alignment_figure(["天", "天"], ["a", "<eos>"], [[0.5, 0.5], [1.0, 0.0]])
    assert list(fig.layout.xaxis.tickvals) == [0, 1]
    assert list(fig.layout.yaxis.ticktext) == ["a", "&lt;eos&gt;"]
