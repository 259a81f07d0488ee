"""Which data each bundled model was trained on, said wherever a visitor could compare models that differ in it.

While a task's zoo is being retrained (issue #51), some of its variants are on the new training mix and the rest
on the earlier data: comparing ``luong-general`` with ``luong-dot`` then compares two data sets as much as two
attention scores. The variant drop-downs (each tab's and each side of Compare) and the line under each output
say so, naming each model's data; when every model of a task is on the same data, they say nothing.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from demo.models import OWN, variant_label

if TYPE_CHECKING:
    from demo.models import ModelRegistry


def training_data(meta: dict) -> str | None:
    """The corpora a model was trained on, in one short phrase, from its metadata.

    Args:
        meta: The model's ``meta`` (``data.sources`` in order, the task's own corpus first; ``train.main_repeat``,
            how many times an epoch that corpus is read).

    Returns:
        E.g. ``cmn-eng ×3 + cmn-eng-extra + tv4dialog``; ``None`` when the metadata does not say.
    """
    data = meta.get("data") if isinstance(meta.get("data"), dict) else {}
    sources = data.get("sources") if isinstance(data.get("sources"), list) else []
    names = list(dict.fromkeys(PurePath(str(s["path"])).parent.name  # a corpus's several files: its folder once
                               for s in sources if isinstance(s, dict) and s.get("path")))
    if not names:
        return None
    train = meta.get("train") if isinstance(meta.get("train"), dict) else {}
    repeat = train.get("main_repeat")
    if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 1:
        names[0] += f" ×{repeat}"
    return " + ".join(names)


def data_groups(registry: ModelRegistry, task: str) -> dict[str, list[str]]:
    """A task's bundled models grouped by their training data, the default model's group first.

    Returns:
        ``{data: [variant, …]}`` in the drop-down's order; a model whose metadata does not say is left out.
    """
    groups: dict[str, list[str]] = {}
    default = registry.default_variant(task)
    for _, variant in sorted(registry.variants(task), key=lambda choice: choice[1] != default):
        card = registry.card(task, variant)
        data = training_data(card.meta) if card is not None else None
        if data is not None:
            groups.setdefault(data, []).append(variant)
    return groups


def mixed_zoo_note(registry: ModelRegistry, task: str) -> str | None:
    """The drop-down's line while a task's models differ in their data: which models are on which.

    Returns:
        ``None`` when every model of the task is on the same data (or the task is models of your own).
    """
    if task == OWN:
        return None
    groups = data_groups(registry, task)
    if len(groups) < 2:
        return None
    largest = max(groups, key=lambda data: len(groups[data]))
    parts = [", ".join(variant_label(v, registry.card(task, v).cfg) for v in variants) + f": trained on {data}"
             for data, variants in groups.items() if data != largest]
    parts.append(f"the other {len(groups[largest])} 其余 {len(groups[largest])} 个: {largest}")
    return ("the models are being retrained 模型库正在重训, so their data differ 训练数据不同 — " + "; ".join(parts)
            + ". Two models on different data differ in more than their attention 数据不同，差别不只在注意力.")


def model_data_line(registry: ModelRegistry, task: str, variant: str) -> str | None:
    """``trained on …`` for the line under an output, while the task's models differ in their data."""
    if mixed_zoo_note(registry, task) is None:
        return None
    card = registry.card(task, variant)
    data = training_data(card.meta) if card is not None else None
    return f"trained on {data} 训练数据" if data is not None else None
