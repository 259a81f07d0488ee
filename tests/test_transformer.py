"""The Transformer: masks, heads, the cached decoding step, search, training, save/load and the Hub."""

import math

import pytest
import torch

from attention_core.data.tasks import get_task
from attention_core.data.toy import alignment_hits, sample_batch
from attention_core.data.vocab import Vocab
from attention_core.decoding.couplet import CoupletConstraint
from attention_core.decoding.folder import load_folder, save_pretrained
from attention_core.decoding.search import beam_search, greedy
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.model.transformer import MultiHeadAttention, Transformer, sinusoidal_positions
from attention_core.training.loop import make_optimizer, train_step


def _cfg(V: int = 20, **kw) -> ModelConfig:
    options = dict(decoder="transformer", score="scaled_dot", hidden_size=24, emb_size=24, heads=4, ff_size=48,
                   num_layers=2, dropout=0.0)
    return ModelConfig(src_vocab_size=V, tgt_vocab_size=V, **{**options, **kw})


def _model(seed: int = 0, **kw) -> Transformer:
    torch.manual_seed(seed)
    return build_model(_cfg(**kw)).eval()


def _batch(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 20, (3, 7), generator=g)
    lengths = torch.tensor([7, 5, 2])
    for b, n in enumerate(lengths.tolist()):
        src[b, n:] = 0
    tgt = torch.randint(4, 20, (3, 6), generator=g)
    tgt[:, 0] = 2
    tgt[1, 4:] = 0  # a shorter target: padding at the end
    return src, lengths, tgt


def test_masks_no_attention_to_padding_or_future_positions():
    model = _model()
    src, lengths, tgt = _batch()
    maps = model.attention_maps(src, lengths, tgt)
    L, h = model.cfg.num_layers, model.cfg.heads
    assert maps.encoder.shape == (3, L, h, 7, 7)
    assert maps.decoder.shape == (3, L, h, 6, 6)
    assert maps.cross.shape == (3, L, h, 6, 7)
    for b, n in enumerate(lengths.tolist()):
        assert maps.encoder[b, ..., n:].abs().sum() == 0  # no key is source padding
        assert maps.cross[b, ..., n:].abs().sum() == 0
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)  # key after the query
    assert maps.decoder[..., future].abs().sum() == 0
    assert maps.decoder[1, ..., 4:].abs().sum() == 0  # nor target padding
    assert (maps.decoder[..., ~future] > 0).any()


def test_every_head_is_a_distribution():
    model = _model()
    src, lengths, tgt = _batch()
    maps = model.attention_maps(src, lengths, tgt)
    for name in ("encoder", "decoder", "cross"):
        weights = getattr(maps, name)
        assert (weights >= 0).all()
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), msg=name)


def test_multi_head_attention_matches_a_plain_per_head_reference():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).eval()
    q, kv = torch.randn(2, 4, 12), torch.randn(2, 5, 12)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    out, weights = mha(q, *mha.project_keys(kv), mask)
    heads = []
    for i in range(3):  # head_i = softmax(Q W_i^Q (K W_i^K)ᵀ / √d_k) V W_i^V, written out plainly
        cols = slice(4 * i, 4 * i + 4)
        Q = q @ mha.query.weight[cols].T + mha.query.bias[cols]
        K = kv @ mha.key.weight[cols].T + mha.key.bias[cols]
        V = kv @ mha.value.weight[cols].T + mha.value.bias[cols]
        scores = Q @ K.transpose(1, 2) / math.sqrt(4)
        scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
        w = scores.softmax(-1)
        torch.testing.assert_close(weights[:, i], w)
        heads.append(w @ V)
    expected = torch.cat(heads, dim=-1) @ mha.out.weight.T + mha.out.bias  # Concat(head_1…head_h) W^O
    torch.testing.assert_close(out, expected)


def test_positions_follow_the_paper():
    pe = sinusoidal_positions(50, 8)
    pos, i = 37, 2
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 8)), abs=1e-5)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos / 10000 ** (2 * i / 8)), abs=1e-5)


