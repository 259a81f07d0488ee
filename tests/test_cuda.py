"""GPU checks, marked ``cuda``: skipped where CUDA is not available (``tests/conftest.py``).

Mixed-precision training steps, decoding on CUDA against the CPU, and the app's handlers serving
from CUDA through ``ModelRegistry.get`` (what a ZeroGPU ``spaces.GPU`` call does).
"""

import copy

import pytest
import torch
from app_fixtures import small_registry

from attention_core.data.toy import sample_batch
from attention_core.decoding.search import beam_search, greedy
from attention_core.training.loop import train_step
from demo.handlers import Settings, run
from demo.live import LiveSettings, build_toy_model

pytestmark = pytest.mark.cuda


def _toy(settings: LiveSettings | None = None):
    model = build_toy_model(settings or LiveSettings())
    batch = sample_batch("reverse", 16, 4, 9, 10, torch.Generator().manual_seed(0))
    return model, batch


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_mixed_precision_training_step_on_cuda_lowers_the_loss(dtype):
    model, batch = _toy()
    model, batch = model.cuda(), batch.to("cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    losses = [float(train_step(model, batch, optimizer, scaler=scaler, amp_dtype=dtype)) for _ in range(30)]
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < losses[0]
    assert all(p.dtype == torch.float32 and torch.isfinite(p).all() for p in model.parameters())
    if scaler is not None:
        assert scaler.get_scale() > 0


@pytest.mark.parametrize("window", [None, 2])
def test_greedy_and_beam_on_cuda_match_the_cpu(window):
    model, batch = _toy(LiveSettings(window=window))
    model.eval()
    gpu = copy.deepcopy(model).cuda()
    for search in (greedy, lambda m, s, n: beam_search(m, s, n, beam_size=3)):
        on_cpu = search(model, batch.src, batch.src_lengths)
        on_gpu = search(gpu, batch.src.cuda(), batch.src_lengths.cuda())
        for a, b in zip(on_cpu, on_gpu):
            assert a.tokens == b.tokens
            torch.testing.assert_close(a.weights, b.weights, atol=1e-4, rtol=1e-3)
            assert a.score == pytest.approx(b.score, abs=1e-3)


def test_the_app_handlers_serve_from_cuda_and_agree_with_the_cpu():
    registry = small_registry()  # loaded on the CPU, like a ZeroGPU Space at start-up
    cpu = {task: run(registry, task, "我喜欢自然语言处理", Settings("luong-dot")) for task in registry.tasks()}
    placed = registry.get("translation", "luong-dot")
    assert placed.device.type == "cuda"  # get() places the model on CUDA inside the call
    assert registry.models["translation"]["luong-dot"].device.type == "cpu"  # the CPU copy stays
    for task in registry.tasks():
        result = run(registry, task, "我喜欢自然语言处理", Settings("luong-dot"))
        assert result.text == cpu[task].text
