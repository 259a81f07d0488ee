"""Your own parallel corpus: read it, split it, and make a task of it — any language pair.

The bundled tasks read fixed files (``cmn-eng``, ``couplet``). A task of your own (``--task parallel``)
reads any ``source → target`` corpus:

* **TSV** — ``source<TAB>target``, one pair per line (further columns are ignored);
* **two line-aligned files** — line *i* of the first pairs with line *i* of the second;
* **JSON lines** — one object per line; the fields are named (``source`` / ``target`` by default;
  a dotted name reads a nested field, e.g. ``translation.de``);
* **a Hugging Face dataset** — a dataset id or a folder written by ``save_to_disk``, with named fields
  (the optional package ``datasets``: ``pip install 'attention-lab[datasets]'``).

Malformed lines (a missing column, an empty side, a line that is not JSON) are skipped and counted. A file
that cannot be a corpus — empty, binary, not UTF-8, one column, or two files of different lengths — is one
[`DataError`][attention_core.data.tasks.DataError] naming the file and what to do.

Without explicit dev and test files the pairs are split as the translation task does: grouped by their
normalised source, the groups shuffled with a seed and dealt to *test*, then *dev* (5 % each, at most 1,000
pairs), the rest to *train*; an identical source never sits in two splits. Given dev or test files, training
pairs whose source is in them are dropped and counted.

Each side has its own tokeniser ([`Side`][attention_core.data.parallel.Side]): ``char`` (characters; a space is the
token ``▁``), ``word`` (whitespace-separated words) or ``bpe`` (byte-pair pieces over whitespace words, learned
with ``tokenizers`` on the training split; [`Subwords`][attention_core.data.subword.Subwords]). Detokenisation is
language-neutral: characters are joined (``▁`` back to a space), words and merged pieces joined by spaces. The
sides, and whether each script runs right to left, are saved with the model (``task_spec`` in ``config.json``),
so the app shows a model of your own without being told what it is.

Examples:
    >>> spec = TaskSpec(Side("word"), Side("char"))
    >>> task = make_task(spec)
    >>> task.tokenize_src("Guten  Morgen"), task.tokenize_tgt("早 安")
    (['Guten', 'Morgen'], ['早', '▁', '安'])
    >>> task.detokenize(["早", "▁", "安"])
    '早 安'
"""

from __future__ import annotations

import codecs
import json
import random
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from attention_core.data.corpora import sha256_file
from attention_core.data.subword import Subwords
from attention_core.data.tasks import SPLIT_SEED, Corpus, DataError, Splits, Task
from attention_core.data.text import strip_invisible

PARALLEL = "parallel"
"""The task name of a model trained on a corpus of your own."""
FORMATS = ("auto", "tsv", "lines", "jsonl", "hf")
"""Corpus formats; ``auto`` decides by the arguments (two files: ``lines``), the suffix (``.jsonl``,
``.json``: ``jsonl``), a dataset folder or id (``hf``), else ``tsv``."""
TOKENIZERS = ("char", "word", "bpe")
"""Tokenisers of one side."""
SPACE = "▁"
"""The token a ``char`` side writes for a space (U+2581, as SentencePiece does)."""
SRC_SUBWORDS = "src_subwords.json"
"""The source side's BPE model in a model folder (the target's is ``subwords.json``)."""
HELD_OUT_SHARE = 0.05
"""Share of the pairs drawn for dev and for test each, when no file is given."""
MAX_HELD_OUT = 1000
"""At most this many pairs each in a drawn dev or test split."""
MIN_PAIRS = 10
"""A corpus to split needs at least this many pairs."""
SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Side:
    """How one side of a corpus is tokenised.

    Attributes:
        tokenizer: ``char``, ``word`` or ``bpe`` ([`TOKENIZERS`][attention_core.data.parallel.TOKENIZERS]).
        bpe_size: Pieces of a ``bpe`` side (specials and the alphabet included).
        language: A language code for people and model cards (``de``, ``en``); optional.
        direction: ``ltr`` or ``rtl`` (Arabic, Hebrew …), detected from the training text by
            [`script_direction`][attention_core.data.parallel.script_direction].
    """

    tokenizer: str = "word"
    bpe_size: int = 8000
    language: str = ""
    direction: str = "ltr"

    def check(self, name: str) -> Side:
        """Raise ``ValueError`` naming the side (``source``/``target``) if a field is wrong; return ``self``."""
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"{name} tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}")
        if type(self.bpe_size) is not int or not 16 <= self.bpe_size <= 1_000_000:
            raise ValueError(f"{name} BPE size must be an integer in [16, 1000000], got {self.bpe_size!r}")
        if not isinstance(self.language, str) or len(self.language) > 32:
            raise ValueError(f"{name} language must be a short code such as 'de', got {self.language!r}")
        if self.direction not in ("ltr", "rtl"):
            raise ValueError(f"{name} direction must be 'ltr' or 'rtl', got {self.direction!r}")
        return self


