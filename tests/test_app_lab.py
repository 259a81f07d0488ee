"""The app as a lab: links both ways between app and docs, the live tab's messages, readable plots."""

import json
import math
import subprocess
import sys
from urllib.parse import parse_qsl

import pytest
from app_fixtures import ROOT, free_port, small_registry
from hypothesis import given, settings
from hypothesis import strategies as st

from demo.handlers import Settings, run
from demo.links import app_query, docs_link, parse_controls, parse_query
from demo.live import LiveSettings, build_toy_model, parse_sequence, stopped_status, try_sequence
from demo.plots import (
    MAX_LABELS,
    SECOND_LINE,
    SECOND_LINE_PAD,
    STEP_WORDS,
    SUBTITLE_COLUMNS,
    alignment_figure,
    entropy_figure,
    second_line,
    step_figure,
    text_width,
)

REGISTRY = small_registry()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    text=st.text(min_size=1, max_size=40),
    variant=st.sampled_from(["none", "luong-dot", "bahdanau"]),
    window=st.sampled_from(["default", "global", "1", "7", "10"]),
    hard=st.booleans(),
    beam=st.integers(1, 10),
)
def test_app_query_round_trips_through_parse_query(text, variant, window, hard, beam):
    query = app_query("translation", text=text, variant=variant, window=window, hard=hard, beam=beam)
    parsed = parse_query(dict(parse_qsl(query[1:], keep_blank_values=True)))
    assert parsed["tab"] == "translation" and parsed["text"] == text[:1000]
    assert parsed["controls"] == {"variant": variant, "window": window, "hard": hard, "beam": beam}


def test_malformed_query_values_are_ignored_not_errors():
    assert parse_query({"tab": "<script>"}) == {}
    assert parse_controls({"beam": "99", "window": "0", "cliche": "nan?", "tone": "loud"}) == {}
    compare = parse_query({"tab": "compare", "task": "couplet", "a_variant": "none", "b_beam": "3", "beam": "9"})
    assert compare["task"] == "couplet" and compare["a"] == {"variant": "none"} and compare["b"] == {"beam": 3}
    live = parse_query({"tab": "live", "task": "copy", "steps": "50", "max_len": "12", "attention": "0"})
    assert live["live"] == {"task": "copy", "max_len": 12, "attention": False}  # 50 steps is under the minimum
    with pytest.raises(ValueError, match="unknown tab"):
        app_query("settings")


def test_docs_links_point_at_the_served_site_or_the_configured_url(monkeypatch):
    monkeypatch.delenv("ATTENTION_LAB_DOCS_URL", raising=False)
    both = docs_link("theory/local", "window")
    assert 'href="docs/theory/local/#window"' in both and 'href="docs/en/theory/local/#window"' in both
    assert both.index("文档") < both.index("en/theory") < both.index("docs ↗")  # each label on its own edition
    monkeypatch.setenv("ATTENTION_LAB_DOCS_URL", "https://example.org/lab/")
    both = docs_link("results")
    assert 'href="https://example.org/lab/results/"' in both and 'href="https://example.org/lab/en/results/"' in both


def test_a_long_paste_gets_a_bounded_info_line_that_says_what_it_left_out():
    """A 40-sentence paste: the first sentences in full, then only their notes, at most MAX_SENTENCE_LINES of them."""
    from demo.handlers import DETAILED_SENTENCES, MAX_SENTENCE_LINES

    info = run(REGISTRY, "translation", "我喜欢猫。" * 40, Settings("luong-dot", beam_size=2)).info
    lines = info.split("  \n")
    assert "40 sentences" in info and f"sentences {DETAILED_SENTENCES + 1}–40" in info
    read = [line for line in lines if line.startswith("sentence ") and "what the model read" in line]
    assert [line.split(":")[0] for line in read] == [f"sentence {i} 第{i}句" for i in range(1, DETAILED_SENTENCES + 1)]
    unknown = [line for line in lines if "unknown to the model" in line]  # 猫 is not in the test models' vocabulary
    assert unknown[0].startswith("sentence 1 第1句") and unknown[-1].startswith("sentence ")
    per_sentence = [line for line in lines if line.startswith("sentence ")]
    assert len(per_sentence) == MAX_SENTENCE_LINES
    last = int(per_sentence[-1].split()[1])
    assert f"more lines about sentences {last}–40 left out" in info or f"about sentences {last + 1}–40" in info
    short = run(REGISTRY, "translation", "我喜欢猫。" * 3, Settings("luong-dot", beam_size=2)).info
    assert "left out" not in short and "only their names" not in short
    assert sum("what the model read" in line for line in short.split("  \n")) == 3


