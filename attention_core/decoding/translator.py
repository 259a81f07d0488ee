"""Text in, text and attention out: the one generation path used by training, the CLI, the hub and the app."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from attention_core.data import truecase
from attention_core.data.batch import make_batch
from attention_core.data.subword import word_rows
from attention_core.data.tasks import Task
from attention_core.data.text import has_chinese, split_sentences, strip_invisible
from attention_core.data.vocab import UNK, Vocab
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.couplet import CoupletConstraint, own_marks
from attention_core.decoding.coverage import Word, low_coverage
from attention_core.decoding.search import Chain, beam_search_nbest, greedy
from attention_core.model.seq2seq import Seq2Seq, WindowArg
from attention_core.model.transformer import AttentionMaps, Transformer

SENTENCE_TOKENS = 100
"""Longest sentence the CLI and the app translate (tokens); a paragraph is split into sentences first."""


_LATIN_OR_DIGITS = re.compile(r"[0-9a-z]")
"""A token of Latin letters or digits (``tokenize_chinese`` keeps such a run as one token, lower-cased)."""


class InputError(ValueError):
    """The input text cannot be translated (empty, too long, nothing the model knows)."""


@dataclass
class Output:
    """One generated output with its alignment.

    Attributes:
        source_tokens: Source tokens as the model saw them; unknown ones are shown as ``<unk>``.
        unknown: For each source token, the original text if it was unknown, else ``None``.
        tokens: Output tokens (no ``<eos>``).
        text: Detokenised output.
        weights: Attention matrix ``(T_out, S)``; the last row is ``<eos>`` when ``finished``.
        centres: Local window centres ``(T_out,)`` or ``None``.
        score: Log-probability of the output.
        finished: Whether the output ended with ``<eos>``.
        alternatives: With beam search, the other finished outputs of the beam as ``(text, log p)``,
            best first by the same length-normalised score, without repeats of ``text`` (empty for greedy search).
        names: With the names switch, what was done with each name found in the source (an
            [`attention_core.editing.names.Prepared`][attention_core.editing.names.Prepared], see
            [`attention_core.editing.switch`][attention_core.editing.switch]); ``None`` without it.
    """

    source_tokens: list[str]
    unknown: list[str | None]
    tokens: list[str]
    text: str
    weights: Tensor
    centres: Tensor | None
    score: float
    finished: bool
    alternatives: list[tuple[str, float]] = field(default_factory=list)
    names: Any = None

    @property
    def row_labels(self) -> list[str]:
        """Labels for the rows of ``weights``: the output tokens, then ``<eos>`` if it was produced."""
        return self.tokens + (["<eos>"] if self.finished else [])

    @property
    def coverage(self) -> Tensor:
        """Total attention each source token received while the output was written, shape ``(S,)``.

        The sum of the rows of ``weights`` for the output tokens (the ``<eos>`` row left out): an output of ``T``
        tokens hands out ``T`` units of attention, and a source token near 0 was hardly looked at (the coverage of
        Tu et al. 2016, "Modeling Coverage for Neural Machine Translation"). Being looked at does not mean being
        translated: a name can receive much attention and still be dropped from the output.
        """
        return self.weights[: len(self.tokens)].sum(dim=0)

    def word_rows(self) -> tuple[list[str], Tensor]:
        """The alignment with subword pieces merged into words.

        Each word's row is the mean of its pieces' rows (still a distribution over the source);
        outputs of whole-token models come back unchanged (see
        [`subword.word_rows`][attention_core.data.subword.word_rows]).

        Returns:
            ``(word labels, weights (W, S))``, ``<eos>`` last when it was produced.
        """
        return word_rows(self.row_labels, self.weights)


class Translator:
    """A trained model with its vocabularies and task: the object the CLI, hub and app hold.

    Args:
        model: The model.
        src_vocab: Source vocabulary.
        tgt_vocab: Target vocabulary.
        task: The task (tokenisers, detokeniser, constraints).
        meta: Free-form information saved with the model (data split, training, metrics).
    """

    def __init__(
        self, model: Seq2Seq, src_vocab: Vocab, tgt_vocab: Vocab, task: Task, meta: dict | None = None
    ) -> None:
        self.model = model
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        self.task = task
        self.meta = meta or {}

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Output tokens as text: the task's detokeniser, then the words' usual case if the model has learnt it.

        The case comes from [`truecase`][attention_core.data.truecase] (``meta["truecase"]``, saved by training for
        Chinese → English models); without it, the text is the detokeniser's.
        """
        return truecase.apply(self.task.detokenize(tokens), self.meta.get("truecase"))

    def __getattr__(self, name: str) -> Any:
        """Where the methods that left the Translator went (a plain ``AttributeError`` for any other name)."""
        moved = {"notes": "attention_core.analysis.notes.notes(translator, output)"}
        if name in moved:
            raise AttributeError(f"Translator.{name} moved: use {moved[name]}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def reads_names(self) -> bool:
        """Whether the names switch applies: a Chinese → English model.

        The bundled translation task, or a model of your own whose sides say ``zh…`` → ``en``.
        """
        return self.task.reads_names

    @property
    def device(self) -> torch.device:
        """The device of the model's parameters."""
        return next(self.model.parameters()).device

    def tokenize(self, text: str, max_tokens: int | None = None) -> list[str]:
        """Tokenise a source text, with a clear error for empty, non-Chinese or over-long input.

        Raises:
            InputError: If the text has no token, no Chinese character (the bundled tasks read
                Chinese; ``task.chinese_source``), or more than ``max_tokens`` tokens.
        """
        tokens = self.task.tokenize_src(strip_invisible(text or ""))
        if not tokens:
            raise InputError("the input is empty: type a sentence first")
        if self.task.chinese_source and not has_chinese(text):
            raise InputError(f"the input has no Chinese characters: type a {self.task.input_name} (got {text[:40]!r})")
        if max_tokens is not None and len(tokens) > max_tokens:
            raise InputError(f"the input has {len(tokens)} tokens; the limit is {max_tokens}")
        if self.task.characters_only and (run := next((t for t in tokens if _LATIN_OR_DIGITS.match(t)), None)):
            advice = "write numbers in characters (2024 → 二〇二四)" if re.search(r"\d", run) else "write it in Chinese"
            raise InputError(f"a 上联 is written in Chinese characters, one to a position, and {run!r} is not one: "
                             f"{advice}; 上联请用汉字")  # its 下联 mirrors each character
        return tokens

    def untranslated(self, output: Output) -> list[Word]:
        """Source words the output may have left untranslated: content words that received almost no attention.

        See [`attention_core.decoding.coverage`][attention_core.decoding.coverage] for the rule and how often it is
        right. Only for Chinese sources of a model with attention and without couplet constraints (a couplet pairs every
        character).

        Args:
            output: An output of this translator.
        """
        if not self.task.chinese_source or self.task.constrained or not bool(output.weights.any()):
            return []
        tokens = [u or t for t, u in zip(output.source_tokens, output.unknown)]  # unknown ones as typed
        return low_coverage(tokens, output.coverage.tolist())

    def sentences(self, text: str, max_sentence_tokens: int | None = None) -> list[str]:
        """Split a paragraph into the sentences that ``translate_paragraph`` translates.

        Sentences end at sentence-final punctuation or line breaks
        ([`split_sentences`][attention_core.data.text.split_sentences]; for a model of your own that reads a
        language other than Chinese, also at a ``.`` between a letter and a space); one longer than
        ``max_sentence_tokens`` characters is cut further at clause punctuation, and a clause that is
        still longer is refused.

        Args:
            text: One or more sentences.
            max_sentence_tokens: Longest accepted sentence (tokens), or ``None`` for no limit. A
                fragment without Chinese (``2013.``) is joined to the sentence before it (or after it).

        Returns:
            The sentences as typed, in order.

        Raises:
            InputError: On empty or non-Chinese input, or a sentence over the limit.
        """
        chinese = self.task.chinese_source
        sentences = split_sentences(text or "", max_sentence_tokens, spaced=not chinese)
        if not sentences:
            raise InputError("the input is empty: type a sentence first")
        merged: list[str] = []  # a fragment without Chinese ("2013.", "OK!") joins its neighbour
        pending = ""
        for sentence in sentences:
            if has_chinese(sentence) or not chinese:  # a model of your own reads any language
                merged.append(pending + sentence)
                pending = ""
            elif merged:
                merged[-1] += sentence
            else:
                pending += sentence
        if not merged:
            self.tokenize(text)  # raises the no-Chinese error
        for i, sentence in enumerate(merged, 1):
            n = len(self.task.tokenize_src(sentence))
            if max_sentence_tokens is not None and n > max_sentence_tokens:
                marks = ("。！？ between sentences, ，between clauses" if self.task.chinese_source
                         else ". ! ? between sentences, commas between clauses")
                raise InputError(f"sentence {i} has {n} tokens; the limit per sentence is {max_sentence_tokens}: "
                                 f"split it with punctuation ({marks}) or shorten it")
        return merged

    def translate_paragraph(
        self, text: str, max_sentence_tokens: int | None = None, **options: Any
    ) -> list[Output]:
        """Split a paragraph into sentences and translate them in one batch, in order.

        The sentences are [`sentences`][attention_core.decoding.translator.Translator.sentences]'s.

        Args:
            text: One or more sentences.
            max_sentence_tokens: Longest accepted sentence (tokens), or ``None`` for no limit.
            **options: Decoding options of [`translate`][attention_core.decoding.translator.Translator.translate].

        Returns:
            One [`Output`][attention_core.decoding.translator.Output] per sentence.

        Raises:
            InputError: On empty or non-Chinese input, or a sentence over the limit.
        """
        return self.translate(self.sentences(text, max_sentence_tokens), **options)

    def attention_maps(self, output: Output, window: WindowArg = "config", hard: bool = False) -> AttentionMaps | None:
        """Every layer's and head's attention behind one Transformer output (``None`` for an RNN model).

        The rows line up with ``output.weights`` (``output.row_labels``); the maps of the last layer,
        averaged over heads, are ``output.weights`` itself.

        Args:
            output: An output of [`translate`][attention_core.decoding.translator.Translator.translate].
            window: The window it was decoded with.
            hard: Whether it was decoded with hard attention.

        Returns:
            Maps of one sentence, batch dimension removed: ``encoder`` ``(L, h, S, S)``,
            ``decoder`` ``(L, h, T, T)``, ``cross`` ``(L, h, T, S)``; ``None`` for a model without them.
        """
        if not isinstance(self.model, Transformer):
            return None
        ids = self.tgt_vocab.encode(output.tokens)
        inputs = [self.tgt_vocab.bos_id] + (ids if output.finished else ids[:-1])  # one per weight row
        src = torch.tensor([self.src_vocab.encode(output.source_tokens)], device=self.device)
        tgt = torch.tensor([inputs], device=self.device)
        self.model.eval()
        maps = self.model.attention_maps(src, torch.tensor([src.size(1)]), tgt, window, hard)
        return AttentionMaps(*(m[0].float().cpu() for m in (maps.encoder, maps.decoder, maps.cross)))

    def translate(
        self,
        texts: Sequence[str],
        config: DecodeConfig | None = None,
        *,
        batch_size: int = 64,
        max_tokens: int | None = None,
        **settings: Any,
    ) -> list[Output]:
        """Generate outputs for source texts, batched, in input order.

        ``translator.translate(texts, beam_size=5)`` and ``translator.translate(texts, DecodeConfig(beam_size=5))``
        are the same decoding. The names switch (names, numbers and left-out words carried through the model) is the
        editing layer's: [`attention_core.editing.switch.translate`][attention_core.editing.switch.translate].

        Args:
            texts: Source sentences.
            config: How to decode ([`DecodeConfig`][attention_core.decoding.config.DecodeConfig]; default: greedy,
                with the task's defaults).
            batch_size: Sentences per batch.
            max_tokens: Reject inputs longer than this (``InputError``).
            **settings: Fields of ``DecodeConfig`` to change (``beam_size``, ``window``, ``hard``, ``constrained``,
                ``rules``, ``max_len``, ``loop_guard``, ``coverage``).

        Returns:
            One [`Output`][attention_core.decoding.translator.Output] per text.

        Raises:
            InputError: On an empty or over-long input.
            TypeError: For a setting ``DecodeConfig`` does not have.
        """
        if settings.pop("names", False):  # names=False: the plain translation, which this is
            raise TypeError("translate() has no names switch any more: use attention_core.editing.switch.translate("
                            "translator, texts, names=True, ...)")
        config = DecodeConfig.of(config, **settings).for_task(self.task)
        texts = [strip_invisible(t or "") for t in texts]  # a byte-order mark is not a token
        return self.decode([self.tokenize(t, max_tokens) for t in texts], config, batch_size)  # errors: as typed

    def decode(self, tokenised: Sequence[Sequence[str]], config: DecodeConfig,
               batch_size: int = 64) -> list[Output]:
        """Decode source token lists in batches of similar length, one output each, in input order.

        The generation path itself, under [`translate`][attention_core.decoding.translator.Translator.translate]
        (which tokenises and checks the texts first) and the editing layer's passes (which decode their own
        rewritten sources).

        Args:
            tokenised: Source tokens, one list per sentence.
            config: How to decode (the task's defaults fill its ``None`` fields).
            batch_size: Sentences per batch.

        Returns:
            One [`Output`][attention_core.decoding.translator.Output] per token list.
        """
        config = config.for_task(self.task)
        guard, constrained = config.guard, config.constrained
        order = sorted(range(len(tokenised)), key=lambda i: len(tokenised[i]))
        results: list[Output | None] = [None] * len(tokenised)
        self.model.eval()
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            sources = [list(tokenised[i]) for i in index]
            batch = make_batch([(self.src_vocab.encode(s), [0]) for s in sources]).to(self.device)
            constraint: Any = guard
            if constrained:
                couplet = CoupletConstraint(sources, self.tgt_vocab, config.rules, self.device,
                                            self.meta.get("overproduction"))
                constraint = couplet if constraint is None else Chain(couplet, constraint)
            if config.beam_size == 1:
                nbest = [[hyp] for hyp in greedy(self.model, batch.src, batch.src_lengths, config, constraint)]
            else:
                nbest = beam_search_nbest(self.model, batch.src, batch.src_lengths, config, constraint)
            for i, src, (hyp, *others) in zip(index, sources, nbest):
                tokens = [self.tgt_vocab.itos[i] for i in hyp.tokens]  # one per weight row
                if constrained:
                    tokens = own_marks(src, tokens, self.tgt_vocab)
                text = self.detokenize(tokens)
                alternatives = {}
                for other in others:
                    other_tokens = self.tgt_vocab.decode(other.tokens)
                    other_text = self.detokenize(own_marks(src, other_tokens, self.tgt_vocab) if constrained
                                                 else other_tokens)
                    if other_text != text:
                        alternatives.setdefault(other_text, other.score)
                known = [tok in self.src_vocab for tok in src]
                results[i] = Output(
                    source_tokens=[tok if ok else UNK for tok, ok in zip(src, known)],
                    unknown=[None if ok else tok for tok, ok in zip(src, known)],
                    tokens=tokens,
                    text=text,
                    weights=hyp.weights,
                    centres=hyp.centres,
                    score=hyp.score,
                    finished=hyp.finished,
                    alternatives=list(alternatives.items()),
                )
        return results  # type: ignore[return-value]
