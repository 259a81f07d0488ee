"""The encoder–decoder model and [`build_model`][attention_core.model.seq2seq.build_model]."""

from __future__ import annotations

import random
from functools import partial

import torch
from torch import Tensor, nn

from attention_core.model.attention import Attention
from attention_core.model.config import ModelConfig, check_choice
from attention_core.model.decoder import DECODERS, Decoder, DecoderState, Memory
from attention_core.model.encoder import Encoder
from attention_core.model.scores import build_score
from attention_core.model.step import ModelStep, WindowArg, target_lengths
from attention_core.model.transformer import TRANSFORMER, Transformer, build_transformer

__all__ = ["ModelStep", "Seq2Seq", "Transformer", "WindowArg", "build_model"]


class Seq2Seq(nn.Module):
    """An encoder, a decoder (with its attention) and the vocabulary projection.

    Args:
        cfg: The (validated) model config.
        encoder: The encoder.
        decoder: The decoder.
    """

    def __init__(self, cfg: ModelConfig, encoder: Encoder, decoder: Decoder) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = encoder
        self.decoder = decoder
        out_size = decoder.output_size
        # tying: h (H) -> E -> logits with the target embedding matrix as weights
        self.pre_generator: nn.Module = nn.Identity()
        if cfg.tie_embeddings and cfg.emb_size != out_size:
            self.pre_generator = nn.Linear(out_size, cfg.emb_size, bias=False)
            out_size = cfg.emb_size
        self.generator = nn.Linear(out_size, cfg.tgt_vocab_size)
        if cfg.tie_embeddings:
            self.generator.weight = decoder.embedding.weight
        if cfg.share_embeddings:
            encoder.embedding.weight = decoder.embedding.weight

    @property
    def tied_parameters(self) -> dict[str, str]:
        """Parameter names that alias another parameter (``alias -> source``); saved once."""
        tied = {}
        if self.cfg.tie_embeddings:
            tied["generator.weight"] = "decoder.embedding.weight"
        if self.cfg.share_embeddings:
            tied["encoder.embedding.weight"] = "decoder.embedding.weight"
        return tied

    def project(self, output: Tensor) -> Tensor:
        """Vocabulary logits from decoder outputs ``(..., H)`` → ``(..., V)``."""
        return self.generator(self.pre_generator(output))

    @property
    def has_attention(self) -> bool:
        """Whether the decoder attends (``False`` for the ``none`` baseline)."""
        return self.decoder.attention is not None

    def resolve_window(self, window: WindowArg) -> int | None:
        """Turn a window argument into a half-width or ``None`` (``"config"`` → the model's own)."""
        if window == "config":
            return self.cfg.window
        if window is not None and int(window) < 1:
            raise ValueError(f"window D must be None (global) or >= 1, got {window}")
        return window

    def encode(
        self, src: Tensor, src_lengths: Tensor, tgt_lengths: Tensor | None = None
    ) -> tuple[Memory, DecoderState]:
        """Encode a batch and prepare everything the decoder steps need.

        Args:
            src: Source ids, shape ``(B, S)``.
            src_lengths: Real source lengths, shape ``(B,)``.
            tgt_lengths: Real target lengths ``(B,)`` (teacher forcing); when ``None`` the expected
                length ``S · length_ratio`` is used to place local-m windows.

        Returns:
            ``(memory, initial_state)``.
        """
        enc = self.encoder(src, src_lengths)
        state, summary = self.decoder.init_state(enc)
        attn = self.decoder.attention
        memory = Memory(
            values=enc.outputs,
            keys=attn.prepare(enc.outputs) if attn is not None else None,  # once per sentence
            mask=enc.mask,
            tgt_lengths=target_lengths(src_lengths, tgt_lengths, self.cfg.length_ratio, src.device),
            summary=summary,
        )
        return memory, state

    def step(
        self,
        y_prev: Tensor,
        state: DecoderState,
        memory: Memory,
        t: int,
        window: WindowArg = "config",
        hard: bool = False,
    ) -> ModelStep:
        """One decoding step, as greedy and beam search use it.

        Args:
            y_prev: Previous tokens, shape ``(B,)``.
            state: Decoder state.
            memory: The encoded source.
            t: Position of the predicted token (0-based).
            window: ``"config"``, ``None`` (global) or a half-width ``D``.
            hard: Hard (argmax) attention.

        Returns:
            The step's logits ``(B, V)``, state, weights ``(B, S)`` and centres.
        """
        emb = self.decoder.embed(y_prev)  # (B, E)
        out = self.decoder.step(emb, state, memory, t, self.resolve_window(window), hard)
        return ModelStep(self.project(out.output), out.state, out.weights, out.centre)

    def forward(  # noqa: PLR0913 — to do: the decode-time attention settings into one value (issue #55)
        self,
        src: Tensor,
        src_lengths: Tensor,
        tgt_in: Tensor,
        tgt_lengths: Tensor | None = None,
        window: WindowArg = "config",
        hard: bool = False,
        teacher_forcing: float = 1.0,
        select: Tensor | None = None,
        hoisted: bool = True,
    ) -> tuple[Tensor, Tensor]:
        """Teacher-forced forward pass.

        Args:
            src: Source ids, shape ``(B, S)``.
            src_lengths: Real source lengths, shape ``(B,)``.
            tgt_in: Decoder inputs (``<bos>`` + target), shape ``(B, T)``.
            tgt_lengths: Real target lengths ``(B,)`` (places local-m windows); optional.
            window: ``"config"``, ``None`` (global) or a half-width ``D``.
            hard: Hard attention (use only without gradients).
            teacher_forcing: Probability of feeding the gold token rather than the model's own
                prediction, drawn once per step for the whole batch (Python's ``random``).
            select: Optional ``(B, T)`` boolean mask of the positions that need logits (the real
                target tokens during training): the vocabulary projection, the most expensive
                layer, then skips padding and the logits come back flattened as ``(N, V)``.
            hoisted: With full teacher forcing, take the decoder's ``teacher_force`` (which hoists the
                per-sentence work out of the step loop where it can); ``False`` steps through
                ``Decoder.teacher_force``, the reference loop that decoding runs (for tests and
                ``benchmarks/train_step.py``).

        Returns:
            ``(logits, weights)``: ``(B, T, V)`` (or ``(N, V)`` with ``select``) and the whole
            attention matrix ``(B, T, S)``.
        """
        memory, state = self.encode(src, src_lengths, tgt_lengths)
        window = self.resolve_window(window)
        gold = self.decoder.embed(tgt_in)  # (B, T, E): embedded once, outside the loop
        if teacher_forcing >= 1.0:
            teach = self.decoder.teacher_force if hoisted else partial(Decoder.teacher_force, self.decoder)
            hidden, weights = teach(gold, state, memory, window, hard)  # (B, T, H), (B, T, S)
        else:
            hidden, weights = self._sampled_inputs(gold, state, memory, window, hard, teacher_forcing)
        if select is not None:
            hidden = hidden[select]  # (N, H): real target positions only
        # the vocabulary projection runs once over all steps, outside the loop
        return self.project(hidden), weights

    def _sampled_inputs(
        self, gold: Tensor, state: DecoderState, memory: Memory, window: int | None, hard: bool, teacher_forcing: float
    ) -> tuple[Tensor, Tensor]:
        """Teacher forcing with probability ``teacher_forcing`` a step, else the model's own greedy token."""
        outputs, weights = [], []
        emb = gold[:, 0]
        for t in range(gold.size(1)):
            out = self.decoder.step(emb, state, memory, t, window, hard)
            state = out.state
            outputs.append(out.output)
            weights.append(out.weights)
            if t + 1 < gold.size(1):
                if random.random() < teacher_forcing:
                    emb = gold[:, t + 1]
                else:
                    emb = self.decoder.embed(self.project(out.output).argmax(dim=-1))
        return torch.stack(outputs, dim=1), torch.stack(weights, dim=1)