@dataclass(frozen=True)
class TaskSpec:
    """The two sides of a task of your own, saved with the model.

    Attributes:
        source: The source side.
        target: The target side.
    """

    source: Side
    target: Side

    def to_dict(self) -> dict[str, dict]:
        """``{"source": {...}, "target": {...}}``, JSON-ready."""
        return {"source": asdict(self.source), "target": asdict(self.target)}

    @classmethod
    def from_dict(cls, data: Any) -> TaskSpec:
        """Rebuild and check a spec written by [`to_dict`][attention_core.data.parallel.TaskSpec.to_dict].

        Raises:
            ValueError: If it is not such a dict, or a field is unknown or wrong.
        """
        if not isinstance(data, dict) or set(data) != {"source", "target"}:
            raise ValueError(f"task_spec must be an object with 'source' and 'target', got {data!r:.80}")
        sides = {}
        for name in ("source", "target"):
            fields = data[name]
            if not isinstance(fields, dict) or not set(fields) <= set(Side.__dataclass_fields__):
                raise ValueError(f"task_spec.{name} must be an object with fields of Side, got {fields!r:.80}")
            sides[name] = Side(**fields).check(name)
        return cls(**sides)


def _normalize(text: str) -> str:
    """Invisible characters removed (``text.strip_invisible``), NFC, whitespace runs collapsed to one space, stripped.

    The same at training and at input time, so a corpus scraped with zero-width spaces or byte-order marks gives the
    vocabulary a clean one gives, and what a visitor types reaches the same tokens.
    """
    return " ".join(unicodedata.normalize("NFC", strip_invisible(text)).split())


def _chars(text: str) -> list[str]:
    return [SPACE if ch == " " else ch for ch in _normalize(text)]


def _join_chars(tokens: Sequence[str]) -> str:
    return "".join(tokens).replace(SPACE, " ").strip()


def whitespace_words(text: str) -> list[str]:
    """The words of a ``word`` or ``bpe`` side: whitespace-separated, after NFC."""
    return _normalize(text).split()


def _join_words(tokens: Sequence[str]) -> str:
    return " ".join(tokens)


_SPLIT = {
    "char": (_chars, _join_chars),
    "word": (whitespace_words, _join_words),
    "bpe": (whitespace_words, _join_words),
}
"""Per tokeniser: text → tokens, and tokens → text (a ``bpe`` side splits words, then words into pieces)."""


def make_task(spec: TaskSpec, src_subwords: Subwords | None = None, tgt_subwords: Subwords | None = None) -> Task:
    """The [`Task`][attention_core.data.tasks.Task] of a spec, with the BPE models of its ``bpe`` sides.

    A ``bpe`` side without its model splits words only, until the model is attached
    ([`Task.with_subwords`][attention_core.data.tasks.Task.with_subwords],
    [`with_source_subwords`][attention_core.data.tasks.Task.with_source_subwords]), as loading a model folder does.

    Args:
        spec: The sides.
        src_subwords: The source BPE model.
        tgt_subwords: The target BPE model.

    Raises:
        ValueError: If a model is given for a side that is not ``bpe``.
    """
    for name, side, model in (("source", spec.source, src_subwords), ("target", spec.target, tgt_subwords)):
        if model is not None and side.tokenizer != "bpe":
            raise ValueError(f"the {name} side is {side.tokenizer!r}: it takes no BPE model")
    tokenize_src, _ = _SPLIT[spec.source.tokenizer]
    tokenize_tgt, detokenize = _SPLIT[spec.target.tokenizer]
    task = Task(PARALLEL, tokenize_src, tokenize_tgt, detokenize, constrained=False,
                bleu_tokenize="char" if spec.target.tokenizer == "char" else "13a", chinese_source=False,
                spec=spec.to_dict(),
                reads_names=spec.source.language.startswith("zh") and spec.target.language == "en")
    if src_subwords is not None:
        task = task.with_source_subwords(src_subwords)
    return task.with_subwords(tgt_subwords) if tgt_subwords is not None else task


