"""Corpora, deterministic splits, tokenised datasets and length-bucketed batches.

Three formats are read from a data directory given as an argument (nothing is copied):

* ``cmn-eng/cmn.txt`` — ``English<TAB>Chinese<TAB>attribution``, UTF-8 with BOM;
* ``couplet/`` and ``poetry-couplet/`` — ``{train,test}/{in,out}.txt``, characters separated by
  spaces, line *i* of ``in.txt`` pairing with line *i* of ``out.txt``.

Malformed lines (missing fields, empty sides) are skipped and counted, never fatal.

Splits (saved with every model in ``data.json``):

* **translation**: exact duplicate pairs are dropped, then pairs are grouped by their normalised
  Chinese sentence and the groups shuffled with ``seed``; groups fill *test* (1,000 pairs), then
  *dev* (1,000 pairs), the rest is *train*. A Chinese sentence never appears in two splits.
* **couplet**: *test* is the corpus' own test set; *dev* is 1,000 pairs drawn from train with
  ``seed``; optional extra data (``poetry-couplet``) only joins *train*. ``poetry-couplet/test``
  (classical register) is a second test set, ``extra_tests["poetry-test"]``, whenever it is present.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from attention_core.batch import Batch, make_batch
from attention_core.corpora import data_home, sha256_file
from attention_core.subword import Subwords, merge_pieces
from attention_core.text import (
    detokenize_chinese,
    detokenize_english,
    normalize_chinese,
    tokenize_chinese,
    tokenize_english,
)
from attention_core.vocab import Vocab


class DataError(ValueError):
    """A corpus is missing or unreadable; the message says which file and what to do."""


@dataclass
class Corpus:
    """Raw ``(source, target)`` text pairs read from one file or folder.

    Attributes:
        pairs: Source and target strings.
        skipped: Number of malformed or empty lines that were skipped.
        path: Where the pairs came from.
    """

    pairs: list[tuple[str, str]]
    skipped: int
    path: str


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataError(
            f"{what} not found at {path}. Run `attention-lab data pull` to download the corpora (about 100 MB), "
            "or pass --data / set ATTENTION_LAB_DATA to the folder that holds cmn-eng/, couplet/ and poetry-couplet/."
        )
    return path


def read_cmn_eng(data_dir: str | Path) -> Corpus:
    """Read ``cmn-eng/cmn.txt`` as (Chinese, English) pairs.

    Args:
        data_dir: The data folder (``cmn-eng/cmn.txt`` inside it), or the file itself.

    Returns:
        The corpus; lines without both an English and a Chinese field are skipped and counted.
    """
    path = Path(data_dir)
    path = path if path.is_file() else _require(path / "cmn-eng" / "cmn.txt", "cmn-eng corpus")
    pairs, skipped = [], 0
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                skipped += 1
                continue
            pairs.append((fields[1].strip(), fields[0].strip()))
    return Corpus(pairs, skipped, str(path))


def read_couplets(folder: str | Path, split: str = "train") -> Corpus:
    """Read a couplet folder's ``{split}/in.txt`` and ``{split}/out.txt``.

    Args:
        folder: ``couplet/`` or ``poetry-couplet/`` (or any folder in that format).
        split: ``train`` or ``test``.

    Returns:
        The corpus with spaces removed; empty lines, and a surplus of lines in one file, are
        skipped and counted.
    """
    folder = Path(folder)
    src_path = _require(folder / split / "in.txt", f"couplet {split} input")
    tgt_path = _require(folder / split / "out.txt", f"couplet {split} output")
    src_lines = src_path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    tgt_lines = tgt_path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    skipped = abs(len(src_lines) - len(tgt_lines))
    pairs = []
    for up, down in zip(src_lines, tgt_lines):
        up, down = "".join(up.split()), "".join(down.split())
        if not up or not down:
            skipped += 1
            continue
        pairs.append((up, down))
    return Corpus(pairs, skipped, str(folder / split))


@dataclass(frozen=True)
class Task:
    """How one task tokenises, detokenises and scores text.

    Attributes:
        name: ``translation`` or ``couplet``.
        tokenize_src: Source tokeniser.
        tokenize_tgt: Target tokeniser.
        detokenize: Target detokeniser.
        constrained: Whether couplet constraints apply at decode time.
        bleu_tokenize: sacrebleu tokeniser for scoring (``13a`` for English, ``char`` for couplets).
        subwords: The target side's subword model, or ``None`` for whole-token targets (see
            [`with_subwords`][attention_core.data.Task.with_subwords]).
        chinese_source: Inputs must contain Chinese (the bundled tasks); a model of your own
            ([`attention_core.parallel`][attention_core.parallel]) reads any language.
        spec: How a task of your own tokenises each side
            ([`TaskSpec.to_dict`][attention_core.parallel.TaskSpec.to_dict]), saved as ``task_spec`` in
            ``config.json``; ``None`` for the bundled tasks.
        src_subwords: The source side's subword model (a task of your own with ``bpe`` sources).
    """

    name: str
    tokenize_src: Callable[[str], list[str]]
    tokenize_tgt: Callable[[str], list[str]]
    detokenize: Callable[[Sequence[str]], str]
    constrained: bool
    bleu_tokenize: str
    subwords: Subwords | None = None
    chinese_source: bool = True
    spec: dict | None = None
    src_subwords: Subwords | None = None

    def with_subwords(self, subwords: Subwords) -> Task:
        """This task with subword targets: words are split into pieces, and pieces merged back.

        Args:
            subwords: A trained [`Subwords`][attention_core.subword.Subwords] model.

        Raises:
            ValueError: For the couplet task, whose rules work on whole characters.
        """
        if self.constrained:
            raise ValueError(f"subword targets are for translation, not the {self.name} task")
        tokenize, detokenize = self.tokenize_tgt, self.detokenize
        return replace(
            self,
            tokenize_tgt=lambda text: subwords.encode(tokenize(text)),
            detokenize=lambda pieces: detokenize(merge_pieces(pieces)),
            subwords=subwords,
        )

    def with_source_subwords(self, subwords: Subwords) -> Task:
        """This task with subword sources: the source tokeniser's words are split into pieces.

        Args:
            subwords: A trained [`Subwords`][attention_core.subword.Subwords] model.

        Raises:
            ValueError: For the bundled tasks, which read Chinese characters.
        """
        if self.chinese_source:
            raise ValueError(f"subword sources are for a task of your own, not the {self.name} task")
        tokenize = self.tokenize_src
        return replace(self, tokenize_src=lambda text: subwords.encode(tokenize(text)), src_subwords=subwords)


TASKS: dict[str, Task] = {
    "translation": Task("translation", tokenize_chinese, tokenize_english, detokenize_english, False, "13a"),
    "couplet": Task("couplet", tokenize_chinese, tokenize_chinese, detokenize_chinese, True, "char"),
}
"""Tasks by name."""


def get_task(name: str) -> Task:
    """Look a task up by name, listing the valid names if it is unknown."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid tasks: {', '.join(TASKS)}")
    return TASKS[name]


