"""The training loss: label-smoothed cross-entropy with its gradient written out.

``F.cross_entropy(logits.float(), target, label_smoothing=ε)`` keeps a float32 copy of the logits, their
log-softmax and its gradient, each an ``(N, V)`` tensor written and read again. Written out, the forward
pass needs only each row's log-sum-exp, its gold logit and its mean, and the backward pass recomputes the
softmax from the saved logits in one sweep: half the time of the library call on a CPU
(``benchmarks/train_step.py``), the same value and gradient (``tests/test_loss.py``).

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
        x = logits.float()  # (N, V)
        lse = torch.logsumexp(x, dim=-1)  # (N,)
        counted = target != ignore_index  # (N,)
        gold = x.gather(1, target.clamp(min=0).unsqueeze(1)).squeeze(1)  # (N,)
        rows = lse - (1 - epsilon) * gold - epsilon * x.mean(dim=-1)
        count = counted.sum()
        ctx.save_for_backward(logits, target, lse, counted, count)
        ctx.epsilon = epsilon
        return torch.where(counted, rows, 0).sum() / count

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None, None]:  # noqa: D102
        logits, target, lse, counted, count = ctx.saved_tensors
        epsilon, V = ctx.epsilon, logits.size(-1)
        g = torch.exp(logits.float() - lse.unsqueeze(1))  # softmax, (N, V)
        g.sub_(epsilon / V)
        gold = torch.full((g.size(0), 1), -(1 - epsilon), dtype=g.dtype, device=g.device)
        g.scatter_add_(1, target.clamp(min=0).unsqueeze(1), gold)
        g.mul_((grad / count) * counted.unsqueeze(1))
        return g.to(logits.dtype), None, None, None


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