def test_info_line_says_which_controls_do_not_apply():
    baseline = run(REGISTRY, "translation", "今天天气很好", Settings("none", window="3", hard=True)).info
    assert "do not apply" in baseline and "hard 硬 attention" not in baseline and "window D = 3" not in baseline
    local = run(REGISTRY, "translation", "今天天气很好", Settings("luong-general-local-p")).info
    assert "window D = 2 (the model's own" in local
    loose = run(REGISTRY, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot", constrained=False)).info
    assert "no constraints" in loose and "apply only with constraints on" in loose
    beam = run(REGISTRY, "translation", "今天天气很好", Settings("luong-dot", beam_size=4)).info
    assert "length normalisation" in beam


def test_window_band_has_a_legend_entry():
    fig = alignment_figure(["a", "b", "c"], ["x", "y"], [[1, 0, 0], [0, 1, 0]], window=1, centres=[0.0, 1.0])
    names = [trace.name for trace in fig.data if trace.showlegend is not False and trace.name]
    assert names == ["window 窗口 p_t ± 1"] and fig.layout.showlegend
    plain = alignment_figure(["a", "b"], ["x"], [[0.5, 0.5]])
    assert not plain.layout.showlegend


def test_a_title_with_a_second_line_is_padded_and_only_then():
    """Every figure whose title has a second line (the heatmap's notes, a Transformer's layer and head, the live
    lab's warning) keeps its first line inside: the pad comes with the title, not from each caller."""
    weights = [[0.5, 0.5]]
    two = alignment_figure(["a", "b"], ["x"], weights, title="alignment" + second_line("the model read 汤姆 for 张伟"))
    assert two.layout.title.pad.t == SECOND_LINE_PAD
    one = alignment_figure(["a", "b"], ["x"], weights, title="alignment<br>no second line")
    assert not one.layout.title.pad.t


def test_long_sources_keep_readable_labels():
    source = [f"w{i}" for i in range(150)]
    fig = alignment_figure(source, ["x"], [[1 / 150] * 150])
    shown = fig.layout.xaxis.ticktext
    assert len(shown) <= MAX_LABELS and shown[0] == "w0" and fig.layout.xaxis.tickangle == -60
    assert fig.layout.xaxis.tickfont.size >= 9
    short = alignment_figure(list("两个黄鹂"), ["x", "yy"], [[0.25] * 4] * 2)
    assert list(short.layout.xaxis.ticktext) == list("两个黄鹂")
    # characters stand upright (plotly turned crowded ones sideways, where they still ran into each other on a
    # phone: the page thins them instead); words may turn
    assert short.layout.xaxis.tickangle == 0 and short.layout.yaxis.tickangle is None


def _second_lines(title: str) -> list[str]:
    return title[title.index(SECOND_LINE) + len(SECOND_LINE):].removesuffix("</span>").split("<br>")


def test_a_title_fits_a_phone_in_lines_and_the_plot_makes_room_for_them():
    """Issue #54: a title's second line was cut at both edges on a phone; it breaks into lines a phone shows whole,
    between its parts where it can, and the top margin grows with each line (no line runs into the axis title)."""
    text = ("layer 层 2/2 · mean of 4 heads 平均 · names as typed 按输入显示 · the model read 汤姆 for 张伟, "
            "波士顿 for 北京, 九十九 for 99")
    lines = _second_lines(second_line(text))
    assert len(lines) > 1 and all(text_width(line) <= SUBTITLE_COLUMNS for line in lines), lines
    assert [w for w in " ".join(lines).split() if w != "·"] == [w for w in text.split() if w != "·"]  # all words
    assert lines[0] == "layer 层 2/2 · mean of 4 heads 平均"
    weights = [[0.5, 0.5]]
    tops = [alignment_figure(["a", "b"], ["x"], weights, title="t" + second_line(" · ".join(["words words"] * n)))
            .layout.margin.t for n in (1, 4, 8)]
    assert tops[0] < tops[1] < tops[2]


def test_phone_sized_titles_in_the_app():
    """The entropy chart's and the gradient view's titles, and a long step's, fit a phone's width."""
    from demo.handlers import GRADIENT, attention_view, entropy_view, with_gradient

    result = run(REGISTRY, "translation", "我喜欢自然语言处理", Settings("luong-dot"))
    entropy = entropy_view({"A": result.state, "B": result.state}, {})
    assert text_width(entropy.layout.title.text) <= 30
    gradient = attention_view(with_gradient(REGISTRY, result.state), 1, shown=GRADIENT).heatmap.layout.title.text
    assert text_width(gradient.split("<br>")[0]) <= 30 and all(
        text_width(line) <= SUBTITLE_COLUMNS for line in _second_lines(gradient))
    words = [f"word{i}" for i in range(30)]
    title = step_figure(["a"], words, [[1.0]] * 30, 29).layout.title.text
    assert title.startswith("step 30/30: … ") and "word28 <b>[word29]</b>" in title
    assert text_width(title.split(": ", 1)[1].split(" <b>")[0]) <= STEP_WORDS + 2
    assert step_figure(["a"], words[:3], [[1.0]] * 3, 2).layout.title.text == "step 3/3: word0 word1 <b>[word2]</b>"


def test_the_couplet_tab_speaks_of_couplets():
    """Issue #54, F9: the couplet tab's empty heatmap and its details box speak of 上联 and rules, not names."""
    import gradio as gr

    from demo.ui import DETAILS, DETAILS_COUPLET, PLACEHOLDERS, build_app

    app = build_app(REGISTRY)
    blocks = {block.elem_id: block for block in app.blocks.values() if getattr(block, "elem_id", None)}
    assert blocks["couplet-details"].label == DETAILS_COUPLET and "names" not in DETAILS_COUPLET
    assert blocks["translation-details"].label == DETAILS
    assert "上联" in PLACEHOLDERS["heatmap-couplet"] and "sentence" not in PLACEHOLDERS["heatmap-couplet"]
    shown = {key: str(blocks[f"{key}-heatmap"].value) for key in ("couplet", "translation")}
    assert "上联" in shown["couplet"] and "Run a sentence" in shown["translation"] and "Run a sentence" not in \
        shown["couplet"]
    assert isinstance(blocks["couplet-details"], gr.Accordion)


def test_entropy_figure_is_the_row_entropy():
    fig = entropy_figure({"A": (["x", "y"], [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])}, 3)
    assert list(fig.data[0].y) == pytest.approx([math.log(2), 0.0])
    assert fig.data[1].y[0] == pytest.approx(math.log(3))


def test_live_sequence_accepts_full_width_and_says_what_is_wrong():
    assert parse_sequence("１２３，４") == [5, 6, 7, 8]
    model = build_toy_model(LiveSettings(steps=1))
    text, fig = try_sequence(model, "12a")
    assert text.startswith("⚠️") and "只能输入数字" in text and "only the digits" in text
    assert "only the digits" in fig.layout.annotations[0].text
    text, _ = try_sequence(None, "123")
    assert "请先训练" in text and "train a model first" in text
    text, _ = try_sequence(model, "")
    assert "请输入" in text and "type a sequence" in text
    text, _ = try_sequence(model, "１２３")
    assert not text.startswith("⚠️") and len(text.split()) <= 31


def test_stop_message_names_the_step():
    assert "stopped at step 300/600" in stopped_status({"step": 300, "steps": 600, "accuracy": 0.5})
    assert "stopped before the first update" in stopped_status({})
    finished = stopped_status({"step": 600, "steps": 600, "accuracy": 0.97})  # Stop after the end
    assert "done" in finished and "stopped" not in finished


def test_every_live_setting_error_is_bilingual():
    import gradio as gr

    for bad in (dict(task="shuffle"), dict(min_len=9, max_len=3), dict(steps=0), dict(window=11), dict(every=0)):
        with pytest.raises(gr.Error) as err:
            LiveSettings(**bad).validate()
        message = str(err.value)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in message) and any(ch.isascii() and ch.isalpha()
                                                                         for ch in message), message