def script_direction(texts: Iterable[str], sample: int = 2000) -> str:
    """``rtl`` when most strong-direction letters of the first ``sample`` texts are right-to-left, else ``ltr``."""
    rtl = ltr = 0
    for i, text in enumerate(texts):
        if i >= sample:
            break
        for ch in text:
            kind = unicodedata.bidirectional(ch)
            rtl += kind in ("R", "AL")
            ltr += kind == "L"
    return "rtl" if rtl > ltr else "ltr"


# ---------------------------------------------------------------------------------------------- reading


def _read_text(path: Path) -> str:
    """A corpus file as text (UTF-8, or UTF-16 with a byte-order mark); anything else is one clear message."""
    if path.is_dir():
        raise DataError(f"corpus file {path} is a folder: give a file (or a dataset folder with --format hf)")
    if not path.is_file():
        raise DataError(f"corpus file {path} not found")
    data = path.read_bytes()
    if not data.strip():
        raise DataError(f"corpus file {path} is empty")
    marked = next((name for name, marks in (("utf-32", (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)),
                                             ("utf-16", (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)))
                   if data.startswith(marks)), None)  # UTF-32's mark starts as UTF-16's: asked first
    if marked:  # Notepad's "Unicode" is UTF-16 with its mark
        try:
            return data.decode(marked)
        except UnicodeDecodeError:
            raise DataError(f"corpus file {path} starts as {marked.upper()} but is not: "
                            "give a UTF-8 text file") from None
    if b"\x00" in data[:SNIFF_BYTES]:
        raise DataError(f"corpus file {path} is binary (it holds NUL bytes): give a UTF-8 text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataError(f"corpus file {path} is not UTF-8 text (an invalid byte on line {line}): "
                        "convert it, e.g. `iconv -f <encoding> -t utf-8`") from None


def _lines(path: Path) -> list[str]:
    r"""A corpus file's lines, split at line feeds only (``\n``, ``\r\n``; ``\r`` in a file without ``\n``).

    Not ``str.splitlines``, which also breaks at characters that occur inside scraped or subtitle text (U+2028,
    U+0085, form feed …) and would shift every later line of a line-aligned file by one; ``_normalize`` turns
    those characters into spaces.
    """
    text = _read_text(path)
    lines = text.split("\n" if "\n" in text else "\r")
    if lines[-1] == "":  # the file ends with a line break
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _field(record: Any, name: str) -> Any:
    """``record["a"]["b"]`` for ``name == "a.b"``; ``None`` if any part is missing."""
    for part in name.split("."):
        if not isinstance(record, dict) or part not in record:
            return None
        record = record[part]
    return record


def _pair(source: Any, target: Any) -> tuple[str, str] | None:
    if not isinstance(source, str) or not isinstance(target, str):
        return None
    source, target = _normalize(source), _normalize(target)
    return (source, target) if source and target else None


def _gather(candidates: Iterable[tuple[str, str] | None]) -> tuple[list[tuple[str, str]], int]:
    """The well-formed pairs, and how many candidates were malformed (``None``)."""
    pairs, skipped = [], 0
    for pair in candidates:
        if pair is None:
            skipped += 1
        else:
            pairs.append(pair)
    return pairs, skipped


