"""The app's pure handlers on small untrained models."""

import math

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
        # a 下联 mirrors a 上联 character by character: 2024 was one <unk>, and the 下联 came out 6 characters for 10
        ("couplet", "2024年春节快乐", "无法生成下联 / a 上联 .*'2024' is not one: write numbers in characters"),
        ("couplet", "iPhone真好用", "'iphone' is not one: write it in Chinese"),
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
    for beam in (None, "abc"):  # what the API lets a caller send
        with pytest.raises(gr.Error, match="beam size must be 1–10"):
            run(REGISTRY, "translation", "今天", Settings("luong-dot", beam_size=beam))
    with pytest.raises(gr.Error, match="unknown task None"):
        compare(REGISTRY, None, "今天", Settings("luong-dot"), Settings("luong-dot"))


def test_invisible_characters_do_not_change_a_couplet():
    plain = run(REGISTRY, "couplet", "落霞与孤鹜齐飞", Settings("luong-dot")).text
    assert run(REGISTRY, "couplet", "\u200b落霞与\u200c孤鹜\u202e齐飞", Settings("luong-dot")).text == plain
    assert len(plain) == 7


def test_step_view_outlines_the_chosen_row():
    result = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot"))
    heat, bars = step_view(result.state, 3)
    outline = heat.layout.shapes[-1]
    assert outline.y0 == 1.5 and outline.y1 == 2.5
    assert list(bars.data[0].y) == result.state["weights"][2]
    empty, _ = step_view({}, 1)
    assert "Run a sentence first" in empty.layout.annotations[0].text


def test_compare_gives_each_side_its_own_controls_and_an_entropy_view():
    result = compare(REGISTRY, "translation", "今天天气很好", Settings("none"),
                     Settings("luong-dot", window="2", hard=True, beam_size=3))
    assert isinstance(result.a.text, str) and isinstance(result.b.text, str)
    assert result.b.figure.data[0].type == "heatmap"
    assert "beam 3" in result.b.info and "hard" in result.b.info and "window D = 2" in result.b.info
    assert "greedy" in result.a.info and "do not apply" in result.a.info
    # the third view: one line for the side with attention (hard → every row one-hot → entropy 0),
    # none for the baseline, and the uniform maximum log S
    lines = {trace.name: trace for trace in result.entropy.data}
    assert set(lines) == {"B: luong-dot", "uniform 均匀 (log 6)"}
    assert all(abs(y) < 1e-9 for y in lines["B: luong-dot"].y)
    assert lines["uniform 均匀 (log 6)"].y[0] == pytest.approx(math.log(6))


def test_heatmap_keeps_repeated_tokens_apart():
    fig = alignment_figure(["天", "天"], ["a", "<eos>"], [[0.5, 0.5], [1.0, 0.0]])
    assert list(fig.layout.xaxis.tickvals) == [0, 1]
    assert list(fig.layout.yaxis.ticktext) == ["a", "&lt;eos&gt;"]


def _subword_registry():
    from attention_core.data.subword import Subwords
    from attention_core.data.tasks import get_task
    from attention_core.data.text import tokenize_english
    from attention_core.data.vocab import Vocab
    from attention_core.decoding.translator import Translator
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model
    from demo.models import ModelRegistry

    english = ["unbelievable weather today .", "i like natural language processing ."] * 3
    subwords = Subwords.train([tokenize_english(s) for s in english], vocab_size=30)
    zh = Vocab(list(dict.fromkeys("我喜欢自然语言处理今天气很好。")))
    en = Vocab([p for p in subwords.tokenizer.get_vocab() if not p.startswith("<")])
    cfg = ModelConfig(src_vocab_size=len(zh), tgt_vocab_size=len(en), hidden_size=16, emb_size=8)
    translator = Translator(build_model(cfg).eval(), zh, en, get_task("translation").with_subwords(subwords))
    return ModelRegistry({"translation": {"luong-general": translator}}, "test models")


def test_a_paragraph_gets_one_alignment_per_sentence_and_a_selector():
    from demo.handlers import sentence_labels, sentence_view

    registry = _subword_registry()
    result = run(registry, "translation", "我喜欢自然语言处理。今天天气很好！", Settings("luong-general"))
    sentences = result.state["sentences"]
    assert len(sentences) == 2 and [s["source"][0] for s in sentences] == ["我", "今"]
    assert [label for label, _ in sentence_labels(result.state)][1].startswith("2. 今天")
    state, heat, bars = sentence_view(result.state, 1)
    assert state["sentence"] == 1 and list(heat.data[0].x) == list(range(len(sentences[1]["source"])))
    assert list(bars.data[0].y) == sentences[1]["weights"][0]
    assert "sentence 句 2/2" in heat.layout.title.text


def test_heatmap_rows_are_words_by_default_and_pieces_on_request():
    registry = _subword_registry()
    result = run(registry, "translation", "我喜欢自然语言处理", Settings("luong-general"))
    s = result.state
    assert len(s["word_of"]) == len(s["output"]) and s["word_of"][-1] == len(s["words"]) - 1
    words_heat, _ = step_view(result.state, 1)
    pieces_heat, _ = step_view(result.state, 1, pieces=True)
    assert len(pieces_heat.data[0].z) == len(s["output"])
    assert len(words_heat.data[0].z) == len(s["words"])
    if len(s["words"]) < len(s["output"]):  # pieces were merged, and the title says so
        assert "pieces merged" in words_heat.layout.title.text
    for row in words_heat.data[0].z:
        assert abs(sum(row) - 1) < 1e-4  # a word's row (mean of its pieces' rows) is still a distribution


def test_notes_reach_the_info_line():
    registry = _subword_registry()
    registry.models["translation"]["luong-general"].meta["source_lengths"] = {"p99": 3}
    result = run(registry, "translation", "我喜欢自然语言处理", Settings("luong-general"))
    assert "99 %" in result.info and "99%" in result.info  # English and Chinese


def test_beam_search_lists_the_other_outputs_of_the_beam():
    translator = REGISTRY.get("couplet", "luong-dot")
    out = translator.translate(["两个黄鹂鸣翠柳"], beam_size=4)[0]
    texts = [text for text, _ in out.alternatives]
    assert texts and out.text not in texts and len(set(texts)) == len(texts)
    assert all(len(text) == 7 and not set(text) & set("两个黄鹂鸣翠柳") for text in texts)  # the rules hold
    assert all(score <= out.score + 1e-4 for _, score in out.alternatives)  # one length: ranked by log p
    assert translator.translate(["两个黄鹂鸣翠柳"], beam_size=1)[0].alternatives == []

    result = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot", beam_size=4))
    assert f"{texts[0]} ({out.alternatives[0][1]:.2f})" in result.info
    assert "束中其他候选" not in run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot")).info
