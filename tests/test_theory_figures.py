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

from attention_core.analysis.alignment import Gold, force_decode
from attention_core.analysis.attribution import input_x_gradient
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from demo.links import parse_query
from demo.models import ModelRegistry
from demo.plots import LINK_MARKS
from reports import theory_figures as tf

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = small_registry()
TEXT = "我喜欢自然语言处理。"
SHORT = "今天很好。"
GOLD = Gold(("我", "喜欢", "猫", "。"), ("I", "like", "cats", "."), frozenset({(0, 0), (1, 1), (2, 2)}),
            frozenset({(0, 0), (1, 1), (2, 2), (3, 3), (2, 3)}))
"""A hand-made human alignment: three sure links, two possible ones (the full stop, and 猫 with it)."""


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


def _small_transformer(task: str = "translation") -> Translator:
    """An untrained Transformer with the small models' vocabularies (4 heads: ``CAUSAL_VIEW`` exists)."""
    rnn = REGISTRY.get(task, "luong-dot")
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=len(rnn.src_vocab), tgt_vocab_size=len(rnn.tgt_vocab), decoder="transformer",
                      score="scaled_dot", hidden_size=16, emb_size=16, heads=4, ff_size=32, num_layers=2, dropout=0.0)
    return Translator(build_model(cfg).eval(), rnn.src_vocab, rnn.tgt_vocab, rnn.task)


TRANSFORMER = _small_transformer()


def _full_registry(transformer: bool = True) -> ModelRegistry:
    """Every variant name the theory figures ask for, filled with the small test models."""
    stand_in = {"luong-general": "luong-dot", "luong-dot": "luong-dot", "luong-scaled_dot": "luong-dot",
                "bahdanau": "bahdanau", "luong-concat": "bahdanau", tf.LOCAL_P: tf.LOCAL_P}
    models = {task: {name: REGISTRY.get(task, small) for name, small in stand_in.items()}
              for task in ("translation", "couplet")}
    if transformer:
        models["translation"][tf.TRANSFORMER_VARIANT] = TRANSFORMER
    return ModelRegistry(models, "test models")


def test_every_figure_is_made_and_has_a_link_that_opens_the_app_on_its_input():
    bottleneck = tf.BottleneckResult([(5, 9)], [3], [20], {"attention": [0.5], "none": [0.25]},
                                     {"attention": 10, "none": 10})
    figures = tf.theory_figures(_full_registry(), bottleneck, gold=GOLD)
    links = tf.theory_figure_links()
    assert set(figures) == set(links)
    texts = {tf.STEPS_TEXT, tf.SAME_OUTPUT_TEXT, tf.LONG_TEXT, tf.SHORT_TEXT + tf.STEPS_TEXT,
             tf.COUPLET_RULES_TEXT, tf.COUPLET_TEXT, tf.ALIGNMENT_TEXT, tf.GRADIENT_TEXT}
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
    for stem in ("theory-positions", "theory-causal-mask"):  # the Transformer, on the sentence of its figures
        assert parse_query(dict(parse_qsl(links[stem][1:])))["controls"] == {
            "variant": tf.TRANSFORMER_VARIANT, "beam": tf.TRANSFORMER_BEAM}, stem
    layer, head = tf.CAUSAL_VIEW
    assert parse_query(dict(parse_qsl(links["theory-causal-mask"][1:])))["view"] == {"layer": layer, "head": head}


def test_without_a_transformer_its_two_figures_are_left_out_with_a_note(capsys):
    assert tf.transformer_theory_figures(_full_registry(transformer=False)) == {}
    assert "no theory-positions or theory-causal-mask" in capsys.readouterr().err


def test_bottleneck_accuracy_counts_its_test_sequences():
    result = tf.bottleneck_accuracy(steps=2, per_bucket=3, buckets=((2, 3), (4, 5)))
    assert result.sequences == [3, 3]
    assert 6 <= result.tokens[0] <= 9 and 12 <= result.tokens[1] <= 15
    assert result.steps == {"attention": 2, "none": 2}
    assert all(0.0 <= a <= 1.0 for accs in result.accuracy.values() for a in accs)
    fig = tf.bottleneck_figure(result)
    assert [trace.x[0] for trace in fig.data] == ["2–3<br>n = 3"] * 2
    assert all(list(trace.customdata[1]) == [3, result.tokens[1]] for trace in fig.data)


