"""The theory pages' figures, on small untrained models: the numbers they show are the model's own."""

import json
import re
from pathlib import Path
from urllib.parse import parse_qsl

import plotly.graph_objects as go
import pytest
import torch
from app_fixtures import small_registry
from torch.testing import assert_close

from demo.links import parse_query
from demo.models import ModelRegistry
from reports import theory_figures as tf

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = small_registry()
TEXT = "我喜欢自然语言处理。"
SHORT = "今天很好。"


def _heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [t for t in fig.data if isinstance(t, go.Heatmap)]


def _translator(variant: str):
    return REGISTRY.get("translation", variant)


def test_softmax_of_the_recomputed_scores_is_the_weights_the_model_returned():
    translator = _translator("luong-dot")
    out = translator.translate([TEXT])[0]
    trace = tf.replay(translator, [TEXT], [out])[0]
    T, S = out.weights.shape
    assert trace.scores.shape == trace.weights.shape == (T, S)
    # the dot score, written plainly: e_{t,s} = q_t · h̄_s
    assert_close(trace.scores, trace.queries @ trace.values.T)
    assert_close(torch.softmax(trace.scores, dim=-1), trace.weights)
    assert_close(trace.weights, out.weights)  # the replay reproduces the search's alignment


@pytest.mark.parametrize("variant,beam", [("bahdanau", 3), ("luong-general-local-p", 1), ("luong-dot", 4)])
def test_replaying_an_output_reproduces_its_weights_and_centres(variant, beam):
    translator = _translator(variant)
    out = translator.translate([TEXT], beam_size=beam)[0]
    trace = tf.replay(translator, [TEXT], [out])[0]
    assert_close(trace.weights, out.weights)
    if out.centres is None:
        assert trace.centres is None
    else:
        assert_close(trace.centres, out.centres)


def test_replay_removes_its_hook():
    translator = _translator("luong-dot")
    out = translator.translate([TEXT])[0]
    for _ in range(2):
        trace = tf.replay(translator, [TEXT], [out])[0]
        assert trace.queries.shape[0] == len(out.row_labels)  # no queries left over from the first call
    assert not translator.model.decoder.attention._forward_pre_hooks


def test_replay_refuses_the_baseline():
    translator = _translator("none")
    out = translator.translate([TEXT])[0]
    with pytest.raises(ValueError, match="no-attention"):
        tf.replay(translator, [TEXT], [out])


def test_step_through_shows_scores_whose_softmax_is_the_shown_weights():
    translator = _translator("luong-dot")
    out = translator.translate([TEXT])[0]
    fig = tf.steps_figure(translator, TEXT)
    assert len(fig.frames) == len(out.row_labels)
    assert len(fig.layout.sliders[0].steps) == len(out.row_labels)
    for t, frame in enumerate(fig.frames):
        scores, weights, shares, top = frame.data
        assert_close(torch.softmax(torch.tensor(scores.y), dim=-1), torch.tensor(weights.y))
        assert_close(torch.tensor(weights.y), out.weights[t])
        assert len(shares.y) == len(out.source_tokens)
        assert list(top.y) == sorted(top.y, reverse=True)
    start = fig.layout.sliders[0].active
    assert list(fig.data[1].y) == list(fig.frames[start].data[1].y)  # the figure opens on its slider's step


def test_masking_figure_puts_exactly_zero_weight_on_the_short_sentences_padding():
    translator = _translator("luong-dot")
    fig = tf.masking_figure(translator, SHORT, TEXT)
    masked, unmasked, long = _heatmaps(fig)
    n_short, width = len(translator.tokenize(SHORT)), len(translator.tokenize(TEXT))
    assert len(masked.z[0]) == len(long.z[0]) == width
    for row in masked.z:
        assert all(w == 0.0 for w in row[n_short:])
        assert sum(row[:n_short]) == pytest.approx(1.0, abs=1e-5)
    assert all(sum(row[n_short:]) > 0 for row in unmasked.z)  # without the mask the padding takes weight
    batched = translator.translate([SHORT, TEXT])[0]
    assert_close(torch.tensor(masked.z)[:, :n_short], batched.weights)


def test_hard_attention_rows_are_one_hot_and_local_p_weights_stay_in_the_window():
    translator = _translator("luong-general-local-p")
    soft, hard = _heatmaps(tf.soft_hard_figure(translator, TEXT))
    for row in hard.z:
        assert sorted(row)[-1] == 1.0 and sum(w != 0 for w in row) == 1
    assert any(sum(w != 0 for w in row) > 1 for row in soft.z)
    fig = tf.local_p_figure(translator, TEXT)
    (heat,) = _heatmaps(fig)
    assert len(fig.layout.shapes) == len(heat.z)
    for row, band in zip(heat.z, fig.layout.shapes):
        assert all(w == 0.0 for j, w in enumerate(row) if not band.x0 < j < band.x1)


