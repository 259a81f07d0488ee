"""Is attention an alignment? Human word alignments, attention turned into links, and the alignment error rate.

Luong et al. (2015, §5.4, Table 6) scored their attention models against human word alignments with the
alignment error rate of Och & Ney (2003). Given predicted links ``A``, sure gold links ``S`` and possible gold
links ``P ⊇ S`` (pairs ``(source word, target word)``)::

    precision = |A ∩ P| / |A|      recall = |A ∩ S| / |S|      AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

summed over the sentences of a test set before dividing (a corpus-level score).

The gold sets segment Chinese into words and tokenise English their own way, while our models read characters and
write subword pieces. [`force_decode`][attention_core.analysis.alignment.force_decode] feeds the gold English to a model
(teacher forcing) and [`pool`][attention_core.analysis.alignment.pool] turns the attention over its pieces and
characters into one row per gold English token and one column per gold Chinese word: a word's row is the mean of its
pieces' rows, a word's column the sum of its characters' columns (attention is a distribution over characters, so a word
receives the mass of its characters). Links are read off the pooled matrix by a rule:
[`argmax_links`][attention_core.analysis.alignment.argmax_links] (Luong's: the most-attended source word of each target
word) or [`threshold_links`][attention_core.analysis.alignment.threshold_links] (every pair above a weight ``τ``).
[`diagonal_links`][attention_core.analysis.alignment.diagonal_links] is the trivial baseline that needs no model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from attention_core.data.batch import make_batch
from attention_core.decoding.translator import Translator
from attention_core.model.transformer import Transformer

Link = tuple[int, int]
"""A link ``(source word index, target word index)``, 0-based."""

PTB_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
"""Penn-Treebank escapes in the DeNero English, and the characters they stand for."""

GOLD_SETS = ("denero", "tsinghua")
"""The gold sets in ``align-zh-en/``: DeNero & Macherey (150 sentences), Tsinghua (450)."""


@dataclass(frozen=True)
class Gold:
    """One human-aligned sentence pair.

    Attributes:
        source: Chinese words, as segmented in the gold set.
        target: English tokens, as tokenised in the gold set.
        sure: Sure links ``(source, target)``, 0-based.
        possible: Possible links, sure ones included (``P ⊇ S``).
    """

    source: tuple[str, ...]
    target: tuple[str, ...]
    sure: frozenset[Link]
    possible: frozenset[Link]


def parse_links(line: str, one_based: bool, possible_mark: str) -> tuple[frozenset[Link], frozenset[Link]]:
    """Read one line of links into ``(sure, possible)``; possible includes sure.

    Args:
        line: Links separated by spaces: ``i-j`` (sure) and, for possible links, ``ipj`` (Tsinghua,
            ``possible_mark="p"``) or ``i-j-P`` (DeNero, ``possible_mark="-P"``). Source index first.
        one_based: Whether indices start at 1 (Tsinghua) rather than 0 (DeNero).
        possible_mark: How a possible link is written.

    Raises:
        ValueError: For a link that is neither form.

    Examples:
        >>> sure, possible = parse_links("1-1 2p3", True, "p")
        >>> sorted(sure), sorted(possible)
        ([(0, 0)], [(0, 0), (1, 2)])
        >>> sorted(parse_links("0-0 3-4-P", False, "-P")[1])
        [(0, 0), (3, 4)]
    """
    sure, possible = set(), set()
    shift = 1 if one_based else 0
    for item in line.split():
        is_possible = False
        if possible_mark == "p" and "p" in item:
            i, j = item.split("p")
            is_possible = True
        elif possible_mark == "-P" and item.endswith("-P"):
            i, j = item[:-2].split("-")
            is_possible = True
        else:
            i, j = item.split("-")
        link = (int(i) - shift, int(j) - shift)
        if min(link) < 0:
            raise ValueError(f"link {item!r} has a negative index")
        possible.add(link)
        if not is_possible:
            sure.add(link)
    return frozenset(sure), frozenset(possible)


def _check(gold: Gold, where: str) -> Gold:
    for i, j in gold.possible:
        if i >= len(gold.source) or j >= len(gold.target):
            raise ValueError(f"{where}: link ({i}, {j}) is outside a {len(gold.source)} × {len(gold.target)} pair")
    return gold


def read_tsinghua(folder: str | Path) -> list[Gold]:
    """The Tsinghua set: ``zhen.src-tgt`` (``Chinese words ||| English tokens``) and ``zhen.gold`` (1-based)."""
    folder = Path(folder)
    pairs = (folder / "zhen.src-tgt").read_text(encoding="utf-8").splitlines()
    links = (folder / "zhen.gold").read_text(encoding="utf-8").splitlines()
    if len(pairs) != len(links):
        raise ValueError(f"{folder}: {len(pairs)} sentence pairs but {len(links)} link lines")
    out = []
    for n, (pair, line) in enumerate(zip(pairs, links), 1):
        zh, en = pair.split(" ||| ")
        sure, possible = parse_links(line, one_based=True, possible_mark="p")
        out.append(_check(Gold(tuple(zh.split()), tuple(en.split()), sure, possible), f"{folder} line {n}"))
    return out


def read_denero(folder: str | Path) -> list[Gold]:
    """The DeNero & Macherey set: ``train.zh``, ``train.en`` (PTB tokens) and ``train.align`` (0-based)."""
    folder = Path(folder)
    zh, en, links = ((folder / f"train.{ext}").read_text(encoding="utf-8").splitlines()
                     for ext in ("zh", "en", "align"))
    if not len(zh) == len(en) == len(links):
        raise ValueError(f"{folder}: {len(zh)} Chinese, {len(en)} English and {len(links)} link lines")
    out = []
    for n, (z, e, line) in enumerate(zip(zh, en, links), 1):
        sure, possible = parse_links(line, one_based=False, possible_mark="-P")
        out.append(_check(Gold(tuple(z.split()), tuple(e.split()), sure, possible), f"{folder} line {n}"))
    return out


def read_gold(data_dir: str | Path, name: str) -> list[Gold]:
    """A gold set by name (``denero`` or ``tsinghua``) from ``data_dir/align-zh-en/``."""
    folder = Path(data_dir) / "align-zh-en" / name
    if name == "denero":
        return read_denero(folder)
    if name == "tsinghua":
        return read_tsinghua(folder)
    raise ValueError(f"unknown gold set {name!r}; valid: {', '.join(GOLD_SETS)}")


@dataclass
class Counts:
    """Link counts of one or more sentences; they add up over a test set.

    Attributes:
        predicted: ``|A|``.
        sure: ``|S|``.
        hit_sure: ``|A ∩ S|``.
        hit_possible: ``|A ∩ P|``.
    """

    predicted: int = 0
    sure: int = 0
    hit_sure: int = 0
    hit_possible: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.predicted + other.predicted, self.sure + other.sure, self.hit_sure + other.hit_sure,
                      self.hit_possible + other.hit_possible)

    def scores(self) -> dict[str, float]:
        """``precision``, ``recall`` and ``aer`` (Och & Ney 2003), as fractions."""
        return {
            "precision": self.hit_possible / self.predicted if self.predicted else 0.0,
            "recall": self.hit_sure / self.sure if self.sure else 0.0,
            "aer": 1.0 - (self.hit_sure + self.hit_possible) / max(1, self.predicted + self.sure),
        }


def count(predicted: set[Link] | frozenset[Link], gold: Gold) -> Counts:
    """The link counts of one sentence."""
    return Counts(len(predicted), len(gold.sure), len(predicted & gold.sure), len(predicted & gold.possible))


def evaluate_links(predicted: Sequence[set[Link]], gold: Sequence[Gold], samples: int = 1000,
                   seed: int = 12345) -> dict[str, float]:
    """Corpus-level AER, precision and recall, with 95 % bootstrap intervals over sentences.

    Args:
        predicted: One set of links per sentence.
        gold: The gold sentences, aligned with ``predicted``.
        samples: Bootstrap samples (sentences drawn with replacement); 0 for none.
        seed: Seed of the resampling.

    Returns:
        ``aer``, ``precision``, ``recall`` and, with samples, ``aer_low`` / ``aer_high`` (and the same for
        precision and recall): the 2.5th and 97.5th percentiles.

    Examples:
        >>> g = Gold(("a", "b"), ("x", "y"), frozenset({(0, 0)}), frozenset({(0, 0), (1, 1)}))
        >>> evaluate_links([{(0, 0), (1, 1)}], [g], samples=0)
        {'aer': 0.0, 'precision': 1.0, 'recall': 1.0}
    """
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} gold sentences")
    per = [count(set(p), g) for p, g in zip(predicted, gold)]
    total = sum(per, Counts())
    result = {k: total.scores()[k] for k in ("aer", "precision", "recall")}
    if samples:
        rng = random.Random(seed)
        draws = [sum((per[rng.randrange(len(per))] for _ in per), Counts()).scores() for _ in range(samples)]
        for key in ("aer", "precision", "recall"):
            values = sorted(d[key] for d in draws)
            result[f"{key}_low"] = values[int(0.025 * samples)]
            result[f"{key}_high"] = values[min(samples - 1, int(0.975 * samples))]
    return result


def pool(weights: Tensor, target_groups: Sequence[Sequence[int]], source_groups: Sequence[Sequence[int]]) -> Tensor:
    """Pool an attention matrix over pieces and characters into one over gold words.

    Args:
        weights: ``(..., T, S)``: one row per target piece, one column per source character.
        target_groups: For each gold target token, the rows of its pieces (may be empty).
        source_groups: For each gold source word, the columns of its characters (may be empty).

    Returns:
        ``(..., n_target_words, n_source_words)``: a word's row is the mean of its pieces' rows, a word's column
        the sum of its characters' columns; an empty group gives zeros.

    Examples:
        >>> w = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
        >>> pool(w, [[0, 1]], [[0, 1], [2]]).tolist()
        [[0.5, 0.5]]
    """
    *lead, T, S = weights.shape
    rows = torch.zeros(*lead, len(target_groups), S, dtype=weights.dtype)
    for j, group in enumerate(target_groups):
        if group:
            rows[..., j, :] = weights[..., list(group), :].mean(dim=-2)
    out = torch.zeros(*lead, len(target_groups), len(source_groups), dtype=weights.dtype)
    for i, group in enumerate(source_groups):
        if group:
            out[..., i] = rows[..., list(group)].sum(dim=-1)
    return out


def argmax_links(matrix: Tensor) -> set[Link]:
    """Luong's rule: each target word links to its most-attended source word (rows of zeros link nowhere).

    Args:
        matrix: ``(n_target_words, n_source_words)``.

    Examples:
        >>> sorted(argmax_links(torch.tensor([[0.1, 0.9], [0.6, 0.4], [0.0, 0.0]])))
        [(0, 1), (1, 0)]
    """
    return {(int(row.argmax()), j) for j, row in enumerate(matrix) if row.sum() > 0}


def threshold_links(matrix: Tensor, tau: float) -> set[Link]:
    """Every pair whose pooled weight reaches ``tau`` (a target word may get several links, or none).

    Examples:
        >>> sorted(threshold_links(torch.tensor([[0.5, 0.45], [0.2, 0.1]]), 0.4))
        [(0, 0), (1, 0)]
    """
    return {(i, j) for j, i in (matrix >= tau).nonzero().tolist()}


def diagonal_links(n_source: int, n_target: int) -> set[Link]:
    """The trivial baseline: target word ``j`` links to the source word at the same relative position.

    Examples:
        >>> sorted(diagonal_links(2, 4))
        [(0, 0), (0, 1), (1, 2), (1, 3)]
    """
    if not n_source:
        return set()
    return {(min(n_source - 1, int((j + 0.5) * n_source / n_target)), j) for j in range(n_target)}


def split_words(words: Sequence[str], tokenize: Callable[[str], list[str]]) -> tuple[list[str], list[list[int]]]:
    """Tokenise each gold word as a model reads or writes it.

    Returns:
        ``(tokens, groups)``: all tokens in order, and for each word the positions of its tokens (may be empty).

    Examples:
        >>> split_words(["喜欢", "猫"], list)
        (['喜', '欢', '猫'], [[0, 1], [2]])
    """
    tokens: list[str] = []
    groups = []
    for word in words:
        pieces = tokenize(word)
        groups.append(list(range(len(tokens), len(tokens) + len(pieces))))
        tokens += pieces
    return tokens, groups


@dataclass
class Forced:
    """A gold pair fed through a model.

    Attributes:
        weights: The pooled attention, ``(n_target_words, n_source_words)``; for a Transformer every layer and
            head, ``(L, h, n_target_words, n_source_words)``.
        unknown_characters: Source characters outside the model's vocabulary (read as ``<unk>``).
    """

    weights: Tensor
    unknown_characters: int


@torch.inference_mode()
def force_decode(translator: Translator, gold: Gold) -> Forced:
    """Feed a gold pair to a translation model (teacher forcing) and pool its attention onto the gold words.

    Each gold Chinese word is tokenised as the model reads text (normalised characters; Latin and digit runs
    stay together) and each gold English token as the model writes it (lower-cased words, then its subword
    pieces, if any), so the groups of characters and pieces per gold word are exact.

    Args:
        translator: A translation model with attention.
        gold: The pair.

    Returns:
        The pooled attention (see [`Forced`][attention_core.analysis.alignment.Forced]).
    """
    task, model = translator.task, translator.model
    source, source_groups = split_words(gold.source, task.tokenize_src)
    # a subword task's tokeniser gives pieces
    target, target_groups = split_words(gold.target, lambda t: task.tokenize_tgt(PTB_BRACKETS.get(t, t)))
    if not source or not target:
        raise ValueError(f"nothing to align in {gold.source!r} ||| {gold.target!r}")
    batch = make_batch([(translator.src_vocab.encode(source), translator.tgt_vocab.encode(target))])
    batch = batch.to(translator.device)
    model.eval()
    if isinstance(model, Transformer):
        weights = model.attention_maps(batch.src, batch.src_lengths, batch.tgt_in).cross[0]  # (L, h, T+1, S)
    else:
        weights = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)[1][0]  # (T+1, S)
    weights = weights[..., : len(target), :].float().cpu()  # the rows that predict the pieces (not <eos>)
    unknown = sum(tok not in translator.src_vocab for tok in source)
    return Forced(pool(weights, target_groups, source_groups), unknown)


def grow_diag_final_and(forward: set[Link], reverse: set[Link]) -> set[Link]:
    """Symmetrise two directional alignments (Koehn et al. 2003), as statistical aligners are used.

    Start from the intersection; add neighbouring links (diagonals included) of the union that align a word
    not yet aligned, until nothing changes; then add links of either direction whose two words are both
    still unaligned.

    Args:
        forward: Links of the source → target model, ``(source, target)``.
        reverse: Links of the target → source model, in the same ``(source, target)`` order.

    Examples:
        >>> sorted(grow_diag_final_and({(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 1), (1, 2)}))
        [(0, 0), (1, 1), (1, 2), (2, 1)]
    """
    union, alignment = forward | reverse, set(forward & reverse)
    sources, targets = {i for i, _ in alignment}, {j for _, j in alignment}
    neighbours = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
    grown = True
    while grown:
        grown = False
        for i, j in sorted(alignment):
            for di, dj in neighbours:
                link = (i + di, j + dj)
                if link in union and link not in alignment and (link[0] not in sources or link[1] not in targets):
                    alignment.add(link)
                    sources.add(link[0])
                    targets.add(link[1])
                    grown = True
    for link in (*sorted(forward), *sorted(reverse)):
        if link not in alignment and link[0] not in sources and link[1] not in targets:
            alignment.add(link)
            sources.add(link[0])
            targets.add(link[1])
    return alignment
