"""The corpora, fetched like the models: a data folder, a manifest of sha256 sums, and a Hub dataset repo.

Every corpus the zoo, the benchmarks and the tests read is listed, file by file, in the manifest
``attention_core/data/corpora.json`` (path, size, sha256). ``attention-lab data pull`` downloads them from a
Hugging Face Hub **dataset** repo into the data folder (resumable, with progress bars) and checks every
byte; ``data verify`` checks a folder; ``data push`` uploads a verified folder with its dataset card
(``attention_core/data/corpora_card.md``).

The data folder is, in this order: ``--data``, the ``ATTENTION_LAB_DATA`` environment variable, or
``attention-lab/data`` in the user's cache folder (``$XDG_CACHE_HOME``, default ``~/.cache``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm.auto import tqdm

from attention_core.data.hubio import hub_errors, upload

DATA_ENV = "ATTENTION_LAB_DATA"
RUNS_ENV = "ATTENTION_LAB_RUNS"
"""The environment variable naming the folder long training runs write to (see [`runs_home`][attention_core.data.corpora.runs_home])."""  # noqa: E501
"""Environment variable naming the data folder."""
REPO_ENV = "ATTENTION_LAB_DATA_REPO"
"""Environment variable naming the Hub dataset repo of ``data pull`` and ``data push``."""
DEFAULT_REPO = "attention-lab/corpora"
"""The dataset repo ``data pull`` reads when neither ``--repo`` nor ``ATTENTION_LAB_DATA_REPO`` names one."""
MANIFEST = Path(__file__).with_name("corpora.json")
"""The project's manifest: every corpus file with its size and sha256."""
CARD = Path(__file__).with_name("corpora_card.md")
"""The dataset card uploaded as the repo's ``README.md``."""
MANIFEST_NAME = "manifest.json"
"""The manifest's name inside the dataset repo (so a repo says what it holds)."""


class CorpusError(ValueError):
    """The corpora are missing, incomplete or corrupt, or a download failed; the message says what to do."""


@dataclass(frozen=True)
class Entry:
    """One file of the corpora.

    Attributes:
        path: Path inside the data folder, ``/``-separated (e.g. ``couplet/train/in.txt``).
        size: Size in bytes.
        sha256: Hex digest of the contents.
    """

    path: str
    size: int
    sha256: str

    @property
    def corpus(self) -> str:
        """The corpus the file belongs to: its first folder (``couplet``)."""
        return self.path.split("/")[0]


def data_home(data: str | Path | None = None) -> Path:
    """The data folder: ``data`` if given, else ``$ATTENTION_LAB_DATA``, else the user cache folder."""
    if data:
        return Path(data).expanduser()
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV]).expanduser()
    return cache_home() / "data"


def runs_home(runs: str | Path | None = None) -> Path:
    """The folder training runs write to: ``runs``, else ``$ATTENTION_LAB_RUNS``, else ``runs`` in the cache folder.

    Runs live outside the checkout by default (``~/.cache/attention-lab/runs``): a clone laid anew, or a
    ``git clean``, leaves their checkpoints alone, and a run resumes from the same folder next time.
    """
    if runs:
        return Path(runs).expanduser()
    if os.environ.get(RUNS_ENV):
        return Path(os.environ[RUNS_ENV]).expanduser()
    return cache_home() / "runs"


def cache_home() -> Path:
    """The project's folder in the user's cache folder: ``$XDG_CACHE_HOME/attention-lab`` (default ``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "attention-lab"


def data_repo(repo: str | None = None) -> str:
    """The dataset repo: ``repo`` if given, else ``$ATTENTION_LAB_DATA_REPO``, else [`DEFAULT_REPO`][attention_core.data.corpora.DEFAULT_REPO]."""  # noqa: E501
    return repo or os.environ.get(REPO_ENV) or DEFAULT_REPO


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """The sha256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(path: str | Path = MANIFEST) -> list[Entry]:
    """The entries of a manifest file (``{"files": [{"path", "size", "sha256"}, ...]}``).

    Raises:
        CorpusError: If the file is not such a manifest.
    """
    try:
        files = json.loads(Path(path).read_text(encoding="utf-8"))["files"]
        return [Entry(str(f["path"]), int(f["size"]), str(f["sha256"])) for f in files]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise CorpusError(f"{path} is not a corpus manifest: {err}") from None


