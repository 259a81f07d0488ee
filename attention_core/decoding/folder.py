"""A translator as a folder on disk: the files a saved model holds, written atomically and read back validated.

A model folder holds:

* ``config.json`` — ``{"format": 1, "task": ..., "model": ModelConfig, "meta": {...}}``, and for a model
  trained on a corpus of your own ``"task": "parallel"`` with ``"task_spec"``: how each side is tokenised
  ([`TaskSpec`][attention_core.data.parallel.TaskSpec]);
* ``model.safetensors`` — the weights (no pickle), float32 or float16;
* ``src_vocab.json``, ``tgt_vocab.json`` — the vocabularies;
* ``subwords.json`` — only for subword targets: the BPE model
  ([`Subwords`][attention_core.data.subword.Subwords]) in the ``tokenizers`` format;
* ``src_subwords.json`` — only for subword sources (a task of your own with a ``bpe`` source side);
* ``README.md`` — the model card: the zoo writes one per model, [`push`][attention_core.hub.pretrained.push] writes one
  for a model of your own that has none ([`own_model_card`][attention_core.hub.card.own_model_card]).

Every file is written atomically (a temporary file, then a rename), so an interrupted save never
leaves a half-written model behind. Training writes its best model here, the Hub
([`attention_core.hub.pretrained`][attention_core.hub.pretrained]) uploads and downloads such folders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from attention_core.data.atomic import atomic_write, atomic_write_text
from attention_core.data.parallel import PARALLEL, SRC_SUBWORDS, TaskSpec, make_task
from attention_core.data.subword import Subwords
from attention_core.data.tasks import Task, get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

FORMAT = 1
WEIGHTS, CONFIG, SRC_VOCAB, TGT_VOCAB = "model.safetensors", "config.json", "src_vocab.json", "tgt_vocab.json"
SUBWORDS = "subwords.json"
FILES = (CONFIG, WEIGHTS, SRC_VOCAB, TGT_VOCAB)
"""Files every model folder holds."""
OPTIONAL_FILES = (SUBWORDS, SRC_SUBWORDS)
"""Files a model folder may hold: the target subword model of a subword model."""


class ModelLoadError(ValueError):
    """A model folder is missing, incomplete, or its tensors do not match its config."""


def save_pretrained(translator: Translator, folder: str | Path, half: bool = False) -> Path:
    """Write a model folder.

    Args:
        translator: Model, vocabularies, task and metadata.
        folder: Destination folder (created).
        half: Store the weights as float16 (half the size; loading converts back to float32).

    Returns:
        The folder.
    """
    folder = Path(folder)
    tied = translator.model.tied_parameters
    state = {
        k: v.detach().cpu().contiguous()
        for k, v in translator.model.state_dict().items()
        if k not in tied  # aliases are stored once, under their source name
    }
    if half:
        state = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    config = {
        "format": FORMAT,
        "task": translator.task.name,
        "model": translator.model.cfg.to_dict(),
        "meta": translator.meta,
    }
    if translator.task.spec is not None:  # a task of your own: how each side is tokenised
        config["task_spec"] = translator.task.spec
    atomic_write(folder / WEIGHTS, lambda tmp: save_file(state, tmp, metadata={"format": "pt"}))
    atomic_write(folder / SRC_VOCAB, translator.src_vocab.save)
    atomic_write(folder / TGT_VOCAB, translator.tgt_vocab.save)
    for name, subwords in ((SUBWORDS, translator.task.subwords), (SRC_SUBWORDS, translator.task.src_subwords)):
        if subwords is not None:
            atomic_write(folder / name, subwords.save)
        else:
            (folder / name).unlink(missing_ok=True)  # a word model saved over a subword model
    atomic_write_text(folder / CONFIG, json.dumps(config, ensure_ascii=False, indent=2))
    return folder


MAX_JSON_BYTES = {CONFIG: 1 << 20, SRC_VOCAB: 64 << 20, TGT_VOCAB: 64 << 20, SUBWORDS: 64 << 20,
                  SRC_SUBWORDS: 64 << 20}
"""Largest accepted ``config.json`` and vocabulary files; larger ones are refused unread."""
MAX_MODEL_BYTES = 2 << 30
"""Default cap on a model's float32 parameters (2 GiB), checked on the ``meta`` device before allocation."""
WEIGHT_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
"""Tensor types accepted in ``model.safetensors`` (safetensors' names)."""