def _read_tsv(path: Path) -> Corpus:
    rows = [line.split("\t") for line in _lines(path) if line.strip()]
    if not any(len(fields) > 1 for fields in rows):
        raise DataError(f"{path} has one column (no line has a tab): write source<TAB>target, one pair per line, "
                        "or give two line-aligned files")
    pairs, skipped = _gather(_pair(fields[0], fields[1]) if len(fields) > 1 else None for fields in rows)
    return Corpus(pairs, skipped, str(path))


def _read_lines(source: Path, target: Path) -> Corpus:
    src_lines, tgt_lines = _lines(source), _lines(target)
    if len(src_lines) != len(tgt_lines):
        raise DataError(f"{source} has {len(src_lines):,} lines but {target} has {len(tgt_lines):,}: "
                        "line-aligned files pair line i with line i, so they need the same number of lines")
    pairs, skipped = _gather(_pair(s, t) for s, t in zip(src_lines, tgt_lines) if s.strip() or t.strip())
    return Corpus(pairs, skipped, f"{source} + {target}")


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None  # counted as a malformed line


def _read_jsonl(path: Path, source_field: str, target_field: str) -> Corpus:
    records = [_json(line) for line in _lines(path) if line.strip()]
    objects = [record for record in records if isinstance(record, dict)]
    if not objects:
        raise DataError(f"{path} is not JSON lines: each line must be an object such as "
                        f'{{"{source_field}": "…", "{target_field}": "…"}}')
    pairs, skipped = _gather(_pair(_field(r, source_field), _field(r, target_field)) for r in records)
    if not pairs:
        raise DataError(f"no object in {path} has text fields {source_field!r} and {target_field!r} "
                        f"(the first one has {', '.join(map(repr, objects[0]))}): name them with "
                        "--source-field and --target-field (a dotted name reads a nested field, e.g. translation.de)")
    return Corpus(pairs, skipped, str(path))


def _read_hf(name: str, split: str, source_field: str, target_field: str, config: str | None = None) -> Corpus:
    try:
        import datasets
    except ImportError:
        raise DataError("reading a Hugging Face dataset needs the optional package `datasets`: "
                        "pip install 'attention-lab[datasets]'") from None
    try:
        if Path(name).is_dir():
            data = datasets.load_from_disk(name)
            if isinstance(data, datasets.DatasetDict):
                if split not in data:
                    raise DataError(f"dataset {name} has no split {split!r}; it has {', '.join(data)}")
                data = data[split]
        else:
            data = datasets.load_dataset(name, config, split=split)
    except DataError:
        raise
    except Exception as err:  # offline, unknown id, unreadable folder: one line, not a traceback
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"cannot read the Hugging Face dataset {name!r} (split {split!r}): {reason}") from None
    top = {f.split(".")[0] for f in (source_field, target_field)}
    missing = top - set(data.column_names)
    if missing:
        raise DataError(f"dataset {name} has no field {', '.join(sorted(missing))}; its fields are "
                        f"{', '.join(data.column_names)}: name them with --source-field and --target-field")
    pairs, skipped = _gather(_pair(_field(r, source_field), _field(r, target_field))
                             for r in data.select_columns(sorted(top)))
    if not pairs:
        raise DataError(f"dataset {name} has no pair with text in {source_field!r} and {target_field!r}")
    return Corpus(pairs, skipped, f"hf:{name}:{split}")


def _is_dataset(path: str) -> bool:
    folder = Path(path)
    if folder.is_dir():
        return any((folder / n).is_file() for n in ("dataset_info.json", "dataset_dict.json", "state.json"))
    return not folder.exists() and path.count("/") == 1 and not path.endswith((".tsv", ".txt", ".jsonl", ".json"))


def corpus_format(paths: Sequence[str], fmt: str = "auto") -> str:
    """The format [`read_parallel`][attention_core.data.parallel.read_parallel] reads ``paths`` as (``auto`` resolved).

    Raises:
        DataError: If the number of paths does not fit the format.
    """
    if fmt not in FORMATS:
        raise DataError(f"unknown corpus format {fmt!r}; valid: {', '.join(FORMATS)}")
    if not 1 <= len(paths) <= 2:
        raise DataError(f"give one corpus file (or dataset), or two line-aligned files; got {len(paths)}")
    if fmt == "auto":
        if len(paths) == 2:
            fmt = "lines"
        elif paths[0].endswith((".jsonl", ".json")):
            fmt = "jsonl"
        elif _is_dataset(paths[0]):
            fmt = "hf"
        else:
            fmt = "tsv"
    if (fmt == "lines") != (len(paths) == 2):
        raise DataError("the lines format reads two line-aligned files (source, then target); "
                        f"{fmt} reads one: got {len(paths)}")
    return fmt


