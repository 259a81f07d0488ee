"""The training step reads nothing back from a GPU (issue #52): checked on a CPU, and on CUDA where there is one.

A GPU runs ahead of the host only while the host never waits for it. The waits come from operations whose result
the host must read: ``.item()`` and ``bool()`` (``aten._local_scalar_dense``), ``nonzero``, ``masked_select`` and
boolean indexing (the output's size), ``unique``. On a CPU every tensor is on the host and such a read costs
nothing, so the step takes the CPU's faster ways there (``REAL_ONLY_DEVICES``, ``BY_LENGTH_DEVICES``); with those
emptied it takes a GPU's ways on the CPU, and a dispatch mode records every reading operation of one step, for every
variant of the translation zoo. Reads inside ``torch.nn.utils.rnn`` (packing) and ``torch.nn.modules.rnn`` (a
packed input's batch sizes) are on the batch's lengths, which stay on the host (``Batch.to``), and are allowed.
The two ways must also train alike: the same loss and gradients.
"""

from __future__ import annotations

import collections
import traceback

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import attention_core.model.encoder as encoder
import attention_core.training.loop as training
from attention_core.data.batch import make_batch
from attention_core.data.tasks import Splits, get_task
from attention_core.hub.zoo import VARIANTS, model_options
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.training.loop import fit, make_optimizer, train_step
from attention_core.training.trainconfig import TrainConfig

READS = {"aten._local_scalar_dense.default", "aten.nonzero.default", "aten.masked_select.default",
         "aten.is_nonzero.default", "aten.equal.default"}
"""Operations whose result the host reads (besides boolean indexing and ``unique``)."""
HOST_LENGTHS = ("torch/nn/utils/rnn.py", "torch/nn/modules/rnn.py")
"""Packing reads the batch's lengths, and the RNN a packed input's batch sizes: both stay on the host."""


class Reads(TorchDispatchMode):
    """Records each operation that would make the host wait for a GPU, with the line of ours that ran it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: D105
        name = str(func)
        boolean_index = name.startswith("aten.index.Tensor") and any(
            isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1] if i is not None)
        if name in READS or "unique" in name or boolean_index:
            stack = traceback.extract_stack()
            if not any(frame.filename.endswith(HOST_LENGTHS) for frame in stack):
                ours = [f for f in stack if "attention_core" in f.filename]
                where = f"{ours[-1].filename.split('attention_core')[-1]}:{ours[-1].lineno}" if ours else "?"
                self.seen[f"{'boolean index' if boolean_index else name} at {where}"] += 1
        return func(*args, **(kwargs or {}))


def _batch():
    pairs = [([5, 6, 7, 8, 9], [10, 11, 12]), ([5, 7], [13, 14, 15, 16, 17, 18]), ([8, 9, 6], [19]),
             ([6, 5, 7, 9, 8], [11, 20, 12, 13])]
    return make_batch(pairs)


def _model(variant: str, dropout: float = 0.1):
    options = {**model_options("translation", variant), "hidden_size": 16, "emb_size": 16, "dropout": dropout}
    if variant == "transformer":
        options.update(ff_size=32, heads=2)
    torch.manual_seed(0)
    return build_model(ModelConfig(src_vocab_size=24, tgt_vocab_size=24, **options))


@pytest.fixture
def as_on_a_gpu(monkeypatch):
    """The step and the encoder take a GPU's ways on the CPU."""
    monkeypatch.setattr(training, "REAL_ONLY_DEVICES", frozenset())
    monkeypatch.setattr(encoder, "BY_LENGTH_DEVICES", frozenset())


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_step_taken_as_on_a_gpu_reads_nothing_back(variant, as_on_a_gpu):
    model = _model(variant)
    optimizer = make_optimizer(model.parameters(), 1e-3)
    with Reads() as reads:
        loss = train_step(model, _batch(), optimizer, clip=1.0, label_smoothing=0.1, amp_dtype=torch.bfloat16)
    assert dict(reads.seen) == {}
    assert loss.dim() == 0 and not loss.requires_grad and torch.isfinite(loss)