def build_model(cfg: ModelConfig) -> Seq2Seq | Transformer:
    """Wire an encoder, a decoder and its attention from a config.

    ``decoder="transformer"`` builds a [`Transformer`][attention_core.model.transformer.Transformer]
    instead; it has the same ``encode``/``step``/``forward`` interface.

    Args:
        cfg: The model config; validated here.

    Returns:
        The untrained model.

    Examples:
        >>> cfg = ModelConfig(src_vocab_size=10, tgt_vocab_size=12, hidden_size=8, emb_size=8,
        ...                   decoder="luong", score="concat", attention="local-p", window=2)
        >>> model = build_model(cfg)
        >>> type(model.decoder).__name__, type(model.decoder.attention.score).__name__
        ('LuongDecoder', 'ConcatScore')
    """
    cfg.validate()
    check_choice("decoder", cfg.decoder, [*DECODERS, TRANSFORMER])
    if cfg.decoder == TRANSFORMER:
        return build_transformer(cfg)
    H = cfg.hidden_size
    encoder = Encoder(
        cfg.src_vocab_size,
        cfg.emb_size,
        H,
        cfg.num_layers,
        cfg.rnn,
        cfg.dropout,
        cfg.pad_id,
        project=cfg.decoder != "none",
    )
    attention = None
    if cfg.decoder != "none":
        attention = Attention(build_score(cfg.score, H, H, cfg.max_source_len), cfg.attention, cfg.window)
    decoder = DECODERS[cfg.decoder](cfg, attention)
    return Seq2Seq(cfg, encoder, decoder)