@dataclass(frozen=True)
class Source:
    """Where one split's pairs come from, as recorded with the model.

    Attributes:
        paths: One file (TSV, JSON lines), two line-aligned files, or a dataset id or folder.
        format: A resolved format (not ``auto``).
        source_field: JSON lines / dataset: the source field.
        target_field: JSON lines / dataset: the target field.
        split: Dataset: the split to read.
        config: Dataset: the configuration (``de-en`` of ``wmt19``), for a dataset id that has several.
    """

    paths: tuple[str, ...]
    format: str
    source_field: str = "source"
    target_field: str = "target"
    split: str = "train"
    config: str | None = None

    @classmethod
    def of(cls, paths: Sequence[str], fmt: str = "auto", source_field: str = "source", target_field: str = "target",
           split: str = "train", config: str | None = None) -> Source:
        """A source with its format resolved (``auto`` → the real one)."""
        paths = tuple(str(p) for p in paths)
        return cls(paths, corpus_format(paths, fmt), source_field, target_field, split, config)

    def read(self) -> Corpus:
        """Read the pairs (see the module docstring for the formats and their errors)."""
        if self.format == "hf":
            return _read_hf(self.paths[0], self.split, self.source_field, self.target_field, self.config)
        if self.format == "lines":
            return _read_lines(Path(self.paths[0]), Path(self.paths[1]))
        if self.format == "jsonl":
            return _read_jsonl(Path(self.paths[0]), self.source_field, self.target_field)
        return _read_tsv(Path(self.paths[0]))

    def record(self) -> dict:
        """What ``data.json`` keeps of it: paths (absolute), format, fields, and each file's sha256."""
        record: dict[str, Any] = asdict(self)
        if self.format == "hf":
            return record
        record["paths"] = [str(Path(p).resolve()) for p in self.paths]
        record["sha256"] = [sha256_file(p) for p in self.paths]
        return record

    @classmethod
    def from_record(cls, record: Any) -> Source:
        """The source of a ``data.json`` record, its files checked against their recorded sha256.

        Raises:
            DataError: If the record is malformed, or a file is missing or changed since training.
        """
        try:
            source = cls(tuple(record["paths"]), record["format"], record["source_field"], record["target_field"],
                         record["split"], record.get("config"))
        except (KeyError, TypeError):
            raise DataError(f"the model's data record is unreadable: {record!r:.120}") from None
        for path, digest in zip(source.paths, record.get("sha256", [])):
            if not Path(path).is_file():
                raise DataError(f"{path} (the model's training corpus) is not there any more: "
                                "give the pairs to score with --test FILE")
            if sha256_file(path) != digest:
                raise DataError(f"{path} changed since the model was trained (its sha256 differs): the split would "
                                "not be the model's; give the pairs to score with --test FILE")
        return source


def read_parallel(paths: Sequence[str], fmt: str = "auto", source_field: str = "source", target_field: str = "target",
                  split: str = "train") -> Corpus:
    """Read a parallel corpus in any of the [`FORMATS`][attention_core.data.parallel.FORMATS].

    Args:
        paths: One file (TSV or JSON lines), two line-aligned files, or a dataset id or folder.
        fmt: The format, or ``auto``.
        source_field: JSON lines / dataset: the source field (dotted for nested ones).
        target_field: JSON lines / dataset: the target field.
        split: Dataset: which split.

    Returns:
        The pairs (whitespace normalised) and the count of skipped malformed lines.

    Raises:
        DataError: For a file that cannot be a corpus (missing, empty, binary, not UTF-8, one column,
            files of different lengths, no named fields).
    """
    return Source.of(paths, fmt, source_field, target_field, split).read()


