"""Corpora, deterministic splits, tokenised datasets and length-bucketed batches.

Four formats are read from a data directory given as an argument (nothing is copied):

* ``cmn-eng/cmn.txt`` — ``English<TAB>Chinese<TAB>attribution``, UTF-8 with BOM (``cmn-eng-extra/``
  holds one more such file);
* ``tv4dialog/tv4dialog.tsv`` — ``Chinese<TAB>English<TAB>series/episode/uid``, TV subtitles whose
  Chinese marks pauses with spaces instead of punctuation;
* ``couplet/`` and ``poetry-couplet/`` — ``{train,test}/{in,out}.txt``, characters separated by
  spaces, line *i* of ``in.txt`` pairing with line *i* of ``out.txt``.

Malformed lines (missing fields, empty sides) are skipped and counted, never fatal.

Splits (saved with every model in ``data.json``):

* **translation**: exact duplicate pairs are dropped, then pairs are grouped by their normalised
  Chinese sentence and the groups shuffled with ``seed``; groups fill *test* (1,000 pairs), then
  *dev* (1,000 pairs), the rest is *train*. A Chinese sentence never appears in two splits.
  Optional extra data (``cmn-eng-extra``; ``tv4dialog``, below) joins *train*, after these pairs; an
  extra pair whose normalised Chinese is in dev or test is dropped and counted, so dev and test are
  the same with or without it.
* **tv4dialog** as extra translation data: its Chinese is punctuated as visitors write it
  ([`punctuate_subtitle`][attention_core.data.text.punctuate_subtitle]: a space between two Chinese
  characters becomes ``，``, and the line ends in ``？``, ``！`` or ``。`` after the English's last mark).
  Whole episodes are held out, from every series, with ``seed``: ``extra_tests["tv4dialog-test"]``
  and ``extra_devs["tv4dialog-dev"]`` (about 1,000 utterances each; see
  [`hold_out_episodes`][attention_core.data.tasks.hold_out_episodes]), minus any utterance said in
  ``cmn.txt``; the other episodes join *train*. With it, an extra pair is dropped when what it says
  (its Chinese without punctuation and spaces) is said in any held-out set, so no held-out utterance
  is trained on. ``data.json`` records the held-out episodes, sizes and dropped pairs. The held-out
  sets depend on ``seed`` and the file alone, so a model trained without tv4dialog is scored on the
  same pairs (``split_translation(data, seed, extra=("tv4dialog",)).extra_tests``).
* **couplet**: *test* is the corpus' own test set; *dev* is 1,000 pairs drawn from train with
  ``seed``; optional extra data (``poetry-couplet``) only joins *train*. ``poetry-couplet/test``
  (classical register) is a second test set, ``extra_tests["poetry-test"]``, whenever it is present.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from attention_core.data.batch import Batch, IdArrays, make_batches
from attention_core.data.corpora import data_home, read_manifest, sha256_file
from attention_core.data.subword import Subwords, merge_pieces
from attention_core.data.text import (
    bare_chinese,
    detokenize_chinese,
    detokenize_english,
    normalize_chinese,
    punctuate_subtitle,
    tokenize_chinese,
    tokenize_english,
)
from attention_core.data.vocab import Vocab

SPLIT_SEED = 1234
"""The seed of every split (bundled tasks and tasks of your own): the same corpus always splits the same way."""


class DataError(ValueError):
    """A corpus is missing or unreadable; the message says which file and what to do."""


@dataclass
class Corpus:
    """Raw ``(source, target)`` text pairs read from one file or folder.

    Attributes:
        pairs: Source and target strings.
        skipped: Number of malformed or empty lines that were skipped.
        path: Where the pairs came from.
        episodes: For a corpus of dialogues (``tv4dialog``), the ``series/episode`` of each pair;
            ``None`` otherwise.
    """

    pairs: list[tuple[str, str]]
    skipped: int
    path: str
    episodes: list[str] | None = None


def _require(path: Path, what: str, corpus: str | None = None) -> Path:
    if not path.exists():
        if corpus is not None:
            raise DataError(
                f"{what} not found at {path}. Run `attention-lab data pull {corpus}` to download it, "
                f"or pass --data / set ATTENTION_LAB_DATA to the folder that holds {corpus}/."
            )
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


TV4DIALOG_FILE = "tv4dialog.tsv"
"""The file of ``tv4dialog/``; an extra folder holding a ``.tsv`` file is read as dialogues in its format."""


def read_tv4dialog(data_dir: str | Path) -> Corpus:
    """Read ``tv4dialog/tv4dialog.tsv`` as punctuated (Chinese, English) pairs with their episodes.

    Each line is ``Chinese<TAB>English<TAB>series/episode/uid``. The Chinese side, which has no
    punctuation, is punctuated by [`punctuate_subtitle`][attention_core.data.text.punctuate_subtitle]
    (the rule visitors' input already follows).

    Args:
        data_dir: The data folder (``tv4dialog/tv4dialog.tsv`` inside it), or the file itself.

    Returns:
        The corpus, with ``episodes`` (``series/episode``, e.g. ``castle/S01E01``); lines without
        three fields, with an empty side or without a ``series/episode/uid`` id are skipped and counted.
    """
    path = Path(data_dir)
    path = path if path.is_file() else _require(path / "tv4dialog" / TV4DIALOG_FILE, "tv4dialog corpus", "tv4dialog")
    pairs, episodes, skipped = [], [], 0
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            fields = [x.strip() for x in line.rstrip("\n").split("\t")]
            if len(fields) != 3 or len(fields[2].split("/")) != 3 or not all(fields[2].split("/")):
                skipped += 1
                continue
            chinese, english = punctuate_subtitle(fields[0], fields[1]), fields[1]
            if not chinese or not english:
                skipped += 1
                continue
            pairs.append((chinese, english))
            episodes.append(fields[2].rsplit("/", 1)[0])
    return Corpus(pairs, skipped, str(path), episodes)


def read_extra(folder: str | Path) -> Corpus:
    """Read an extra translation folder, its format told by its one corpus file.

    A ``.tsv`` file is read as dialogues ([`read_tv4dialog`][attention_core.data.tasks.read_tv4dialog]:
    ``Chinese<TAB>English<TAB>series/episode/uid``), a ``.txt`` file as ``cmn.txt``
    ([`read_cmn_eng`][attention_core.data.tasks.read_cmn_eng]).

    Raises:
        DataError: If the folder is missing or holds no, or more than one, corpus file.
    """
    folder = Path(folder)
    known = {e.corpus for e in read_manifest()}
    _require(folder, f"extra corpus {folder.name}", folder.name if folder.name in known else None)
    files = sorted(folder.glob("*.tsv")) + sorted(folder.glob("*.txt"))
    if len(files) != 1:
        raise DataError(
            f"{folder} must hold exactly one corpus file: a .txt in the cmn.txt format or a .tsv of dialogues "
            f"(Chinese<TAB>English<TAB>series/episode/uid, as tv4dialog/{TV4DIALOG_FILE}); found {len(files)}"
        )
    return read_tv4dialog(files[0]) if files[0].suffix == ".tsv" else read_cmn_eng(files[0])


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
            [`with_subwords`][attention_core.data.tasks.Task.with_subwords]).
        chinese_source: Inputs must contain Chinese (the bundled tasks); a model of your own
            ([`attention_core.data.parallel`][attention_core.data.parallel]) reads any language.
        spec: How a task of your own tokenises each side
            ([`TaskSpec.to_dict`][attention_core.data.parallel.TaskSpec.to_dict]), saved as ``task_spec`` in
            ``config.json``; ``None`` for the bundled tasks.
        src_subwords: The source side's subword model (a task of your own with ``bpe`` sources).
        loop_guard: Whether the search keeps outputs out of loops by default
            ([`LoopGuard`][attention_core.decoding.repetition.LoopGuard]): on for translation, off for couplets (their
            rules govern repetition) and for models of your own.
        coverage: The default weight ``β`` of beam search's coverage penalty
            ([`beam_search_nbest`][attention_core.decoding.search.beam_search_nbest]); ``0``: off.
        input_name: What a reader types, as messages name it (``Chinese sentence``, ``上联``).
        characters_only: Every source token must be a Chinese character: a 上联, whose 下联 mirrors each one.
        reads_names: The names switch applies ([`attention_core.editing.names`][attention_core.editing.names]):
            Chinese → English.
        lists_known_names: Training lists the names its data holds (``known_names`` in the model's metadata),
            which the names switch then leaves to the model.
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
    loop_guard: bool = False
    coverage: float = 0.0
    input_name: str = "sentence"
    characters_only: bool = False
    reads_names: bool = False
    lists_known_names: bool = False

    @property
    def own(self) -> bool:
        """A task of your own ([`attention_core.data.parallel`][attention_core.data.parallel]), not a bundled one."""
        return self.spec is not None

    def with_subwords(self, subwords: Subwords) -> Task:
        """This task with subword targets: words are split into pieces, and pieces merged back.

        Args:
            subwords: A trained [`Subwords`][attention_core.data.subword.Subwords] model.

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
            subwords: A trained [`Subwords`][attention_core.data.subword.Subwords] model.

        Raises:
            ValueError: For the bundled tasks, which read Chinese characters.
        """
        if self.chinese_source:
            raise ValueError(f"subword sources are for a task of your own, not the {self.name} task")
        tokenize = self.tokenize_src
        return replace(self, tokenize_src=lambda text: subwords.encode(tokenize(text)), src_subwords=subwords)


TASKS: dict[str, Task] = {
    "translation": Task("translation", tokenize_chinese, tokenize_english, detokenize_english, False, "13a",
                        loop_guard=True, input_name="Chinese sentence", reads_names=True, lists_known_names=True),
    "couplet": Task("couplet", tokenize_chinese, tokenize_chinese, detokenize_chinese, True, "char",
                    input_name="上联", characters_only=True),
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
        extra_tests: Further test sets by name (couplets: ``poetry-test``; translation with
            ``tv4dialog``: ``tv4dialog-test``), never trained on.
        main_train_size: How many leading pairs of ``train`` come from the task's own corpus (the
            extra data follows them); ``None`` when all of it does.
        extra_devs: Further development sets by name (translation with ``tv4dialog``:
            ``tv4dialog-dev``), never trained on, for choosing recipes; unlike ``dev`` they play no
            part in training (early stopping, learning-rate decay), and unlike ``extra_tests`` they
            are not among the [`evaluation_sets`][attention_core.data.tasks.Splits.evaluation_sets].
    """

    train: list[tuple[str, str]]
    dev: list[tuple[str, str]]
    test: list[tuple[str, str]]
    info: dict = field(default_factory=dict)
    extra_tests: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    main_train_size: int | None = None
    extra_devs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def evaluation_sets(self) -> dict[str, list[tuple[str, str]]]:
        """Every set a model is scored on, by name: ``test`` first, then the extra test sets."""
        return {"test": self.test, **self.extra_tests}


def hold_out_episodes(episodes: Sequence[str], seed: int, size: int) -> tuple[list[str], list[str]]:
    """Whole episodes for a dialogue corpus's test and dev slices, from every series, about ``size`` utterances each.

    Each series' episodes (``series/episode``, sorted) are shuffled with ``seed``; the test slice takes
    one episode of each series in turn (series in alphabetical order): the first round always, then
    each next episode only while it brings the slice closer to ``size`` utterances. The dev slice is
    filled the same way from the episodes left.

    Args:
        episodes: The episode of every utterance (repeats count the utterances).
        seed: Seed of the shuffles.
        size: Utterances aimed at in each slice; ``0`` holds nothing out.

    Returns:
        The test episodes and the dev episodes, in the order they were taken.

    Examples:
        >>> hold_out_episodes(["a/1"] * 3 + ["a/2"] * 3 + ["b/1"] * 2 + ["b/2"] * 2, seed=0, size=5)
        (['a/2', 'b/1'], ['a/1', 'b/2'])
    """
    if size <= 0:
        return [], []
    counts = Counter(episodes)
    series: dict[str, list[str]] = {}
    for episode in sorted(counts):
        series.setdefault(episode.split("/")[0], []).append(episode)
    rng = random.Random(seed)
    queues = {name: rng.sample(eps, len(eps)) for name, eps in sorted(series.items())}
    slices: list[list[str]] = []
    for _ in range(2):
        chosen, total, first_round = [], 0, True
        while any(queues.values()):
            added = False
            for queue in queues.values():
                if queue and (first_round or abs(total + counts[queue[0]] - size) < abs(total - size)):
                    chosen.append(queue.pop(0))
                    total += counts[chosen[-1]]
                    added = True
            first_round = False
            if not added:
                break
        slices.append(chosen)
    return slices[0], slices[1]


def _split_groups(
    pairs: Sequence[tuple[str, str]], seed: int, test_size: int, dev_size: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """``(test, dev, train)``: whole groups of pairs with the same normalised Chinese.

    The groups are shuffled with ``seed``; test is filled first, then dev, the rest is train (a group never
    straddles two parts).
    """
    groups: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
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
    return test, dev, train


def split_translation(
    data_dir: str | Path,
    seed: int = SPLIT_SEED,
    dev_size: int = 1000,
    test_size: int = 1000,
    extra: Sequence[str] = (),
    dialogue_size: int = 1000,
) -> Splits:
    """The documented translation split of ``cmn-eng`` (see the module docstring).

    Args:
        data_dir: The data folder (``cmn-eng/cmn.txt`` inside it), or ``cmn.txt`` itself.
        seed: Seed of the group shuffle (and of the episodes a dialogue corpus holds out).
        dev_size: Dev pairs.
        test_size: Test pairs.
        extra: Extra training folders inside ``data_dir`` (e.g. ``("cmn-eng-extra", "tv4dialog")``),
            read by [`read_extra`][attention_core.data.tasks.read_extra]. They join *train*, after the pairs
            of ``cmn.txt``; a pair whose normalised Chinese is in dev or test is dropped and counted, so
            dev and test stay exactly as without them. A dialogue corpus (``tv4dialog``) first holds out
            whole episodes ([`hold_out_episodes`][attention_core.data.tasks.hold_out_episodes]) as
            ``extra_tests["tv4dialog-test"]`` and ``extra_devs["tv4dialog-dev"]``; then the comparison
            with every held-out Chinese sentence ignores punctuation and spaces.
        dialogue_size: Utterances aimed at in each of a dialogue corpus's test and dev slices.
    """
    corpus = read_cmn_eng(data_dir)
    unique = list(dict.fromkeys(corpus.pairs))
    test, dev, train = _split_groups(unique, seed, test_size, dev_size)
    main_train_size = len(train)
    sources = [{"path": corpus.path, "sha256": sha256_file(corpus.path)}]
    skipped, overlap = corpus.skipped, 0
    extras = {name: read_extra(Path(data_dir) / name) for name in extra}
    extra_tests: dict[str, list[tuple[str, str]]] = {}
    extra_devs: dict[str, list[tuple[str, str]]] = {}
    dialogues: dict[str, dict] = {}
    said_in_cmn_eng: set[str] = set()
    for name, more in list(extras.items()):
        if more.episodes is not None:  # a dialogue corpus: hold out whole episodes, train on the others
            said_in_cmn_eng = said_in_cmn_eng or {bare_chinese(zh) for zh, _ in unique}
            test_part, dev_part, extras[name], dialogues[name] = _hold_out_dialogues(
                name, more, said_in_cmn_eng, seed, dialogue_size
            )
            extra_tests[f"{name}-test"], extra_devs[f"{name}-dev"] = test_part, dev_part
    if dialogues:  # the dialogues' punctuation is inferred: compare what was said
        compare: Callable[[str], str] = bare_chinese
        held_out_sets = [dev, test, *extra_tests.values(), *extra_devs.values()]
    else:
        compare, held_out_sets = normalize_chinese, [dev, test]
    held_out = {compare(zh) for pairs in held_out_sets for zh, _ in pairs}
    seen = set(unique)
    for name, more in extras.items():
        skipped += more.skipped
        sources.append({"path": more.path, "sha256": sha256_file(more.path)})
        dropped, joined = 0, 0
        for pair in dict.fromkeys(more.pairs):
            if compare(pair[0]) in held_out:
                dropped += 1
            elif pair not in seen:
                seen.add(pair)
                train.append(pair)
                joined += 1
        overlap += dropped
        if name in dialogues:
            dialogues[name].update(train_pairs=joined, dropped_held_out=dropped)
    info = {
        "task": "translation",
        "rule": "drop exact duplicate pairs; group by normalised Chinese; shuffle groups with seed; "
        "fill test, then dev, rest train"
        + (" (+ extra, minus pairs whose Chinese is in dev or test)" if extra else "")
        + ("; " + DIALOGUE_RULE if dialogues else ""),
        "seed": seed,
        "sources": sources,
        "skipped_lines": skipped,
        "duplicates_dropped": len(corpus.pairs) - len(unique),
        "sizes": {
            "train": len(train),
            "dev": len(dev),
            "test": len(test),
            **{name: len(pairs) for name, pairs in (extra_tests | extra_devs).items()},
        },
    }
    if extra:
        info["extra"] = list(extra)
        info["extra_dropped_held_out"] = overlap
    if dialogues:
        info["dialogues"] = dialogues
    return Splits(train, dev, test, info, extra_tests, main_train_size if extra else None, extra_devs)


DIALOGUE_RULE = (
    "a dialogue corpus (tv4dialog) is punctuated by punctuate_subtitle (a space between two Chinese characters "
    "becomes '，'; a final '？', '！' or '。' after the English's last mark); whole episodes are held out, one "
    "of each series in turn, episodes shuffled with seed: the first round always, then more while they bring "
    "the slice closer to dialogue_size utterances, first <name>-test, then <name>-dev from the episodes left; "
    "held-out utterances whose Chinese is in cmn.txt are dropped; the other episodes join train, minus pairs "
    "whose Chinese equals a held-out one (any extra; compared without punctuation and spaces)"
)
"""The dialogue part of the translation split's rule, as ``data.json`` records it."""


def _hold_out_dialogues(
    name: str, corpus: Corpus, in_cmn_eng: set[str], seed: int, size: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], Corpus, dict]:
    """A dialogue corpus's test and dev slices (whole episodes), the corpus left for training, and their record."""
    test_episodes, dev_episodes = hold_out_episodes(corpus.episodes or [], seed, size)
    slices: dict[str, list[tuple[str, str]]] = {}
    dropped = 0
    for split, chosen in ((f"{name}-test", set(test_episodes)), (f"{name}-dev", set(dev_episodes))):
        pairs = list(dict.fromkeys(p for p, ep in zip(corpus.pairs, corpus.episodes or []) if ep in chosen))
        slices[split] = [p for p in pairs if bare_chinese(p[0]) not in in_cmn_eng]
        dropped += len(pairs) - len(slices[split])
    held = set(test_episodes + dev_episodes)
    rest = [(p, ep) for p, ep in zip(corpus.pairs, corpus.episodes or []) if ep not in held]
    left = replace(corpus, pairs=[p for p, _ in rest], episodes=[ep for _, ep in rest])
    record = {
        "size": size,
        f"{name}-test": {"episodes": test_episodes, "pairs": len(slices[f"{name}-test"])},
        f"{name}-dev": {"episodes": dev_episodes, "pairs": len(slices[f"{name}-dev"])},
        "held_out_dropped_in_cmn_eng": dropped,
    }
    return slices[f"{name}-test"], slices[f"{name}-dev"], left, record


def split_couplet(
    data_dir: str | Path, seed: int = SPLIT_SEED, dev_size: int = 1000, extra: Sequence[str] = ()
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


def load_splits(task: str, data_dir: str | Path | None = None, seed: int = SPLIT_SEED,
                extra: Sequence[str] = ()) -> Splits:
    """The split for a task by name, from ``data_dir``.

    ``data_dir`` defaults to [`data_home`][attention_core.data.corpora.data_home].
    """
    return SPLITTERS[get_task(task).name](data_home(data_dir), seed, extra=extra)


SPLITTERS: dict[str, Callable[..., Splits]] = {"translation": split_translation, "couplet": split_couplet}
"""Each bundled task's split of its corpora, by task name."""


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
    sources = IdArrays.of([e.src_ids for e in examples])
    targets = IdArrays.of([e.tgt_ids for e in examples])
    chunks = []
    span = batch_size * pool
    shuffled = np.asarray(order, dtype=np.int64)
    for start in range(0, len(order), span):
        chunk = shuffled[start : start + span]
        if shuffle:  # by source length, then target length; stable, as Python's sort
            chunk = chunk[np.lexsort((targets.lengths[chunk], sources.lengths[chunk]))]
        chunks += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    if shuffle:
        rng.shuffle(chunks)
    yield from make_batches(sources, targets, chunks)


def length_ratio(examples: Sequence[Example]) -> float:
    """Mean target/source length ratio (``<eos>`` counted), for placing local-m windows."""
    total_src = sum(len(e.src_ids) for e in examples)
    total_tgt = sum(len(e.tgt_ids) + 1 for e in examples)
    return total_tgt / max(1, total_src)

