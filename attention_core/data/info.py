"""What a model was trained on: the ``meta["data"]`` record of a model folder, read once into one typed value.

A split records where its pairs came from (``Splits.info``: written by
[`load_splits`][attention_core.data.tasks.load_splits] for the bundled tasks and by
[`parallel`][attention_core.data.parallel] for a corpus of your own), and training saves that record in the
model's ``config.json`` as ``meta["data"]``. Models come from anywhere (an older release, the Hub, a hand-edited
folder), so every field is read defensively here, once: a missing or mistyped field reads as empty, never as an
error. The record itself stays a plain JSON dict in the folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class DataInfo:
    """A model's training data, as its ``meta["data"]`` records it.

    Attributes:
        task: ``translation``, ``couplet`` or ``parallel`` (a corpus of your own).
        rule: How the split was made, in words.
        seed: The split's seed.
        sizes: Pairs per split (``train``, ``dev``, ``test``, extra test sets).
        corpus_files: A bundled task's corpus files, in order (the task's own corpus first, then the extra
            corpora): ``{"path", "sha256"}`` each.
        own_sources: A corpus of your own's sources by split (``{"train": {"paths", "format", "sha256", …}}``).
        extra: The extra corpora trained on besides the task's own (``cmn-eng-extra``, ``tv4dialog``).
        skipped_lines: Malformed corpus lines left out.
        example: A short test source of a corpus of your own (for its card and the app's example).
        unreadable: The fields the record has but in a form these cannot be read from (a seed that is not a number):
            a reader that must not guess (continuing a model on its own split) refuses them.
        record: The whole record as saved (for what a reader needs beyond these fields, and for comparing two).
    """

    task: str | None = None
    rule: str | None = None
    seed: int | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    corpus_files: tuple[dict, ...] = ()
    own_sources: dict[str, dict] = field(default_factory=dict)
    extra: tuple[str, ...] = ()
    skipped_lines: int = 0
    example: str | None = None
    unreadable: tuple[str, ...] = ()
    record: dict = field(default_factory=dict)

    @classmethod
    def read(cls, data: Any) -> DataInfo:
        """The record ``data`` (a model's ``meta["data"]``, or anything) as a ``DataInfo``; empty if it is not a dict.

        Examples:
            >>> DataInfo.read({"task": "couplet", "seed": 1234, "sizes": {"train": 9, "dev": "x"}}).sizes
            {'train': 9}
            >>> DataInfo.read(None).corpus_names(), DataInfo.read({"seed": "1234"}).unreadable
            ([], ('seed',))
        """
        if not isinstance(data, dict):
            return cls()
        kinds = {"task": str, "rule": str, "seed": int, "sizes": dict, "sources": (list, dict), "extra": list,
                 "skipped_lines": int, "example": str}
        unreadable = tuple(k for k, kind in kinds.items() if k in data and (not isinstance(data[k], kind)
                                                                            or isinstance(data[k], bool)))
        sources = data.get("sources")
        sizes = data.get("sizes") if isinstance(data.get("sizes"), dict) else {}
        extra = data.get("extra") if isinstance(data.get("extra"), list) else []
        example = _text(data.get("example"))
        return cls(
            task=_text(data.get("task")),
            rule=_text(data.get("rule")),
            seed=_count(data.get("seed")),
            sizes={k: v for k, v in sizes.items() if _count(v) is not None},
            corpus_files=tuple(s for s in sources if isinstance(s, dict) and isinstance(s.get("path"), str))
            if isinstance(sources, list) else (),
            own_sources={k: v for k, v in sources.items() if isinstance(v, dict)} if isinstance(sources, dict) else {},
            extra=tuple(e for e in extra if isinstance(e, str)),
            skipped_lines=_count(data.get("skipped_lines")) or 0,
            example=example if example and example.strip() else None,
            unreadable=unreadable,
            record=data,
        )

    def corpus_names(self) -> list[str]:
        """The corpora a bundled task's model trained on, by folder, in order (a corpus's several files once)."""
        return list(dict.fromkeys(PurePath(s["path"]).parent.name for s in self.corpus_files))

    def train_paths(self) -> list[str]:
        """A corpus of your own's training files (empty when the record does not name them)."""
        paths = self.own_sources.get("train", {}).get("paths")
        return [str(p) for p in paths] if isinstance(paths, list) else []

    def checksums(self) -> dict[str, str | None]:
        """Each corpus file's sha256 by its place in the data folder (``couplet/train``, ``cmn-eng/cmn.txt``)."""
        return {"/".join(PurePath(s["path"]).parts[-2:]): s.get("sha256") for s in self.corpus_files}
