"""Training: one optimisation step, and the corpus trainer around it.

[`train_step`][attention_core.training.loop.train_step] is the only place where a model is updated;
the corpus trainer ([`fit`][attention_core.training.loop.fit]: data, epochs, schedule, dev selection), the tests and
the app's live-training tab all call it. Its settings are
[`TrainConfig`][attention_core.training.trainconfig.TrainConfig]; a run's moving parts and its checkpoint are in
[`attention_core.training.checkpoint`][attention_core.training.checkpoint].
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from attention_core.analysis.metrics import bleu
from attention_core.data import truecase
from attention_core.data.atomic import atomic_write, atomic_write_text
from attention_core.data.batch import Batch
from attention_core.data.corpora import runs_home
from attention_core.data.encoded import FOLDER as ENCODED
from attention_core.data.encoded import VocabularySettings, encode_corpus, load_or_encode
from attention_core.data.parallel import SRC_SUBWORDS, TaskSpec, make_task, whitespace_words
from attention_core.data.subword import Subwords
from attention_core.data.tasks import Example, Splits, Task, bucketed_batches, encode_pairs, length_ratio
from attention_core.data.vocab import SPECIALS, Vocab
from attention_core.decoding.couplet import NO_RULES
from attention_core.decoding.folder import CONFIG, SUBWORDS, WEIGHTS, save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.model.config import TRANSFORMER, ModelConfig
from attention_core.model.scores import SCORES
from attention_core.model.seq2seq import build_model
from attention_core.training.allocator import loaded
from attention_core.training.checkpoint import CHECKPOINT, Run, read_checkpoint, restore, save_checkpoint
from attention_core.training.loss import smoothed_cross_entropy
from attention_core.training.precision import AMP_DTYPES, autocast, resolve_precision
from attention_core.training.runlock import hold, owner
from attention_core.training.trainconfig import TrainConfig, TrainError

FindNames = Callable[..., list[str]]
"""How a run finds the names its training sources hold: ``find_names(sources, report=print_event) -> names``."""


@dataclass(frozen=True)
class RunOptions:
    """Where and how a run of [`fit`][attention_core.training.loop.fit] runs, beside what it trains (``TrainConfig``).

    Attributes:
        resume: Continue from ``out_dir/checkpoint.pt``.
        device: Force a device (default: CUDA if available).
        progress: Show a progress bar.
        command: The command line, recorded in the model's metadata.
        init: A trained model to continue (fine-tuning); ``model_options`` may then only repeat its settings.
        encoded: The folder of encoded corpora a bundled task's run reads its pieces, vocabularies and ids from,
            or encodes them into ([`attention_core.data.encoded`][attention_core.data.encoded]); default: ``encoded``
            in the runs folder ([`runs_home`][attention_core.data.corpora.runs_home]).
        pieces: The subword pieces a bundled task's encoded corpus is made with when it is not saved yet
            (``load_or_encode``'s ``seed``; the zoo passes its shipped default model's); default: learned.
        find_names: For a task that lists the names its model knows (``task.lists_known_names``: Chinese →
            English), how to find the names the training sources hold often enough for the model to learn them,
            called as ``find_names(sources, report=print_event)``: the editing layer's
            [`cached_known_names`][attention_core.editing.namecache.cached_known_names], which the command line and
            the zoo pass. Training itself knows no names; without it the model lists none (the log says so, and
            the names switch then romanises every name it finds).
    """

    resume: bool = False
    device: str | None = None
    progress: bool = True
    command: str | None = None
    init: Translator | None = None
    encoded: str | Path | None = None
    pieces: Subwords | None = None
    find_names: FindNames | None = None

    @classmethod
    def of(cls, options: RunOptions | None = None, **settings: Any) -> RunOptions:
        """``options`` (or the defaults) with ``settings`` changed.

        Raises:
            TypeError: For a setting that is not a field (its name in the message), or ``options`` that is not a
                ``RunOptions``.
        """
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError(f"options must be a RunOptions, got {type(options).__name__}: pass settings by name "
                            "(resume=True)")
        unknown = sorted(set(settings) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise TypeError(f"unknown run setting(s) {', '.join(unknown)}; RunOptions has "
                            f"{', '.join(f.name for f in dataclasses.fields(cls))}")
        return dataclasses.replace(options or cls(), **settings)


@dataclass(frozen=True)
class _Job:
    """One call of ``fit``, its inputs settled: what trains, where, and how."""

    task: Task
    splits: Splits
    out: Path
    model_options: dict
    train_cfg: TrainConfig
    options: RunOptions
    encoded: Path


LOG_SECONDS = 1.0
"""How often an epoch's progress bar reads the loss back from the device."""
REAL_ONLY_DEVICES = frozenset({"cpu"})
"""Device types on which ``train_step`` projects only the real target positions (a boolean index, whose size the
host reads). On a CPU that reads nothing back and measured faster than projecting the padding too (1.10× a
training step at luong-general's size, ``results/step_ways.md``); on a GPU the read would wait for the device, so
there every position is projected and the loss masks the padding."""