def test_the_bottleneck_accuracies_are_measured_once_and_again_only_when_their_settings_change(tmp_path,
                                                                                                    monkeypatch):
    calls = []

    def measure(steps, per_bucket, buckets, seed):
        calls.append(steps)
        return tf.BottleneckResult([(5, 9)], [3], [20], {"attention": [0.5 + len(calls)], "none": [0.25]},
                                   {"attention": 2, "none": 2})

    monkeypatch.setattr(tf, "bottleneck_accuracy", measure)
    first = tf.stored_bottleneck(tmp_path)
    again = tf.stored_bottleneck(tmp_path)
    assert len(calls) == 1 and again == first and again.buckets == [(5, 9)]  # read back, tuples and all
    assert tf.stored_bottleneck(tmp_path, retrain=True).accuracy["attention"] == [2.5] and len(calls) == 2
    monkeypatch.setattr(tf, "BOTTLENECK", {**tf.BOTTLENECK, "steps": 2400})  # another figure: measured anew
    assert tf.stored_bottleneck(tmp_path).accuracy["attention"] == [3.5] and calls == [1200, 1200, 2400]
    assert tf.stored_bottleneck(tmp_path).accuracy["attention"] == [3.5] and len(calls) == 3


def test_every_theory_page_shows_a_figure_that_exists_and_has_an_app_link():
    links = json.loads((ROOT / "results" / "figures" / "app-links.json").read_text(encoding="utf-8"))
    for page in sorted((ROOT / "docs" / "theory").glob("*.md")):  # the Chinese pages and any English edition
        stems = re.findall(r'src="[^"]*figures/(theory-[\w.-]+?)\.(?:png|html)"', page.read_text(encoding="utf-8"))
        assert stems or ".en." in page.name, f"{page.name} shows no theory figure"
        for stem in stems:
            for suffix in (".html", ".png"):
                assert (ROOT / "results" / "figures" / (stem + suffix)).is_file(), f"{page.name}: {stem}{suffix}"
            assert links.get(stem) == tf.theory_figure_links()[stem], f"{page.name}: {stem} has no current app link"


def test_scores_panel_titles_are_short_lines_that_cannot_run_into_each_other():
    fig = tf.scores_figure(_translator("luong-dot"), _translator("luong-dot"), TEXT)
    out = _translator("luong-dot").translate([TEXT])[0]
    for title in fig.layout.annotations:  # name, translation and entropy each on a line of its own
        lines = re.sub(r"<[^>]+>", "", title.text.replace("<br>", "\n")).split("\n")
        assert len(lines) == 3 and lines[1] == out.text
        assert all(len(line) <= 40 for line in (lines[0], lines[2])), lines


def _plain_positions(length: int, d: int) -> torch.Tensor:
    """Vaswani et al. 2017, §3.5, written plainly: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(…)."""
    pe = torch.zeros(length, d, dtype=torch.float64)
    for pos in range(length):
        for k in range(d):
            angle = pos / 10000 ** ((k - k % 2) / d)
            pe[pos, k] = torch.sin(torch.tensor(angle, dtype=torch.float64)) if k % 2 == 0 else torch.cos(
                torch.tensor(angle, dtype=torch.float64))
    return pe.float()


def test_position_figure_shows_the_library_table_and_shift_invariant_dot_products():
    d, length = 16, 40
    fig = tf.positions_figure(d, length, queries=(10, 30))
    heat, near, far = fig.data
    table = torch.tensor(heat.z)
    assert table.shape == (length, d)
    assert_close(table, _plain_positions(length, d), atol=1e-4, rtol=0)
    assert torch.equal(table, TRANSFORMER.model.positions[:length])  # the very table the model adds (d = 16)
    plain = _plain_positions(length, d)
    assert_close(torch.tensor(near.y), plain[10] @ plain.T, atol=1e-3, rtol=0)
    assert_close(torch.tensor(far.y), plain[30] @ plain.T, atol=1e-3, rtol=0)
    assert near.y[10] == pytest.approx(d / 2, abs=1e-4) and max(near.y) == near.y[10]  # sin² + cos² per pair
    for k in range(-9, 10):  # the dot product depends only on the distance
        assert near.y[10 + k] == pytest.approx(far.y[30 + k], abs=1e-4)


