"""Text in, text and attention out: the one generation path used by training, the CLI, the hub and the app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attention_core.batch import make_batch
from attention_core.couplet import CoupletConstraint, CoupletRules
from attention_core.data import Task
from attention_core.search import beam_search, greedy
from attention_core.seq2seq import Seq2Seq, WindowArg
from attention_core.vocab import UNK, Vocab


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
    """

    source_tokens: list[str]
    unknown: list[str | None]
    tokens: list[str]
    text: str
    weights: Tensor
    centres: Tensor | None
    score: float
    finished: bool

    @property
    def row_labels(self) -> list[str]:
        """Labels for the rows of ``weights``: the output tokens, then ``<eos>`` if it was produced."""
        return self.tokens + (["<eos>"] if self.finished else [])


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

    @property
    def device(self) -> torch.device:
        """The device of the model's parameters."""
        return next(self.model.parameters()).device

    def tokenize(self, text: str, max_tokens: int | None = None) -> list[str]:
        """Tokenise a source text, with a clear error for empty or over-long input.

        Raises:
            InputError: If the text has no token or more than ``max_tokens``.
        """
        tokens = self.task.tokenize_src(text or "")
        if not tokens:
            raise InputError("the input is empty: type a sentence first")
        if max_tokens is not None and len(tokens) > max_tokens:
            raise InputError(f"the input has {len(tokens)} tokens; the limit is {max_tokens}")
        return tokens

    def translate(
        self,
        texts: Sequence[str],
        beam_size: int = 1,
        window: WindowArg = "config",
        hard: bool = False,
        constrained: bool | None = None,
        rules: CoupletRules | None = None,
        batch_size: int = 64,
        max_tokens: int | None = None,
        max_len: int | None = None,
    ) -> list[Output]:
        """Generate outputs for source texts, batched, in input order.

        Args:
            texts: Source sentences.
            beam_size: 1 for greedy search, more for beam search.
            window: ``"config"``, ``None`` (global) or a half-width ``D`` applied at decode time.
            hard: Hard (argmax) attention at decode time.
            constrained: Couplet constraints; default: on for the couplet task, off otherwise.
            rules: With constraints, the reader's rules to enforce (default
                [`CoupletRules()`][attention_core.couplet.CoupletRules]: all on).
            batch_size: Sentences per batch.
            max_tokens: Reject inputs longer than this (``InputError``).
            max_len: Output length limit (default: ``search.default_max_len``).

        Returns:
            One [`Output`][attention_core.pipeline.Output] per text.

        Raises:
            InputError: On an empty or over-long input.
        """
        constrained = self.task.constrained if constrained is None else constrained
        tokenised = [self.tokenize(t, max_tokens) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(tokenised[i]))
        results: list[Output | None] = [None] * len(texts)
        self.model.eval()
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            sources = [tokenised[i] for i in index]
            batch = make_batch([(self.src_vocab.encode(s), [0]) for s in sources]).to(self.device)
            constraint = None
            if constrained:
                constraint = CoupletConstraint(sources, self.tgt_vocab, rules, self.device,
                                                self.meta.get("overproduction"))
            args = dict(max_len=max_len, window=window, hard=hard, constraint=constraint)
            if beam_size == 1:
                hyps = greedy(self.model, batch.src, batch.src_lengths, **args)
            else:
                hyps = beam_search(self.model, batch.src, batch.src_lengths, beam_size, **args)
            for i, src, hyp in zip(index, sources, hyps):
                tokens = [self.tgt_vocab.itos[i] for i in hyp.tokens]  # one per weight row
                known = [tok in self.src_vocab for tok in src]
                results[i] = Output(
                    source_tokens=[tok if ok else UNK for tok, ok in zip(src, known)],
                    unknown=[None if ok else tok for tok, ok in zip(src, known)],
                    tokens=tokens,
                    text=self.task.detokenize(tokens),
                    weights=hyp.weights,
                    centres=hyp.centres,
                    score=hyp.score,
                    finished=hyp.finished,
                )
        return results  # type: ignore[return-value]