def test_help_names_every_environment_variable_without_loading_the_heavy_libraries():
    # --help used to take 10 s because PyTorch and Gradio were imported before the options were read
    probe = ("import runpy, sys\n"
             "sys.argv = ['app.py', '--help']\n"
             "try:\n"
             f"    runpy.run_path({str(ROOT / 'app.py')!r}, run_name='__main__')\n"
             "except SystemExit:\n"
             "    pass\n"
             "print('LOADED', sorted({'torch', 'gradio', 'plotly'} & set(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    for option, variable in (("--host", "ATTENTION_LAB_HOST"), ("--port", "ATTENTION_LAB_PORT"),
                             ("--share", "ATTENTION_LAB_SHARE"), ("--hub-repo", "ATTENTION_LAB_HUB_REPO"),
                             ("--models", "ATTENTION_LAB_MODELS"), ("--docs", "ATTENTION_LAB_DOCS_DIR"),
                             ("--device", "ATTENTION_LAB_DEVICE")):
        assert option in done.stdout and variable in done.stdout, option
    assert "ATTENTION_LAB_DOCS_URL" in done.stdout
    assert "LOADED []" in done.stdout, done.stdout[-200:]


def test_busy_port_is_one_clear_line():
    import socket

    port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        done = subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", str(port)], capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: port") and "--port" in lines[0], done.stderr