@pytest.mark.parametrize("window,hard", [(None, False), (1, False), (None, True), (2, True)])
def test_cached_steps_give_the_teacher_forced_logits_and_weights(window, hard):
    model = _model(length_ratio=1.7)  # windows are placed at t · S / (S · 1.7), not at t
    src, lengths, tgt = _batch()
    logits, weights = model(src, lengths, tgt, window=window, hard=hard)  # (B, T, V), (B, T, S)
    memory, state = model.encode(src, lengths)
    for t in range(tgt.size(1)):
        step = model.step(tgt[:, t], state, memory, t, window=window, hard=hard)
        state = step.state
        real = tgt[:, t] != 0
        torch.testing.assert_close(step.logits[real], logits[real, t], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(step.weights[real], weights[real, t], atol=1e-6, rtol=1e-4)
        if window is not None:
            expected = t * lengths / (lengths * 1.7)  # p_t = t · S / T, T = S · length_ratio
            torch.testing.assert_close(step.centre, torch.minimum(expected, lengths - 1.0))


def test_sequences_longer_than_the_position_table():
    model = _model()
    src = torch.randint(4, 20, (1, 600))
    tgt = torch.randint(4, 20, (1, 601))
    tgt[0, 0] = 2
    logits, _ = model(src, torch.tensor([600]), tgt)
    memory, state = model.encode(src, torch.tensor([600]))
    for t in range(601):
        step = model.step(tgt[:, t], state, memory, t)
        state = step.state
    torch.testing.assert_close(step.logits, logits[:, -1], atol=1e-4, rtol=1e-4)
    assert model.positions.size(0) == 512  # nothing was stored on the module


def test_outputs_do_not_depend_on_the_rest_of_the_batch():
    model = _model()
    src, lengths, tgt = _batch()
    logits, _ = model(src, lengths, tgt)
    alone, _ = model(src[2:, :2], lengths[2:], tgt[2:])
    torch.testing.assert_close(alone[0], logits[2], atol=1e-5, rtol=1e-4)


def test_beam_of_one_is_greedy_and_beams_follow_their_cache():
    model = _model(seed=3)
    src, lengths, _ = _batch()
    g = greedy(model, src, lengths, max_len=8)
    b = beam_search(model, src, lengths, beam_size=1, max_len=8)
    for x, y in zip(g, b):
        assert x.tokens == y.tokens
        torch.testing.assert_close(x.weights, y.weights)
    # a wider beam never scores below greedy when both finish (same length normalisation off)
    wide = beam_search(model, src, lengths, beam_size=4, max_len=8, alpha=0.0)
    for x, y in zip(g, wide):
        if x.finished and y.finished:
            assert y.score >= x.score - 1e-4


def test_hard_and_windowed_cross_attention_at_decode_time():
    model = _model()
    src, lengths, _ = _batch()
    hard = greedy(model, src, lengths, max_len=5, hard=True)
    for hyp in hard:  # the head mean of one-hot heads: every row still sums to 1
        torch.testing.assert_close(hyp.weights.sum(-1), torch.ones(len(hyp.weights)))
    maps = model.attention_maps(src, lengths, torch.tensor([[2, 5, 6, 7]] * 3), window=1)
    S = maps.cross.size(-1)
    centre = torch.arange(4).float().unsqueeze(0) * lengths.unsqueeze(1) / lengths.unsqueeze(1).float()
    for b in range(3):
        for t in range(4):
            far = (torch.arange(S) - centre[b, t].clamp(max=lengths[b] - 1)).abs() > 1
            assert maps.cross[b, :, :, t, far].abs().sum() == 0


def test_config_explains_what_a_transformer_needs():
    with pytest.raises(ValueError, match="scaled_dot"):
        _cfg(score="general").validate()
    with pytest.raises(ValueError, match="emb_size == hidden_size"):
        _cfg(emb_size=16).validate()
    with pytest.raises(ValueError, match="must divide"):
        _cfg(heads=5).validate()
    with pytest.raises(ValueError, match="teacher forcing 1"):
        src, lengths, tgt = _batch()
        _model()(src, lengths, tgt, teacher_forcing=0.5)


def test_learns_to_reverse_and_its_last_layer_aligns():
    torch.manual_seed(0)
    model = build_model(_cfg(V=14, hidden_size=32, emb_size=32, ff_size=64, tie_embeddings=True))
    optimizer = make_optimizer(model.parameters(), 3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(600):
        train_step(model, sample_batch("reverse", 32, 3, 6, 10, g), optimizer)
    model.eval()
    batch = sample_batch("reverse", 64, 3, 6, 10, torch.Generator().manual_seed(9))
    hyps = greedy(model, batch.src, batch.src_lengths)
    gold = [row[: n - 1].tolist() for row, n in zip(batch.tgt_out, batch.tgt_lengths.tolist())]  # without <eos>
    exact = sum(h.tokens == g_ for h, g_ in zip(hyps, gold))
    assert exact / len(hyps) > 0.9, exact
    lengths = batch.src_lengths.tolist()
    hits = sum(alignment_hits("reverse", h.weights, n) for h, n in zip(hyps, lengths))
    print(f"reverse: {exact}/64 exact, last-layer head mean peaks on the mirrored position {hits}/{sum(lengths)}")
    assert hits / sum(lengths) > 0.9


def _translator(**kw) -> Translator:
    vocab = Vocab(list("春风夏雨秋月冬雪山水花鸟，。"))
    cfg = _cfg(V=len(vocab), tie_embeddings=True, share_embeddings=True, **kw)
    torch.manual_seed(0)
    return Translator(build_model(cfg).eval(), vocab, vocab, get_task("couplet"), {"note": "test"})


def test_save_load_round_trip_and_couplet_constraints(tmp_path):
    translator = _translator()
    assert set(translator.model.tied_parameters) == {"generator.weight", "src_embedding.weight"}
    save_pretrained(translator, tmp_path / "m")
    loaded = load_folder(tmp_path / "m")
    assert isinstance(loaded.model, Transformer)
    for name, tensor in translator.model.state_dict().items():
        torch.testing.assert_close(loaded.model.state_dict()[name], tensor)
    x = translator.translate(["春风夏雨", "山山水水"], beam_size=3)
    y = loaded.translate(["春风夏雨", "山山水水"], beam_size=3)
    assert [o.text for o in x] == [o.text for o in y]
    torch.testing.assert_close(x[1].weights, y[1].weights)
    mirrored = x[1].text  # the constraint holds for the Transformer too: AABB → AABB, no 重字
    assert len(mirrored) == 4 and mirrored[0] == mirrored[1] and mirrored[2] == mirrored[3]
    assert mirrored[0] != mirrored[2] and not set(mirrored) & set("山水")


def test_constraint_follows_reordered_beams():
    translator = _translator()
    sources = [list("春春风风"), list("山水山水")]
    batch_src = torch.tensor([translator.src_vocab.encode(s) for s in sources])
    constraint = CoupletConstraint(sources, translator.tgt_vocab)
    hyps = beam_search(translator.model, batch_src, torch.tensor([4, 4]), beam_size=4, constraint=constraint)
    a, b = ([translator.tgt_vocab.itos[i] for i in h.tokens] for h in hyps)
    assert a[0] == a[1] and a[2] == a[3] and a[0] != a[2]
    assert b[0] == b[2] and b[1] == b[3] and b[0] != b[1]


def test_push_then_pull_through_a_local_hub_server(tmp_path):
    """A Transformer folder goes up with ``push`` and comes back with ``from_pretrained``, tensor for tensor."""
    import os
    import subprocess
    import sys

    from hub_server import serve

    translator = _translator()
    save_pretrained(translator, tmp_path / "model")
    server, endpoint = serve(tmp_path / "repos", tokens=frozenset({"secret"}))
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "HF_TOKEN": "secret", "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
           "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    code = (
        "import sys, torch; from attention_core.hub import push, from_pretrained, save_pretrained\n"
        "push(sys.argv[1], 'lab/transformer')\n"
        "t = from_pretrained('lab/transformer')\n"
        "save_pretrained(t, sys.argv[2])\n"
        "print(type(t.model).__name__, t.translate(['春风夏雨'], beam_size=3)[0].text)\n"
    )
    try:
        result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "model"), str(tmp_path / "back")],
                                env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["Transformer", translator.translate(["春风夏雨"], beam_size=3)[0].text]
    back = load_folder(tmp_path / "back").model.state_dict()
    for name, tensor in translator.model.state_dict().items():
        assert torch.equal(back[name], tensor), name