def sequence_loss(logits: Tensor, tgt_out: Tensor, pad_id: int, label_smoothing: float = 0.0) -> Tensor:
    """Mean cross-entropy over real (non-padding) target tokens, in float32.

    See [`loss`][attention_core.training.loss].

    Args:
        logits: ``(B, T, V)``, or ``(N, V)`` for selected positions.
        tgt_out: Gold ids ``(B, T)`` (or ``(N,)``), padded with ``pad_id``.
        pad_id: Padding id, ignored.
        label_smoothing: Label smoothing ``ε``.

    Returns:
        A scalar tensor.
    """
    return smoothed_cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1), label_smoothing, pad_id)


def make_optimizer(parameters: Iterable[torch.nn.Parameter], lr: float) -> torch.optim.Optimizer:
    """Adam with the fused kernel, or the default implementation where that is unavailable.

    The fused kernel updates all parameters in one pass: 3–8 % faster training steps on a 2-core CPU
    (in-process A/B at batch sizes 32–128).

    Args:
        parameters: Model parameters.
        lr: Learning rate.
    """
    parameters = list(parameters)
    try:
        return torch.optim.Adam(parameters, lr=lr, fused=True)
    except (RuntimeError, TypeError):
        return torch.optim.Adam(parameters, lr=lr)


def train_step(
    model: torch.nn.Module,
    batch: Batch,
    optimizer: torch.optim.Optimizer,
    clip: float = 1.0,
    teacher_forcing: float = 1.0,
    label_smoothing: float = 0.0,
    scaler: torch.amp.GradScaler | None = None,
    amp_dtype: torch.dtype | None = None,
) -> Tensor:
    """One teacher-forced update: forward, loss, backward, gradient clipping, optimiser step.

    On a GPU nothing in the step reads a value back to the host (no ``.item()``, no boolean indexing, no copy
    to the CPU), so the host queues the next step while the device works: the vocabulary projection takes every
    target position and the loss leaves the padding out by its mask, and the loss comes back as a tensor. On a
    device of ``REAL_ONLY_DEVICES`` (the CPU, where a read costs nothing) the projection takes only the real
    positions (a boolean index), which measured faster there.

    Args:
        model: The model (set to train mode here).
        batch: A batch on the model's device.
        optimizer: The optimiser.
        clip: Maximum gradient norm (``0`` disables clipping).
        teacher_forcing: Probability of feeding gold tokens.
        label_smoothing: Label smoothing ``ε``.
        scaler: A ``GradScaler`` (float16 mixed precision on CUDA), or ``None``.
        amp_dtype: Run the forward pass under ``torch.autocast`` with this type (``torch.bfloat16``
            or ``torch.float16``; see ``attention_core.training.precision``); ``None`` trains in float32.
            Weights, optimiser state and the loss stay float32.

    Returns:
        The batch loss: a detached 0-d tensor on the batch's device. Read it (``float(loss)``) once per
        logging interval, not every step: on a GPU the read waits for the device.
    """
    model.train()
    cfg = getattr(model, "module", model).cfg  # unwrap DistributedDataParallel
    optimizer.zero_grad(set_to_none=True)
    device_type = batch.src.device.type
    masked = device_type not in REAL_ONLY_DEVICES
    with autocast(device_type, amp_dtype):
        real = None if masked else batch.tgt_out != cfg.pad_id  # (B, T)
        logits, _ = model(
            batch.src,
            batch.src_lengths,
            batch.tgt_in,
            batch.tgt_lengths,
            teacher_forcing=teacher_forcing,
            select=real,  # None: every position, (B, T, V); else only the real ones, (N, V)
        )
        gold = batch.tgt_out if masked else batch.tgt_out[real]  # padding ignored by the loss either way
        loss = sequence_loss(logits, gold, cfg.pad_id, label_smoothing)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
    else:
        loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss.detach()