# ---------------------------------------------------------------------------------------------- splitting


def _key(source: str) -> str:
    """Sources that differ only in case, width or spacing are the same source."""
    return " ".join(unicodedata.normalize("NFKC", source).casefold().split())


def split_parallel(train: Source, dev: Source | None = None, test: Source | None = None,
                   seed: int = SPLIT_SEED) -> Splits:
    """The splits of a corpus of your own (see the module docstring for the rule).

    Args:
        train: The corpus (its pairs train, and fill dev and test when their files are not given).
        dev: Explicit dev pairs.
        test: Explicit test pairs.
        seed: Seed of the group shuffle.

    Raises:
        DataError: If a file cannot be read, or too few pairs are left for a split.
    """
    corpus = train.read()
    given = {name: source.read() for name, source in (("dev", dev), ("test", test)) if source is not None}
    unique = list(dict.fromkeys(corpus.pairs))
    held_out = {_key(s) for c in given.values() for s, _ in c.pairs}
    pool = [p for p in unique if _key(p[0]) not in held_out]
    dropped = len(unique) - len(pool)
    if len(pool) < MIN_PAIRS:
        duplicates = len(corpus.pairs) - len(unique)
        raise DataError(f"{corpus.path} has {len(pool)} usable pair{'' if len(pool) == 1 else 's'} "
                        f"({corpus.skipped} malformed lines skipped"
                        + (f", {duplicates} duplicate pairs dropped" if duplicates else "")
                        + (f", {dropped} whose source is in the dev or test file" if dropped else "")
                        + f"); training needs at least {MIN_PAIRS}")
    groups: dict[str, list[tuple[str, str]]] = {}
    for pair in pool:
        groups.setdefault(_key(pair[0]), []).append(pair)
    keys = list(groups)
    random.Random(seed).shuffle(keys)
    size = min(MAX_HELD_OUT, max(1, round(HELD_OUT_SHARE * len(pool))))
    drawn: dict[str, list[tuple[str, str]]] = {"test": [], "dev": [], "train": []}
    for key in keys:
        for name in ("test", "dev", "train"):
            if name == "train" or (name not in given and len(drawn[name]) + len(groups[key]) <= size):
                drawn[name] += groups[key]
                break
    splits = {name: given[name].pairs if name in given else drawn[name] for name in ("train", "dev", "test")}
    for name, pairs in splits.items():
        if not pairs:
            raise DataError(f"the {name} split is empty: give more pairs, or a --{name} file")
    info = {
        "task": PARALLEL,
        "rule": "drop exact duplicate pairs; group by normalised source; shuffle groups with seed; fill test, then "
        "dev (5 % each, at most 1,000), rest train; given dev/test files replace the drawn ones and their "
        "sources leave train",
        "seed": seed,
        "sources": {name: source.record() for name, source in (("train", train), ("dev", dev), ("test", test))
                    if source is not None},
        "skipped_lines": corpus.skipped + sum(c.skipped for c in given.values()),
        "duplicates_dropped": len(corpus.pairs) - len(unique),
        "dropped_held_out": dropped,
        "sizes": {name: len(pairs) for name, pairs in splits.items()},
        "example": min(splits["test"][:50], key=lambda pair: len(pair[0]))[0],  # a short test source, for the card
    }
    return Splits(splits["train"], splits["dev"], splits["test"], info)


def splits_from_info(info: Any) -> Splits:
    """The splits a model of your own was trained on, read again from the files its ``data`` record names.

    Raises:
        DataError: If the record is not a task of your own's, or a file is missing or changed.
    """
    if not isinstance(info, dict) or info.get("task") != PARALLEL or not isinstance(info.get("sources"), dict):
        raise DataError("the model does not record a corpus of its own: give the pairs to score with --test FILE")
    sources = {name: Source.from_record(record) for name, record in info["sources"].items()}
    if "train" not in sources:
        raise DataError("the model's data record names no training corpus: give the pairs with --test FILE")
    seed = info.get("seed", SPLIT_SEED)
    return split_parallel(sources["train"], sources.get("dev"), sources.get("test"), seed if isinstance(seed, int)
                          else SPLIT_SEED)
