"""The Transformer page's figures: the statistics say what they claim, every figure is drawn and linked."""

from urllib.parse import parse_qsl

import plotly.graph_objects as go
import pytest
import torch

from attention_core.analysis.metrics import attention_entropy
from attention_core.data.subword import word_rows
from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from demo.links import parse_query
from demo.models import DEFAULT_VARIANT, ModelRegistry
from reports import transformer_figures as tf
from reports.theory_figures import replay

ZH = Vocab(list(dict.fromkeys("我们每天早上七点吃早饭。你好吗？今天很好")))
EN = Vocab("we eat break ##fast every morning . how are you today".split())
TEXTS = ["我们每天早上七点吃早饭。", "你好吗？", "今天很好。"]


def _translator(decoder: str, seed: int) -> Translator:
    if decoder == "transformer":
        options = dict(decoder="transformer", score="scaled_dot", hidden_size=24, emb_size=24, heads=4, ff_size=48,
                       num_layers=2, dropout=0.0)
    else:
        options = dict(decoder="luong", score="general", hidden_size=16, emb_size=8)
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=len(ZH), tgt_vocab_size=len(EN), **options)
    return Translator(build_model(cfg).eval(), ZH, EN, get_task("translation"))


TRANSFORMER = _translator("transformer", 0)
RNN = _translator("luong", 1)


def _registry() -> ModelRegistry:
    return ModelRegistry({"translation": {tf.VARIANT: TRANSFORMER, DEFAULT_VARIANT: RNN}}, "test models")


def test_a_head_agrees_fully_with_itself_and_rows_are_counted():
    cross = torch.softmax(torch.randn(2, 3, 5, 7, generator=torch.Generator().manual_seed(0)), dim=-1)
    matches = tf.head_agreement(cross, cross[1, 2])
    assert matches[1, 2] == 5  # every row
    assert ((0 <= matches) & (matches <= 5)).all()
    one_hot = torch.eye(7)[:5]  # row t looks at position t
    assert tf.head_agreement(one_hot.expand(1, 1, 5, 7), one_hot).item() == 5
    assert tf.head_agreement(one_hot.expand(1, 1, 5, 7), one_hot.roll(1, dims=-1)).item() == 0


def test_entropy_of_a_one_hot_map_is_zero_and_of_a_uniform_map_log_s():
    assert attention_entropy(torch.eye(4)) == 0.0
    assert attention_entropy(torch.full((3, 6), 1 / 6)) == pytest.approx(torch.log(torch.tensor(6.0)).item())


def test_word_rows_average_the_pieces_of_a_word():
    weights = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]).expand(2, 3, 3, 2)  # (L, h, T, S)
    labels, merged = word_rows(["break", "##fast", "<eos>"], weights)
    assert labels == ["breakfast", "<eos>"]
    torch.testing.assert_close(merged[1, 2], torch.tensor([[0.5, 0.5], [0.5, 0.5]]))


def test_head_statistics_match_a_plain_loop_over_the_same_outputs():
    stats = tf.measure_heads(TRANSFORMER, RNN, TEXTS, batch_size=2)
    outputs = TRANSFORMER.translate(TEXTS)
    traces = replay(RNN, TEXTS, outputs)
    rows, agree, entropy, rnn_entropy, chance = 0, torch.zeros(2, 4), torch.zeros(2, 4), 0.0, 0.0
    for out, trace in zip(outputs, traces):
        cross = TRANSFORMER.attention_maps(out).cross
        T, S = cross.shape[-2:]
        rnn = trace.weights[:, :S]
        rows += T
        for layer in range(2):
            for head in range(4):
                for t in range(T):
                    agree[layer, head] += int(cross[layer, head, t].argmax() == rnn[t].argmax())
                    p = cross[layer, head, t]
                    entropy[layer, head] -= float((p * p.clamp_min(1e-12).log()).sum())
        rnn_entropy -= float((rnn * rnn.clamp_min(1e-12).log()).sum())
        chance += T / S
    assert stats.sentences == 3 and stats.rows == rows
    torch.testing.assert_close(stats.agreement, agree / rows)
    torch.testing.assert_close(stats.entropy, entropy / rows)
    assert stats.rnn_entropy == pytest.approx(rnn_entropy / rows, rel=1e-5)
    assert stats.chance == pytest.approx(chance / rows)
    assert ((0 <= stats.diagonality) & (stats.diagonality <= 1)).all()
    assert stats.entropy.max() <= stats.uniform_entropy + 1e-6


def test_measuring_needs_the_same_target_vocabulary():
    other = Translator(RNN.model, ZH, Vocab("a b c d e f g h i j".split()), get_task("translation"))
    with pytest.raises(ValueError, match="target vocabularies"):
        tf.measure_heads(TRANSFORMER, other, TEXTS)


