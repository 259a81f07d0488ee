"""Gradient-based importance of each source token for each output token, to set beside attention.

Attention weights say where the decoder *looked*; they need not say which source tokens the output *depended on*
(Jain & Wallace 2019; Wiegreffe & Pinter 2019). Input × gradient (Shrikumar et al. 2017; Denil et al. 2014) is a
first-order answer: the output token's log-probability, fed back through the whole model (encoder, attention,
decoder), differentiated with respect to each source token's embedding and multiplied by that embedding,

    importance(t, s) = | x_s · ∂ log p(y_t | y_<t, x) / ∂x_s |,

normalised so each output row sums to 1 like a row of attention. ``x_s · ∂/∂x_s`` is exactly the change of the
log-probability when token ``s``'s embedding is scaled up by a small fraction (tested against finite differences).
The output is fed back with teacher forcing, so the rows belong to the very tokens the model wrote.

[`kendall_tau`][attention_core.analysis.attribution.kendall_tau] compares the two rankings of the source tokens per
output token (Kendall's τ-b: 1 = the same order, 0 = unrelated, −1 = reversed), the agreement measure of Jain & Wallace.

Examples:
    >>> a = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    >>> b = torch.tensor([[0.5, 0.3, 0.2], [0.6, 0.3, 0.1]])
    >>> kendall_tau(a, b)
    tensor([ 1.0000, -0.8165])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention_core.data.batch import make_batch
from attention_core.decoding.translator import Output, Translator
from attention_core.model.transformer import Transformer


@dataclass
class Importance:
    """Gradient importance beside attention for one output.

    Attributes:
        gradient: ``|input × gradient|``, each row normalised to sum to 1, ``(T_out, S)`` — the rows of
            ``Output.weights`` (the ``<eos>`` row included when the output finished).
        signed: The same before the absolute value and normalisation, ``(T_out, S)``.
        agreement: Kendall's τ-b between each row of attention and of ``gradient``, ``(T_out,)``; ``nan`` for a
            one-token source (no pair of tokens to rank) and for the no-attention baseline, whose attention rows
            are all 0 (its gradient rows still say what the output depended on).
    """

    gradient: Tensor
    signed: Tensor
    agreement: Tensor


def kendall_tau(a: Tensor, b: Tensor) -> Tensor:
    """Kendall's τ-b between matching rows of ``a`` and ``b``, ties handled as τ-b does.

    Args:
        a: Scores, ``(T, S)``.
        b: Scores, ``(T, S)``.

    Returns:
        ``(T,)``: (concordant − discordant pairs) / √(pairs not tied in ``a`` · pairs not tied in ``b``);
        ``nan`` where either row has no untied pair.
    """
    if a.shape != b.shape or a.dim() != 2:
        raise ValueError(f"kendall_tau needs two (T, S) tensors of one shape, got {tuple(a.shape)}, {tuple(b.shape)}")
    S = a.size(-1)
    i, j = torch.triu_indices(S, S, 1, device=a.device)  # every pair of source positions once
    da, db = torch.sign(a[:, i] - a[:, j]), torch.sign(b[:, i] - b[:, j])  # (T, pairs)
    untied = ((da != 0).sum(-1) * (db != 0).sum(-1)).double().sqrt()
    return ((da * db).sum(-1).double() / untied).float()  # 0 / 0 = nan


def _source_embedding(model: nn.Module) -> nn.Embedding:
    return model.src_embedding if isinstance(model, Transformer) else model.encoder.embedding


def input_x_gradient(translator: Translator, output: Output) -> Importance:
    """Gradient importance of every source token for every row of an output's attention.

    Args:
        translator: The model that wrote ``output``.
        output: One output of ``translator.translate`` (its source and its tokens are fed back).

    Returns:
        The importance rows and their agreement with ``output.weights``.

    Raises:
        ValueError: For an output without rows.
    """
    model = translator.model
    if output.weights.numel() == 0:
        raise ValueError("the output has no rows to explain")
    src_ids = translator.src_vocab.encode(output.source_tokens)
    tgt_ids = translator.tgt_vocab.encode(output.tokens)
    batch = make_batch([(src_ids, tgt_ids)]).to(translator.device)
    embedded: list[Tensor] = []

    def leaf(module: nn.Module, inputs: tuple, out: Tensor) -> Tensor | None:
        if embedded:  # a shared table embeds the target too; the source comes first
            return None
        out = out.detach().requires_grad_(True)
        embedded.append(out)
        return out

    was_training = model.training
    model.eval()
    handle = _source_embedding(model).register_forward_hook(leaf)
    try:
        with torch.enable_grad(), torch.inference_mode(False):
            logits = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)[0][0]  # (T+1, V)
            log_probs = torch.log_softmax(logits.float(), dim=-1)
            rows = output.weights.size(0)  # T tokens, plus <eos> when the output finished
            targets = batch.tgt_out[0, :rows]
            x = embedded[0]
            signed = torch.stack([
                (torch.autograd.grad(log_probs[t, targets[t]], x, retain_graph=t < rows - 1)[0][0] * x[0].detach())
                .sum(-1)
                for t in range(rows)
            ])  # (T_out, S)
    finally:
        handle.remove()
        model.train(was_training)
    signed = signed.float().cpu()
    gradient = signed.abs()
    gradient = gradient / gradient.sum(-1, keepdim=True).clamp_min(1e-12)
    return Importance(gradient, signed, kendall_tau(output.weights.float().cpu(), gradient))