def test_every_published_figure_has_an_app_link():
    from reports.report import figure_links

    links = json.loads((ROOT / "results" / "figures" / "app-links.json").read_text(encoding="utf-8"))
    published = {p.stem for p in (ROOT / "results" / "figures").glob("*.png")}
    assert published <= set(links), sorted(published - set(links))
    variants = {task: [v for _, v in REGISTRY.variants(task)] for task in REGISTRY.models}
    fresh = figure_links(variants)
    assert fresh["alignment-couplet-luong-dot"].startswith("?tab=couplet&text=")
    live = parse_query(dict(parse_qsl(fresh["live-reverse-curves"][1:])))
    assert live["live"] == {"task": "reverse", "min_len": 5, "max_len": 12, "steps": 600}


def test_a_figure_message_fits_a_phone():
    """Plotly does not wrap an annotation: a long message was cut at both ends at 390 px."""
    from demo.plots import MESSAGE_COLUMNS, message_figure

    text = ("Run a sentence to see where the model looks: each row is one output word, each column a source "
            "character. 运行一句，看模型每一步在看哪里。")
    lines = message_figure(text).layout.annotations[0].text.split("<br>")
    assert len(lines) > 1 and " ".join(lines) == text
    assert all(sum(2 if "\u4e00" <= ch <= "\u9fff" or ch in "，。" else 1 for ch in line) <= MESSAGE_COLUMNS
               for line in lines)
