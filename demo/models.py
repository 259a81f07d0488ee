"""The models the app serves, loaded once at start-up from the bundled folder or a Hub repo.

Models are loaded on the CPU (or the device asked for) and placed on CUDA by
[`ModelRegistry.get`][demo.models.ModelRegistry.get] when a request finds CUDA available. On a
ZeroGPU Space CUDA exists only inside a ``spaces.GPU``-decorated call, which is where the handlers
call ``get``; elsewhere a GPU machine simply gets its models on the GPU at the first request.
"""

from __future__ import annotations

import copy
import re
import threading
from pathlib import Path

import torch

from attention_core.hub import FILES, OPTIONAL_FILES, ModelLoadError, load_folder
from attention_core.pipeline import Translator
from attention_core.transformer import Transformer

BUNDLED = Path(__file__).resolve().parents[1] / "models"
"""The bundled model zoo: ``models/<task>/<variant>/``."""

VARIANT_LABELS: dict[str, str] = {
    "none": "no attention 无注意力 (baseline)",
    "bahdanau": "Bahdanau · concat/additive 加性",
    "luong-dot": "Luong · dot 点积",
    "luong-scaled_dot": "Luong · scaled dot 缩放点积",
    "luong-general": "Luong · general 双线性",
    "luong-concat": "Luong · concat 加性",
    "luong-location": "Luong · location 位置",
    "luong-general-local-p": "Luong · general · local-p 局部预测",
    "transformer": "Transformer · multi-head 多头",
}
"""Drop-down labels of the zoo variants, in display order (a loaded Transformer's label also gives its size,
see [`variant_label`][demo.models.variant_label])."""

DEFAULT_VARIANT = "luong-general"

ZOO_PATTERNS = [f"*/*/{name}" for name in (*FILES, *OPTIONAL_FILES, "README.md")]
"""What ``from_hub`` downloads from a zoo repo: the model files of each ``<task>/<variant>/``, nothing else."""
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""A Hub repo id, ``namespace/name``."""


def variant_label(variant: str, model: torch.nn.Module | None = None) -> str:
    """The drop-down label of a variant; a Transformer's names its heads and layers, read from its config.

    Args:
        variant: Zoo variant name (the model folder's name).
        model: The loaded model, when there is one.

    Returns:
        E.g. ``"Transformer · 4 heads × 2 layers 多头"``.
    """
    if isinstance(model, Transformer):
        name = "Transformer" if variant == "transformer" else variant
        return f"{name} · {model.cfg.heads} heads × {model.cfg.num_layers} layers 多头"
    return VARIANT_LABELS.get(variant, variant)


class ModelRegistry:
    """Translators by task and variant.

    Args:
        models: ``{task: {variant: translator}}``.
        source: Where they came from (shown in the app).
        device: Serve on this device; ``None`` serves on CUDA whenever a request finds it available
            (a ZeroGPU call), else where the models were loaded.
    """

    def __init__(
        self, models: dict[str, dict[str, Translator]], source: str = "", device: str | torch.device | None = None
    ) -> None:
        self.models = models
        self.source = source
        self.device = None if device is None else torch.device(device)
        self._placed: dict[tuple[str, str, torch.device], Translator] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(cls, root: str | Path = BUNDLED, device: str | torch.device | None = None) -> ModelRegistry:
        """Load every ``<task>/<variant>/`` model folder under a local ``root``.

        Args:
            root: A local folder (never a Hub repo id: use [`from_hub`][demo.models.ModelRegistry.from_hub]).
            device: Load and serve there; ``None`` loads on the CPU and serves on CUDA when a request
                finds it available.

        Raises:
            ModelLoadError: If ``root`` holds no model, or one folder is broken (named in the message).
        """
        root = Path(root)
        if not root.is_dir():
            raise ModelLoadError(f"model folder {root} does not exist (a Hub repo id goes to --hub-repo)")
        models: dict[str, dict[str, Translator]] = {}
        for config in sorted(root.glob("*/*/config.json")):
            translator = load_folder(config.parent, device or "cpu")
            models.setdefault(translator.task.name, {})[config.parent.name] = translator
        if not models:
            raise ModelLoadError(f"no models under {root} (expected <task>/<variant>/config.json)")
        return cls(models, "bundled zoo models/" if root.resolve() == BUNDLED else str(root), device)

    @classmethod
    def from_hub(cls, repo_id: str, revision: str | None = None,
                 device: str | torch.device | None = None) -> ModelRegistry:
        """Download a zoo repo laid out as ``<task>/<variant>/`` (its model files only) and load it.

        Always the Hub: a local folder with the same name is never used instead.

        Raises:
            ModelLoadError: If ``repo_id`` is not ``namespace/name``, the download fails, or a model is broken.
        """
        from huggingface_hub import snapshot_download

        if not REPO_ID.match(repo_id):
            raise ModelLoadError(f"{repo_id!r} is not a Hub repo id (namespace/name); a local zoo goes to --models")
        try:
            folder = snapshot_download(repo_id, revision=revision, allow_patterns=ZOO_PATTERNS)
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
        return [(variant_label(v, have[v].model), v) for v in ordered]

    def default_variant(self, task: str) -> str | None:
        """The variant selected at start: Luong-general when present."""
        names = [v for _, v in self.variants(task)]
        return DEFAULT_VARIANT if DEFAULT_VARIANT in names else (names[0] if names else None)

    def transformer_shape(self, task: str, variant: str | None) -> tuple[int, int] | None:
        """``(layers, heads)`` of a loaded Transformer variant; ``None`` for an RNN or a variant not loaded."""
        translator = self.models.get(task, {}).get(variant or "")
        if translator is None or not isinstance(translator.model, Transformer):
            return None
        return translator.model.cfg.num_layers, translator.model.cfg.heads

    def get(self, task: str, variant: str) -> Translator:
        """The translator of one variant, on the device this call should use.

        With ``device=None``, a call that finds CUDA available (inside a ZeroGPU ``spaces.GPU`` call,
        or on any GPU machine) gets a copy on CUDA, made once and kept; otherwise the loaded one.

        Raises:
            KeyError: With the available variants, if it is not loaded.
        """
        try:
            translator = self.models[task][variant]
        except KeyError:
            have = ", ".join(v for _, v in self.variants(task)) or "none"
            raise KeyError(f"no {task} model {variant!r} is loaded (available: {have})") from None
        target = self.device or (torch.device("cuda") if torch.cuda.is_available() else translator.device)
        if translator.device == target or (target.type == translator.device.type == "cuda" and target.index is None):
            return translator
        key = (task, variant, target)
        with self._lock:
            if key not in self._placed:
                model = copy.deepcopy(translator.model).to(target).eval()
                self._placed[key] = Translator(model, translator.src_vocab, translator.tgt_vocab,
                                               translator.task, translator.meta)
            return self._placed[key]
