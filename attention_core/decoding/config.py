"""How to decode: one typed config for the search, the attention at decode time and the guards on the output."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.repetition import LoopGuard
from attention_core.model.seq2seq import WindowArg

if TYPE_CHECKING:
    from attention_core.data.tasks import Task


@dataclass(frozen=True)
class DecodeConfig:
    """The settings of one decoding: the search, the attention at decode time, the guards on the output.

    [`Translator.translate`][attention_core.decoding.translator.Translator.translate] takes them by keyword or as one
    config.
    ``None`` in ``constrained``, ``loop_guard`` and ``coverage`` means the task's default;
    [`for_task`][attention_core.decoding.config.DecodeConfig.for_task] fills them in.

    Attributes:
        beam_size: 1 for greedy search, more for beam search; ``None``: the caller's default (greedy for
            ``Translator.translate`` and ``evaluate``, 5 for ``beam_search`` called directly).
        window: ``"config"`` (the model's own), ``None`` (global) or a half-width ``D`` applied at decode time.
        hard: Hard (argmax) attention at decode time.
        constrained: Couplet constraints; default: on for the couplet task, off otherwise.
        rules: With constraints, the reader's rules to enforce (default
            [`CoupletRules()`][attention_core.decoding.couplet.CoupletRules]: all on).
        max_len: Output length limit (default: ``search.default_max_len``).
        loop_guard: Keep outputs out of loops: ``True`` is
            [`LoopGuard()`][attention_core.decoding.repetition.LoopGuard] (no token more than three times in a row,
            no 6-gram twice), a ``LoopGuard`` sets its limits, ``False`` none, ``None`` the task's default
            (``Task.loop_guard``: on for translation).
        coverage: Beam search's coverage penalty ``β`` (outputs that leave source words without attention rank
            lower; [`coverage_penalty`][attention_core.decoding.search.coverage_penalty]); ``None`` is the task's
            default (``Task.coverage``), or off where there is no task (the searches called directly). Greedy
            search ignores it.
        alpha: Beam search's length-normalisation exponent: a finished output scores ``log p / len^alpha``
            (0: the raw log-probability). Greedy search ignores it.

    The searches themselves ([`greedy`][attention_core.decoding.search.greedy],
    [`beam_search_nbest`][attention_core.decoding.search.beam_search_nbest]) read the search's fields (beam size,
    length limit, window, hard attention, coverage, alpha); the constraints (couplet rules, loop guard) reach them
    as one ``constraint``, which the [`Translator`][attention_core.decoding.translator.Translator] builds from
    ``constrained``, ``rules`` and ``loop_guard``.
    """

    beam_size: int | None = None
    window: WindowArg = "config"
    hard: bool = False
    constrained: bool | None = None
    rules: CoupletRules | None = None
    max_len: int | None = None
    loop_guard: bool | LoopGuard | None = None
    coverage: float | None = None
    alpha: float = 1.0

    def for_task(self, task: Task) -> DecodeConfig:
        """This config with the task's defaults in place of ``None``, the loop guard as a ``LoopGuard`` or ``False``.

        Raises:
            ValueError: For a negative or non-finite coverage penalty (whatever the beam: greedy search never
                reaches the search's own check).
        """
        constrained = task.constrained if self.constrained is None else self.constrained
        loop_guard = task.loop_guard if self.loop_guard is None else self.loop_guard
        coverage = task.coverage if self.coverage is None else self.coverage
        check_coverage(coverage)
        guard = loop_guard if isinstance(loop_guard, LoopGuard) else LoopGuard() if loop_guard else False
        beam_size = 1 if self.beam_size is None else self.beam_size
        return replace(self, beam_size=beam_size, constrained=constrained, loop_guard=guard, coverage=coverage)

    @property
    def guard(self) -> LoopGuard | None:
        """The loop guard of a config [`for_task`][attention_core.decoding.config.DecodeConfig.for_task] filled."""
        return self.loop_guard if isinstance(self.loop_guard, LoopGuard) else None

    @classmethod
    def of(cls, config: DecodeConfig | None = None, **settings: object) -> DecodeConfig:
        """``config`` (or the defaults) with ``settings`` changed.

        Raises:
            TypeError: For a setting that is not a field of ``DecodeConfig`` (its name in the message).
        """
        if config is not None and not isinstance(config, DecodeConfig):
            raise TypeError(f"config must be a DecodeConfig, got {type(config).__name__} {config!r}: pass settings by "
                            "name (beam_size=5)")
        unknown = sorted(set(settings) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown decoding setting(s) {', '.join(unknown)}; "
                            f"DecodeConfig has {', '.join(f.name for f in fields(cls))}")
        return replace(config or cls(), **settings)  # type: ignore[arg-type]


def check_coverage(coverage: float) -> None:
    """Refuse a coverage-penalty weight that is not a finite number ≥ 0 (``nan`` included).

    Raises:
        ValueError: Naming the weight.
    """
    if not 0 <= coverage < float("inf"):
        raise ValueError(f"the coverage penalty's weight must be a finite number ≥ 0, got {coverage}")
