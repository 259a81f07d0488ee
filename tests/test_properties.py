"""Property-based tests (hypothesis): text round trips, the attention step, search, model-folder loading.

Budgets are fixed (``max_examples``, no per-example deadline, derandomised so CI sees the same
examples every run); the whole file takes a few seconds on two cores.
"""

import json
import shutil
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_core.data.tasks import get_task
from attention_core.data.text import (
    detokenize_chinese,
    detokenize_english,
    normalize_chinese,
    tokenize_chinese,
    tokenize_english,
)
from attention_core.data.vocab import Vocab
from attention_core.decoding.folder import ModelLoadError, load_folder, save_pretrained
from attention_core.decoding.search import beam_search, greedy
from attention_core.decoding.translator import Translator
from attention_core.model.attention import Window, attention
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

CHINESE = st.text(st.sampled_from(list("这是汤姆的书們們學習風雨春秋山水，。！？、“”《》 abcXYZ0129,!?")), max_size=30)
ENGLISH = st.text(st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 .,!?;:'()-")), max_size=40)


# --- text ---------------------------------------------------------------------------------------


@FAST
@given(CHINESE)
def test_chinese_normalisation_is_idempotent_and_tokens_survive_a_round_trip(text):
    once = normalize_chinese(text)
    assert normalize_chinese(once) == once
    tokens = tokenize_chinese(text)
    assert all(tok and not any(ch.isspace() for ch in tok) for tok in tokens)
    assert tokenize_chinese(detokenize_chinese(tokens)) == tokens


@FAST
@given(ENGLISH)
def test_english_tokens_survive_detokenisation(text):
    tokens = tokenize_english(text)
    assert all(tok and tok == tok.lower() and " " not in tok for tok in tokens)
    assert tokenize_english(detokenize_english(tokens)) == tokens


# --- the attention step -------------------------------------------------------------------------


@st.composite
def attention_inputs(draw):
    B, T, S = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 9))
    lengths = [draw(st.integers(1, S)) for _ in range(B)]
    seed = draw(st.integers(0, 2**16))
    window = draw(st.none() | st.integers(1, 4))
    gaussian = draw(st.booleans())
    scale = draw(st.sampled_from([1.0, 30.0]))  # large scores push the softmax to its limits
    return B, T, S, lengths, seed, window, gaussian, scale


@FAST
@given(attention_inputs(), st.booleans())
def test_attention_rows_sum_to_one_with_zeros_on_padding_and_outside_windows(inputs, hard):
    B, T, S, lengths, seed, D, gaussian, scale = inputs
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(B, T, S, generator=g) * scale
    values = torch.randn(B, S, 5, generator=g)
    mask = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]  # (B, S)
    window = None
    if D is not None:
        centre = torch.rand(B, T, generator=g) * (S + 3) - 1  # may lie outside the source
        window = Window(centre, D, gaussian)
    context, weights = attention(scores, values, mask, window, hard)
    assert weights.shape == (B, T, S) and context.shape == (B, T, 5)
    assert torch.isfinite(weights).all() and torch.isfinite(context).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, T))
    assert (weights.masked_select(~mask[:, None, :].expand(B, T, S)) == 0).all()
    if window is not None:
        distance = (torch.arange(S)[None, None, :] - window.centre[..., None]).abs()  # (B, T, S)
        inside = (distance <= D) & mask[:, None, :]
        has_real_key = inside.any(-1, keepdim=True)
        assert (weights.masked_select(has_real_key & ~inside) == 0).all()
        # an empty window attends to the one real key nearest its centre
        nearest = distance.masked_fill(~mask[:, None, :], float("inf")).argmin(-1)  # (B, T)
        empty = ~has_real_key.squeeze(-1)
        assert (weights.argmax(-1)[empty] == nearest[empty]).all()
    if hard:
        assert ((weights == 0) | (weights == 1)).all()
    torch.testing.assert_close(context, weights @ values)


# --- search -------------------------------------------------------------------------------------

VARIANTS = st.sampled_from([
    dict(decoder="luong", score="general"),
    dict(decoder="luong", score="dot", attention="local-p", window=2),
    dict(decoder="bahdanau", score="concat", attention="local-m", window=1),
    dict(decoder="none"),
])


@st.composite
def search_inputs(draw):
    options = draw(VARIANTS)
    seed = draw(st.integers(0, 2**16))
    B, S = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    lengths = sorted((draw(st.integers(1, S)) for _ in range(B)), reverse=True)
    lengths[0] = S
    return options, seed, lengths


