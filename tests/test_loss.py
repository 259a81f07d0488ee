"""The written-out label-smoothed cross-entropy gives the library call's value and gradient."""

import pytest
import torch
import torch.nn.functional as F

from attention_core.training.loss import smoothed_cross_entropy


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_value_and_gradient_equal_cross_entropy(epsilon: float, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    logits = (3 * torch.randn(9, 11)).to(dtype)
    target = torch.tensor([1, 0, 10, 0, 3, 4, 4, 0, 7])  # 0 is padding: three rows do not count
    results = []
    for loss_of in (lambda x: F.cross_entropy(x.float(), target, ignore_index=0, label_smoothing=epsilon),
                    lambda x: smoothed_cross_entropy(x, target, epsilon, ignore_index=0)):
        x = logits.clone().requires_grad_()
        loss = loss_of(x)
        loss.backward(torch.tensor(2.0))  # an upstream gradient other than 1
        assert torch.equal(x.detach(), logits)  # the logits are left as they were (float32 ones too: no in-place exp)
        results.append((loss.detach(), x.grad))
    (want, want_grad), (got, got_grad) = results
    assert got.dtype == torch.float32 and got_grad.dtype == dtype
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-5 if dtype == torch.float32 else 1e-2, atol=1e-7)
    assert not got_grad[target == 0].any()  # padding rows get no gradient


def test_no_padding_and_no_counted_rows() -> None:
    logits, target = torch.randn(4, 6), torch.tensor([5, 1, 2, 3])
    torch.testing.assert_close(smoothed_cross_entropy(logits, target, 0.1),
                               F.cross_entropy(logits, target, label_smoothing=0.1))
    assert smoothed_cross_entropy(logits, torch.zeros(4, dtype=torch.long), 0.1, ignore_index=0).isnan()


def test_a_second_backward_pass_is_refused_not_wrong() -> None:
    """The gradient is made in the saved exponentials: going through the graph again must fail loudly."""
    logits = torch.randn(4, 6, requires_grad=True)
    loss = smoothed_cross_entropy(logits, torch.tensor([5, 1, 2, 3]), 0.1)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="inplace"):
        loss.backward()


def test_a_padding_row_that_overflowed_leaves_the_gradient_finite() -> None:
    """The masked step passes padding rows through the loss; their inf or NaN (float16 overflow) must not leak."""
    logits = torch.randn(4, 6)
    logits[1, 2], logits[3] = float("inf"), float("nan")  # rows 1 and 3 are padding
    x = logits.clone().requires_grad_()
    loss = smoothed_cross_entropy(x, torch.tensor([5, 0, 2, 0]), 0.1, ignore_index=0)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(x.grad).all() and not x.grad[[1, 3]].any()
