"""The training loss: label-smoothed cross-entropy with its gradient written out.

``F.cross_entropy(logits.float(), target, label_smoothing=ε)`` keeps a float32 copy of the logits, their
log-softmax and its gradient, each an ``(N, V)`` tensor written and read again. At the zoo's sizes (``N`` ≈ 800
target tokens a batch, ``V`` ≈ 4,000) every such sweep is memory traffic the CPU waits for, so the loss here makes
as few as it can: the forward pass exponentiates one float32 copy of the logits in place and keeps it (with each
row's sum) for the backward pass, which turns it into the gradient in place (two sweeps, ``mul_`` and ``sub_``)
and casts it back. ``benchmarks/train_step.py`` times the whole training step (``results/train_step.md``);
``tests/test_loss.py`` holds the value and gradient to the library call's.

With ``lse = log Σ_j exp x_j``, the smoothed loss of one row with gold class ``y`` is

``(1 − ε)(lse − x_y) + ε (lse − mean_j x_j) = lse − (1 − ε) x_y − ε mean_j x_j``,

and its gradient ``softmax(x) − (1 − ε) onehot(y) − ε / V``, averaged over the rows that count.
"""

from __future__ import annotations

import torch
from torch import Tensor


class _SmoothedCrossEntropy(torch.autograd.Function):
    """Mean label-smoothed cross-entropy over the rows whose target is not ``ignore_index``."""

    @staticmethod
    def forward(ctx, logits: Tensor, target: Tensor, epsilon: float, ignore_index: int) -> Tensor:  # noqa: D102
        counted = target != ignore_index  # (N,)
        gold = logits.gather(1, target.clamp(min=0).unsqueeze(1)).squeeze(1).float()  # (N,)
        mean = logits.sum(dim=-1, dtype=torch.float32) / logits.size(-1)  # (N,)
        exp = logits.to(torch.float32, copy=True)  # (N, V): a copy, whatever the logits' type
        top = exp.amax(dim=-1, keepdim=True)  # (N, 1)
        exp.sub_(top).exp_()  # exp(x − max x), in place
        total = exp.sum(dim=-1)  # (N,)
        lse = total.log() + top.squeeze(1)
        rows = lse - (1 - epsilon) * gold - epsilon * mean
        count = counted.sum()
        ctx.save_for_backward(exp, total, target, counted, count)
        ctx.epsilon, ctx.dtype = epsilon, logits.dtype
        return torch.where(counted, rows, 0).sum() / count

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None, None]:  # noqa: D102
        exp, total, target, counted, count = ctx.saved_tensors
        epsilon, V = ctx.epsilon, exp.size(-1)
        scale = (grad / count) * counted  # (N,): each row's share of the mean, 0 for padding
        # softmax · scale − ε/V · scale, made in place in the saved exponentials (a second backward pass through
        # the same graph is refused by autograd's check of saved tensors, as for any in-place change)
        g = exp.mul_((scale / total).unsqueeze(1)).sub_((epsilon / V * scale).unsqueeze(1))  # (N, V)
        g.masked_fill_(~counted.unsqueeze(1), 0)  # a padding row's overflow (inf, NaN) times 0 is still NaN
        g.scatter_add_(1, target.clamp(min=0).unsqueeze(1), (-(1 - epsilon) * scale).unsqueeze(1))
        return g.to(ctx.dtype), None, None, None


def smoothed_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0, ignore_index: int = -100) -> Tensor:
    """Mean label-smoothed cross-entropy, computed in float32 whatever the logits' type.

    The same value as ``F.cross_entropy(logits.float(), target, ignore_index=ignore_index,
    label_smoothing=epsilon)``, and the same gradient (in the logits' type).

    Args:
        logits: ``(N, V)``.
        target: Gold classes ``(N,)``; rows whose target is ``ignore_index`` do not count.
        epsilon: Label smoothing ``ε`` in ``[0, 1]``.
        ignore_index: The target that marks a row not to count (padding).

    Returns:
        A scalar tensor (NaN when no row counts, as ``F.cross_entropy`` gives).

    Examples:
        >>> import torch, torch.nn.functional as F
        >>> logits, target = torch.randn(5, 7), torch.tensor([1, 0, 6, 0, 3])
        >>> ours = smoothed_cross_entropy(logits, target, 0.1, ignore_index=0)
        >>> torch.allclose(ours, F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1))
        True
    """
    return _SmoothedCrossEntropy.apply(logits, target, epsilon, ignore_index)