@dataclass
class Splits:
    """Train, dev and test text pairs, and the record of how they were made.

    Attributes:
        train: Training pairs.
        dev: Development pairs (early stopping, learning-rate decay).
        test: Test pairs.
        info: The rule, seed, sources, sizes and skipped-line counts (saved as ``data.json``).
        extra_tests: Further test sets by name (couplets: ``poetry-test``), never trained on.
        main_train_size: How many leading pairs of ``train`` come from the task's own corpus (the
            extra data follows them); ``None`` when all of it does.
    """

    train: list[tuple[str, str]]
    dev: list[tuple[str, str]]
    test: list[tuple[str, str]]
    info: dict = field(default_factory=dict)
    extra_tests: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    main_train_size: int | None = None

    def evaluation_sets(self) -> dict[str, list[tuple[str, str]]]:
        """Every set a model is scored on, by name: ``test`` first, then the extra test sets."""
        return {"test": self.test, **self.extra_tests}


def split_translation(
    data_dir: str | Path,
    seed: int = 1234,
    dev_size: int = 1000,
    test_size: int = 1000,
    extra: Sequence[str] = (),
) -> Splits:
    """The documented translation split of ``cmn-eng`` (see the module docstring).

    Args:
        data_dir: The data folder (``cmn-eng/cmn.txt`` inside it), or ``cmn.txt`` itself.
        seed: Seed of the group shuffle.
        dev_size: Dev pairs.
        test_size: Test pairs.
        extra: Extra training folders inside ``data_dir`` in the same format (one ``.txt`` file
            each, e.g. ``("cmn-eng-extra",)``). They only join *train*, after the pairs of
            ``cmn.txt``; a pair whose normalised Chinese is in dev or test is dropped and counted, so
            dev and test stay exactly as without them.
    """
    corpus = read_cmn_eng(data_dir)
    unique = list(dict.fromkeys(corpus.pairs))
    groups: dict[str, list[tuple[str, str]]] = {}
    for pair in unique:
        groups.setdefault(normalize_chinese(pair[0]), []).append(pair)
    keys = list(groups)
    random.Random(seed).shuffle(keys)
    test: list[tuple[str, str]] = []
    dev: list[tuple[str, str]] = []
    train: list[tuple[str, str]] = []
    for key in keys:
        group = groups[key]
        if len(test) + len(group) <= test_size:
            test += group
        elif len(dev) + len(group) <= dev_size:
            dev += group
        else:
            train += group
    main_train_size = len(train)
    sources = [{"path": corpus.path, "sha256": sha256_file(corpus.path)}]
    skipped, overlap = corpus.skipped, 0
    held_out = {normalize_chinese(zh) for zh, _ in dev + test}
    seen = set(unique)
    for name in extra:
        files = sorted(p for p in _require(Path(data_dir) / name, f"extra corpus {name}").glob("*.txt"))
        if len(files) != 1:
            raise DataError(f"{Path(data_dir) / name} must hold exactly one .txt corpus file, found {len(files)}")
        more = read_cmn_eng(files[0])
        skipped += more.skipped
        sources.append({"path": more.path, "sha256": sha256_file(more.path)})
        for pair in dict.fromkeys(more.pairs):
            if normalize_chinese(pair[0]) in held_out:
                overlap += 1
            elif pair not in seen:
                seen.add(pair)
                train.append(pair)
    info = {
        "task": "translation",
        "rule": "drop exact duplicate pairs; group by normalised Chinese; shuffle groups with seed; "
        "fill test, then dev, rest train"
        + (" (+ extra, minus pairs whose Chinese is in dev or test)" if extra else ""),
        "seed": seed,
        "sources": sources,
        "skipped_lines": skipped,
        "duplicates_dropped": len(corpus.pairs) - len(unique),
        "sizes": {"train": len(train), "dev": len(dev), "test": len(test)},
    }
    if extra:
        info["extra"] = list(extra)
        info["extra_dropped_held_out"] = overlap
    return Splits(train, dev, test, info, main_train_size=main_train_size if extra else None)


