"""One encoded corpus per task: its pieces, vocabularies and token ids, made once and read by every variant's run.

The variants of a task's zoo should differ only in their attention. Two runs that each learned their own BPE
model would not: ``tokenizers`` breaks ties between equally frequent pairs in hash order, so two processes learn
different pieces from the same sentences, and with them different vocabularies. So the first run of a task
encodes its training split — subword model, source and target vocabularies, every pair tokenised — into a folder
under the runs folder (``<runs>/encoded/<task>-<key>``), and every later run with the same data and settings
reads it back instead: the same pieces, the same ids, and no tokenising (jieba, BPE) at its start.

The folder is keyed by what it depends on (``corpus_key``: the task, the training pairs' text, the vocabulary
settings), written whole into a temporary folder and renamed into place (a run killed while writing leaves no
half folder; two runs that race keep the first), and checked when read: its manifest holds the SHA-256 of every
file, and a file that does not match is an error that names it, never a quiet re-encoding with other pieces.

A run that resumes keeps the pieces it began with (its ``subwords.json``): when those are not the encoded
corpus's, it encodes its own split in memory, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from attention_core.data.subword import Subwords
from attention_core.data.tasks import Example, Task, encode_pairs
from attention_core.data.vocab import Vocab

FOLDER = "encoded"
"""The encoded corpora's folder inside the runs folder (``attention_core.data.corpora.runs_home``)."""
MANIFEST = "manifest.json"
EXAMPLES = "examples.jsonl"
FORMAT = 1
"""Bumped when the folder's layout changes: an older folder is then encoded anew under a new key."""


class EncodedCorpusError(ValueError):
    """An encoded corpus folder is damaged: a file is missing or its checksum differs from the manifest."""


@dataclass(frozen=True)
class VocabularySettings:
    """What the pieces and vocabularies depend on besides the data.

    Attributes:
        subword_vocab: BPE pieces on the target side (``0``: whole tokens).
        min_freq: Minimum count of a whole token to enter a vocabulary.
        max_len: Pairs with a side longer than this (in tokens) are dropped (``None``: none are).
        shared: One vocabulary for both sides (couplets).
    """

    subword_vocab: int
    min_freq: int
    max_len: int | None
    shared: bool


@dataclass
class EncodedCorpus:
    """A task's training split, encoded.

    Attributes:
        task: The task, with its subword model when it has one.
        src_vocab: Source vocabulary.
        tgt_vocab: Target vocabulary (the same object as ``src_vocab`` when shared).
        own: The task's own corpus, encoded (pairs too long or empty dropped).
        extra: The extra corpora that follow it in the split, encoded.
        key: The folder's key (``corpus_key``).
    """

    task: Task
    src_vocab: Vocab
    tgt_vocab: Vocab
    own: list[Example]
    extra: list[Example]
    key: str


def build_vocabs(
    task: Task, train_pairs: Sequence[tuple[str, str]], min_freq: int, shared: bool
) -> tuple[Vocab, Vocab]:
    """The source and target vocabularies of a training split (with their token counts).

    Args:
        task: The task (its tokenisers).
        train_pairs: Training text pairs.
        min_freq: Minimum count to enter a vocabulary; a subword side (``task.subwords``,
            ``task.src_subwords``) keeps every piece.
        shared: One vocabulary for both sides (couplets), counted over both.

    Returns:
        ``(src_vocab, tgt_vocab)``; the same object twice when ``shared``.
    """
    if shared:
        both = (tok for s, t in train_pairs for tok in (task.tokenize_src(s), task.tokenize_tgt(t)))
        vocab = Vocab.build(both, min_freq)
        return vocab, vocab
    return (
        Vocab.build((task.tokenize_src(s) for s, _ in train_pairs), 1 if task.src_subwords else min_freq),
        Vocab.build((task.tokenize_tgt(t) for _, t in train_pairs), 1 if task.subwords else min_freq),
    )


def corpus_key(task: Task, pairs: Sequence[tuple[str, str]], main_size: int, settings: VocabularySettings) -> str:
    """A short hash of everything an encoded corpus depends on: task, settings, the split's sizes and text."""
    digest = hashlib.sha256(json.dumps([FORMAT, task.name, vars(settings), main_size, len(pairs)]).encode())
    for src, tgt in pairs:
        digest.update(f"{src}\t{tgt}\n".encode())
    return digest.hexdigest()[:16]


def encode_corpus(task: Task, pairs: Sequence[tuple[str, str]], main_size: int, settings: VocabularySettings,
                  subwords: Subwords | None = None) -> EncodedCorpus:
    """Learn the pieces (unless given) and vocabularies of a training split, and encode it.

    Args:
        task: The task (its tokenisers).
        pairs: The training split: the task's own pairs first, then the extra corpora's.
        main_size: How many of ``pairs`` are the task's own.
        settings: The vocabulary settings.
        subwords: A subword model to use instead of learning one (a resumed run's).
    """
    if settings.subword_vocab:
        if subwords is None:
            subwords = Subwords.train((task.tokenize_tgt(t) for _, t in pairs), settings.subword_vocab)
        task = task.with_subwords(subwords)
    src_vocab, tgt_vocab = build_vocabs(task, pairs, settings.min_freq, settings.shared)
    own = encode_pairs(pairs[:main_size], task, src_vocab, tgt_vocab, settings.max_len)
    extra = encode_pairs(pairs[main_size:], task, src_vocab, tgt_vocab, settings.max_len)
    return EncodedCorpus(task, src_vocab, tgt_vocab, own, extra, corpus_key(task, pairs, main_size, settings))


