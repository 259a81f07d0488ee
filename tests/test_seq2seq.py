import pytest
import torch

from attention_core.model.config import ModelConfig
from attention_core.model.decoder import DECODERS
from attention_core.model.scores import SCORES
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import sequence_loss


def _cfg(**kw):
    base = dict(src_vocab_size=15, tgt_vocab_size=17, hidden_size=12, emb_size=6, dropout=0.1)
    base.update(kw)
    return ModelConfig(**base)


def _batch():
    src = torch.randint(4, 15, (3, 8))
    lengths = torch.tensor([8, 3, 1])
    for b, n in enumerate(lengths.tolist()):
        src[b, n:] = 0
    tgt = torch.randint(4, 17, (3, 5))
    return src, lengths, tgt


VARIANTS = [("none", "dot", "global", None)] + [
    (dec, score, mode, window)
    for dec in ("bahdanau", "luong")
    for score in SCORES
    for mode, window in (("global", None), ("local-m", 2), ("local-p", 3))
]


@pytest.mark.parametrize("decoder,score,mode,window", VARIANTS)
@pytest.mark.parametrize("rnn", ["lstm", "gru"])
def test_forward_shapes_and_gradients_reach_every_parameter(decoder, score, mode, window, rnn):
    model = build_model(_cfg(decoder=decoder, score=score, attention=mode, window=window, rnn=rnn))
    src, lengths, tgt = _batch()
    logits, weights = model(src, lengths, tgt, torch.tensor([5, 4, 2]))
    assert logits.shape == (3, 5, 17)
    assert weights.shape == (3, 5, 8)
    if decoder != "none":
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 5))
        assert (weights[1, :, 3:] == 0).all() and (weights[2, :, 1:] == 0).all()
    loss = sequence_loss(logits, tgt, pad_id=0)
    loss.backward()
    for name, p in model.named_parameters():
        if name.startswith("encoder.embedding") or name.startswith("decoder.embedding"):
            continue  # rows of unused ids get no gradient; the table as a whole is checked below
        assert p.grad is not None, f"no gradient for {name}"
        assert torch.isfinite(p.grad).all(), f"non-finite gradient for {name}"
        assert p.grad.abs().sum() > 0, f"zero gradient for {name}"
    assert model.encoder.embedding.weight.grad[src[0]].abs().sum() > 0
    assert model.decoder.embedding.weight.grad[tgt[0]].abs().sum() > 0


def test_padding_does_not_change_the_result():
    model = build_model(_cfg(decoder="luong", score="concat")).eval()
    src = torch.tensor([[5, 6, 7]])
    tgt = torch.tensor([[2, 8, 9]])
    padded = torch.tensor([[5, 6, 7, 0, 0, 0]])
    a, wa = model(src, torch.tensor([3]), tgt)
    b, wb = model(padded, torch.tensor([3]), tgt)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(wa, wb[:, :, :3])


def test_window_override_at_inference_time():
    model = build_model(_cfg(decoder="luong", score="dot")).eval()
    src, lengths, tgt = _batch()
    _, global_w = model(src, lengths, tgt)
    _, local_w = model(src, lengths, tgt, window=1)
    assert (global_w[0] > 0).sum() > (local_w[0] > 0).sum()
    assert ((local_w[0] > 0).sum(-1) <= 3).all()
    with pytest.raises(ValueError):
        model(src, lengths, tgt, window=0)


def test_local_p_model_window_none_means_global():
    model = build_model(_cfg(decoder="luong", attention="local-p", window=1)).eval()
    src, lengths, tgt = _batch()
    _, local = model(src, lengths, tgt)
    _, glob = model(src, lengths, tgt, window=None)
    assert ((local[0] > 0).sum(-1) <= 3).all()
    assert ((glob[0] > 0).sum(-1) == 8).all()


@pytest.mark.parametrize(
    "bad,match",
    [
        (dict(decoder="rnnsearch"), "bahdanau"),
        (dict(decoder="transformer"), "scaled_dot"),
        (dict(score="cosine"), "scaled_dot"),
        (dict(attention="local-x"), "local-p"),
        (dict(attention="local-p", window=None), "window"),
        (dict(attention="global", window=3), "global"),
        (dict(rnn="elman"), "gru"),
        (dict(dropout=1.5), "dropout"),
        (dict(hidden_size=0), "hidden_size"),
    ],
)
def test_bad_config_raises_a_readable_error(bad, match):
    with pytest.raises(ValueError, match=match):
        build_model(_cfg(**bad))


def test_config_round_trip_and_unknown_fields():
    cfg = _cfg(decoder="bahdanau", score="concat")
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="colour"):
        ModelConfig.from_dict({**cfg.to_dict(), "colour": "red"})
    data = cfg.to_dict()
    del data["src_vocab_size"]
    with pytest.raises(ValueError, match="incomplete"):
        ModelConfig.from_dict(data)


def test_decoder_registry():
    assert set(DECODERS) == {"bahdanau", "luong", "none"}


def test_device_comes_from_tensors():
    # float64 parameters and inputs: every tensor the model creates follows the inputs' device and
    # the parameters' dtype, so nothing is hard-coded
    model = build_model(_cfg(decoder="luong", attention="local-m", window=2)).double()
    src, lengths, tgt = _batch()
    logits, weights = model(src, lengths, tgt)
    assert logits.dtype == torch.float64 and logits.device == src.device


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
@pytest.mark.parametrize("layers", [1, 2])
def test_small_batch_cell_kernels_match_the_sequence_kernel(rnn, layers):
    from attention_core.decoding.search import greedy

    model = build_model(_cfg(decoder="luong", rnn=rnn, num_layers=layers)).eval()
    src, lengths, tgt = _batch()
    with torch.no_grad():  # grad mode off but not inference mode: the small batch takes the cell path
        cells = greedy(model, src, lengths, max_len=6)
    expected, _ = model(src, lengths, tgt)  # training-style path (grad enabled): nn.LSTM kernel
    with torch.no_grad():
        logits, _ = model(src, lengths, tgt)  # batch of 3: cell kernels
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-4)
    assert len(cells) == 3