def _model_and_batch(options, seed, lengths):
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=12, tgt_vocab_size=9, hidden_size=8, emb_size=6, dropout=0.0, **options)
    model = build_model(cfg).eval()
    src = torch.randint(4, 12, (len(lengths), max(lengths)))
    for b, n in enumerate(lengths):
        src[b, n:] = 0
    return model, src, torch.tensor(lengths)


@SLOW
@given(search_inputs())
def test_beam_one_is_greedy(inputs):
    model, src, lengths = _model_and_batch(*inputs)
    for g, b in zip(greedy(model, src, lengths, max_len=8), beam_search(model, src, lengths, beam_size=1, max_len=8)):
        assert g.tokens == b.tokens and g.finished == b.finished
        torch.testing.assert_close(g.weights, b.weights)
        assert g.score == pytest.approx(b.score, abs=1e-4)


@SLOW
@given(search_inputs(), st.integers(1, 4))
def test_a_batch_decodes_like_its_sentences_one_by_one(inputs, beam):
    model, src, lengths = _model_and_batch(*inputs)
    batched = beam_search(model, src, lengths, beam_size=beam, max_len=8)
    for b, n in enumerate(lengths.tolist()):
        single = beam_search(model, src[b : b + 1, :n], lengths[b : b + 1], beam_size=beam, max_len=8)[0]
        assert single.tokens == batched[b].tokens
        torch.testing.assert_close(single.weights, batched[b].weights, atol=1e-5, rtol=1e-4)


# --- model-folder loading -----------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
FIELDS = list(ModelConfig.__dataclass_fields__)


@pytest.fixture(scope="module")
def valid_folder(tmp_path_factory) -> Path:
    vocab = Vocab(list("春风夏雨秋月冬雪"))
    cfg = ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), hidden_size=8, emb_size=6,
                      decoder="luong", score="concat", attention="local-p", window=2)
    translator = Translator(build_model(cfg).eval(), vocab, vocab, get_task("couplet"))
    return save_pretrained(translator, tmp_path_factory.mktemp("valid") / "m")


CORRUPTIONS = st.one_of(
    st.tuples(st.just("model field"), st.sampled_from(FIELDS), JSON),
    st.tuples(st.just("drop model field"), st.sampled_from(FIELDS), st.none()),
    st.tuples(st.just("top field"), st.sampled_from(["format", "task", "model", "meta", "extra"]), JSON),
    st.tuples(st.just("token"), st.integers(0, 11), JSON),
    st.tuples(st.just("vocab field"), st.sampled_from(["tokens", "min_freq", "counts"]), JSON),
    st.tuples(st.just("truncate"), st.sampled_from(["config.json", "src_vocab.json", "model.safetensors"]),
              st.floats(0, 1)),
    st.tuples(st.just("flip byte"), st.sampled_from(["config.json", "tgt_vocab.json", "model.safetensors"]),
              st.tuples(st.floats(0, 1), st.integers(1, 255))),
)


def _corrupt(folder: Path, corruption) -> None:
    kind, key, value = corruption
    if kind not in ("truncate", "flip byte"):
        try:
            _edit(folder, kind, key, value)
        except (ValueError, LookupError, TypeError):  # an earlier corruption left nothing to edit
            pass
        return
    path = folder / key
    data = bytearray(path.read_bytes())
    if kind == "truncate":
        data = data[: int(len(data) * value)]
    elif data:
        position = min(len(data) - 1, int(len(data) * value[0]))
        data[position] ^= value[1]
    path.write_bytes(bytes(data))


def _edit(folder: Path, kind: str, key, value) -> None:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    vocab = json.loads((folder / "tgt_vocab.json").read_text(encoding="utf-8"))
    if kind == "model field":
        config["model"][key] = value
    elif kind == "drop model field":
        del config["model"][key]
    elif kind == "top field":
        config[key] = value
    elif kind == "token":
        vocab["tokens"][key] = value
    else:
        vocab[key] = value
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tgt_vocab.json").write_text(json.dumps(vocab))


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(CORRUPTIONS, min_size=1, max_size=3))
def test_a_corrupted_model_folder_loads_or_raises_model_load_error_only(valid_folder, corruptions):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(shutil.copytree(valid_folder, Path(tmp) / "m"))
        for corruption in corruptions:
            _corrupt(folder, corruption)
        try:
            translator = load_folder(folder)
        except ModelLoadError:
            return
        translator.translate(["春风"], max_len=5)  # whatever loads also runs