def _distributed() -> tuple[int, int]:
    """Join the process group when launched by ``torchrun``; returns ``(rank, world_size)``."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1
    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size()


def pick_device(device: str | None = None) -> torch.device:
    """``device`` if given, else CUDA (this process's ``LOCAL_RANK``) when available, else CPU.

    Raises:
        ValueError: If ``device`` is not a device name (``cpu``, ``cuda``, ``cuda:1`` …) or names a CUDA device
            this machine does not have.
    """
    if device:
        try:
            chosen = torch.device(device)
        except RuntimeError:
            raise ValueError(f"unknown device {device!r}: use cpu, cuda or cuda:N") from None
        if chosen.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if count == 0:
                raise ValueError(f"device {device!r}: this machine (or this PyTorch build) has no CUDA GPU; "
                                 "use cpu")
            if chosen.index is not None and chosen.index >= count:
                raise ValueError(f"device {device!r}: this machine has {count} CUDA GPU(s), cuda:0 to "
                                 f"cuda:{count - 1}")
        elif chosen.type == "mps" and not torch.backends.mps.is_available():
            raise ValueError(f"device {device!r}: MPS is not available on this machine; use cpu")
        return chosen
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def evaluate_bleu(translator: Translator, pairs: Sequence[tuple[str, str]], beam_size: int = 1) -> float:
    """Corpus BLEU of the translator on text pairs, scored as the task scores (``metrics.bleu``).

    Couplets are decoded with the structural constraints only (length, punctuation, no ``<unk>``;
    [`NO_RULES`][attention_core.decoding.couplet.NO_RULES]), so model selection does not depend on the
    reader's rules chosen at decode time.
    """
    task = translator.task
    outputs = translator.translate([s for s, _ in pairs], beam_size=beam_size, rules=NO_RULES)
    return bleu([o.text for o in outputs], [t for _, t in pairs], task.bleu_tokenize, lowercase=True)


def source_lengths(examples: Sequence[Example]) -> dict[str, int]:
    """Percentiles of the training sources' lengths (tokens), saved with the model.

    The pipeline compares an input with them to say when a sentence is longer than nearly all
    training sentences ([`notes`][attention_core.analysis.notes.notes]).
    """
    lengths = sorted(len(e.src) for e in examples)
    if not lengths:
        return {}
    pick = lambda q: lengths[min(len(lengths) - 1, int(q * len(lengths)))]  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "max": lengths[-1]}


def fit(
    task: Task,
    splits: Splits,
    out_dir: str | Path,
    model_options: dict,
    train_cfg: TrainConfig,
    options: RunOptions | None = None,
    **settings: Any,
) -> dict:
    """Train a model on a task's splits, checkpointing every epoch (and within long epochs).

    The best model (by dev BLEU) is written to ``out_dir`` as a Hub-ready folder; the resumable
    state (weights, optimiser, scheduler, random states, history) goes to ``out_dir/checkpoint.pt``
    after every epoch and every ``train_cfg.checkpoint_minutes`` within one, atomically. ``resume=True``
    continues exactly where a killed run stopped.

    ``init`` continues a trained model instead of starting from random weights: its weights,
    architecture, vocabularies (and subwords) are kept, the optimiser and scheduler start afresh
    with ``train_cfg``, and the epochs go on from the model's history (``train_cfg.epochs`` counts
    from its first epoch, so the epoch seeds and a curriculum's later epochs are those of one long
    run). The vocabulary settings (``min_freq``, ``subword_vocab``) are the model's. Before the first
    epoch the model is scored on this run's dev set: that score is the best so far for model
    selection and early stopping, and the model is written to ``out_dir``. The learning-rate decay
    starts afresh with the optimiser: it compares the continued epochs with each other. Pass the
    same ``init`` again to resume such a run.

    Args:
        task: The task.
        splits: Train/dev/test text pairs.
        out_dir: Output folder.
        model_options: ``ModelConfig`` fields other than the vocabulary sizes and ids.
        train_cfg: Training settings: what is trained, and how.
        options: Where and how the run runs ([`RunOptions`][attention_core.training.loop.RunOptions]: resume,
            device, progress bar, command, a model to continue, the encoded corpora, pieces, the names finder).
        **settings: Fields of ``RunOptions`` to change (``resume=True``, ``progress=False``, ``init=model``, …).

    Returns:
        A summary: best dev BLEU, epochs run, whether training finished, the history.

    Raises:
        TrainError: If ``out_dir`` may not be written
            ([`claim_run_folder`][attention_core.training.loop.claim_run_folder]: a run without ``resume``, a model that
            is not a run's, a file or an unwritable place), the checkpoint is damaged, does not fit, was trained on
            other data (vocabularies, training pair counts or dev set) or continues a model and ``init`` is
            missing, or ``init`` belongs to another task, disagrees with ``model_options`` or has already run
            ``train_cfg.epochs``, or another process is training in ``out_dir``
            ([`attention_core.training.runlock`][attention_core.training.runlock]).
        ValueError: For a bad setting in ``train_cfg`` or an unknown ``device``.
    """
    options = RunOptions.of(options, **settings)
    train_cfg = _settle_settings(train_cfg, options.init, model_options)
    rank, world = _distributed()
    dev_ = pick_device(options.device)
    out = claim_run_folder(out_dir, options.resume)
    with hold(out) if rank == 0 else nullcontext(True) as mine:  # one process writes the folder (rank 0 under torchrun)
        if not mine:
            raise TrainError(f"{out} is being trained by another process (pid {owner(out)}): wait for it to finish, "
                             "or choose another --out folder")
        encoded = Path(options.encoded) if options.encoded is not None else runs_home() / ENCODED
        return _fit(_Job(task, splits, out, model_options, train_cfg, options, encoded), dev_, rank, world)


def _fit(job: _Job, dev_: torch.device, rank: int, world: int) -> dict:
    """[`fit`][attention_core.training.loop.fit] in a folder this process holds."""
    task, out, train_cfg, init = job.task, job.out, job.train_cfg, job.options.init
    precision = resolve_precision(train_cfg.precision, dev_)
    ckpt = read_checkpoint(out, job.options.resume, init, dev_)
    random.seed(train_cfg.seed)
    torch.manual_seed(train_cfg.seed)
    data = _prepare_data(job)
    run = _build_run(data, job, precision, device=dev_, rank=rank, world=world)
    fingerprint = _fingerprint(data)
    if ckpt is not None:
        restore(run, ckpt)
        if run.state.get("data", fingerprint) != fingerprint:  # checkpoints before the fingerprint have none
            raise TrainError(f"{out / CHECKPOINT} was trained on other data (the vocabularies, the number of "
                             "training pairs or the dev set differ): resume with the corpus and data options the "
                             "run began with, or choose another --out folder")
        _extend(run.state, train_cfg)
    else:
        (out / KNOWN_NAMES).unlink(missing_ok=True)  # a fresh run finds its own (a crashed first try may have left one)
    run.state["data"] = fingerprint
    translator = Translator(run.model, data.src_vocab, data.tgt_vocab, data.task,
                            _metadata(job, precision, run.state, data.examples,
                                      out if task.lists_known_names else None))
    if init is not None and ckpt is None:
        _score_the_start(run, translator, data.dev)
    if rank == 0:
        if data.encoding is not None:  # the task's encoded corpus: read, written, or this run's own pieces
            print(json.dumps({"event": "encoded-corpus", **data.encoding}), flush=True)
        _log_start(run, data, dev_, precision, world)
    for epoch in range(run.state["epoch"] + 1, train_cfg.epochs + 1):
        if run.state["finished"]:
            break
        record = _train_epoch(run, data, epoch)
        _end_epoch(run, translator, record, _dev_bleu(run, translator, data.dev))
    if run.state["epoch"] >= train_cfg.epochs:
        run.state["finished"] = True
    return {
        "best_dev_bleu": run.state["best_bleu"],
        "epochs": run.state["epoch"],
        "finished": run.state["finished"],
        "history": run.state["history"],
        "out_dir": str(out),
    }


KNOWN_NAMES = "known_names.json"
"""The names a Chinese → English run found in its sources, kept in the run folder for a resume."""


@dataclass
class _Data:
    """What a run trains and selects on: the task (with any subwords), vocabularies and encoded pairs."""

    task: Task
    src_vocab: Vocab
    tgt_vocab: Vocab
    own: list[Example]
    extra: list[Example]
    dev: Sequence[tuple[str, str]]
    init_history: list[dict]
    encoding: dict | None = None

    @property
    def examples(self) -> list[Example]:
        """Every training example: the task's own corpus, then the extra data."""
        return self.own + self.extra


def _settle_settings(train_cfg: TrainConfig, init: Translator | None, model_options: dict) -> TrainConfig:
    """Validate the settings; a continued model keeps its vocabulary settings; a Transformer needs teacher forcing."""
    train_cfg.validate()
    if init is not None:  # the vocabulary settings are the model's: record those, not the ignored ones
        train_cfg = dataclasses.replace(train_cfg, **_vocabulary_settings(init, train_cfg))
    decoder = init.model.cfg.decoder if init is not None else model_options.get("decoder")
    if decoder == TRANSFORMER and train_cfg.teacher_forcing < 1.0:
        raise TrainError("a Transformer trains with teacher forcing 1 (every target position at once); "
                         f"got teacher_forcing={train_cfg.teacher_forcing}")
    return train_cfg


def claim_run_folder(out: str | Path, resume: bool = False) -> Path:
    """Check, before any work, that a run may write into ``out``.

    A run never replaces what it did not make: a folder holding a training run is continued only with
    ``resume``, and one holding a model without a checkpoint (an exported or downloaded model) is refused.
    A file is written there (and removed, with any folder made for it), so an unwritable place fails now, not after
    an epoch.

    Args:
        out: The run's folder.
        resume: Continue the run in ``out``.

    Returns:
        The folder.

    Raises:
        TrainError: If ``out`` is empty, a file, an unwritable place, holds a run and ``resume`` is false, or
            holds a model that is not a run's.
    """
    if not str(out).strip():
        raise TrainError("the output folder is empty: name one with --out")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise TrainError(f"{folder} is a file, not a folder: choose another --out folder")
    if (folder / CHECKPOINT).exists():
        if not resume:
            raise TrainError(f"{folder} already holds a training run; pass --resume to continue it, "
                             "or choose another --out folder")
    elif any((folder / name).exists() for name in (CONFIG, WEIGHTS)):
        raise TrainError(f"{folder} holds a model that is not a training run (no {CHECKPOINT}): training would "
                         "replace it; choose another --out folder (to train that model further, give it as --init)")
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed and os.environ.get("RANK", "0") != "0":
        return folder  # under torchrun rank 0 tries the place; the others write there only after it
    missing = [] if distributed else [p for p in (folder, *folder.parents) if not p.exists()]  # deepest first
    try:  # a file written and removed: an unwritable place fails now, not when the first epoch is saved
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-test.")  # one per process (torchrun)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise TrainError(f"cannot write in {folder}: {err.strerror or err}") from None
    for created in missing:  # a refused run leaves nothing behind; the run creates them when it saves
        created.rmdir()
    return folder


def _prepare_data(job: _Job) -> _Data:
    """Subwords and vocabularies (the task's encoded corpus, learned, or the continued model's), then the ids."""
    task, splits, train_cfg, init, model_options, out = (job.task, job.splits, job.train_cfg, job.options.init,
                                                         job.model_options, job.out)
    resume, encoded, seed = job.options.resume, job.encoded, job.options.pieces
    train_pairs = splits.train[: train_cfg.max_train] if train_cfg.max_train else splits.train
    dev_pairs = splits.dev[: train_cfg.max_dev] if train_cfg.max_dev else splits.dev
    init_history = _history(init) if init is not None else []
    main_size = len(train_pairs) if splits.main_train_size is None else min(splits.main_train_size, len(train_pairs))
    encoding = None
    if init is not None:
        task, src_vocab, tgt_vocab = _check_init(init, len(init_history), task, model_options, train_cfg)
        own = encode_pairs(train_pairs[:main_size], task, src_vocab, tgt_vocab, train_cfg.max_len)
        extra = encode_pairs(train_pairs[main_size:], task, src_vocab, tgt_vocab, train_cfg.max_len)
    else:
        settings = VocabularySettings(train_cfg.subword_vocab, train_cfg.min_freq, train_cfg.max_len,
                                      bool(model_options.get("share_embeddings")))
        if task.spec is None:  # a bundled task: one encoded corpus, shared by its variants' runs
            began = Subwords.load(out / SUBWORDS) if resume and (out / SUBWORDS).is_file() else None
            corpus, how = load_or_encode(encoded, task, train_pairs, main_size, settings, began, seed)
            encoding = {"how": how, "key": corpus.key, "own": len(corpus.own), "extra": len(corpus.extra)}
            if corpus.task.subwords is not None and began is None:
                atomic_write(out / SUBWORDS, corpus.task.subwords.save)
        else:  # a task of your own: its pieces are learned into (or reread from) its run folder
            pieces = (_subwords(out / SUBWORDS, (task.tokenize_tgt(t) for _, t in train_pairs),
                                train_cfg.subword_vocab, resume) if train_cfg.subword_vocab else None)
            corpus = encode_corpus(task, train_pairs, main_size, settings, pieces)
        task, src_vocab, tgt_vocab = corpus.task, corpus.src_vocab, corpus.tgt_vocab
        own, extra = corpus.own, corpus.extra
    for side, vocab in (("source", src_vocab), ("target", tgt_vocab)):
        if len(vocab) == len(SPECIALS):
            raise TrainError(f"the {side} vocabulary is empty: no {side} token occurs min_freq={train_cfg.min_freq} "
                             "times in the training split (lower --min-freq)")
    if not own + extra:
        raise TrainError("no training pairs left after tokenisation and length filtering: every pair has a side "
                         f"longer than max_len={train_cfg.max_len} tokens (raise --max-len)")
    return _Data(task, src_vocab, tgt_vocab, own, extra, dev_pairs, init_history, encoding)


def _build_run(data: _Data, job: _Job, precision: str, *, device: torch.device, rank: int, world: int) -> Run:
    """The model (new, or the continued one's weights), its optimiser, learning-rate schedule and starting state.

    The keyword arguments are where the [`Run`][attention_core.training.checkpoint.Run] trains.
    """
    model_options, train_cfg, init = job.model_options, job.train_cfg, job.options.init
    out, progress = job.out, job.options.progress
    if init is not None:
        cfg = init.model.cfg
    else:
        positions = {}
        if SCORES[model_options.get("score", "general")].positional and model_options.get("max_source_len") is None:
            positions = {"max_source_len": train_cfg.max_len}  # no training source is longer
        cfg = ModelConfig(
            src_vocab_size=len(data.src_vocab),
            tgt_vocab_size=len(data.tgt_vocab),
            length_ratio=round(length_ratio(data.examples), 4),
            **model_options,
            **positions,
        ).validate()
    model = build_model(cfg).to(device)
    if init is not None:
        model.load_state_dict({k: v.float() for k, v in init.model.state_dict().items()})
    train_model: torch.nn.Module = model
    if world > 1:
        # no device_ids: DDP would copy every input to the device, the batch's host lengths too (a read back to pack
        # them); the batch is on the device already (Batch.to), and a one-device module needs none
        train_model = DistributedDataParallel(model)
    optimizer = make_optimizer(model.parameters(), train_cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        mode="max",
        factor=train_cfg.lr_decay,
        patience=train_cfg.lr_patience,
        min_lr=train_cfg.min_lr,
    )
    scaler = torch.amp.GradScaler("cuda") if precision == "fp16" else None
    state = {"epoch": 0, "best_bleu": -1.0, "bad_epochs": 0, "finished": False, "history": []}
    if init is not None:
        state.update(epoch=len(data.init_history), history=list(data.init_history), continued=True)
    return Run(model, train_model, optimizer, scheduler, scaler, AMP_DTYPES[precision], state, train_cfg, device, out,
               rank, world, progress)


def _fingerprint(data: _Data) -> str:
    """What a run trains and selects on, as a short hash: vocabularies, training pair counts and dev pairs."""
    record = [data.src_vocab.itos, data.tgt_vocab.itos, len(data.own), len(data.extra), [list(p) for p in data.dev]]
    return hashlib.sha256(json.dumps(record, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def _pairs_left(state: dict, train_cfg: TrainConfig) -> int | None:
    """Pairs left of the run's ``max_pairs`` budget (``None`` without one); an old model's history counts 0."""
    if train_cfg.max_pairs is None:
        return None
    return train_cfg.max_pairs - sum(h.get("pairs", 0) for h in state["history"])


def _extend(state: dict, train_cfg: TrainConfig) -> None:
    """A finished run resumed with a larger budget (more ``epochs``, a larger ``max_pairs``) goes on.

    Early stopping still holds: a run that stopped for lack of dev improvement stays stopped.
    """
    left = _pairs_left(state, train_cfg)
    room = state["epoch"] < train_cfg.epochs and (left is None or left > 0)
    if state["finished"] and room and state["bad_epochs"] < train_cfg.patience:
        state["finished"] = False
    elif not room:  # an interrupted run whose budget is spent: nothing left to train
        state["finished"] = True


def _same_pairs(meta: dict, splits: Splits, train_cfg: TrainConfig) -> bool:
    """Whether a model with metadata ``meta`` trained on the pairs ``splits`` and ``train_cfg`` train on."""
    trained = meta.get("train") or {}
    return meta.get("data") == splits.info and all(trained.get(k) == getattr(train_cfg, k)
                                                   for k in ("max_train", "max_len"))


def _metadata(job: _Job, precision: str, state: dict, examples: Sequence[Example],
              names_in: Path | None = None) -> dict:
    """The model's metadata: data split, settings, command, history, source lengths, and what it continues.

    ``names_in``: a run folder; Chinese → English runs also save the English words' usual case
    ([`truecase.learn`][attention_core.data.truecase.learn]) and, given ``find_names``, the names the training sources
    hold often enough for the model to learn them, found once per corpus (minutes on a large one; the editing layer's
    [`cached_known_names`][attention_core.editing.namecache.cached_known_names] keeps them for the next run on the same
    pairs) and kept in ``known_names.json`` there for a resumed run.
    """
    splits, train_cfg, command, init = job.splits, job.train_cfg, job.options.command, job.options.init
    find_names = job.options.find_names
    meta = {
        "data": splits.info,
        "train": dataclasses.asdict(train_cfg),
        "precision": precision,
        "command": command,
        "history": state["history"],
        "source_lengths": source_lengths(examples),
    }
    if names_in is not None:
        main = splits.main_train_size if splits.main_train_size is not None else len(splits.train)
        meta["truecase"] = truecase.learn((t for _, t in splits.train[:main]), (t for _, t in splits.train[main:]))
        cache = names_in / KNOWN_NAMES
        if cache.is_file():
            meta["known_names"] = json.loads(cache.read_text(encoding="utf-8"))
        elif init is not None and "known_names" in init.meta and _same_pairs(init.meta, splits, train_cfg):
            meta["known_names"] = init.meta["known_names"]  # a second stage on the first's pairs: the same names
        elif find_names is not None:
            meta["known_names"] = find_names(["".join(e.src) for e in examples],  # the pairs it trains on
                                             report=lambda event: print(json.dumps(event), flush=True))
            names_in.mkdir(parents=True, exist_ok=True)
            atomic_write_text(cache, json.dumps(meta["known_names"], ensure_ascii=False))
        else:  # said, not silent: the names switch will romanise every name this model knows
            print(json.dumps({"event": "known-names", "found": False, "why": "fit was given no find_names (the CLI "
                              "and the zoo pass attention_core.editing.namecache.cached_known_names)"}), flush=True)
    if init is not None:
        meta["continued_from"] = {
            "epochs": len(_history(init)),
            **{k: init.meta.get(k) for k in ("command", "train", "precision", "best_dev_bleu")},
        }
    return meta


def _score_the_start(run: Run, translator: Translator, dev: Sequence[tuple[str, str]]) -> None:
    """A continued model: its own dev score is the bar to beat, and it is saved as the best model so far."""
    start = _dev_bleu(run, translator, dev)
    run.state["best_bleu"] = start  # the scheduler starts afresh with the optimiser
    translator.meta["continued_from"]["dev_bleu"] = translator.meta["best_dev_bleu"] = round(start, 2)
    if run.rank == 0:
        save_pretrained(translator, run.out)  # the best model so far, should no epoch beat it


def _log_start(run: Run, data: _Data, device: torch.device, precision: str, world: int) -> None:
    """Print the ``start`` event: data sizes, vocabularies, parameters, device, allocator and where it resumes."""
    log = {
        "train_pairs": len(data.examples),
        "dev_pairs": len(data.dev),
        "src_vocab": len(data.src_vocab),
        "tgt_vocab": len(data.tgt_vocab),
        "parameters": sum(p.numel() for p in run.model.parameters()),
        "device": str(device),
        "precision": precision,
        "processes": world,
        "allocator": loaded(),
        "resumed_at_epoch": run.state["epoch"],
    }
    print(json.dumps({"event": "start", **log}), flush=True)


def budgeted(batches: list[Batch], world: int = 1, left: int | None = None) -> list[Batch]:
    """An epoch's batches for ``world`` processes, cut at the step that spends the pairs ``left`` of a budget.

    The batches kept are a multiple of ``world``, so every process takes the same number of steps; ``left=None``:
    no budget.

    Args:
        batches: The epoch's batches, in order.
        world: Processes; step ``i`` is batches ``i·world … i·world + world − 1``, one per process.
        left: Pairs left of the run's budget.
    """
    batches = batches[: len(batches) // world * world]
    if left is None:
        return batches
    kept = 0
    while kept < len(batches) and left > 0:
        left -= sum(b.size for b in batches[kept : kept + world])
        kept += world
    return batches[:kept]


def scheduled_lr(train_cfg: TrainConfig, epoch: int, fraction: float) -> float | None:
    """The learning rate of a decay schedule (``TrainConfig.decay_epochs``) at a point of an epoch.

    The rate is ``lr`` until the last ``decay_epochs`` of ``epochs`` begin, then falls linearly to
    ``lr × final_lr_ratio`` at the end of the last epoch. It depends only on where training is, so a resumed run
    takes the rate an uninterrupted one would have had.

    Args:
        train_cfg: The settings (``lr``, ``epochs``, ``decay_epochs``, ``final_lr_ratio``).
        epoch: The epoch, counted from 1 (a continued run's epochs count on from its first stage's).
        fraction: How much of the epoch is done before this batch, in ``[0, 1)``.

    Returns:
        The learning rate, or ``None`` under the plateau schedule (``decay_epochs=0``).

    Examples:
        >>> cfg = TrainConfig(epochs=7, lr=1e-3, decay_epochs=2, final_lr_ratio=0.1)
        >>> [round(scheduled_lr(cfg, e, 0.0), 6) for e in (1, 5, 6, 7)]
        [0.001, 0.001, 0.001, 0.00055]
        >>> round(scheduled_lr(cfg, 7, 1.0), 6)
        0.0001
    """
    if not train_cfg.decay_epochs:
        return None
    start = train_cfg.epochs - train_cfg.decay_epochs  # epochs at the full rate
    progress = min(1.0, max(0.0, (epoch - 1 - start + fraction) / train_cfg.decay_epochs))
    return train_cfg.lr * (1.0 - (1.0 - train_cfg.final_lr_ratio) * progress)


def _train_epoch(run: Run, data: _Data, epoch: int) -> dict:
    """One epoch of updates (own pairs ``main_repeat`` times, the curriculum's extra draw, batches, this rank's share).

    The batches are a function of the data and the epoch's seed, so a run killed within the epoch and resumed
    from its last within-epoch checkpoint (``TrainConfig.checkpoint_minutes``) rebuilds them and goes on from the
    batch it had reached, with the optimiser and random states of that moment.

    Returns:
        The epoch's record so far: mean loss, pairs, speed and time.

    Raises:
        TrainError: If a within-epoch checkpoint does not fit this epoch's batches (other data or batch size).
    """
    train_cfg, world = run.cfg, run.world
    epoch_seed = train_cfg.seed * 1000 + epoch
    own = data.own * train_cfg.main_repeat
    epoch_examples = own + data.extra
    if train_cfg.full_data_epochs and epoch > train_cfg.full_data_epochs and data.extra:
        draw = min(len(data.extra), round(len(data.own) * train_cfg.extra_ratio))
        epoch_examples = own + random.Random(epoch_seed).sample(data.extra, draw)
    batches = budgeted(list(bucketed_batches(epoch_examples, train_cfg.batch_size, seed=epoch_seed)), world,
                       _pairs_left(run.state, train_cfg))
    epoch_pairs = sum(b.size for b in batches)  # all processes' pairs: the same record on every rank
    if world > 1:
        batches = batches[run.rank::world]
    partial = run.state.pop("partial", None)
    partial = partial if partial and partial["epoch"] == epoch else {"step": 0, "pairs": 0, "loss": 0.0, "seconds": 0.0}
    done, pairs, total_loss = partial["step"], partial["pairs"], partial["loss"]
    if sum(b.size for b in batches[:done]) != pairs:
        raise TrainError(f"the checkpoint stopped after {done} batches ({pairs} pairs) of epoch {epoch}, but this "
                         "epoch's batches differ (other training data or batch size): resume with the same settings")
    every = 60 * train_cfg.checkpoint_minutes if world == 1 and train_cfg.checkpoint_minutes > 0 else None
    started = saved = shown = time.perf_counter()
    # the loss × pairs since the last read, kept on the device (float64, as the Python float it replaced; MPS has none)
    summed = torch.zeros((), dtype=torch.float32 if run.device.type == "mps" else torch.float64, device=run.device)
    bar = tqdm(
        batches[done:],
        desc=f"epoch {epoch}",
        initial=done,
        total=len(batches),
        disable=not run.progress or run.rank != 0,
        mininterval=1.0,
        dynamic_ncols=True,
        file=sys.stderr,
    )
    for step, batch in enumerate(bar, start=done + 1):
        lr = scheduled_lr(train_cfg, epoch, (step - 1) / len(batches))
        if lr is not None:
            for group in run.optimizer.param_groups:
                group["lr"] = lr
        loss = train_step(
            run.train_model,
            batch.to(run.device),
            run.optimizer,
            train_cfg.clip,
            train_cfg.teacher_forcing,
            train_cfg.label_smoothing,
            run.scaler,
            run.amp_dtype,
        )
        pairs += batch.size
        summed += loss * batch.size
        now = time.perf_counter()
        if not bar.disable and now - shown >= LOG_SECONDS:  # the loss is read here only: a read waits for a GPU
            bar.set_postfix(loss=f"{float(loss):.3f}", pairs_s=f"{(pairs - partial['pairs']) / (now - started):.0f}")
            shown = now
        if every is not None and step < len(batches) and now - saved >= every:
            total_loss += float(summed)
            summed.zero_()
            run.state["partial"] = {"epoch": epoch, "step": step, "pairs": pairs, "loss": total_loss,
                                    "seconds": partial["seconds"] + now - started}
            save_checkpoint(run)
            del run.state["partial"]
            saved = time.perf_counter()
    total_loss += float(summed)
    seconds = partial["seconds"] + time.perf_counter() - started
    return {
        "epoch": epoch,
        "train_loss": round(total_loss / max(1, pairs), 4),
        "pairs": epoch_pairs,
        "pairs_per_s": round(epoch_pairs / seconds, 1),
        "seconds": round(seconds, 1),
    }


def _dev_bleu(run: Run, translator: Translator, dev: Sequence[tuple[str, str]]) -> float:
    """Dev BLEU, measured on rank 0 and shared with every process."""
    score = evaluate_bleu(translator, dev, run.cfg.dev_beam) if run.rank == 0 else 0.0
    if run.world > 1:
        shared = [score]
        dist.broadcast_object_list(shared, src=0)
        score = shared[0]
    return score


def _end_epoch(run: Run, translator: Translator, record: dict, dev_bleu: float) -> None:
    """Schedule, early stopping, and (rank 0) the best model, the checkpoint and the epoch's log line."""
    state, train_cfg, out = run.state, run.cfg, run.out
    if not train_cfg.decay_epochs:  # the plateau schedule; a decay sets the rate batch by batch
        run.scheduler.step(dev_bleu)
    improved = dev_bleu > state["best_bleu"]
    record = {"epoch": record["epoch"], "train_loss": record["train_loss"], "dev_bleu": round(dev_bleu, 2),
              "lr": run.optimizer.param_groups[0]["lr"], "pairs": record["pairs"],
              "pairs_per_s": record["pairs_per_s"], "seconds": record["seconds"], "improved": improved}
    state["history"].append(record)
    if improved:
        state["best_bleu"], state["bad_epochs"] = dev_bleu, 0
        state["best_epoch"] = record["epoch"]
    else:
        state["bad_epochs"] += 1
    state["epoch"] = record["epoch"]
    left = _pairs_left(state, train_cfg)
    if state["bad_epochs"] >= train_cfg.patience or record["epoch"] == train_cfg.epochs or (
            left is not None and left <= 0):
        state["finished"] = True
    if run.rank == 0:
        translator.meta["history"] = state["history"]
        translator.meta["best_dev_bleu"] = round(state["best_bleu"], 2)
        if improved:
            save_pretrained(translator, out)
        save_checkpoint(run)
        atomic_write_text(out / "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in state["history"]))
        print(json.dumps(record), flush=True)
    if run.world > 1:
        dist.barrier()


def _check_init(
    init: Translator, done: int, task: Task, model_options: dict, train_cfg: TrainConfig
) -> tuple[Task, Vocab, Vocab]:
    """The task (with the model's subwords) and vocabularies a continued model (``done`` epochs) trains with."""
    if init.task.name != task.name:
        raise TrainError(f"the model to continue is a {init.task.name} model, not a {task.name} one")
    settings = dataclasses.asdict(init.model.cfg)
    clash = [f"{k}={v!r} (the model has {settings[k]!r})" for k, v in model_options.items()
             if k in settings and settings[k] != v]
    if clash:
        raise TrainError("a continued model keeps its architecture; these settings differ: " + ", ".join(clash))
    if done >= train_cfg.epochs:
        raise TrainError(f"the model to continue has already trained {done} epochs; epochs count from its "
                         f"first epoch, so set more than {done} (got {train_cfg.epochs})")
    return init.task, init.src_vocab, init.tgt_vocab


def _history(model: Translator) -> list[dict]:
    """The epoch records of a trained model (an empty list when its metadata has none or is malformed)."""
    history = model.meta.get("history")
    return [dict(r) for r in history] if isinstance(history, list) and all(isinstance(r, dict) for r in history) else []


def _vocabulary_settings(model: Translator, train_cfg: TrainConfig) -> dict:
    """``min_freq`` and ``subword_vocab`` as the continued model's vocabularies were built."""
    kept = model.meta.get("train") if isinstance(model.meta.get("train"), dict) else {}
    min_freq, pieces = kept.get("min_freq"), kept.get("subword_vocab")
    return {
        "min_freq": min_freq if isinstance(min_freq, int) and min_freq >= 1 else train_cfg.min_freq,
        "subword_vocab": 0 if model.task.subwords is None
        else pieces if isinstance(pieces, int) and pieces > 4 else len(model.tgt_vocab),
    }


def _subwords(path: Path, sentences: Iterable[Sequence[str]], size: int, resume: bool) -> Subwords:
    """A run's subword model: reread when resuming, else learned from the sentences' words and saved."""
    if resume and path.is_file():
        return Subwords.load(path)
    subwords = Subwords.train(sentences, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, subwords.save)
    return subwords


def own_task(spec: TaskSpec, train_pairs: Sequence[tuple[str, str]], out: str | Path, resume: bool = False) -> Task:
    """The task of a run on a corpus of your own, with each ``bpe`` side's model learned from the training split.

    The models are saved in the run's folder (``src_subwords.json``, ``subwords.json``); a resumed run reads
    them back, so its pieces (and vocabularies) stay the same.

    Args:
        spec: The two sides ([`TaskSpec`][attention_core.data.parallel.TaskSpec]).
        train_pairs: The training split.
        out: The run's folder.
        resume: Reuse the models already in ``out``.

    Raises:
        TrainError: If ``out`` may not be written ([`claim_run_folder`][attention_core.training.loop.claim_run_folder]).
    """
    claim_run_folder(out, resume)  # before the subword models are written into it
    models = [
        _subwords(Path(out) / name, (whitespace_words(pair[column]) for pair in train_pairs), side.bpe_size, resume)
        if side.tokenizer == "bpe" else None
        for side, column, name in ((spec.source, 0, SRC_SUBWORDS), (spec.target, 1, SUBWORDS))
    ]
    return make_task(spec, *models)