def test_causal_mask_figure_shows_the_decoders_own_mask_and_zero_weight_above_the_diagonal():
    causal = tf.causal_mask(TRANSFORMER, TEXT, beam=2)
    out = TRANSFORMER.translate([TEXT], beam_size=2)[0]
    T = len(out.row_labels)
    assert causal.rows == out.row_labels and causal.keys == ["<bos>", *out.row_labels[:-1]]
    assert torch.equal(causal.mask, torch.ones(T, T, dtype=torch.bool).tril())  # no look-ahead, nothing else
    layer, head = tf.CAUSAL_VIEW
    assert_close(causal.weights, TRANSFORMER.attention_maps(out).decoder[layer - 1, head - 1])
    assert not TRANSFORMER.model.decoder_layers[layer - 1].self_attn._forward_pre_hooks  # the hook is gone
    fig = tf.causal_mask_figure(TRANSFORMER, TEXT, beam=2)
    mask, weights = (torch.tensor(h.z) for h in _heatmaps(fig))
    above = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert torch.equal(mask, (~above).float())
    assert (weights[above] == 0).all() and (weights[~above] > 0).all()
    assert_close(weights.sum(-1), torch.ones(T))
    assert fig.layout.annotations[1].text.endswith("above the diagonal 对角线以上: max = 0")


def test_causal_mask_needs_a_transformer_and_an_existing_head():
    with pytest.raises(ValueError, match="Transformer"):
        tf.causal_mask(_translator("luong-dot"), TEXT)
    with pytest.raises(ValueError, match="no layer 3 head 1"):
        tf.causal_mask(TRANSFORMER, TEXT, view=(3, 1))


@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
def test_tiny_steps_compute_the_attention_step_plainly(score):
    steps = tf.tiny_steps(states=5, size=4, seed=1, score=score)
    s, h = steps.query, steps.keys
    assert s.shape == (4,) and h.shape == (5, 4)
    assert_close(s, (s * 10).round() / 10)  # one decimal, so a reader can redo the sums
    assert_close(h, (h * 10).round() / 10)
    scale = 2.0 if score == "scaled_dot" else 1.0  # √D
    e = torch.tensor([sum(float(a) * float(b) for a, b in zip(s, row)) / scale for row in h])
    assert_close(steps.scores, e)
    a = torch.exp(e) / torch.exp(e).sum()
    assert_close(steps.weights, a)
    c = torch.tensor([sum(float(a[j]) * float(h[j, i]) for j in range(5)) for i in range(4)])
    assert_close(steps.context, c)


def test_tiny_steps_refuse_a_score_with_learned_weights():
    with pytest.raises(ValueError, match="without learned weights"):
        tf.tiny_steps(score="general")


def test_tiny_step_figure_fills_one_stage_per_frame_and_opens_on_the_first():
    steps = tf.tiny_steps()
    fig = tf.tiny_steps_figure(steps)
    S, D = steps.keys.shape
    assert len(fig.frames) == len(tf.TINY_STAGES) == len(fig.layout.sliders[0].steps) == 4
    assert fig.layout.sliders[0].active == 0
    for opened, first in zip(fig.data, fig.frames[0].data):  # the figure opens on stage 1
        assert opened.z == first.z and opened.text == first.text
    s, h, e, a, weighted, c = fig.frames[-1].data
    assert_close(torch.tensor(s.z), steps.query.view(1, D))
    assert_close(torch.tensor(h.z), steps.keys)
    assert_close(torch.tensor(e.z).view(S), steps.query @ steps.keys.T)  # dot score
    assert_close(torch.tensor(a.z).view(S), torch.softmax(steps.query @ steps.keys.T, dim=-1))
    assert_close(torch.tensor(weighted.z), torch.tensor(a.z) * steps.keys)
    context = torch.softmax(steps.query @ steps.keys.T, dim=-1) @ steps.keys  # computed here, independently
    assert_close(torch.tensor(c.z).view(D), context)
    assert list(c.text[0]) == [f"{v:.2f}" for v in context.tolist()]  # the numbers written in the cells
    hidden = [sum(cell == "?" for row in trace.text for cell in row) for trace in fig.frames[0].data]
    assert hidden == [0, 0, S, S, S * D, D]  # stage 1 shows only the states
    filled = [[all(cell != "?" for row in t.text for cell in row) for t in frame.data] for frame in fig.frames]
    assert filled == [[True, True, False, False, False, False], [True, True, True, False, False, False],
                      [True, True, True, True, False, False], [True] * 6]


KINDS = dict(zip(("hit sure", "hit possible", "miss", "possible", "extra"), LINK_MARKS))
"""Short names of the app's five kinds of link (demo.plots.LINK_MARKS, in link_marks' order)."""


def _marks(fig: go.Figure) -> dict[str, set[tuple[int, int]]]:
    """The links drawn over the alignment heatmap, by kind (legend names start with LINK_MARKS' labels)."""
    found = {}
    for kind, label in KINDS.items():
        (trace,) = [t for t in fig.data if isinstance(t, go.Scatter) and t.name.startswith(label)]
        found[kind] = set(zip(trace.x, trace.y))
        assert trace.name.endswith(f"({len(found[kind])})")
    return found