def test_encoder_pattern_shares_are_shares_of_each_query_positions_weight():
    patterns = tf.encoder_patterns(TRANSFORMER, TEXTS)
    assert patterns.shape == (2, 4, len(tf.PATTERNS)) == (2, 4, 5)
    assert ((0 <= patterns) & (patterns <= 1)).all()
    assert (patterns[..., :3].sum(-1) <= 1 + 1e-6).all()  # previous, itself and next are different keys
    tokens, enc = tf.encoder_maps(TRANSFORMER, "你好吗？")
    S = len(tokens)
    expected = (enc.diagonal(dim1=-2, dim2=-1).sum(-1) / S)  # itself, for one sentence
    torch.testing.assert_close(tf.encoder_patterns(TRANSFORMER, ["你好吗？"])[..., 1], expected)
    one = tf.encoder_patterns(TRANSFORMER, ["你好吗？"])
    torch.testing.assert_close(one[..., 3], enc[..., -1].sum(-1) / S)  # ？ is the only punctuation
    columns = enc.sum(-2)  # (L, h, S): each key's total weight
    torch.testing.assert_close(one[..., 4], columns.max(-1).values / S)
    assert (one[..., 4] >= 1 / S - 1e-6).all()  # the heaviest column holds at least the mean


def test_the_heaviest_column_share_is_biased_and_its_shuffled_baseline_shows_it():
    generator = torch.Generator().manual_seed(0)
    uniform = torch.full((6, 6), 1 / 6)
    assert tf.max_column_share(uniform) == pytest.approx(1 / 6)  # uniform attention: exactly 1/S
    torch.testing.assert_close(tf.shuffled_rows(uniform, generator), uniform)
    identity = torch.eye(6)  # every position looks at itself: no shared key, yet the statistic is 1/S
    assert tf.max_column_share(identity) == pytest.approx(1 / 6)
    scattered = torch.stack([tf.max_column_share(tf.shuffled_rows(identity, generator)) for _ in range(200)])
    assert scattered.mean() > 1.5 / 6  # one-hot rows at random keys collide: the maximum exceeds 1/S
    hub = torch.zeros(6, 6)
    hub[:, 2] = 1.0  # every position looks at key 2
    assert tf.max_column_share(hub) == pytest.approx(1.0)
    shuffled = tf.shuffled_rows(hub, generator)
    torch.testing.assert_close(shuffled.sum(-1), torch.ones(6))  # each row keeps its weights
    assert torch.equal(shuffled.sort(-1).values, hub.sort(-1).values)


def test_the_hub_baseline_pools_like_the_pattern_shares():
    baseline = tf.hub_baseline(TRANSFORMER, TEXTS, draws=3)
    assert baseline.shape == (2, 4)
    S = [len(TRANSFORMER.tokenize(t)) for t in TEXTS]
    assert (baseline >= len(TEXTS) / sum(S) - 1e-6).all() and (baseline <= 1).all()
    torch.testing.assert_close(tf.hub_baseline(TRANSFORMER, TEXTS, draws=3), baseline)  # seeded
    figure = tf.encoder_head_figure(TRANSFORMER, tf.encoder_patterns(TRANSFORMER, TEXTS), baseline=baseline)
    assert figure.data[-1].y == tuple(baseline.flatten().tolist())


def test_every_figure_is_drawn_and_linked_to_the_transformer_in_the_app():
    figures = tf.transformer_figures(_registry(), TEXTS)
    links = tf.transformer_figure_links()
    assert set(figures) == set(links)
    grid = figures["transformer-cross-heads"]
    assert sum(isinstance(t, go.Heatmap) for t in grid.data) == 2 * 4  # L × h
    out = TRANSFORMER.translate([tf.EXAMPLE_TEXT], beam_size=tf.BEAM)[0]
    assert len(grid.data[0].z[0]) == len(out.source_tokens)
    assert len(figures["transformer-entropy"].data) == 4 + 3  # heads, their mean, the RNN and uniform
    for stem, query in links.items():
        assert stem.startswith("transformer-")
        parsed = parse_query(dict(parse_qsl(query[1:])))
        assert parsed["tab"] == "translation" and parsed["text"] == tf.EXAMPLE_TEXT, stem
        assert parsed["controls"] == {"variant": tf.VARIANT, "beam": tf.BEAM}, stem


def test_without_a_transformer_nothing_is_written(tmp_path, capsys):
    registry = ModelRegistry({"translation": {DEFAULT_VARIANT: RNN}}, "test models")
    assert tf.write_transformer_figures(tmp_path, registry) == []
    assert "no Transformer figures" in capsys.readouterr().err
    assert not (tmp_path / "figures").exists()