def split_couplet(
    data_dir: str | Path, seed: int = 1234, dev_size: int = 1000, extra: Sequence[str] = ()
) -> Splits:
    """The documented couplet split (see the module docstring).

    Args:
        data_dir: The data folder holding ``couplet/`` (and any ``extra`` folders).
        seed: Seed for drawing dev from train.
        dev_size: Dev pairs drawn from ``couplet/train``.
        extra: Extra training folders inside ``data_dir``, e.g. ``("poetry-couplet",)``.
    """
    data_dir = Path(data_dir)
    train_corpus = read_couplets(data_dir / "couplet", "train")
    test_corpus = read_couplets(data_dir / "couplet", "test")
    order = list(range(len(train_corpus.pairs)))
    random.Random(seed).shuffle(order)
    dev_index = set(order[:dev_size])
    dev = [p for i, p in enumerate(train_corpus.pairs) if i in dev_index]
    train = [p for i, p in enumerate(train_corpus.pairs) if i not in dev_index]
    main_train_size = len(train)
    skipped = train_corpus.skipped + test_corpus.skipped
    sources = [train_corpus.path, test_corpus.path]
    for name in extra:
        more = read_couplets(data_dir / name, "train")
        train += more.pairs
        skipped += more.skipped
        sources.append(more.path)
    extra_tests = {}
    if (data_dir / "poetry-couplet" / "test" / "in.txt").is_file():
        extra_tests["poetry-test"] = read_couplets(data_dir / "poetry-couplet", "test").pairs
    info = {
        "task": "couplet",
        "rule": "test = couplet/test; dev = seeded sample of couplet/train; train = the rest (+ extra); "
        "poetry-test = poetry-couplet/test",
        "seed": seed,
        "sources": [{"path": p, "sha256": sha256_file(Path(p) / "in.txt")} for p in sources],
        "skipped_lines": skipped,
        "extra": list(extra),
        "sizes": {
            "train": len(train),
            "dev": len(dev),
            "test": len(test_corpus.pairs),
            **{name: len(pairs) for name, pairs in extra_tests.items()},
        },
    }
    return Splits(train, dev, test_corpus.pairs, info, extra_tests, main_train_size)