def _read_json(folder: Path, name: str) -> Any:
    """Parse one JSON file of a model folder, refusing an oversized one before reading it."""
    path = folder / name
    size = path.stat().st_size
    if size > MAX_JSON_BYTES[name]:
        raise ModelLoadError(f"{path} is {size:,} bytes; the limit is {MAX_JSON_BYTES[name]:,}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelLoadError(f"{path} is not valid UTF-8 JSON: {err}") from None


def read_config(folder: str | Path) -> tuple[ModelConfig, Task, dict[str, Any]]:
    """Read and validate ``config.json``: its format, task, model config (types and bounds) and metadata.

    Args:
        folder: A model folder.

    Returns:
        ``(model config, task, meta)``.

    Raises:
        ModelLoadError: Naming the file and the bad field.
    """
    folder = Path(folder)
    path = folder / CONFIG
    config = _read_json(folder, CONFIG)
    if not isinstance(config, dict):
        raise ModelLoadError(f"{path}: expected a JSON object, got {type(config).__name__}")
    fmt = config.get("format")
    if type(fmt) is not int or fmt != FORMAT:
        raise ModelLoadError(f"{path}: format must be {FORMAT}, got {fmt!r} (written by another version?)")
    unknown = sorted(map(str, set(config) - {"format", "task", "model", "meta", "task_spec"}))
    if unknown:
        raise ModelLoadError(f"{path}: unknown field(s) {', '.join(unknown)}")
    meta = config.get("meta", {})
    if not isinstance(meta, dict):
        raise ModelLoadError(f"{path}: meta must be a JSON object, got {type(meta).__name__}")
    truecase, known = meta.get("truecase", {}), meta.get("known_names", [])
    if not isinstance(truecase, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in truecase.items()):
        raise ModelLoadError(f"{path}: meta.truecase must map words to words, got {str(truecase)[:60]!r}")
    if not isinstance(known, list) or not all(isinstance(n, str) for n in known):
        raise ModelLoadError(f"{path}: meta.known_names must be a list of names, got {str(known)[:60]!r}")
    if not isinstance(config.get("task"), str):
        raise ModelLoadError(f"{path}: task must be a string, got {config.get('task')!r}")
    if "model" not in config:
        raise ModelLoadError(f"{path}: the model field is missing")
    try:
        if config["task"] == PARALLEL:
            task = make_task(TaskSpec.from_dict(config.get("task_spec")))
        elif "task_spec" in config:
            raise ValueError(f"task_spec belongs to a {PARALLEL} model, not a {config['task']} one")
        else:
            task = get_task(config["task"])
        cfg = ModelConfig.from_dict(config["model"])
    except ValueError as err:
        raise ModelLoadError(f"{path}: {err}") from None
    return cfg, task, meta


def read_vocabularies(folder: str | Path, cfg: ModelConfig) -> tuple[Vocab, Vocab]:
    """Read both vocabularies and check them against the config (sizes, special ids, sharing).

    Raises:
        ModelLoadError: Naming the vocabulary file and what disagrees.
    """
    folder = Path(folder)
    vocabs = []
    for name, size in ((SRC_VOCAB, cfg.src_vocab_size), (TGT_VOCAB, cfg.tgt_vocab_size)):
        if (folder / name).stat().st_size > MAX_JSON_BYTES[name]:
            _read_json(folder, name)  # raises the size error
        try:
            vocab = Vocab.load(folder / name)
        except ValueError as err:
            raise ModelLoadError(str(err)) from None
        if len(vocab) != size:
            field = name.split("_")[0] + "_vocab_size"
            raise ModelLoadError(f"{folder / name} holds {len(vocab)} tokens; config.json's {field} is {size}")
        vocabs.append(vocab)
    src, tgt = vocabs
    for name in ("pad_id", "unk_id", "bos_id", "eos_id"):
        if getattr(cfg, name) != getattr(tgt, name):
            raise ModelLoadError(
                f"{folder / CONFIG}: {name} is {getattr(cfg, name)}, but the vocabularies put "
                f"{tgt.itos[getattr(tgt, name)]} at {getattr(tgt, name)}"
            )
    if cfg.share_embeddings and src.itos != tgt.itos:
        raise ModelLoadError(f"{folder}: share_embeddings is set but the two vocabularies differ")
    return src, tgt


def read_subwords(folder: str | Path, task: Task, vocab: Vocab, name: str = SUBWORDS) -> Subwords:
    """Read a subword model (``subwords.json``: targets; ``src_subwords.json``: sources) and check it.

    Args:
        folder: The model folder.
        task: The model's task.
        vocab: The vocabulary of that side, whose every token must be a piece.
        name: The file.

    Raises:
        ModelLoadError: If the file is too large or not a BPE model, the task cannot have subwords on that
            side (couplets; the bundled tasks' Chinese sources), or a vocabulary token is not one of its pieces.
    """
    path = Path(folder) / name
    if path.stat().st_size > MAX_JSON_BYTES[name]:
        _read_json(Path(folder), name)  # raises the size error
    side = "source" if name == SRC_SUBWORDS else "target"
    if task.constrained or (side == "source" and task.chinese_source):
        raise ModelLoadError(f"{path}: the {task.name} task has no subword {side}s")
    try:
        subwords = Subwords.load(path)
    except ValueError as err:
        raise ModelLoadError(str(err)) from None
    pieces = subwords.tokenizer.get_vocab()
    stray = [tok for tok in vocab.itos if tok not in pieces]
    if stray:
        raise ModelLoadError(f"{path}: the {side} vocabulary holds {len(stray)} token(s) that are not pieces, "
                             f"e.g. {stray[0]!r}")
    return subwords


def expected_tensors(cfg: ModelConfig, max_bytes: int = MAX_MODEL_BYTES) -> dict[str, torch.Size]:
    """The stored tensors a config implies, from a model built on the ``meta`` device (no memory).

    Args:
        cfg: A validated config.
        max_bytes: Refuse a model whose float32 parameters would take more than this.

    Returns:
        ``{name: shape}`` of the tensors ``model.safetensors`` must hold (tied aliases left out).

    Raises:
        ModelLoadError: If the model would be larger than ``max_bytes``.
    """
    with torch.device("meta"):
        model = build_model(cfg)
    shapes = {k: v.shape for k, v in model.state_dict().items() if k not in model.tied_parameters}
    size = 4 * sum(shape.numel() for shape in shapes.values())
    if size > max_bytes:
        raise ModelLoadError(
            f"the config describes a model of {size / 2**30:.1f} GiB (float32); "
            f"the limit is {max_bytes / 2**30:.1f} GiB"
        )
    return shapes


def check_weights(path: str | Path, expected: dict[str, torch.Size]) -> None:
    """Check a safetensors file's header (names, shapes, types) without reading its tensors.

    Raises:
        ModelLoadError: Naming up to five missing, unexpected or mismatched tensors.
    """
    try:
        with safe_open(str(path), framework="pt") as f:
            slices = {k: f.get_slice(k) for k in f.keys()}
            header = {k: (tuple(v.get_shape()), v.get_dtype()) for k, v in slices.items()}
    except Exception as err:  # safetensors raises several error types for a damaged file
        raise ModelLoadError(f"{path} is not a readable safetensors file: {err}") from None
    problems = [f"missing tensor {k}" for k in expected if k not in header]
    problems += [f"unexpected tensor {k}" for k in header if k not in expected]
    problems += [
        f"{k}: shape {header[k][0]} in the file, {tuple(shape)} for the config"
        for k, shape in expected.items()
        if k in header and header[k][0] != tuple(shape)
    ]
    problems += [
        f"{k}: type {dtype}, expected one of {', '.join(WEIGHT_DTYPES)}"
        for k, (_, dtype) in header.items()
        if dtype not in WEIGHT_DTYPES
    ]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; … {len(problems) - 5} more" if len(problems) > 5 else "")
        raise ModelLoadError(f"{Path(path).parent}: weights do not match config.json ({shown})")


def load_folder(
    folder: str | Path, device: torch.device | str = "cpu", max_bytes: int = MAX_MODEL_BYTES
) -> Translator:
    """Load a local model folder, validating everything before allocating the model.

    A model folder may come from an untrusted Hub repo, so the steps run from cheap to expensive:
    file sizes, ``config.json`` (types, bounds, format, task), the vocabularies against the config,
    the model's size on the ``meta`` device, the safetensors header against that model, and only
    then the real model and its weights.

    Args:
        folder: A folder written by [`save_pretrained`][attention_core.decoding.folder.save_pretrained].
        device: Where to put the model.
        max_bytes: Refuse models whose float32 parameters exceed this (default 2 GiB).

    Raises:
        ModelLoadError: With a message naming the missing file, bad field or mismatched tensor.
    """
    folder = Path(folder)
    if folder.is_file():
        raise ModelLoadError(f"{folder} is a file: a model is a folder (config.json, model.safetensors, vocabularies)")
    if not folder.is_dir():
        raise ModelLoadError(f"model folder {folder} does not exist")
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelLoadError(f"model folder {folder} is missing {', '.join(missing)}")
    cfg, task, meta = read_config(folder)
    src_vocab, tgt_vocab = read_vocabularies(folder, cfg)
    sides = task.spec or {}
    if (folder / SUBWORDS).is_file():
        task = task.with_subwords(read_subwords(folder, task, tgt_vocab))
    elif (isinstance(meta.get("train"), dict) and meta["train"].get("subword_vocab")) or \
            sides.get("target", {}).get("tokenizer") == "bpe":
        raise ModelLoadError(f"model folder {folder} is missing {SUBWORDS} (trained with subword targets)")
    if (folder / SRC_SUBWORDS).is_file():
        task = task.with_source_subwords(read_subwords(folder, task, src_vocab, SRC_SUBWORDS))
    elif sides.get("source", {}).get("tokenizer") == "bpe":
        raise ModelLoadError(f"model folder {folder} is missing {SRC_SUBWORDS} (trained with subword sources)")
    try:
        expected = expected_tensors(cfg, max_bytes)
    except ModelLoadError as err:
        raise ModelLoadError(f"{folder / CONFIG}: {err}") from None
    check_weights(folder / WEIGHTS, expected)
    try:
        state = load_file(str(folder / WEIGHTS))
    except Exception as err:  # a file damaged after its header
        raise ModelLoadError(f"{folder / WEIGHTS} is not a readable safetensors file: {err}") from None
    model = build_model(cfg)
    state = {k: v.float() for k, v in state.items()}
    if not all(bool(torch.isfinite(v).all()) for v in state.values()):
        bad = next(k for k, v in state.items() if not bool(torch.isfinite(v).all()))
        raise ModelLoadError(f"{folder / WEIGHTS}: tensor {bad} holds NaN or infinite values")
    state.update({alias: state[source] for alias, source in model.tied_parameters.items()})
    model.load_state_dict(state)
    return Translator(model.to(device).eval(), src_vocab, tgt_vocab, task, meta)
