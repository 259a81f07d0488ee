"""Mixed-precision training: the choice of precision, the mixed-precision RNN step, and a bf16 update."""

import subprocess
import sys

import pytest
import torch
from corpus import data_dir

import attention_core.training.precision as precision_mod
from attention_core.data.batch import make_batch
from attention_core.model.config import ModelConfig
from attention_core.model.decoder import DecoderState
from attention_core.model.rnn_steps import run_cells
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import TrainConfig, make_optimizer, sequence_loss, train_step
from attention_core.training.precision import resolve_precision


@pytest.mark.parametrize("native, expected", [(True, "bf16"), (False, "fp32")])
def test_auto_picks_bf16_only_on_a_cpu_that_multiplies_it_natively(monkeypatch, native, expected):
    monkeypatch.setattr(precision_mod, "cpu_has_native_bf16", lambda: native)
    assert resolve_precision("auto", torch.device("cpu")) == expected
    assert resolve_precision("auto", torch.device("cuda")) == "fp16"
    assert resolve_precision("fp32", torch.device("cpu")) == "fp32"
    assert resolve_precision("bf16", torch.device("cpu")) == "bf16"  # allowed (emulated) everywhere


def test_bad_precisions_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="needs a CUDA device"):
        resolve_precision("fp16", torch.device("cpu"))
    with pytest.raises(ValueError, match="valid: auto, fp32, bf16, fp16"):
        resolve_precision("int8", torch.device("cpu"))
    with pytest.raises(ValueError, match="precision must be one of"):
        TrainConfig(precision="half").validate()


def test_cli_explains_fp16_on_cpu(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "attention_core.cli", "train", "--task", "translation", "--out", str(tmp_path / "m"),
         "--precision", "fp16", "--device", "cpu", "--data", str(data_dir())],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "fp16 mixed precision needs a CUDA device" in run.stderr
    assert not (tmp_path / "m").exists()  # refused before anything was written


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
@pytest.mark.parametrize("layers", [1, 2])
def test_mixed_precision_cell_step_is_the_rnn_step(rnn, layers):
    """Outside autocast the mixed-precision path is plain float32 maths: it must equal nn.LSTM/nn.GRU."""
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=20, tgt_vocab_size=20, hidden_size=16, emb_size=8, rnn=rnn,
                      num_layers=layers, dropout=0.0)
    decoder = build_model(cfg).decoder
    x = torch.randn(5, decoder.rnn.input_size)
    state = DecoderState(torch.randn(5, layers, 16), torch.randn(5, layers, 16) if rnn == "lstm" else None)
    out, new = decoder.run_rnn(x, state)  # nn.LSTM / nn.GRU (batch 5 with gradients on)
    out_m, hidden_m, cell_m = run_cells(decoder.rnn, x, state.hidden, state.cell, mixed=True, training=False)
    torch.testing.assert_close(out_m, out, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(hidden_m, new.hidden, rtol=1e-5, atol=1e-6)
    if rnn == "lstm":
        torch.testing.assert_close(cell_m, new.cell, rtol=1e-5, atol=1e-6)


def _batch():
    g = torch.Generator().manual_seed(3)
    pairs = []
    for _ in range(16):
        n = int(torch.randint(3, 9, (1,), generator=g))
        src = torch.randint(4, 30, (n,), generator=g).tolist()
        pairs.append((src, src[::-1]))
    return make_batch(pairs)


@pytest.mark.parametrize("rnn", ["lstm", "gru"])
def test_bf16_autocast_keeps_the_recurrent_state_float32_and_close_to_fp32(rnn):
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab_size=30, tgt_vocab_size=30, hidden_size=32, emb_size=16, rnn=rnn, dropout=0.0)
    model = build_model(cfg).eval()
    batch = _batch()
    with torch.no_grad():
        ref, _ = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            memory, state = model.encode(batch.src, batch.src_lengths)
            for t in range(3):
                step = model.step(batch.tgt_in[:, t], state, memory, t)
                state = step.state
                assert state.hidden.dtype == torch.float32
                assert state.cell is None or state.cell.dtype == torch.float32
            mixed, _ = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)
    # bfloat16 keeps 8 significant bits: the logits agree to a few per cent, not to float32 precision
    torch.testing.assert_close(mixed.float(), ref, rtol=0.05, atol=0.05)


def test_bf16_training_steps_lower_the_loss_like_fp32():
    losses = {}
    for name, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
        torch.manual_seed(0)
        cfg = ModelConfig(src_vocab_size=30, tgt_vocab_size=30, hidden_size=32, emb_size=16, dropout=0.0)
        model = build_model(cfg)
        optimizer = make_optimizer(model.parameters(), lr=3e-3)
        batch = _batch()
        losses[name] = [float(train_step(model, batch, optimizer, amp_dtype=dtype)) for _ in range(80)]
        assert all(p.dtype == torch.float32 for p in model.parameters())  # master weights stay float32
    assert losses["bf16"][-1] < 0.3 * losses["bf16"][0]  # 3.39 → ≈ 0.59 (fp32: ≈ 0.58)
    assert abs(losses["bf16"][-1] - losses["fp32"][-1]) < 0.1
    # the first loss is the same model on the same batch: equal up to bfloat16 rounding
    assert losses["bf16"][0] == pytest.approx(losses["fp32"][0], rel=0.02)
    model.eval()
    with torch.no_grad():
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)
    assert torch.isfinite(sequence_loss(logits, batch.tgt_out, 0))
