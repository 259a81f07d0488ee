"""A small Transformer encoder–decoder (Vaswani et al. 2017), beside the RNN models.

Its cross-attention is the step Luong's decoder takes with the *scaled dot* score, run by ``h`` heads
at once on learned projections; self-attention inside each stack and sinusoidal positions are what
it adds. Everything goes through the library's one [`attention`][attention_core.model.attention.attention]
step (mask → optional window → softmax|argmax → weighted sum), so masking, hard attention and a
decode-time local-m window work exactly as for the RNN decoders.

Scaled dot-product attention (Vaswani et al. 2017, Eq. 1), per head::

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V          Q (T, d_k), K (S, d_k), V (S, d_k)

Multi-head attention (§3.2.2), ``d_k = d_model / h``::

    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)
    W_i^Q, W_i^K, W_i^V ∈ R^{d_model × d_k},  W^O ∈ R^{h·d_k × d_model}

Positions (§3.5): ``PE(pos, 2i) = sin(pos / 10000^{2i/d_model})`` and
``PE(pos, 2i+1) = cos(pos / 10000^{2i/d_model})``, added to the embeddings scaled by ``√d_model``.

Each sublayer is pre-LayerNorm, ``x + Dropout(Sublayer(LayerNorm(x)))`` (Xiong et al. 2020), with a
final LayerNorm after each stack; that trains without a learning-rate warm-up. The output projection
is tied to the target embeddings (Press & Wolf 2017) when ``tie_embeddings`` is set.

Sizes come from [`ModelConfig`][attention_core.model.config.ModelConfig]: ``hidden_size`` is ``d_model``
(``emb_size`` must equal it), ``num_layers`` layers in each stack, ``heads`` heads and a
feed-forward inner size ``ff_size``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention_core.model.attention import MonotonicCentre, Window, attention
from attention_core.model.config import TRANSFORMER, ModelConfig
from attention_core.model.scores import ScaledDotScore
from attention_core.model.step import ModelStep, WindowArg, padding_mask, target_lengths

__all__ = ["TRANSFORMER", "AttentionMaps", "MultiHeadAttention", "Transformer", "build_transformer",
           "sinusoidal_positions"]


def sinusoidal_positions(length: int, d_model: int) -> Tensor:
    """The sinusoidal position table of Vaswani et al. 2017, §3.5.

    Args:
        length: Number of positions.
        d_model: Model size (even or odd).

    Returns:
        ``PE``, shape ``(length, d_model)``.

    Examples:
        >>> pe = sinusoidal_positions(4, 6)
        >>> pe.shape, pe[0, 0::2].tolist(), pe[0, 1::2].tolist()
        (torch.Size([4, 6]), [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    """
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)  # (N, 1)
    rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model)
    pe[:, 0::2] = torch.sin(position * rate)
    pe[:, 1::2] = torch.cos(position * rate[: d_model // 2])
    return pe


@dataclass
class AttentionMaps:
    """Every attention weight of a Transformer pass, for display.

    Attributes:
        encoder: Encoder self-attention, shape ``(B, L, h, S, S)``.
        decoder: Decoder (causal) self-attention, shape ``(B, L, h, T, T)``.
        cross: Encoder–decoder attention, shape ``(B, L, h, T, S)``.
    """

    encoder: Tensor
    decoder: Tensor
    cross: Tensor


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.2).

    The heads are folded into the batch, so the score is the library's
    [`ScaledDotScore`][attention_core.model.scores.ScaledDotScore] over ``d_k``-sized vectors and the
    weights come from the shared [`attention`][attention_core.model.attention.attention] step.

    Args:
        d_model: Model size.
        heads: Number of heads ``h``; must divide ``d_model``.
    """

    def __init__(self, d_model: int, heads: int) -> None:
        super().__init__()
        if d_model % heads:
            raise ValueError(f"heads ({heads}) must divide the model size ({d_model})")
        self.heads, self.d_k = heads, d_model // heads
        self.query = nn.Linear(d_model, d_model)  # the h matrices W_i^Q side by side
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)  # W^O
        self.score = ScaledDotScore(self.d_k, self.d_k)

    def split(self, x: Tensor) -> Tensor:
        """``(B, N, d_model)`` → ``(B, h, N, d_k)``."""
        B, N, _ = x.shape
        return x.view(B, N, self.heads, self.d_k).transpose(1, 2)

    def project_keys(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values of a sequence, shape ``(B, h, S, d_k)`` each (once per source sentence)."""
        return self.split(self.key(x)), self.split(self.value(x))

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor,
        window: Window | None = None,
        hard: bool = False,
    ) -> tuple[Tensor, Tensor]:
        """Attend from every query position with every head.

        Args:
            query: Query-side input, shape ``(B, T, d_model)``.
            keys: Projected keys ``(B, h, S, d_k)`` from
                [`project_keys`][attention_core.model.transformer.MultiHeadAttention.project_keys].
            values: Projected values ``(B, h, S, d_k)``.
            mask: ``True`` where a query may look: ``(B, S)`` or ``(B, T, S)``.
            window: An optional local window, the same for every head.
            hard: One-hot argmax weights in every head.

        Returns:
            ``(output, weights)``: ``(B, T, d_model)`` and ``(B, h, T, S)``; each row of each head
            sums to 1 and is exactly 0 where ``mask`` is ``False``.
        """
        B, T, D = query.shape
        h, S = self.heads, keys.size(2)
        q = self.split(self.query(query))  # (B, h, T, d_k)
        scores = self.score(q.flatten(0, 1), keys.flatten(0, 1))  # (B·h, T, S)
        head_mask = (mask.unsqueeze(1) if mask.dim() == 2 else mask).unsqueeze(1)  # (B, 1, 1|T, S)
        head_mask = head_mask.expand(B, h, T, S).flatten(0, 1)  # (B·h, T, S)
        if window is not None:  # the same window for every head
            window = Window(window.centre.repeat_interleave(h, dim=0), window.half_width, window.gaussian)
        context, weights = attention(scores, values.flatten(0, 1), head_mask, window, hard)  # (B·h, T, d_k)
        context = context.view(B, h, T, self.d_k).transpose(1, 2).reshape(B, T, D)  # Concat(head_1…head_h)
        return self.out(context), weights.view(B, h, T, S)


class FeedForward(nn.Module):
    """Position-wise ``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2`` (Vaswani et al. 2017, Eq. 2)."""

    def __init__(self, d_model: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_model, ff_size), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff_size, d_model)
        )

    def forward(self, x: Tensor) -> Tensor:  # noqa: D102
        return self.net(x)


class EncoderLayer(nn.Module):
    """Pre-LN self-attention and feed-forward sublayers."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D = cfg.hidden_size
        self.self_norm, self.self_attn = nn.LayerNorm(D), MultiHeadAttention(D, cfg.heads)
        self.ff_norm, self.ff = nn.LayerNorm(D), FeedForward(D, cfg.ff_size, cfg.dropout)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """``x`` ``(B, S, D)``, ``mask`` ``(B, S)`` → new ``x`` and self-attention ``(B, h, S, S)``."""
        h = self.self_norm(x)
        out, weights = self.self_attn(h, *self.self_attn.project_keys(h), mask)
        x = x + self.dropout(out)
        return x + self.dropout(self.ff(self.ff_norm(x))), weights


class DecoderLayer(nn.Module):
    """Pre-LN causal self-attention, encoder–decoder attention and feed-forward sublayers."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D = cfg.hidden_size
        self.self_norm, self.self_attn = nn.LayerNorm(D), MultiHeadAttention(D, cfg.heads)
        self.cross_norm, self.cross_attn = nn.LayerNorm(D), MultiHeadAttention(D, cfg.heads)
        self.ff_norm, self.ff = nn.LayerNorm(D), FeedForward(D, cfg.ff_size, cfg.dropout)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(
        self,
        x: Tensor,
        past: tuple[Tensor, Tensor] | None,
        self_mask: Tensor,
        cross: tuple[Tensor, Tensor],
        src_mask: Tensor,
        window: Window | None = None,
        hard: bool = False,
    ) -> tuple[Tensor, tuple[Tensor, Tensor], Tensor, Tensor]:
        """One decoder layer over ``T`` new positions.

        Args:
            x: Inputs of the new positions, shape ``(B, T, D)``.
            past: Cached self-attention keys and values of earlier positions ``(B, h, t, d_k)``, or
                ``None``.
            self_mask: Which of the ``t + T`` positions each new one sees, ``(B, T, t + T)``.
            cross: The source's keys and values ``(B, h, S, d_k)`` for this layer.
            src_mask: ``True`` for real source tokens ``(B, S)``.
            window: Optional local window on the encoder–decoder attention.
            hard: Hard encoder–decoder attention.

        Returns:
            ``(x, (keys, values), self_weights, cross_weights)``: the outputs ``(B, T, D)``, the
            self-attention cache extended to ``t + T`` positions, ``(B, h, T, t + T)`` and
            ``(B, h, T, S)``.
        """
        h = self.self_norm(x)
        keys, values = self.self_attn.project_keys(h)  # (B, h, T, d_k)
        if past is not None:
            keys, values = torch.cat([past[0], keys], dim=2), torch.cat([past[1], values], dim=2)
        out, self_weights = self.self_attn(h, keys, values, self_mask)
        x = x + self.dropout(out)
        out, cross_weights = self.cross_attn(self.cross_norm(x), *cross, src_mask, window, hard)
        x = x + self.dropout(out)
        x = x + self.dropout(self.ff(self.ff_norm(x)))
        return x, (keys, values), self_weights, cross_weights


@dataclass
class TransformerMemory:
    """The encoded source, as every decoding step reads it.

    Attributes:
        values: Encoder outputs, shape ``(B, S, D)``.
        mask: ``True`` for real source tokens, shape ``(B, S)``.
        cross: Per decoder layer, the source's projected keys and values ``(B, h, S, d_k)``,
            computed once per sentence.
        tgt_lengths: Expected target lengths ``(B,)`` (places a decode-time local-m window).
    """

    values: Tensor
    mask: Tensor
    cross: list[tuple[Tensor, Tensor]]
    tgt_lengths: Tensor

    def index_select(self, index: Tensor) -> TransformerMemory:
        """Pick (or repeat) batch rows, e.g. to expand a batch into beams."""
        return TransformerMemory(
            values=self.values.index_select(0, index),
            mask=self.mask.index_select(0, index),
            cross=[(k.index_select(0, index), v.index_select(0, index)) for k, v in self.cross],
            tgt_lengths=self.tgt_lengths.index_select(0, index),
        )


@dataclass
class TransformerState:
    """The decoder's self-attention cache: per layer, keys and values of the positions so far.

    Attributes:
        past: Per layer, ``(keys, values)`` of shape ``(B, h, t, d_k)``.
    """

    past: list[tuple[Tensor, Tensor]]

    def index_select(self, index: Tensor) -> TransformerState:
        """Pick (or repeat) batch rows, e.g. to follow reordered beams."""
        return TransformerState([(k.index_select(0, index), v.index_select(0, index)) for k, v in self.past])


class Transformer(nn.Module):
    """Encoder–decoder Transformer with the interface of [`Seq2Seq`][attention_core.model.seq2seq.Seq2Seq].

    ``encode``, ``step`` and ``forward`` take the same arguments and return the same things, so greedy
    and beam search, the couplet constraints, the trainer, the hub and the app use it unchanged. The
    attention a step reports (``ModelStep.weights``) is the mean over heads of the last layer's
    encoder–decoder attention; [`attention_maps`][attention_core.model.transformer.Transformer.attention_maps]
    returns every layer and head.

    Args:
        cfg: The (validated) model config, with ``decoder="transformer"``.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D = cfg.hidden_size
        self.cfg = cfg
        self.src_embedding = nn.Embedding(cfg.src_vocab_size, D, padding_idx=cfg.pad_id)
        self.tgt_embedding = nn.Embedding(cfg.tgt_vocab_size, D, padding_idx=cfg.pad_id)
        for embedding in (self.src_embedding, self.tgt_embedding):  # N(0, d^-1/2): √d · E has unit scale
            nn.init.normal_(embedding.weight, std=D**-0.5)
        self.dropout = nn.Dropout(cfg.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.num_layers))
        self.encoder_norm = nn.LayerNorm(D)
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.decoder_norm = nn.LayerNorm(D)
        self.generator = nn.Linear(D, cfg.tgt_vocab_size)
        if cfg.tie_embeddings:
            self.generator.weight = self.tgt_embedding.weight
        if cfg.share_embeddings:
            self.src_embedding.weight = self.tgt_embedding.weight
        self.register_buffer("positions", sinusoidal_positions(512, D), persistent=False)

    @property
    def tied_parameters(self) -> dict[str, str]:
        """Parameter names that alias another parameter (``alias -> source``); saved once."""
        tied = {}
        if self.cfg.tie_embeddings:
            tied["generator.weight"] = "tgt_embedding.weight"
        if self.cfg.share_embeddings:
            tied["src_embedding.weight"] = "tgt_embedding.weight"
        return tied

    @property
    def has_attention(self) -> bool:
        """Always ``True``: the decoder attends to the source in every layer."""
        return True

    def resolve_window(self, window: WindowArg) -> int | None:
        """Turn a window argument into a half-width or ``None`` (the model's own is global)."""
        if window == "config" or window is None:
            return None
        if int(window) < 1:
            raise ValueError(f"window D must be None (global) or >= 1, got {window}")
        return int(window)

    def _embed(self, embedding: nn.Embedding, ids: Tensor, offset: int = 0) -> Tensor:
        """``√d · E[ids] + PE[offset : offset + N]``, shape ``(B, N, D)``."""
        N = ids.size(1)
        table = self.positions
        if offset + N > table.size(0):  # longer than the table: computed for this call, not stored
            table = sinusoidal_positions(offset + N, self.cfg.hidden_size).to(table)
        x = embedding(ids) * math.sqrt(self.cfg.hidden_size) + table[offset : offset + N]
        return self.dropout(x)

    def _window(self, window: int | None, steps: Tensor, src_mask: Tensor, tgt_lengths: Tensor) -> Window | None:
        """A local-m window over the source for queries at ``steps`` ``(T,)``, or ``None`` when global.

        ``src_mask`` ``(B, S)`` gives the real source lengths, ``tgt_lengths`` ``(B,)`` the target lengths.
        """
        if window is None:
            return None
        centre = MonotonicCentre.place(steps, src_mask.sum(dim=1), tgt_lengths)  # (B, T)
        return Window(centre, window)

    def _encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor, list[Tensor]]:
        """Encoder stack: outputs ``(B, S, D)``, mask ``(B, S)`` and per-layer self-attention."""
        S = src.size(1)
        mask = padding_mask(src_lengths, S, src.device)  # (B, S)
        x = self._embed(self.src_embedding, src)
        maps = []
        for layer in self.encoder_layers:
            x, weights = layer(x, mask)
            maps.append(weights)
        return self.encoder_norm(x), mask, maps

    def encode(
        self, src: Tensor, src_lengths: Tensor, tgt_lengths: Tensor | None = None
    ) -> tuple[TransformerMemory, TransformerState]:
        """Encode a batch; project each decoder layer's source keys and values once.

        Args:
            src: Source ids, shape ``(B, S)``.
            src_lengths: Real source lengths, shape ``(B,)``.
            tgt_lengths: Target lengths ``(B,)``; by default ``S · length_ratio`` (places a
                decode-time window).

        Returns:
            ``(memory, state)``, the state an empty self-attention cache.
        """
        values, mask, _ = self._encode(src, src_lengths)
        memory = TransformerMemory(
            values=values,
            mask=mask,
            cross=[layer.cross_attn.project_keys(values) for layer in self.decoder_layers],
            tgt_lengths=target_lengths(src_lengths, tgt_lengths, self.cfg.length_ratio, src.device),
        )
        B, h, d_k = src.size(0), self.cfg.heads, self.cfg.hidden_size // self.cfg.heads
        empty = values.new_zeros(B, h, 0, d_k)
        return memory, TransformerState([(empty, empty) for _ in self.decoder_layers])

    def step(
        self,
        y_prev: Tensor,
        state: TransformerState,
        memory: TransformerMemory,
        t: int,
        window: WindowArg = "config",
        hard: bool = False,
    ) -> ModelStep:
        """One decoding step with the self-attention cache, as greedy and beam search use it.

        Args:
            y_prev: Previous tokens (``<bos>`` at ``t = 0``), shape ``(B,)``.
            state: The cache of the ``t`` earlier positions.
            memory: The encoded source.
            t: Position of the predicted token (0-based).
            window: ``"config"`` or ``None`` (global) or a half-width ``D``: a local-m window on
                every encoder–decoder attention, applied at decode time.
            hard: Hard (argmax) encoder–decoder attention in every head.

        Returns:
            Logits ``(B, V)``, the extended cache, and the last layer's head-mean weights ``(B, S)``.
        """
        x = self._embed(self.tgt_embedding, y_prev.unsqueeze(1), offset=t)  # (B, 1, D)
        B = x.size(0)
        self_mask = torch.ones(B, 1, t + 1, dtype=torch.bool, device=x.device)  # the prefix is all real
        spec = self._window(self.resolve_window(window), torch.tensor([t], device=x.device), memory.mask,
                            memory.tgt_lengths)
        past, cross_weights = [], None
        for layer, cache, cross in zip(self.decoder_layers, state.past, memory.cross):
            x, cache, _, cross_weights = layer(x, cache, self_mask, cross, memory.mask, spec, hard)
            past.append(cache)
        logits = self.generator(self.decoder_norm(x))[:, 0]  # (B, V)
        centre = None if spec is None else spec.centre[:, 0]
        return ModelStep(logits, TransformerState(past), cross_weights[:, :, 0].mean(dim=1), centre)

    def run(
        self,
        src: Tensor,
        src_lengths: Tensor,
        tgt_in: Tensor,
        tgt_lengths: Tensor | None = None,
        window: WindowArg = "config",
        hard: bool = False,
    ) -> tuple[Tensor, AttentionMaps]:
        """Teacher-forced pass over whole target prefixes, all positions at once.

        Args:
            src: Source ids ``(B, S)``.
            src_lengths: Real source lengths ``(B,)``.
            tgt_in: Decoder inputs (``<bos>`` + target) ``(B, T)``; padding only at the end.
            tgt_lengths: Target lengths ``(B,)`` (places a window); optional.
            window: ``"config"``, ``None`` or a half-width ``D`` (see ``step``).
            hard: Hard encoder–decoder attention.

        Returns:
            ``(hidden, maps)``: final decoder states ``(B, T, D)`` and every attention weight.
        """
        values, src_mask, encoder_maps = self._encode(src, src_lengths)
        B, T = tgt_in.shape
        causal = torch.ones(T, T, dtype=torch.bool, device=src.device).tril()  # (T, T): no look-ahead
        real = tgt_in != self.cfg.pad_id  # (B, T)
        real[:, 0] = True  # <bos> is always there, so every row keeps a key
        self_mask = causal.unsqueeze(0) & real.unsqueeze(1)  # (B, T, T)
        spec = self._window(self.resolve_window(window), torch.arange(T, device=src.device), src_mask,
                            target_lengths(src_lengths, tgt_lengths, self.cfg.length_ratio, src.device))
        x = self._embed(self.tgt_embedding, tgt_in)
        self_maps, cross_maps = [], []
        for layer in self.decoder_layers:
            cross = layer.cross_attn.project_keys(values)
            x, _, self_weights, cross_weights = layer(x, None, self_mask, cross, src_mask, spec, hard)
            self_maps.append(self_weights)
            cross_maps.append(cross_weights)
        maps = AttentionMaps(torch.stack(encoder_maps, 1), torch.stack(self_maps, 1), torch.stack(cross_maps, 1))
        return self.decoder_norm(x), maps

    def forward(
        self,
        src: Tensor,
        src_lengths: Tensor,
        tgt_in: Tensor,
        tgt_lengths: Tensor | None = None,
        window: WindowArg = "config",
        hard: bool = False,
        teacher_forcing: float = 1.0,
        select: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Teacher-forced forward pass (the signature of ``Seq2Seq.forward``).

        Args:
            src: Source ids ``(B, S)``.
            src_lengths: Real source lengths ``(B,)``.
            tgt_in: Decoder inputs (``<bos>`` + target) ``(B, T)``.
            tgt_lengths: Target lengths ``(B,)``; optional.
            window: ``"config"``, ``None`` or a half-width ``D``.
            hard: Hard encoder–decoder attention.
            teacher_forcing: Must be 1: all positions are computed at once from the gold prefix.
            select: Optional ``(B, T)`` mask of the positions that need logits; they come back
                flattened as ``(N, V)``.

        Returns:
            ``(logits, weights)``: ``(B, T, V)`` (or ``(N, V)``) and the last layer's head-mean
            encoder–decoder attention ``(B, T, S)``.

        Raises:
            ValueError: If ``teacher_forcing`` is below 1.
        """
        if teacher_forcing < 1.0:
            raise ValueError("the Transformer trains with teacher forcing 1 (every position at once); "
                             f"got teacher_forcing={teacher_forcing}")
        hidden, maps = self.run(src, src_lengths, tgt_in, tgt_lengths, window, hard)
        if select is not None:
            hidden = hidden[select]  # (N, D)
        return self.generator(hidden), maps.cross[:, -1].mean(dim=1)

    @torch.inference_mode()
    def attention_maps(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor, window: WindowArg = "config",
                       hard: bool = False) -> AttentionMaps:
        """Every layer's and head's attention for given outputs (e.g. a decoded sentence).

        The decoder is causal, so re-running it on its own output gives the weights it used
        while decoding.

        Args:
            src: Source ids ``(B, S)``.
            src_lengths: Real source lengths ``(B,)``.
            tgt_in: ``<bos>`` + output tokens, ``(B, T)``.
            window: As used when decoding.
            hard: As used when decoding.

        Returns:
            The encoder, decoder and encoder–decoder maps.
        """
        return self.run(src, src_lengths, tgt_in, window=window, hard=hard)[1]


def build_transformer(cfg: ModelConfig) -> Transformer:
    """Build a [`Transformer`][attention_core.model.transformer.Transformer] from a validated config."""
    return Transformer(cfg)
