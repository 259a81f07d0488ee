"""Training precision: full float32, or mixed precision with bfloat16 (CPU, CUDA) or float16 (CUDA).

Mixed precision runs the matrix products of the forward and backward passes in a 16-bit type under
``torch.autocast``, while the weights, the optimiser state, the softmax and the loss stay in float32.
It pays where the hardware multiplies 16-bit numbers natively: on a CPU with AVX-512 BF16 or AMX a
bfloat16 product of the vocabulary projection's size runs about 5× faster than in float32
(``benchmarks/bench.py`` measures the whole training step), on a CPU without them it is emulated and
slower. ``auto`` therefore chooses by device:

* CUDA → ``fp16`` with a gradient scaler (float16 has a narrow exponent range);
* a CPU with native bfloat16 → ``bf16`` (same exponent range as float32: no scaler needed);
* any other CPU → ``fp32``.

Examples:
    >>> import torch
    >>> resolve_precision("fp32", torch.device("cpu"))
    'fp32'
    >>> AMP_DTYPES["bf16"]
    torch.bfloat16
"""

from __future__ import annotations

import contextlib

import torch

PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16", "fp16")
"""Names accepted by ``TrainConfig.precision`` and ``attention-lab train --precision``."""

AMP_DTYPES: dict[str, torch.dtype | None] = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
"""The autocast type of each resolved precision (``None``: autocast off)."""


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX-512 BF16 or AMX), as oneDNN reports it."""
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_precision(precision: str, device: torch.device) -> str:
    """Turn a precision setting into ``fp32``, ``bf16`` or ``fp16`` for a device.

    Args:
        precision: One of [`PRECISIONS`][attention_core.training.precision.PRECISIONS].
        device: The training device.

    Returns:
        The precision to train with.

    Raises:
        ValueError: For an unknown name, or ``fp16`` on a device other than CUDA.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if precision == "auto":
        if device.type == "cuda":
            return "fp16"
        return "bf16" if device.type == "cpu" and cpu_has_native_bf16() else "fp32"
    if precision == "fp16" and device.type != "cuda":
        raise ValueError(f"fp16 mixed precision needs a CUDA device (training on {device}); use bf16 or fp32")
    return precision


def autocast(device_type: str, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """``torch.autocast`` to ``dtype`` on ``device_type``, or a no-op for ``None`` (float32).

    Args:
        device_type: ``"cpu"`` or ``"cuda"``.
        dtype: An entry of [`AMP_DTYPES`][attention_core.training.precision.AMP_DTYPES].
    """
    return torch.autocast(device_type, dtype=dtype) if dtype is not None else contextlib.nullcontext()