def test_alignment_figure_draws_the_human_links_as_hits_misses_and_extras_with_the_sentences_aer():
    translator = _translator("luong-dot")
    fig = tf.alignment_gold_figure(translator, GOLD, "hand-made")
    weights = force_decode(translator, GOLD).weights  # (4 English words, 4 Chinese words)
    (heat,) = _heatmaps(fig)
    assert_close(torch.tensor(heat.z), weights)
    # Luong's rule and the counts, written plainly
    predicted = {(max(range(4), key=lambda i: float(weights[j, i])), j) for j in range(4)}
    marks = _marks(fig)
    assert marks["hit sure"] == {link for link in predicted if link in GOLD.sure}
    assert marks["hit possible"] == {link for link in predicted if link in GOLD.possible and link not in GOLD.sure}
    assert marks["extra"] == {link for link in predicted if link not in GOLD.possible}
    assert marks["miss"] == {link for link in GOLD.sure if link not in predicted}
    assert marks["possible"] == {link for link in GOLD.possible - GOLD.sure if link not in predicted}
    assert marks["hit sure"] | marks["hit possible"] | marks["extra"] == predicted  # each model link drawn once
    sure_hits, possible_hits = len(predicted & GOLD.sure), len(predicted & GOLD.possible)
    aer = 1 - (sure_hits + possible_hits) / (len(predicted) + len(GOLD.sure))
    title = fig.layout.title.text
    assert f"AER {100 * aer:.1f} %" in title and "hand-made" in title
    assert f"precision {100 * possible_hits / len(predicted):.1f} %" in title
    assert f"recall {100 * sure_hits / len(GOLD.sure):.1f} %" in title


def test_alignment_figure_on_a_known_matrix_counts_a_possible_link_as_no_miss(monkeypatch):
    """A fixed attention matrix, so every kind of link is on the figure and the AER is known by hand."""
    weights = torch.tensor([[0.9, 0.1, 0.0, 0.0],   # I → 我: sure, hit
                            [0.6, 0.3, 0.1, 0.0],   # like → 我: extra (喜欢 is missed)
                            [0.0, 0.0, 0.2, 0.8],   # cats → 。: extra (猫 is missed)
                            [0.0, 0.0, 0.3, 0.7]])  # . → 。: possible, hit
    monkeypatch.setattr(tf, "force_decode", lambda translator, gold: type("F", (), {"weights": weights})())
    fig = tf.alignment_gold_figure(_translator("luong-dot"), GOLD)
    marks = _marks(fig)
    assert marks == {"hit sure": {(0, 0)}, "hit possible": {(3, 3)}, "extra": {(0, 1), (3, 2)},
                     "miss": {(1, 1), (2, 2)}, "possible": {(2, 3)}}
    # |A| = 4, |S| = 3, |A ∩ S| = 1, |A ∩ P| = 2: AER = 1 − 3/7, precision 2/4, recall 1/3
    assert "AER 57.1 % · precision 50.0 % · recall 33.3 %" in fig.layout.title.text


def test_alignment_figure_needs_one_attention_map_per_step():
    with pytest.raises(ValueError, match="Transformer"):
        tf.gold_overlay(TRANSFORMER, GOLD)


def test_without_the_gold_set_the_alignment_figure_is_left_out_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))  # a data folder without align-zh-en/
    assert set(tf.alignment_theory_figures(_full_registry(transformer=False))) == {"theory-gradient"}
    assert "no theory-alignment" in capsys.readouterr().err


def test_gradient_figure_shows_the_models_input_x_gradient_and_each_rows_tau():
    translator = _translator("luong-dot")
    fig = tf.gradient_figure(translator, TEXT)
    out = translator.translate([TEXT])[0]
    importance = input_x_gradient(translator, out)
    attention, gradient = _heatmaps(fig)
    assert_close(torch.tensor(attention.z), out.weights)
    assert_close(torch.tensor(gradient.z), importance.gradient)
    assert_close(torch.tensor(gradient.z).sum(-1), torch.ones(len(out.row_labels)))
    labels = list(fig.layout.yaxis2.ticktext)
    assert len(labels) == len(out.row_labels)
    for label, tau in zip(labels, importance.agreement.tolist()):
        assert label.endswith("τ n/a" if tau != tau else f"τ {tau:+.2f}"), label
    same = int((out.weights.argmax(-1) == importance.gradient.argmax(-1)).sum())
    assert f"{same} of {len(out.row_labels)}" in fig.layout.title.text
