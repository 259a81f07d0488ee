"""Save, load, push and pull models as Hugging Face Hub-ready folders.

A model folder holds:

* ``config.json`` — ``{"format": 1, "task": ..., "model": ModelConfig, "meta": {...}}``;
* ``model.safetensors`` — the weights (no pickle), float32 or float16;
* ``src_vocab.json``, ``tgt_vocab.json`` — the vocabularies;
* ``README.md`` — the model card, when written by ``write_model_card``.

Every file is written atomically (a temporary file, then a rename), so an interrupted save never
leaves a half-written model behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from attention_core.config import ModelConfig
from attention_core.data import get_task
from attention_core.pipeline import Translator
from attention_core.seq2seq import build_model
from attention_core.vocab import Vocab

FORMAT = 1
WEIGHTS, CONFIG, SRC_VOCAB, TGT_VOCAB = "model.safetensors", "config.json", "src_vocab.json", "tgt_vocab.json"
FILES = (CONFIG, WEIGHTS, SRC_VOCAB, TGT_VOCAB)


class ModelLoadError(ValueError):
    """A model folder is missing, incomplete, or its tensors do not match its config."""


def atomic_write(path: str | Path, write: Any) -> None:
    """Write a file atomically: ``write(tmp_path)`` fills a temporary file that then replaces ``path``.

    Args:
        path: Destination.
        write: A callable taking the temporary path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


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
    atomic_write(folder / WEIGHTS, lambda tmp: save_file(state, tmp, metadata={"format": "pt"}))
    atomic_write(folder / SRC_VOCAB, translator.src_vocab.save)
    atomic_write(folder / TGT_VOCAB, translator.tgt_vocab.save)
    atomic_write_text(folder / CONFIG, json.dumps(config, ensure_ascii=False, indent=2))
    return folder


def load_folder(folder: str | Path, device: torch.device | str = "cpu") -> Translator:
    """Load a local model folder, checking that config, vocabularies and tensors agree.

    Args:
        folder: A folder written by [`save_pretrained`][attention_core.hub.save_pretrained].
        device: Where to put the model.

    Raises:
        ModelLoadError: With a message naming the missing file, bad field or mismatched tensor.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelLoadError(f"model folder {folder} does not exist")
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelLoadError(f"model folder {folder} is missing {', '.join(missing)}")
    try:
        config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
        cfg = ModelConfig.from_dict(config["model"])
        task = get_task(config["task"])
        src_vocab, tgt_vocab = Vocab.load(folder / SRC_VOCAB), Vocab.load(folder / TGT_VOCAB)
    except (ValueError, KeyError, TypeError) as err:
        raise ModelLoadError(f"{folder / CONFIG}: {err}") from None
    if len(src_vocab) != cfg.src_vocab_size or len(tgt_vocab) != cfg.tgt_vocab_size:
        raise ModelLoadError(
            f"{folder}: vocabulary sizes {len(src_vocab)}/{len(tgt_vocab)} do not match the config's "
            f"{cfg.src_vocab_size}/{cfg.tgt_vocab_size}"
        )
    model = build_model(cfg)
    try:
        state = load_file(str(folder / WEIGHTS))
    except Exception as err:  # safetensors raises several error types for a damaged file
        raise ModelLoadError(f"{folder / WEIGHTS} is not a readable safetensors file: {err}") from None
    expected = {k: v for k, v in model.state_dict().items() if k not in model.tied_parameters}
    problems = [f"missing tensor {k}" for k in expected if k not in state]
    problems += [f"unexpected tensor {k}" for k in state if k not in expected]
    problems += [
        f"{k}: shape {tuple(state[k].shape)} in the file, {tuple(v.shape)} for the config"
        for k, v in expected.items()
        if k in state and state[k].shape != v.shape
    ]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; … {len(problems) - 5} more" if len(problems) > 5 else "")
        raise ModelLoadError(f"{folder}: weights do not match config.json ({shown})")
    state = {k: v.to(expected[k].dtype) for k, v in state.items()}
    state.update({alias: state[source] for alias, source in model.tied_parameters.items()})
    model.load_state_dict(state)
    return Translator(model.to(device).eval(), src_vocab, tgt_vocab, task, config.get("meta", {}))


def from_pretrained(
    name_or_path: str | Path, device: torch.device | str = "cpu", revision: str | None = None
) -> Translator:
    """Load a model from a local folder or a Hub repo id (downloaded through ``huggingface_hub``).

    Args:
        name_or_path: A folder, or a repo id such as ``user/attention-lab-couplet``.
        device: Where to put the model.
        revision: Hub revision (branch, tag or commit) for a repo id.

    Raises:
        ModelLoadError: If the folder or repo cannot be read or does not hold a valid model.
    """
    text = str(name_or_path)
    if Path(name_or_path).exists() or text.startswith((".", "/", "~")) or text.count("/") > 1:
        return load_folder(Path(name_or_path).expanduser(), device)
    return load_folder(pull(str(name_or_path), revision=revision), device)


def pull(repo_id: str, revision: str | None = None, local_dir: str | Path | None = None) -> Path:
    """Download a model repo (only the files a model needs, plus its card).

    Args:
        repo_id: Hub repo id.
        revision: Branch, tag or commit.
        local_dir: Download into this folder instead of the Hub cache.

    Returns:
        The local folder.

    Raises:
        ModelLoadError: If the repo cannot be reached or lacks a file (the message says which).
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    folder = None
    try:
        for name in (*FILES, "README.md"):
            try:
                path = hf_hub_download(repo_id, name, revision=revision, local_dir=local_dir)
            except Exception:
                if name == "README.md":
                    continue
                raise
            folder = Path(path).parent
    except LocalEntryNotFoundError:
        raise ModelLoadError(
            f"cannot download {repo_id!r}: offline (HF_HUB_OFFLINE) and not in the cache"
        ) from None
    except (HfHubHTTPError, OSError, ValueError) as err:
        raise ModelLoadError(f"cannot download {repo_id!r}: {str(err).splitlines()[0]}") from None
    assert folder is not None
    return folder


def push(
    folder: str | Path,
    repo_id: str,
    token: str | None = None,
    private: bool = False,
    message: str = "Upload Attention Lab model",
) -> str:
    """Upload a model folder to the Hub (creating the repo if needed).

    The token comes from the argument, ``HF_TOKEN`` or ``hf auth login``; it is never printed.

    Args:
        folder: A model folder (checked by loading it first).
        repo_id: Target repo id.
        token: Optional token.
        private: Create the repo as private.
        message: Commit message.

    Returns:
        The URL of the commit.
    """
    from huggingface_hub import HfApi

    load_folder(folder)  # never upload a broken model
    api = HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
    info = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        commit_message=message,
        allow_patterns=[*FILES, "README.md"],
    )
    return str(getattr(info, "commit_url", info))
