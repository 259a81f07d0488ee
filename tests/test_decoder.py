"""The three RNN decoders do what their papers say: where the query comes from, what is fed back, what is seen."""

import pytest
import torch

from attention_core.model.config import ModelConfig
from attention_core.model.decoder import DecoderState, Memory
from attention_core.model.seq2seq import build_model

V, H = 30, 12


def model_of(decoder: str, score: str = "general"):
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=V, tgt_vocab_size=V, hidden_size=H, emb_size=8, decoder=decoder, score=score,
                      dropout=0.0)
    return build_model(cfg).eval()


def encoded(model, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (3, 5), generator=g)
    return model.encode(src, torch.tensor([5, 4, 2]))


def test_bahdanau_attends_before_reading_the_token() -> None:
    """Bahdanau: the query is s_{i-1}, so the step's weights do not depend on the token it reads."""
    model = model_of("bahdanau", "concat")
    memory, state = encoded(model)
    a = model.decoder.step(model.decoder.embed(torch.tensor([4, 5, 6])), state, memory, 0, None)
    b = model.decoder.step(model.decoder.embed(torch.tensor([7, 8, 9])), state, memory, 0, None)
    torch.testing.assert_close(a.weights, b.weights)
    assert not torch.allclose(a.output, b.output)


def test_luong_attends_after_reading_the_token_and_feeds_its_output_back() -> None:
    """Luong: the query is h_t (after the token), and h̃_t is the next step's input feed."""
    model = model_of("luong")
    memory, state = encoded(model)
    a = model.decoder.step(model.decoder.embed(torch.tensor([4, 5, 6])), state, memory, 0, None)
    b = model.decoder.step(model.decoder.embed(torch.tensor([7, 8, 9])), state, memory, 0, None)
    assert not torch.allclose(a.weights, b.weights)
    torch.testing.assert_close(a.state.feed, a.output)


def test_no_attention_sees_only_the_summary() -> None:
    """The baseline's outputs depend on the encoder outputs only through the fixed summary c."""
    model = model_of("none")
    memory, state = encoded(model)
    emb = model.decoder.embed(torch.tensor([4, 5, 6]))
    out = model.decoder.step(emb, state, memory, 0, None)
    other = Memory(torch.randn_like(memory.mask, dtype=torch.float).unsqueeze(-1).expand(-1, -1, H), None,
                   memory.mask, memory.tgt_lengths, memory.summary)
    torch.testing.assert_close(model.decoder.step(emb, state, other, 0, None).output, out.output)
    assert not out.weights.any()


@pytest.mark.parametrize("decoder", ["luong", "bahdanau", "none"])
def test_weights_are_a_distribution_over_real_source_tokens(decoder: str) -> None:
    model = model_of(decoder, "concat" if decoder == "bahdanau" else "general")
    memory, state = encoded(model)
    out = model.decoder.step(model.decoder.embed(torch.tensor([4, 5, 6])), state, memory, 0, None)
    if decoder != "none":
        torch.testing.assert_close(out.weights.sum(-1), torch.ones(3))
        assert not out.weights[~memory.mask].any()


def test_index_select_picks_rows() -> None:
    model = model_of("luong")
    memory, state = encoded(model)
    index = torch.tensor([2, 2, 0])
    picked, picked_state = memory.index_select(index), state.index_select(index)
    torch.testing.assert_close(picked.values, memory.values[index])
    assert picked.mask.tolist() == memory.mask[index].tolist()
    torch.testing.assert_close(picked_state.hidden, state.hidden[index])
    torch.testing.assert_close(picked_state.cell, state.cell[index])
    assert DecoderState(state.hidden).index_select(index).cell is None


def test_initial_state_is_the_bridged_encoder_state() -> None:
    model = model_of("luong")
    g = torch.Generator().manual_seed(1)
    enc = model.encoder(torch.randint(4, V, (2, 4), generator=g), torch.tensor([4, 3]))
    state, summary = model.decoder.init_state(enc)
    torch.testing.assert_close(state.hidden, torch.tanh(model.decoder.bridge(enc.final)))
    torch.testing.assert_close(summary, state.hidden[:, -1])
