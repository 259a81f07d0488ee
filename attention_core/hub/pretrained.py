"""Models on the Hugging Face Hub: open a local folder or a Hub repo, pull one, push one with its model card.

The folder itself (its files, how they are written and validated) is
[`attention_core.decoding.folder`][attention_core.decoding.folder]; this module moves such folders to and from the Hub
through [`attention_core.data.hubio`][attention_core.data.hubio].
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import torch

from attention_core.data.atomic import atomic_write_text
from attention_core.data.hubio import upload
from attention_core.decoding.folder import (
    FILES,
    OPTIONAL_FILES,
    ModelLoadError,
    load_folder,
)
from attention_core.decoding.translator import Translator
from attention_core.hub.card import CARD_MARK, own_model_card

HUB_PREFIX = "hf://"
"""Prefix that makes a name a Hub repo id, even when a local folder has the same name."""


def from_pretrained(
    name_or_path: str | Path, device: torch.device | str = "cpu", revision: str | None = None
) -> Translator:
    """Load a model from a local folder or a Hub repo id (downloaded through ``huggingface_hub``).

    The choice is explicit: ``hf://user/repo`` is always the Hub, a ``Path``, a name starting with
    ``.``, ``/`` or ``~`` or one with more than one ``/`` is always local. A bare ``user/repo`` is the
    Hub unless a local folder has that name, in which case the call is refused as ambiguous.

    Args:
        name_or_path: A folder, or a repo id such as ``user/attention-lab-couplet`` or ``hf://user/repo``.
        device: Where to put the model.
        revision: Hub revision (branch, tag or commit) for a repo id.

    Raises:
        ModelLoadError: If the folder or repo cannot be read or does not hold a valid model, or a bare
            name is both a local folder and a possible repo id.
    """
    text = str(name_or_path)
    if text.startswith(HUB_PREFIX):
        return load_folder(pull(text[len(HUB_PREFIX):], revision=revision), device)
    if isinstance(name_or_path, Path) or text.startswith((".", "/", "~")) or text.count("/") != 1:
        return load_folder(Path(name_or_path).expanduser(), device)
    if Path(text).exists():
        raise ModelLoadError(
            f"{text!r} is both a local folder and a Hub repo id: write ./{text} for the folder "
            f"or {HUB_PREFIX}{text} for the Hub repo"
        )
    return load_folder(pull(text, revision=revision), device)


def pull(repo_id: str, revision: str | None = None, local_dir: str | Path | None = None) -> Path:
    """Download a model repo (only the files a model needs, plus its card).

    Into ``local_dir``, all or nothing: the files are downloaded beside it first and moved in when every one
    has come, so a failed download leaves neither a folder nor half a model behind. A model already in the folder
    is replaced whole (an optional file or card the new one lacks is removed, so it cannot be read as part of it);
    other files there are left alone.

    Args:
        repo_id: Hub repo id.
        revision: Branch, tag or commit.
        local_dir: Download into this folder instead of the Hub cache.

    Returns:
        The local folder.

    Raises:
        ModelLoadError: If the repo cannot be reached or lacks a file (the message says which).
    """
    if local_dir is None:
        return _download(repo_id, revision, None)
    target = Path(local_dir).absolute()
    near = next(p for p in (target, *target.parents) if p.exists())  # the same file system, for os.replace
    if not near.is_dir():
        raise ModelLoadError(f"cannot download {repo_id!r} into {local_dir}: {near} is a file, not a folder")
    staging = Path(tempfile.mkdtemp(prefix=".pull-", dir=near.parent if near == target else near))  # beside it
    try:
        _download(repo_id, revision, staging)
        target.mkdir(parents=True, exist_ok=True)
        for name in (*OPTIONAL_FILES, "README.md"):  # the old model's, which the new one does not replace
            if not (staging / name).is_file():
                (target / name).unlink(missing_ok=True)
        for file in staging.iterdir():
            if file.is_file():
                os.replace(file, target / file.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _download(repo_id: str, revision: str | None, local_dir: Path | None) -> Path:
    """Fetch a model's files into ``local_dir`` (``None``: the Hub cache) and return their folder."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError

    folder = None
    try:
        for name in (*FILES, *OPTIONAL_FILES, "README.md"):
            try:
                path = hf_hub_download(repo_id, name, revision=revision, local_dir=local_dir)
            except EntryNotFoundError:
                # an optional file may be absent; load_folder refuses a subword model without subwords.json
                if name in OPTIONAL_FILES or name == "README.md":
                    continue
                raise
            except Exception:
                if name == "README.md":  # the model card is a courtesy: never fail a download for it
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
    path_in_repo: str = "",
) -> str:
    """Upload a model folder to the Hub (creating the repo if needed).

    The token comes from the argument, ``HF_TOKEN`` or ``hf auth login``; it is never printed.

    Args:
        folder: A model folder (checked by loading it first).
        repo_id: Target repo id.
        token: Optional token.
        private: Create the repo as private.
        message: Commit message.
        path_in_repo: Upload into this subfolder, e.g. ``translation/none`` to fill a zoo repo
            that ``python app.py --hub-repo`` can serve; ``""`` for the repo's root.

    A model of your own (``--task parallel``) gets a model card
    ([`own_model_card`][attention_core.hub.card.own_model_card]: what it was trained on and how to open it), written
    afresh on every push unless you wrote your own ``README.md`` (a card without the line
    [`CARD_MARK`][attention_core.hub.card.CARD_MARK]); it is saved beside the model after the upload succeeds.

    Returns:
        The URL of the commit.

    Raises:
        ModelLoadError: If the folder is not a valid model (nothing is uploaded).
        HubError: Without a token, with a refused one, or when the Hub cannot be reached.
    """
    translator = load_folder(folder)  # never upload a broken model
    folder, prefix = Path(folder), path_in_repo.strip("/") + "/" if path_in_repo.strip("/") else ""
    files: dict[str, Path | bytes] = {prefix + name: folder / name for name in (*FILES, *OPTIONAL_FILES, "README.md")
                                      if (folder / name).is_file()}
    readme = folder / "README.md"
    card = None
    if translator.task.own and (not readme.is_file() or CARD_MARK in readme.read_text(encoding="utf-8")):
        card = own_model_card(translator, repo_id)  # a card of ours is written again: the model or repo may be new
        files[prefix + "README.md"] = card.encode("utf-8")
    url = upload(repo_id, files, "model", token=token, private=private, message=message)
    if card is not None:
        atomic_write_text(readme, card)  # kept beside the model only once it is on the Hub
    return url
