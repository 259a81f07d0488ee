"""A training run stopped part-way, as a crash or the end of a session stops it: for the tests of resuming."""

from collections.abc import Callable

import pytest

import attention_core.training.loop as training


def stop_at_step(monkeypatch: pytest.MonkeyPatch, step: int) -> Callable:
    """Make the ``step``-th call of ``training.train_step`` from now (1-based) raise ``KeyboardInterrupt``.

    Returns:
        The real ``train_step``, to put back (``monkeypatch.setattr(training, "train_step", real)``) before the run
        is resumed.
    """
    real, calls = training.train_step, []

    def stopped(*args, **kwargs):
        calls.append(1)
        if len(calls) == step:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "train_step", stopped)
    return real