def test_the_detector_sees_what_a_cpu_step_reads():
    """On a CPU the step takes its own ways, which read: the detector must see them (it is not blind)."""
    model = _model("luong-general")
    with Reads() as reads:
        train_step(model, _batch(), make_optimizer(model.parameters(), 1e-3))
    seen = " ".join(reads.seen)
    assert "boolean index at /training/loop.py" in seen  # the real positions only
    assert "/model/encoder.py" in seen  # the groups of equal length


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_masked_step_trains_as_the_real_only_step(variant, monkeypatch):
    """Every position projected and the padding masked from the loss: the same loss and gradients (float32)."""
    after = {}
    for way, devices in (("real only", frozenset({"cpu"})), ("masked", frozenset())):
        monkeypatch.setattr(training, "REAL_ONLY_DEVICES", devices)
        model = _model(variant, dropout=0.0)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        loss = train_step(model, _batch(), torch.optim.SGD(model.parameters(), lr=1.0), clip=0, label_smoothing=0.1)
        after[way] = loss, {n: before[n] - p.detach() for n, p in model.named_parameters()}  # the gradients
    (loss_a, grads_a), (loss_b, grads_b) = after.values()
    torch.testing.assert_close(loss_b, loss_a, rtol=1e-5, atol=1e-6)
    for name, grad in grads_a.items():
        torch.testing.assert_close(grads_b[name], grad, rtol=1e-4, atol=1e-6, msg=f"{variant}: {name}")
    assert any(g.abs().sum() > 0 for g in grads_a.values())


def test_the_packed_encoder_keeps_the_batch_order():
    """The GPU's packed run (sorted on the host) gives what ``enforce_sorted=False`` packing gives."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    torch.manual_seed(0)
    for rnn in ("lstm", "gru"):
        enc = encoder.Encoder(30, 8, 6, num_layers=2, rnn=rnn).eval()
        lengths = torch.tensor([9, 3, 5, 9, 1, 3, 7])
        embedded = enc.embedding(torch.randint(4, 30, (7, 9)))
        outputs, state = enc._run_packed(embedded, lengths)
        packed, expected_state = enc.rnn(pack_padded_sequence(embedded, lengths, batch_first=True,
                                                              enforce_sorted=False))
        torch.testing.assert_close(outputs, pad_packed_sequence(packed, batch_first=True, total_length=9)[0])
        torch.testing.assert_close(state, expected_state)


@pytest.mark.parametrize("checkpoint_minutes", [0, 1e-9])
def test_an_epoch_reads_its_loss_back_rarely_and_sums_it_right(tmp_path, monkeypatch, checkpoint_minutes):
    """Summed on the device, the epoch's loss is the mean of its steps' losses — read once an epoch without a progress
    bar or checkpoints, and at each checkpoint when there are (here: after every batch)."""
    pairs = [(f"我{i % 7}你", f"i {i % 5} you") for i in range(64)]
    splits = Splits(pairs, pairs[:5], pairs[:5], {"task": "translation"})
    steps: list[tuple[torch.Tensor, int]] = []
    reads = []
    real, real_float = training.train_step, torch.Tensor.__float__

    def spy(model, batch, *args, **kwargs):
        loss = real(model, batch, *args, **kwargs)
        assert isinstance(loss, torch.Tensor)  # not read by the step
        steps.append((loss.clone(), batch.size))
        return loss

    def counted_float(tensor):  # reads by the training loop itself (dev BLEU's decoding reads its own)
        ours = [f.filename for f in traceback.extract_stack() if "attention_core" in f.filename]
        if ours and ours[-1].endswith("training/loop.py"):
            reads.append(tensor.numel())
        return real_float(tensor)

    monkeypatch.setattr(training, "train_step", spy)
    monkeypatch.setattr(torch.Tensor, "__float__", counted_float)
    cfg = TrainConfig(epochs=2, batch_size=8, max_dev=5, checkpoint_minutes=checkpoint_minutes)
    result = fit(get_task("translation"), splits, tmp_path / "m", dict(hidden_size=8, emb_size=8), cfg,
                 progress=False)
    monkeypatch.undo()
    assert len(steps) == 16  # 8 batches an epoch
    per_epoch = [steps[:8], steps[8:]]
    for record, epoch in zip(result["history"], per_epoch, strict=True):
        mean = sum(float(loss) * size for loss, size in epoch) / sum(size for _, size in epoch)
        assert record["train_loss"] == pytest.approx(mean, abs=1e-4)
    if checkpoint_minutes:
        assert len(reads) >= 14  # a read at each checkpoint within the epochs (7 an epoch) and at each end
    else:
        assert len(reads) == 2  # each epoch's end, and nothing a step (reading every step would be 16)


@pytest.mark.cuda
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_cuda_step_never_synchronises(variant):
    """CUDA's own check: any synchronising call during the step raises (after one warm-up step)."""
    model = _model(variant).cuda()
    optimizer = make_optimizer(model.parameters(), 1e-3)
    batch = _batch().to("cuda")
    train_step(model, batch, optimizer, amp_dtype=torch.bfloat16)  # cuDNN plans, first allocations
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss = train_step(model, batch, optimizer, amp_dtype=torch.bfloat16)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert torch.isfinite(loss.cpu())