def build_manifest(folder: str | Path, corpora: Sequence[str]) -> list[Entry]:
    """Measure every file of the named corpus folders inside ``folder`` (hidden files skipped), sorted by path."""
    folder = Path(folder)
    entries = []
    for name in corpora:
        root = folder / name
        if not root.is_dir():
            raise CorpusError(f"{root} is not a folder")
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = path.relative_to(folder)
            if not any(part.startswith(".") for part in relative.parts):
                entries.append(Entry(relative.as_posix(), path.stat().st_size, sha256_file(path)))
    return entries


def manifest_json(entries: Iterable[Entry]) -> str:
    """A manifest's text: the entries as JSON, one file per line."""
    lines = ",\n".join("  " + json.dumps(asdict(e)) for e in entries)
    return '{"files": [\n' + lines + "\n]}\n"


def select(entries: Sequence[Entry], corpora: Sequence[str] | None) -> list[Entry]:
    """The entries of the named corpora (all when ``corpora`` is empty or ``None``).

    Raises:
        CorpusError: For a name the manifest does not hold.
    """
    if not corpora:
        return list(entries)
    known = sorted({e.corpus for e in entries})
    unknown = [c for c in corpora if c not in known]
    if unknown:
        raise CorpusError(f"unknown corpus {', '.join(unknown)}; the manifest holds {', '.join(known)}")
    return [e for e in entries if e.corpus in corpora]


def check(folder: str | Path, entries: Sequence[Entry], progress: bool = True) -> list[str]:
    """Check a data folder against manifest entries.

    Returns:
        One line per problem (a missing file, a wrong size, a wrong sha256); empty when all is well.
    """
    folder, problems = Path(folder), []
    bar = tqdm(total=sum(e.size for e in entries), unit="B", unit_scale=True, desc="verify", disable=not progress)
    with bar:
        for e in entries:
            path = folder / e.path
            if not path.is_file():
                problems.append(f"missing: {e.path}")
            elif path.stat().st_size != e.size:
                problems.append(f"wrong size: {e.path} has {path.stat().st_size:,} bytes, expected {e.size:,}")
            elif sha256_file(path) != e.sha256:
                problems.append(f"wrong sha256: {e.path} (the file differs from the manifest's)")
            bar.update(e.size)
    return problems


def verify(folder: str | Path, entries: Sequence[Entry], progress: bool = True) -> None:
    """Raise [`CorpusError`][attention_core.data.corpora.CorpusError] naming every problem of ``folder``, if any."""
    problems = check(folder, entries, progress)
    if problems and all(p.startswith("missing: ") for p in problems) and len(problems) == len(entries):
        raise CorpusError(missing_message(folder, entries))
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise CorpusError(f"{folder}: {len(problems)} of {len(entries)} files fail the check ({shown}). "
                          "Run `attention-lab data pull` to fetch them again.")


def missing_message(folder: str | Path, entries: Sequence[Entry]) -> str:
    """What to say when corpora are missing: where they were looked for and how to get them."""
    names = " ".join(sorted({e.corpus for e in entries}))
    command = "attention-lab data pull" + ("" if len(entries) == len(read_manifest()) else f" {names}")
    megabytes = sum(e.size for e in entries) / 1e6
    size = f"{megabytes:.0f} MB" if megabytes >= 10 else f"{megabytes:.1f} MB"  # align-zh-en alone is 0.3 MB
    return (f"the corpora {names} are not in {folder}. Run `{command}` (downloads {size} from the Hub dataset "
            f"repo), or pass --data / set {DATA_ENV} to a folder that holds them.")