def load_splits(task: str, data_dir: str | Path | None = None, seed: int = 1234, extra: Sequence[str] = ()) -> Splits:
    """The split for a task by name, from ``data_dir`` (default [`data_home`][attention_core.corpora.data_home])."""
    data_dir = data_home(data_dir)
    if get_task(task).name == "translation":
        return split_translation(data_dir, seed, extra=extra)
    return split_couplet(data_dir, seed, extra=extra)


@dataclass
class Example:
    """One tokenised pair, with ids.

    Attributes:
        src: Source tokens.
        tgt: Target tokens.
        src_ids: Source ids.
        tgt_ids: Target ids.
    """

    src: list[str]
    tgt: list[str]
    src_ids: list[int]
    tgt_ids: list[int]


def encode_pairs(
    pairs: Sequence[tuple[str, str]],
    task: Task,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    max_len: int | None = None,
) -> list[Example]:
    """Tokenise and map pairs to ids, dropping pairs with an empty side or longer than ``max_len``."""
    out = []
    for src_text, tgt_text in pairs:
        src, tgt = task.tokenize_src(src_text), task.tokenize_tgt(tgt_text)
        if not src or not tgt or (max_len and (len(src) > max_len or len(tgt) > max_len)):
            continue
        out.append(Example(src, tgt, src_vocab.encode(src), tgt_vocab.encode(tgt)))
    return out


def bucketed_batches(
    examples: Sequence[Example], batch_size: int, shuffle: bool = True, seed: int = 0, pool: int = 50
) -> Iterator[Batch]:
    """Length-bucketed batches: similar source lengths share a batch, so little padding is wasted.

    Examples are shuffled (with ``seed``), cut into pools of ``pool`` batches, sorted by length
    inside each pool and cut into batches; the batch order is shuffled again.

    Args:
        examples: Tokenised examples.
        batch_size: Pairs per batch.
        shuffle: Shuffle (training); otherwise keep the order (evaluation).
        seed: Seed of this epoch's order.
        pool: Batches per sorting pool.

    Yields:
        Padded batches with their lengths (the masks follow from them).
    """
    order = list(range(len(examples)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    chunks = []
    span = batch_size * pool
    for start in range(0, len(order), span):
        chunk = order[start : start + span]
        if shuffle:
            chunk.sort(key=lambda i: (len(examples[i].src_ids), len(examples[i].tgt_ids)))
        chunks += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    if shuffle:
        rng.shuffle(chunks)
    for chunk in chunks:
        yield make_batch([(examples[i].src_ids, examples[i].tgt_ids) for i in chunk])


def length_ratio(examples: Sequence[Example]) -> float:
    """Mean target/source length ratio (``<eos>`` counted), for placing local-m windows."""
    total_src = sum(len(e.src_ids) for e in examples)
    total_tgt = sum(len(e.tgt_ids) + 1 for e in examples)
    return total_tgt / max(1, total_src)