@pytest.mark.parametrize("beam,window,hard,max_len", [(1, None, False, None), (3, None, False, None),
                                                     (1, None, True, None), (3, 1, False, None), (1, None, False, 2)])
def test_the_maps_of_an_output_line_up_with_its_weights(beam, window, hard, max_len):
    translator = _translator()
    texts = ["春风夏雨秋", "山水", "花鸟月冬雪山"]  # one padded batch
    outs = translator.translate(texts, beam_size=beam, window=window, hard=hard, constrained=False, max_len=max_len)
    for out in outs:
        maps = translator.attention_maps(out, window=window, hard=hard)
        T, S = out.weights.shape
        assert T == len(out.tokens) + out.finished  # an unfinished output has no <eos> row
        assert maps.cross.shape == (2, 4, T, S) and maps.decoder.shape == (2, 4, T, T)
        assert maps.encoder.shape == (2, 4, S, S)
        torch.testing.assert_close(maps.cross[-1].mean(0), out.weights)  # the heatmap is the last layer's mean
    if max_len:
        assert not any(out.finished for out in outs)


def test_training_refuses_teacher_forcing_below_one_before_any_work(tmp_path):
    from attention_core.training.loop import TrainConfig, TrainError, fit

    with pytest.raises(TrainError, match="teacher forcing 1"):
        fit(get_task("couplet"), None, tmp_path / "m", dict(decoder="transformer", score="scaled_dot"),
            TrainConfig(teacher_forcing=0.5), progress=False)
    assert not (tmp_path / "m").exists()
