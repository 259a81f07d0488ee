"""English subword pieces: a byte-pair-encoding model learned from the training split.

A word vocabulary must map every rare word to ``<unk>``; subword pieces spell any word from
pieces seen in training (Sennrich et al., 2016). The model is Hugging Face ``tokenizers``' BPE,
trained on the *words* of [`tokenize_english`][attention_core.data.text.tokenize_english], so
lower-casing and clitic splitting stay exactly as for word models. A word that is not one piece is
spelled as a first piece followed by pieces marked with [`CONTINUE`][attention_core.data.subword.CONTINUE]
(WordPiece's ``##`` notation): ``unbelievable`` → ``un ##believ ##able``.

The model is saved as ``subwords.json`` (the ``tokenizers`` format) beside the vocabularies, so a
model folder stays self-contained for offline loading and the Hub.

Examples:
    >>> sw = Subwords.train([["a", "cat"], ["the", "cats"], ["cat"]], vocab_size=40)
    >>> pieces = sw.encode(["cats", "cat"])
    >>> merge_pieces(pieces)
    ['cats', 'cat']
    >>> word_spans(["un", "##believ", "##able", "!"])
    [('unbelievable', [0, 1, 2]), ('!', [3])]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from torch import Tensor

from attention_core.data.vocab import SPECIALS, UNK

CONTINUE = "##"
"""Prefix of a piece that continues the previous piece's word."""


def word_spans(pieces: Sequence[str]) -> list[tuple[str, list[int]]]:
    """Group pieces into words: each word with the indices of its pieces.

    A piece starting with [`CONTINUE`][attention_core.data.subword.CONTINUE] joins the word before it
    (or starts one, if it comes first); special tokens such as ``<eos>`` stay words of their own.

    Args:
        pieces: Subword pieces (or plain words, which come back one per span).

    Returns:
        ``[(word, [piece indices]), ...]`` in order.
    """
    spans: list[tuple[str, list[int]]] = []
    for i, piece in enumerate(pieces):
        if piece.startswith(CONTINUE) and len(piece) > len(CONTINUE) and spans and spans[-1][0] not in SPECIALS:
            word, index = spans[-1]
            spans[-1] = (word + piece[len(CONTINUE):], index + [i])
        else:
            spans.append((piece[len(CONTINUE):] if piece.startswith(CONTINUE) and len(piece) > len(CONTINUE)
                          else piece, [i]))
    return spans


def word_rows(labels: Sequence[str], weights: Tensor) -> tuple[list[str], Tensor]:
    """Merge the rows of subword pieces into word rows, each the mean of its pieces' rows.

    Args:
        labels: Row labels (pieces, or words, with ``<eos>`` last when it was produced).
        weights: Maps whose second-to-last dimension is the rows, ``(..., T, S)`` (one attention
            matrix, or every layer and head of a Transformer).

    Returns:
        ``(word labels, weights (..., W, S))``; each merged row is still a distribution. Whole-word
        rows come back unchanged.
    """
    spans = word_spans(labels)
    if len(spans) == len(labels):
        return list(labels), weights
    rows = [weights[..., index, :].mean(dim=-2) for _, index in spans]
    return [word for word, _ in spans], torch.stack(rows, dim=-2)


def merge_pieces(pieces: Sequence[str]) -> list[str]:
    """The words that subword pieces spell (see [`word_spans`][attention_core.data.subword.word_spans])."""
    return [word for word, _ in word_spans(pieces)]


def _complete_alphabet(tokenizer: Tokenizer) -> Tokenizer:
    """Give every character seen in training both forms, word-initial ``c`` and continuing ``##c``.

    The trainer only adds the forms it saw (a ``w`` that only ever started words has no ``##w``),
    so a new word such as ``aw`` would contain ``<unk>``; with both forms, any word over the
    training alphabet can be spelled.
    """
    data = json.loads(tokenizer.to_str())
    vocab: dict[str, int] = data["model"]["vocab"]
    chars = {tok[len(CONTINUE):] if tok.startswith(CONTINUE) else tok for tok in vocab if tok not in SPECIALS}
    chars = {c for c in chars if len(c) == 1}
    for c in sorted(chars):
        for form in (c, CONTINUE + c):
            vocab.setdefault(form, len(vocab))
    return Tokenizer.from_str(json.dumps(data))


class Subwords:
    """A trained BPE model over English words.

    Args:
        tokenizer: A ``tokenizers.Tokenizer`` with a BPE model using the ``##`` continuation prefix.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @classmethod
    def train(cls, sentences: Iterable[Sequence[str]], vocab_size: int, min_frequency: int = 2) -> Subwords:
        """Learn merges from tokenised sentences.

        Args:
            sentences: Sentences as word lists (``tokenize_english`` output).
            vocab_size: Target number of pieces, specials and single characters included; the
                alphabet is then completed so that every character has its word-initial and its
                continuing form, which can add a few pieces.
            min_frequency: A pair must occur this often to be merged.

        Returns:
            The model. Training is not bit-for-bit repeatable across processes: ``tokenizers`` breaks ties
            between equally frequent pairs in hash order, so a run saves its model (``subwords.json``) and a
            resumed run reads it back rather than learning it again.
        """
        if vocab_size < len(SPECIALS) + 1:
            raise ValueError(f"subword vocab_size must be more than {len(SPECIALS)}, got {vocab_size}")
        tokenizer = Tokenizer(models.BPE(unk_token=UNK, continuing_subword_prefix=CONTINUE))
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=list(SPECIALS),
            continuing_subword_prefix=CONTINUE,
            show_progress=False,
        )
        tokenizer.train_from_iterator((" ".join(s) for s in sentences), trainer)
        return cls(_complete_alphabet(tokenizer))

    def encode(self, words: Sequence[str]) -> list[str]:
        """Split words into pieces (each word separately; a character never seen in training is ``<unk>``)."""
        if not words:
            return []
        return self.tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False).tokens

    def save(self, path: str | Path) -> None:
        """Write the model in the ``tokenizers`` JSON format."""
        self.tokenizer.save(str(path))

    @classmethod
    def load(cls, path: str | Path) -> Subwords:
        """Read a model written by [`save`][attention_core.data.subword.Subwords.save].

        Raises:
            ValueError: If the file is not a ``tokenizers`` BPE model with the ``##`` continuation prefix.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            tokenizer = Tokenizer.from_str(json.dumps(data))
        except BaseException as err:  # malformed JSON, or a Rust panic (not an Exception) in tokenizers
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise
            reason = str(err).splitlines()[0] if str(err) else repr(err)
            raise ValueError(f"{path}: not a tokenizers model ({reason})") from None
        model = tokenizer.model
        if not isinstance(model, models.BPE) or model.continuing_subword_prefix != CONTINUE:
            raise ValueError(f"{path}: expected a BPE model with continuing_subword_prefix {CONTINUE!r}")
        extras = [k for k in ("normalizer", "post_processor", "decoder", "truncation", "padding") if data.get(k)]
        if extras or model.unk_token != UNK or not isinstance(tokenizer.pre_tokenizer, pre_tokenizers.WhitespaceSplit):
            what = ", ".join(extras) or "its unk token or pre-tokenizer"
            raise ValueError(f"{path}: not a subword model written by Attention Lab ({what} differ)")
        return cls(tokenizer)

    def __len__(self) -> int:
        return self.tokenizer.get_vocab_size()
