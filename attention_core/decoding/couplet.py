"""The rules a reader checks in a 下联, enforced while decoding.

A [`CoupletConstraint`][attention_core.decoding.couplet.CoupletConstraint] masks (and, for the cliché
penalty, lowers) the log-probabilities of every search step, for greedy and beam search alike. It
reads the prefix each row has generated so far, so it follows the beams whenever beam search
reorders them. The always-on rules are structural:

* the 下联 has exactly the 上联's length (``<eos>`` forbidden before, forced after);
* punctuation stands where the 上联 has it, and only there (the same mark when the vocabulary has it; a mark it
  lacks, such as 。, is written back by the pipeline, [`own_marks`][attention_core.decoding.couplet.own_marks]);
* never ``<unk>`` (nor ``<pad>``/``<bos>``, which search never emits).

The rules a reader judges a couplet by are switches in [`CoupletRules`][attention_core.decoding.couplet.CoupletRules]:

* **mirror** — the 上联's repetition pattern is mirrored exactly: a character repeated in the 上联
  (声声, 事事) is repeated at the same positions in the 下联, and the 下联 repeats nothing the
  上联 does not;
* **no_reuse** — no character of the 上联 appears anywhere in the 下联 (重字), except through the
  mirrored pattern of the 下联's own characters;
* **tone** — the last character's tone class (平/仄, by pypinyin): ``"classical"`` (the default) asks
  for the rule of 仄起平收, a 下联 ending on 平 after a 上联 ending on 仄, and leaves a 上联 ending
  on 平 free; ``"opposite"`` asks for the opposite class in both cases; ``"off"`` asks nothing. Human
  下联s follow the classical rule: after a 上联 ending on 平 they still end on 平 97 % of the time on
  the couplet test set (83 % on poetry-couplet, where Mandarin reads many old 入声 characters as 平),
  so ``"opposite"`` would push a model past the references;
* **cliché penalty** ``λ`` — each character ``y`` loses ``λ · o(y)`` of log-probability, where
  ``o(y) ≥ 0`` is how much the model **over-produces** it: the log of its share among the model's
  outputs over its share among human 下联s, measured by
  [`calibrate_overproduction`][attention_core.analysis.calibration.calibrate_overproduction] on training 上联s
  and stored with the model (``meta["overproduction"]``). Characters the model does not over-produce
  pay nothing. Calibration runs in rounds (the second measures what the first round's penalty
  shifts the collapse onto: 春 → 图 → 宏), so at ``λ = 1`` the model's character frequencies roughly
  match the references'. A model without that table falls back to the corpus frequency of the
  vocabulary counts, ``o(y) = max(0, log(N · p(y)))``. It is the over-production side of the
  anti-language-model objective of Li et al. 2016 (*A Diversity-Promoting Objective Function for
  Neural Conversation Models*, Eq. 4), which lowers the score of generic outputs.

When the rules leave a row no allowed token, they are relaxed one at a time, the least important
first (tone, then no new repetition, then no reuse, then mirror); the structural rules never are,
so the output is never ``<pad>`` or ``<unk>``.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
from torch import Tensor

from attention_core.data.text import repetition_pattern, tone_class
from attention_core.data.vocab import SPECIALS, Vocab, is_punctuation


@dataclass(frozen=True)
class CoupletRules:
    """Which reader's rules couplet decoding enforces (the structural rules are always on).

    Attributes:
        mirror: Mirror the 上联's repetition pattern exactly (and repeat nothing else).
        no_reuse: Never use a character of the 上联 (重字).
        tone: ``"classical"`` (end on 平 after a 上联 ending on 仄), ``"opposite"`` (end on the class
            opposite to the 上联's last character) or ``"off"``; see the module docstring.
        cliche_penalty: ``λ`` of the penalty on characters the model over-produces (0 disables it);
            see the module docstring.
    """

    mirror: bool = True
    no_reuse: bool = True
    tone: str = "classical"
    cliche_penalty: float = 1.0

    def validate(self) -> CoupletRules:
        """Raise ``ValueError`` for an unknown tone mode or a penalty that is negative, not finite or too large."""
        if self.tone not in TONE_MODES:
            raise ValueError(f"tone must be one of {', '.join(TONE_MODES)}, got {self.tone!r}")
        if not (isinstance(self.cliche_penalty, (int, float)) and math.isfinite(self.cliche_penalty)):
            raise ValueError(f"cliche_penalty must be a finite number, got {self.cliche_penalty!r}")
        if not 0 <= self.cliche_penalty <= 10:
            raise ValueError(f"cliche_penalty must be between 0 and 10, got {self.cliche_penalty}")
        return self

    def to_dict(self) -> dict:
        """The rules as a JSON-ready dict (for reports)."""
        return asdict(self)


TONE_MODES = ("classical", "opposite", "off")
"""Tone rules of the last character (see the module docstring)."""

NO_RULES = CoupletRules(mirror=False, no_reuse=False, tone="off", cliche_penalty=0.0)
"""Only the structural rules (length, punctuation, no ``<unk>``)."""

_TONES: weakref.WeakKeyDictionary[Vocab, Tensor] = weakref.WeakKeyDictionary()
_TONE_CODE = {None: 0, "平": 1, "仄": 2}


def vocab_tones(vocab: Vocab) -> Tensor:
    """Tone class of every vocabulary token: 0 unknown, 1 平, 2 仄 (``(V,)`` int8, cached per vocabulary)."""
    if vocab not in _TONES:
        _TONES[vocab] = torch.tensor([_TONE_CODE[tone_class(tok)] for tok in vocab.itos], dtype=torch.int8)
    return _TONES[vocab]


def cliche_penalties(vocab: Vocab, strength: float, overproduction: dict[str, float] | None = None) -> Tensor | None:
    """Per-token penalty ``λ · o(y)`` (``(V,)``), or ``None`` when there is nothing to penalise.

    Args:
        vocab: The target vocabulary.
        strength: ``λ``.
        overproduction: ``o(y)`` by character, from
            [`calibrate_overproduction`][attention_core.analysis.calibration.calibrate_overproduction]; ``None``
            falls back to the corpus frequency ``max(0, log(N · p(y)))`` of ``vocab.counts``.

    Examples:
        >>> v = Vocab(["春", "风", "鹤"], counts=[0, 0, 0, 0, 80, 15, 5])
        >>> [round(x, 2) for x in cliche_penalties(v, 1.0).tolist()[4:]]  # corpus frequency
        [0.88, 0.0, 0.0]
        >>> [round(x, 2) for x in cliche_penalties(v, 0.5, {"春": 2.0, "鹤": 1.0}).tolist()[4:]]
        [1.0, 0.0, 0.5]
    """
    if not strength:
        return None
    if isinstance(overproduction, dict):
        penalty = torch.zeros(len(vocab))
        for ch, value in overproduction.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if isinstance(ch, str) and ch in vocab and number and math.isfinite(value) and value > 0:
                penalty[vocab.stoi[ch]] = value
        return strength * penalty if penalty.any() else None
    if vocab.counts is None:
        return None
    counts = torch.tensor(vocab.counts, dtype=torch.float64)
    counts[: len(SPECIALS)] = 0  # specials are never penalised
    seen = int((counts > 0).sum())
    if seen == 0:
        return None
    share = counts / counts.sum()
    return (strength * torch.log(share * seen).clamp_min(0.0)).float()


def own_marks(source: Sequence[str], tokens: Sequence[str], vocab: Vocab) -> list[str]:
    """A 下联's tokens with the 上联's own punctuation mark wherever the vocabulary lacks that mark.

    The constraint keeps punctuation where the 上联 has it, writing the same mark when the vocabulary has it; for a mark
    it lacks (the couplet corpora never end a line with 。) it can only write another one (，), or a character. The
    visitor's own mark belongs there.

    Args:
        source: The 上联's tokens (characters), as typed.
        tokens: The 下联's tokens, one per 上联 position (any ``<eos>`` after them is kept).
        vocab: The model's target vocabulary.

    Examples:
        >>> own_marks(list("春风。"), list("秋雨，"), Vocab(list("春风秋雨，")))
        ['秋', '雨', '。']
    """
    out = list(tokens)
    for i, ch in enumerate(source[: len(out)]):
        if is_punctuation(ch) and ch not in vocab:
            out[i] = ch
    return out


class CoupletConstraint:
    """Rules of a 下联 given its 上联 (see the module docstring), for one batch of 上联s.

    Args:
        sources: The 上联s as lists of characters (the raw text, unknown characters included),
            one per batch row.
        vocab: The target vocabulary.
        rules: Which reader's rules to enforce; default
            [`CoupletRules()`][attention_core.decoding.couplet.CoupletRules].
        device: Device of the log-probabilities.
        overproduction: The model's over-production table for the cliché penalty (see
            [`cliche_penalties`][attention_core.decoding.couplet.cliche_penalties]).

    Examples:
        >>> v = Vocab(list("风声雨事家国天下"))
        >>> c = CoupletConstraint([list("声声")], v)
        >>> step0 = c.apply(torch.zeros(1, len(v)), 0, torch.empty(1, 0, dtype=torch.long))
        >>> bool(step0[0, v.stoi["声"]] == float("-inf"))  # no character of the 上联
        True
        >>> step1 = c.apply(torch.zeros(1, len(v)), 1, torch.tensor([[v.stoi["事"]]]))
        >>> [v.itos[i] for i in (step1[0] > float("-inf")).nonzero().flatten().tolist()]  # mirrored
        ['事']
    """

    def __init__(
        self,
        sources: Sequence[Sequence[str]],
        vocab: Vocab,
        rules: CoupletRules | None = None,
        device: torch.device | str = "cpu",
        overproduction: dict[str, float] | None = None,
    ) -> None:
        rules = (rules or CoupletRules()).validate()
        B, S = len(sources), max((len(s) for s in sources), default=0)
        V = len(vocab)
        self.rules = rules
        self.lengths = torch.tensor([len(s) for s in sources], dtype=torch.long, device=device)
        self.punct = torch.zeros(B, S + 1, dtype=torch.bool, device=device)  # position holds punctuation
        self.forced = torch.full((B, S + 1), -1, dtype=torch.long, device=device)  # punctuation mark
        self.first = torch.full((B, S + 1), -1, dtype=torch.long, device=device)  # earlier equal position
        self.last = torch.full((B,), -1, dtype=torch.long, device=device)  # last non-punctuation position
        self.tone = torch.zeros(B, dtype=torch.int8, device=device)  # wanted tone code of that position
        self.banned = torch.zeros(B, V, dtype=torch.bool, device=device)  # the 上联's characters
        for b, src in enumerate(sources):
            pattern = repetition_pattern(src)
            for i, ch in enumerate(src):
                if is_punctuation(ch):
                    self.punct[b, i] = True
                    self.forced[b, i] = vocab.stoi.get(ch, -1)
                    continue
                self.first[b, i] = pattern[i]
                self.last[b] = i
                if ch in vocab:
                    self.banned[b, vocab.stoi[ch]] = True
            if self.last[b] >= 0 and rules.tone != "off":
                ends = tone_class(src[int(self.last[b])])
                wanted = {"平": "仄", "仄": "平"}.get(ends or "") if rules.tone == "opposite" else None
                wanted = "平" if rules.tone == "classical" and ends == "仄" else wanted
                self.tone[b] = _TONE_CODE[wanted]
        punct_ids = [i for i, tok in enumerate(vocab.itos) if is_punctuation(tok)]
        self.punct_vocab = torch.zeros(V, dtype=torch.bool, device=device)
        self.punct_vocab[punct_ids] = True
        self.word_vocab = ~self.punct_vocab
        self.word_vocab[[vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id]] = False
        self.tones = vocab_tones(vocab).to(device)  # (V,)
        penalty = cliche_penalties(vocab, rules.cliche_penalty, overproduction)
        self.penalty = None if penalty is None else penalty.to(device)  # (V,)
        self.eos_id = vocab.eos_id

    def expand(self, index: Tensor) -> CoupletConstraint:
        """The constraint for rows ``index`` of this batch (e.g. each sentence repeated into beams)."""
        new = object.__new__(CoupletConstraint)
        new.__dict__.update(self.__dict__)
        for name in ("lengths", "punct", "forced", "first", "last", "tone", "banned"):
            setattr(new, name, getattr(self, name).index_select(0, index))
        return new

    @staticmethod
    def _narrow(allowed: Tensor, rule: Tensor, where: Tensor) -> Tensor:
        """``allowed & rule`` on the rows ``where`` that keep at least one token; other rows unchanged."""
        narrowed = allowed & rule
        keep = where & narrowed.any(dim=1)  # (B,)
        return torch.where(keep.unsqueeze(1), narrowed, allowed)

    def allowed(self, t: int, prefix: Tensor) -> Tensor:
        """The tokens each row may emit at output position ``t``.

        Args:
            t: Output position (0-based).
            prefix: Tokens each row has emitted so far ``(B, t)``.

        Returns:
            A boolean mask ``(B, V)`` with at least one token per row.
        """
        B = prefix.size(0)
        col = min(t, self.punct.size(1) - 1)
        punct, forced, first = self.punct[:, col], self.forced[:, col], self.first[:, col]  # (B,)
        rows = torch.arange(B, device=prefix.device)
        allowed = torch.where(punct.unsqueeze(1), self.punct_vocab, self.word_vocab).clone()  # (B, V)
        has_forced = forced >= 0
        if has_forced.any():
            only = torch.zeros_like(allowed)
            only[rows[has_forced], forced[has_forced]] = True
            allowed = torch.where(has_forced.unsqueeze(1), only, allowed)
        none_left = ~allowed.any(dim=1)  # punctuation the vocabulary lacks: fall back to characters
        allowed[none_left] = self.word_vocab
        word = (~punct) & (t < self.lengths)  # (B,) rows writing a character at t
        if self.rules.mirror and t > 0:
            repeats = word & (first >= 0) & (first < t)
            if repeats.any():
                earlier = prefix[rows, first.clamp(0, t - 1)]  # (B,) the token to repeat
                same = torch.zeros_like(allowed)
                same[rows, earlier] = True
                allowed = self._narrow(allowed, same, repeats)
        if self.rules.no_reuse:
            allowed = self._narrow(allowed, ~self.banned, word)
        if self.rules.mirror and t > 0:
            fresh = word & (first == t)  # first occurrence in the 上联: nothing already written
            if fresh.any():
                written = torch.zeros_like(allowed).scatter_(1, prefix, True)
                allowed = self._narrow(allowed, ~written, fresh)
        if self.rules.tone != "off":
            at_end = word & (self.last == t) & (self.tone > 0)
            if at_end.any():
                allowed = self._narrow(allowed, self.tones.unsqueeze(0) == self.tone.unsqueeze(1), at_end)
        ended = t >= self.lengths  # (B,)
        eos_only = torch.zeros_like(allowed)
        eos_only[:, self.eos_id] = True
        return torch.where(ended.unsqueeze(1), eos_only, allowed)

    def apply(self, logprobs: Tensor, t: int, prefix: Tensor) -> Tensor:
        """Mask the log-probabilities ``(B, V)`` of output position ``t`` and apply the cliché penalty.

        Args:
            logprobs: Log-probabilities ``(B, V)``.
            t: Output position.
            prefix: Tokens each row has emitted so far ``(B, t)``.
        """
        if self.penalty is not None:
            logprobs = logprobs - self.penalty
        return logprobs.masked_fill(~self.allowed(t, prefix), float("-inf"))
