"""Which data each bundled model was trained on, said wherever a visitor could compare models that differ in it.

While a task's zoo is being retrained (issue #51), some of its variants are on the new training mix and the rest
on the earlier data: comparing ``luong-general`` with ``luong-dot`` then compares two data sets as much as two
attention scores. The variant drop-downs (each tab's and each side of Compare) and the line under each output
say so, naming each model's data; when every model of a task is on the same data, they say nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from attention_core.data.info import DataInfo
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
    names = DataInfo.read(meta.get("data")).corpus_names()
    if not names:
        return None
    train = meta.get("train") if isinstance(meta.get("train"), dict) else {}
    repeat = train.get("main_repeat")
    if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 1:
        names[0] += f" ×{repeat}"
    return " + ".join(names)


def folder_training_data(folder: Path) -> str | None:
    """[`training_data`][demo.provenance.training_data] of a model folder, from its ``config.json`` alone.

    Returns:
        The phrase, or ``None`` for a folder without a config (or whose metadata does not say).
    """
    config = folder / "config.json"
    if not config.is_file():
        return None
    return training_data(json.loads(config.read_text(encoding="utf-8")).get("meta", {}))


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


NEW, EARLIER = "new data 新数据", "earlier data 旧数据"
"""What a model's data is called while its task's zoo is retrained: the default model's, or the one before."""


def same_data(groups: dict[str, list[str]], variant: str | None) -> tuple[int, list[str]]:
    """Where ``variant`` is in ``data_groups``' answer: its group's place (0: the default's) and its members.

    Returns:
        ``(-1, [])`` for a variant in no group (its metadata does not say its data).
    """
    return next(((i, variants) for i, variants in enumerate(groups.values()) if variant in variants), (-1, []))


def data_status(registry: ModelRegistry, task: str, variant: str | None) -> str | None:
    """``NEW`` (the default model's data), ``EARLIER`` (not yet retrained), or ``None`` when the zoo is not mixed."""
    groups = data_groups(registry, task) if task != OWN else {}
    place, _ = same_data(groups, variant)
    if len(groups) < 2 or place < 0:
        return None
    return NEW if place == 0 else EARLIER


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
    parts = []
    for i, (data, variants) in enumerate(groups.items()):
        labels = ", ".join(variant_label(v, registry.card(task, v).cfg) for v in variants)
        who = labels if i == 0 or len(variants) <= 3 else f"the other {len(variants)} 其余 {len(variants)} 个"
        parts.append(f"{NEW if i == 0 else EARLIER} ({data}): {who}")
    return ("Retraining in progress 模型库重训中 — " + "; ".join(parts)
            + " (×3: read three times an epoch; tv4dialog: TV dialogue). Models on different data differ in more "
            "than their attention 数据不同，差别不只在注意力.")


def model_data_line(registry: ModelRegistry, task: str, variant: str) -> str | None:
    """``new data 新数据: …`` for the line under an output, while the task's models differ in their data."""
    status = data_status(registry, task, variant)
    card = registry.card(task, variant)
    data = training_data(card.meta) if card is not None else None
    if status is None or data is None:
        return None
    return f"{status}: {data}" + (" (not yet retrained 尚未重训)" if status == EARLIER else "")


def variant_choices(registry: ModelRegistry, task: str) -> list[tuple[str, str]]:
    """The variant drop-down's ``(label, variant)`` choices, each label saying its data while the zoo is mixed."""
    return [(label + (f" · {status}" if (status := data_status(registry, task, v)) else ""), v)
            for label, v in registry.variants(task)]
