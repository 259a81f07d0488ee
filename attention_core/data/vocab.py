"""Vocabularies with fixed special tokens, saved as JSON beside the model."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
"""Special tokens; their ids 0–3 match the defaults of ``ModelConfig``."""


def is_punctuation(token: str) -> bool:
    """Whether a token is one punctuation mark (Unicode category ``P*``), e.g. ``，`` or ``!``."""
    return len(token) == 1 and unicodedata.category(token).startswith("P")


class Vocab:
    """A token ↔ id mapping whose ids 0–3 are ``<pad> <unk> <bos> <eos>``.

    Args:
        tokens: Regular tokens in id order (specials are prepended and must not be included).
        min_freq: The minimum frequency used to build it (recorded for reproducibility).
        counts: How often each token (specials included, as 0) was seen when the vocabulary was
            built, aligned with the ids; ``None`` if unknown. Couplet decoding's cliché penalty
            reads them.

    Examples:
        >>> v = Vocab.build([["a", "b", "a"], ["c"]], min_freq=1)
        >>> v.encode(["a", "z"])
        [4, 1]
        >>> v.decode([4, 6, 3, 5])
        ['a', 'c']
    """

    def __init__(self, tokens: Sequence[str], min_freq: int = 1, counts: Sequence[int] | None = None) -> None:
        tokens = list(tokens)
        bad = [t for t in tokens if not isinstance(t, str) or not t]
        if bad:
            raise ValueError(f"vocabulary tokens must be non-empty strings, got {bad[0]!r} ({type(bad[0]).__name__})")
        self.itos: list[str] = list(SPECIALS) + [t for t in tokens if t not in SPECIALS]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        self.min_freq = min_freq
        if len(self.stoi) != len(self.itos):
            raise ValueError("vocabulary tokens must be unique")
        if counts is not None:
            counts = list(counts)
            if len(counts) != len(self.itos) or not all(type(c) is int and c >= 0 for c in counts):
                raise ValueError(
                    f"vocabulary counts must be {len(self.itos)} non-negative integers, one per token"
                )
        self.counts: list[int] | None = counts

    pad_id, unk_id, bos_id, eos_id = 0, 1, 2, 3

    @classmethod
    def build(
        cls, sentences: Iterable[Sequence[str]], min_freq: int = 1, max_size: int | None = None
    ) -> Vocab:
        """Count tokens and keep those seen at least ``min_freq`` times, most frequent first.

        Args:
            sentences: Tokenised sentences.
            min_freq: Minimum count to enter the vocabulary.
            max_size: Optional cap on the number of regular tokens.

        Returns:
            The vocabulary; ties in frequency are broken by the token, so it is deterministic.
        """
        counts = Counter(tok for sent in sentences for tok in sent)
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),  # a corpus's "<unk>"
                      key=lambda t: (-counts[t], t))
        kept = kept[:max_size] if max_size else kept
        return cls(kept, min_freq, [0] * len(SPECIALS) + [counts[t] for t in kept])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Map tokens to ids; unknown tokens become ``<unk>`` (id 1)."""
        return [self.stoi.get(t, self.unk_id) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Map ids to tokens, stopping at ``<eos>`` and dropping ``<pad>``/``<bos>``."""
        out = []
        for i in ids:
            if i == self.eos_id:
                break
            if i in (self.pad_id, self.bos_id):
                continue
            out.append(self.itos[i])
        return out

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON (``{"min_freq": ..., "tokens": [...], "counts": [...]}``)."""
        data: dict = {"min_freq": self.min_freq, "tokens": self.itos}
        if self.counts is not None:
            data["counts"] = self.counts
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=0), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        """Read a vocabulary written by [`save`][attention_core.data.vocab.Vocab.save].

        Raises:
            ValueError: If the file is not a vocabulary of this format: not JSON, specials not first,
                a token that is not a non-empty string, duplicates, or malformed ``min_freq``/``counts``.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not valid UTF-8 JSON ({err})") from None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list) or tuple(tokens[:4]) != SPECIALS:
            raise ValueError(f"{path}: not an Attention Lab vocabulary (specials {SPECIALS} first)")
        min_freq = data.get("min_freq", 1)
        if type(min_freq) is not int or min_freq < 0:
            raise ValueError(f"{path}: min_freq must be a non-negative integer, got {min_freq!r}")
        try:
            return cls(tokens[4:], min_freq, data.get("counts"))
        except (TypeError, ValueError) as err:
            raise ValueError(f"{path}: {err}") from None