def pull(folder: str | Path | None = None, repo_id: str | None = None, corpora: Sequence[str] | None = None,
         revision: str | None = None, manifest: str | Path = MANIFEST, progress: bool = True) -> Path:
    """Download corpus files from a Hub dataset repo into the data folder and check each one.

    Files already present with the manifest's sha256 are not downloaded again; an interrupted
    download resumes (``huggingface_hub`` keeps the partial file under ``.cache/huggingface/`` in the
    folder). A file whose sha256 differs after downloading is deleted.

    Args:
        folder: The data folder (default [`data_home`][attention_core.data.corpora.data_home]).
        repo_id: The dataset repo (default [`data_repo`][attention_core.data.corpora.data_repo]).
        corpora: Only these corpora (default: all in the manifest).
        revision: Branch, tag or commit.
        manifest: The manifest to download and check against.
        progress: Show progress bars.

    Returns:
        The data folder.

    Raises:
        CorpusError: For an unknown corpus or a file that arrives with the wrong sha256.
        HubError: When the repo or a file cannot be reached (offline, no such repo, no network);
            see [`hubio.HubError`][attention_core.data.hubio.HubError].
    """
    from huggingface_hub import hf_hub_download

    folder, repo_id = data_home(folder), data_repo(repo_id)
    entries = select(read_manifest(manifest), corpora)
    folder.mkdir(parents=True, exist_ok=True)
    # every file is hashed once: here, or after its download below
    todo = [e for e in tqdm(entries, desc="verify", disable=not progress) if check(folder, [e], progress=False)]
    print(f"{len(entries) - len(todo)} of {len(entries)} files already verified in {folder}; "
          f"downloading {len(todo)} from {repo_id} ({sum(e.size for e in todo) / 1e6:.1f} MB)", flush=True)
    for e in todo:
        with hub_errors("download from", repo_id):
            hf_hub_download(repo_id, e.path, repo_type="dataset", revision=revision, local_dir=folder)
        if check(folder, [e], progress=False):
            (folder / e.path).unlink(missing_ok=True)
            raise CorpusError(f"{e.path} from {repo_id} does not match the manifest's sha256; it was deleted. "
                              "The repo holds other data than this version of Attention Lab expects.")
    return folder


def push(folder: str | Path, repo_id: str, token: str | None = None, private: bool = False,
         corpora: Sequence[str] | None = None, manifest: str | Path = MANIFEST, card: str | Path = CARD,
         progress: bool = True) -> str:
    """Upload a verified data folder to a Hub dataset repo, with its dataset card and the manifest.

    Args:
        folder: The data folder; every file is checked against the manifest first (nothing is
            uploaded from a folder that fails).
        repo_id: The dataset repo (created if needed).
        token: Optional token (default ``HF_TOKEN`` or ``hf auth login``).
        private: Create the repo as private.
        corpora: Only these corpora (default: all).
        manifest: The manifest the folder must match (uploaded as ``manifest.json``).
        card: The dataset card (uploaded as ``README.md``).
        progress: Show the verification's progress bar.

    Returns:
        The URL of the commit.

    Raises:
        CorpusError: If the folder fails the check.
        HubError: Without a token, with a refused one, or when the Hub cannot be reached.
    """
    folder = Path(folder)
    entries = select(read_manifest(manifest), corpora)
    verify(folder, entries, progress)
    files: dict[str, Path | bytes] = {e.path: folder / e.path for e in entries}
    files[MANIFEST_NAME] = manifest_json(read_manifest(manifest)).encode()  # the whole list, even for a subset
    files["README.md"] = Path(card).read_bytes()
    return upload(repo_id, files, "dataset", token=token, private=private,
                  message=f"Attention Lab corpora: {', '.join(sorted({e.corpus for e in entries}))}")