def test_greedy_and_beam_panels_show_their_own_outputs():
    translator = _translator("luong-dot")
    fig = tf.greedy_beam_figure(translator, TEXT)
    greedy, beam = translator.translate([TEXT])[0], translator.translate([TEXT], beam_size=5)[0]
    titles = [a.text for a in fig.layout.annotations]
    assert f"log p = {greedy.score:.2f}" in titles[0] and f"log p = {beam.score:.2f}" in titles[1]


def test_couplet_with_rules_has_the_length_of_its_first_line():
    translator = REGISTRY.get("couplet", "luong-dot")
    fig = tf.couplet_rules_figure(translator, "两个黄鹂鸣翠柳", beam=2)
    ruled, _ = _heatmaps(fig)
    assert len(ruled.z) == 7 + 1  # seven characters and <eos>


def _full_registry() -> ModelRegistry:
    """Every variant name the theory figures ask for, filled with the small test models."""
    stand_in = {"luong-general": "luong-dot", "luong-dot": "luong-dot", "luong-scaled_dot": "luong-dot",
                "bahdanau": "bahdanau", "luong-concat": "bahdanau", tf.LOCAL_P: tf.LOCAL_P}
    return ModelRegistry({task: {name: REGISTRY.get(task, small) for name, small in stand_in.items()}
                          for task in ("translation", "couplet")}, "test models")


def test_every_figure_is_made_and_has_a_link_that_opens_the_app_on_its_input():
    bottleneck = tf.BottleneckResult([(5, 9)], [3], [20], {"attention": [0.5], "none": [0.25]},
                                     {"attention": 10, "none": 10})
    figures = tf.theory_figures(_full_registry(), bottleneck)
    links = tf.theory_figure_links()
    assert set(figures) == set(links)
    texts = {tf.STEPS_TEXT, tf.SAME_OUTPUT_TEXT, tf.LONG_TEXT, tf.SHORT_TEXT + tf.STEPS_TEXT,
             tf.COUPLET_RULES_TEXT, tf.COUPLET_TEXT}
    for stem, query in links.items():
        assert stem.startswith("theory-") and query.startswith("?")
        parsed = parse_query(dict(parse_qsl(query[1:])))
        assert parsed, stem
        if parsed["tab"] == "live":
            assert parsed["live"] == {**tf.BOTTLENECK, "attention": True}  # every setting within the app's range
        else:
            assert parsed["text"] in texts, stem
            sides = [parsed["controls"]] if parsed["tab"] != "compare" else [parsed["a"], parsed["b"]]
            assert all("variant" in side and "beam" in side for side in sides), stem


def test_bottleneck_accuracy_counts_its_test_sequences():
    result = tf.bottleneck_accuracy(steps=2, per_bucket=3, buckets=((2, 3), (4, 5)))
    assert result.sequences == [3, 3]
    assert 6 <= result.tokens[0] <= 9 and 12 <= result.tokens[1] <= 15
    assert result.steps == {"attention": 2, "none": 2}
    assert all(0.0 <= a <= 1.0 for accs in result.accuracy.values() for a in accs)
    fig = tf.bottleneck_figure(result)
    assert [trace.x[0] for trace in fig.data] == ["2–3<br>n = 3"] * 2
    assert all(list(trace.customdata[1]) == [3, result.tokens[1]] for trace in fig.data)


def test_every_theory_page_shows_a_figure_that_exists_and_has_an_app_link():
    links = json.loads((ROOT / "results" / "figures" / "app-links.json").read_text(encoding="utf-8"))
    for page in sorted((ROOT / "docs" / "theory").glob("*.md")):  # the Chinese pages and any English edition
        stems = re.findall(r'src="[^"]*figures/(theory-[\w.-]+?)\.(?:png|html)"', page.read_text(encoding="utf-8"))
        assert stems or ".en." in page.name, f"{page.name} shows no theory figure"
        for stem in stems:
            for suffix in (".html", ".png"):
                assert (ROOT / "results" / "figures" / (stem + suffix)).is_file(), f"{page.name}: {stem}{suffix}"
            assert links.get(stem) == tf.theory_figure_links()[stem], f"{page.name}: {stem} has no current app link"