def load_or_encode(home: str | Path, task: Task, pairs: Sequence[tuple[str, str]], main_size: int,
                   settings: VocabularySettings, subwords: Subwords | None = None,
                   seed: Subwords | None = None) -> tuple[EncodedCorpus, str]:
    """The task's encoded corpus from ``home``, encoding and saving it there first when it is not there yet.

    Args:
        home: The folder of encoded corpora (``<runs>/encoded``).
        task: The task (a bundled one: a task of your own has its own pieces per run).
        pairs: The training split (own pairs first).
        main_size: How many of ``pairs`` are the task's own.
        settings: The vocabulary settings.
        subwords: The pieces a resumed run began with; when the saved corpus has others, this run's split is
            encoded with these, in memory only.
        seed: The pieces to make the corpus with when it is not saved yet, instead of learning new ones (the
            shipped default model's, so that the other variants share its pieces and vocabularies). A corpus
            already saved keeps its own.

    Returns:
        ``(corpus, how)``: ``how`` is ``read`` (from the folder), ``written`` (encoded and saved) or ``own pieces``
        (encoded in memory with ``subwords``).

    Raises:
        EncodedCorpusError: If the saved folder is damaged.
    """
    key = corpus_key(task, pairs, main_size, settings)
    folder = Path(home) / f"{task.name}-{key}"
    if (folder / MANIFEST).is_file():
        corpus = read(folder, task)
        if subwords is None or corpus.task.subwords is None or _same_pieces(subwords, corpus.task.subwords):
            return corpus, "read"
        return encode_corpus(task, pairs, main_size, settings, subwords), "own pieces"
    corpus = encode_corpus(task, pairs, main_size, settings, subwords or seed)
    if not write(folder, corpus, settings):  # another process saved it first: use theirs, as every run will
        return load_or_encode(home, task, pairs, main_size, settings, subwords)
    return corpus, "written"


def _same_pieces(a: Subwords, b: Subwords) -> bool:
    return a.tokenizer.to_str() == b.tokenizer.to_str()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write(folder: str | Path, corpus: EncodedCorpus, settings: VocabularySettings) -> bool:
    """Save an encoded corpus as ``folder``, whole or not at all.

    The files go to a temporary folder beside it, renamed into place at the end; when another process has put
    the folder there meanwhile, its folder is kept and this one dropped.

    Returns:
        Whether this corpus is the one saved (``False``: another process's was there first).
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        files = ["src_vocab.json", "tgt_vocab.json", EXAMPLES]
        corpus.src_vocab.save(tmp / "src_vocab.json")
        corpus.tgt_vocab.save(tmp / "tgt_vocab.json")
        if corpus.task.subwords is not None:
            corpus.task.subwords.save(tmp / "subwords.json")
            files.append("subwords.json")
        with (tmp / EXAMPLES).open("w", encoding="utf-8") as f:
            for example in corpus.own + corpus.extra:  # the ids follow from the vocabularies
                f.write(json.dumps([example.src, example.tgt], ensure_ascii=False) + "\n")
        manifest = {"format": FORMAT, "task": corpus.task.name, "key": corpus.key, "settings": vars(settings),
                    "own": len(corpus.own), "extra": len(corpus.extra),
                    "files": {name: _sha256(tmp / name) for name in files}}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / MANIFEST).is_file():
                raise
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read(folder: str | Path, task: Task) -> EncodedCorpus:
    """Read an encoded corpus written by [`write`][attention_core.data.encoded.write], checking every file.

    Args:
        folder: The corpus folder.
        task: The task it encodes (its tokenisers; the saved pieces are put on it).

    Raises:
        EncodedCorpusError: If a file is missing or differs from its checksum in the manifest.
    """
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        damaged = [name for name, digest in manifest["files"].items() if _sha256(folder / name) != digest]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise EncodedCorpusError(f"{folder} is not a whole encoded corpus ({err}); delete it to encode the corpus "
                                 "again") from None
    if damaged:
        raise EncodedCorpusError(f"{folder / damaged[0]} differs from its checksum in {folder / MANIFEST}: the encoded "
                                 f"corpus is damaged; delete {folder} to encode the corpus again (its pieces will "
                                 "differ from those of the runs already trained on it)")
    if "subwords.json" in manifest["files"]:
        task = task.with_subwords(Subwords.load(folder / "subwords.json"))
    src_vocab = Vocab.load(folder / "src_vocab.json")
    shared = manifest["settings"]["shared"]
    tgt_vocab = src_vocab if shared else Vocab.load(folder / "tgt_vocab.json")
    examples = []
    with (folder / EXAMPLES).open(encoding="utf-8") as f:
        for line in f:
            src, tgt = json.loads(line)
            examples.append(Example(src, tgt, src_vocab.encode(src), tgt_vocab.encode(tgt)))
    own = manifest["own"]
    return EncodedCorpus(task, src_vocab, tgt_vocab, examples[:own], examples[own:], manifest["key"])
