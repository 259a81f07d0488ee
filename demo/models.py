"""The models the app serves, loaded once at start-up from the bundled folder or a Hub repo."""

from __future__ import annotations

from pathlib import Path

import torch

from attention_core.hub import ModelLoadError, load_folder
from attention_core.pipeline import Translator

BUNDLED = Path(__file__).resolve().parents[1] / "models"
"""The bundled model zoo: ``models/<task>/<variant>/``."""

VARIANT_LABELS: dict[str, str] = {
    "none": "no attention 无注意力 (baseline)",
    "bahdanau": "Bahdanau · concat/additive 加性",
    "luong-dot": "Luong · dot 点积",
    "luong-scaled_dot": "Luong · scaled dot 缩放点积",
    "luong-general": "Luong · general 双线性",
    "luong-concat": "Luong · concat 加性",
    "luong-general-local-p": "Luong · general · local-p 局部预测",
}
"""Drop-down labels of the zoo variants, in display order."""

DEFAULT_VARIANT = "luong-general"


class ModelRegistry:
    """Translators by task and variant.

    Args:
        models: ``{task: {variant: translator}}``.
        source: Where they came from (shown in the app).
    """

    def __init__(self, models: dict[str, dict[str, Translator]], source: str = "") -> None:
        self.models = models
        self.source = source

    @classmethod
    def load(cls, root: str | Path = BUNDLED, device: str | torch.device | None = None) -> ModelRegistry:
        """Load every ``<task>/<variant>/`` model folder under ``root``.

        Raises:
            ModelLoadError: If ``root`` holds no model, or one folder is broken (named in the message).
        """
        root = Path(root)
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        models: dict[str, dict[str, Translator]] = {}
        for config in sorted(root.glob("*/*/config.json")):
            translator = load_folder(config.parent, device)
            models.setdefault(translator.task.name, {})[config.parent.name] = translator
        if not models:
            raise ModelLoadError(f"no models under {root} (expected <task>/<variant>/config.json)")
        return cls(models, "bundled zoo models/" if root.resolve() == BUNDLED else str(root))

    @classmethod
    def from_hub(cls, repo_id: str, revision: str | None = None,
                 device: str | torch.device | None = None) -> ModelRegistry:
        """Download a zoo repo laid out as ``<task>/<variant>/`` and load it."""
        from huggingface_hub import snapshot_download

        try:
            folder = snapshot_download(repo_id, revision=revision)
        except Exception as err:  # network, auth or missing repo: one readable line
            raise ModelLoadError(f"cannot download {repo_id!r}: {str(err).splitlines()[0]}") from None
        registry = cls.load(folder, device)
        registry.source = f"hf://{repo_id}"
        return registry

    def tasks(self) -> list[str]:
        """Tasks with at least one model."""
        return list(self.models)

    def variants(self, task: str) -> list[tuple[str, str]]:
        """``(label, variant)`` choices for a task, in display order."""
        have = self.models.get(task, {})
        ordered = [v for v in VARIANT_LABELS if v in have]
        ordered += sorted(v for v in have if v not in VARIANT_LABELS)
        return [(VARIANT_LABELS.get(v, v), v) for v in ordered]

    def default_variant(self, task: str) -> str | None:
        """The variant selected at start: Luong-general when present."""
        names = [v for _, v in self.variants(task)]
        return DEFAULT_VARIANT if DEFAULT_VARIANT in names else (names[0] if names else None)

    def get(self, task: str, variant: str) -> Translator:
        """The translator of one variant.

        Raises:
            KeyError: With the available variants, if it is not loaded.
        """
        try:
            return self.models[task][variant]
        except KeyError:
            have = ", ".join(v for _, v in self.variants(task)) or "none"
            raise KeyError(f"no {task} model {variant!r} is loaded (available: {have})") from None
