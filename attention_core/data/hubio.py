"""Talking to the Hugging Face Hub: one upload path and one way of reporting failures, for models and corpora.

[`upload`][attention_core.data.hubio.upload] creates the repo if needed and commits files in one commit;
[`hub_errors`][attention_core.data.hubio.hub_errors] turns what ``huggingface_hub`` and its HTTP client raise
into one-line messages (no token, a refused token, offline mode, an unreachable Hub). Model folders
([`attention_core.hub.pretrained`][attention_core.hub.pretrained]) and the corpora
([`attention_core.data.corpora`][attention_core.data.corpora]) both go through here, so weights and data travel the same
way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

HTTP_CLIENTS = ("httpx", "httpx2", "requests", "urllib3")
"""Packages whose exceptions mean the Hub could not be reached (``huggingface_hub`` has used each)."""

REPO_TYPES = ("model", "dataset")


class HubError(RuntimeError):
    """A Hub request failed: no token, a refused token, no permission, or the Hub cannot be reached."""


@contextmanager
def hub_errors(action: str, repo_id: str) -> Iterator[None]:
    """Re-raise a failed Hub request inside the block as a one-line [`HubError`][attention_core.data.hubio.HubError].

    Args:
        action: What was being done, e.g. ``"push to"`` or ``"download"`` (used as "cannot {action} {repo_id!r}").
        repo_id: The repo, named in the message. A token is never part of a message.

    Raises:
        HubError: For offline mode, HTTP errors (401/403 explained as a refused token), a missing
            file or repo, and connection failures. Other exceptions pass through.
    """
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    access = "write" if action.startswith("push") else "read"
    try:
        yield
    except (OfflineModeIsEnabled, LocalEntryNotFoundError) as err:
        cause = err.__cause__
        if constants.HF_HUB_OFFLINE or isinstance(err, OfflineModeIsEnabled) or isinstance(cause, OfflineModeIsEnabled):
            raise HubError(f"cannot {action} {repo_id!r}: offline (HF_HUB_OFFLINE is set), not in the cache") from None
        # hf_hub_download reports a connection error, a timeout or an HTTP error as "not in the local cache"
        status = getattr(getattr(cause, "response", None), "status_code", None)
        if status in (401, 403):
            raise HubError(f"the Hub refused the token for {repo_id!r} (HTTP {status}): check that HF_TOKEN is valid "
                           f"and has {access} access to it") from None
        raise HubError(f"cannot reach the Hub to {action} {repo_id!r}: {cause or err}") from None
    except (RepositoryNotFoundError, EntryNotFoundError) as err:
        raise HubError(f"cannot {action} {repo_id!r}: {str(err).splitlines()[0]}") from None
    except HfHubHTTPError as err:
        status = err.response.status_code if err.response is not None else None
        if status in (401, 403):
            raise HubError(
                f"the Hub refused the token for {repo_id!r} (HTTP {status}): check that HF_TOKEN "
                f"is valid and has {access} access to that namespace"
            ) from None
        raise HubError(f"cannot {action} {repo_id!r}: {str(err).splitlines()[0]}") from None
    except Exception as err:  # connection refused, DNS, timeouts: the HTTP client's own errors
        if isinstance(err, ConnectionError | TimeoutError) or type(err).__module__.split(".")[0] in HTTP_CLIENTS:
            raise HubError(f"cannot reach the Hub to {action} {repo_id!r}: {err}") from None
        raise  # a local error (a full disk, a permission) is not the network's


def check_repo_id(repo_id: str) -> None:
    """Refuse a name the Hub cannot hold (``you/model``: letters, digits, ``-``, ``_``, ``.``), with the rule.

    Raises:
        HubError: If ``repo_id`` is not a valid repo id.
    """
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise HubError(f"{repo_id!r} is not a Hub repo id: write owner/name with letters, digits, '-', '_' and '.' "
                       "(at most 96 characters), e.g. you/attention-lab-couplet") from None


def upload(
    repo_id: str,
    files: Mapping[str, Path | bytes],
    repo_type: str = "model",
    token: str | None = None,
    private: bool = False,
    message: str = "Upload",
) -> str:
    """Create ``repo_id`` if needed and commit ``files`` to it in one commit.

    The token comes from the argument, ``HF_TOKEN`` or ``hf auth login``; it is never printed.

    Args:
        repo_id: Target repo id.
        files: Path in the repo → a local file or the bytes to write there.
        repo_type: ``"model"`` or ``"dataset"``.
        token: Optional token.
        private: Create the repo as private.
        message: Commit message.

    Returns:
        The URL of the commit.

    Raises:
        HubError: Without a token, with a refused one, or when the Hub cannot be reached.
    """
    from huggingface_hub import CommitOperationAdd, HfApi, get_token

    if repo_type not in REPO_TYPES:
        raise ValueError(f"repo_type must be one of {REPO_TYPES}, got {repo_type!r}")
    check_repo_id(repo_id)  # a typo is named before the token is looked for
    token = token or get_token()
    if not token:
        raise HubError("no Hugging Face token: set HF_TOKEN or run `hf auth login` (a token with write access)")
    api = HfApi(token=token)
    operations = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=content if isinstance(content, bytes)
                                     else str(content)) for name, content in files.items()]
    with hub_errors("push to", repo_id):
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type=repo_type)
        info = api.create_commit(repo_id, operations, commit_message=message, repo_type=repo_type)
    return str(getattr(info, "commit_url", info))
