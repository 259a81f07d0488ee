"""The models the app serves, loaded once at start-up from the bundled folder, a folder of your own or a Hub repo.

Two kinds of model live side by side: the **zoo** (``models/<task>/<variant>/``, one tab per task) and
**models of your own** ([`OWN`][demo.models.OWN]: any trained model folder, shown in their own tab). A folder
or a Hub repo is read by its layout ([`model_layout`][demo.models.model_layout]): one model at its root, a
folder of model folders, or a zoo.

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

from attention_core.hub import CONFIG, FILES, OPTIONAL_FILES, ModelLoadError, load_folder
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

OWN = "own"
"""The registry group, tab id and URL ``tab`` value of the models of your own (any task, named by their folder)."""

ZOO_PATTERNS = [f"*/*/{name}" for name in (*FILES, *OPTIONAL_FILES, "README.md")]
"""The model files of each ``<task>/<variant>/`` of a zoo repo."""
REPO_PATTERNS = [pattern for name in (*FILES, *OPTIONAL_FILES, "README.md") for pattern in (name, f"*/{name}")]
"""What ``from_hub`` downloads: the model files at the repo's root and in its folders (a zoo's included:
``*`` spans folders), nothing else."""
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""A Hub repo id, ``namespace/name``."""


def variant_label(variant: str, model: torch.nn.Module | None = None) -> str:
    """The drop-down label of a variant; a Transformer's names its heads and layers, read from its config.

    Args:
        variant: Zoo variant name (the model folder's name), or the name of a model of your own.
        model: The loaded model, when there is one.

    Returns:
        E.g. ``"Transformer · 4 heads × 2 layers 多头"``; a name the zoo does not know is followed by the
        model's [`architecture`][demo.models.architecture].
    """
    if isinstance(model, Transformer):
        name = "Transformer" if variant == "transformer" else variant
        return f"{name} · {model.cfg.heads} heads × {model.cfg.num_layers} layers 多头"
    if variant in VARIANT_LABELS or model is None:
        return VARIANT_LABELS.get(variant, variant)
    return f"{variant} · {architecture(model)}"


def model_layout(root: Path) -> tuple[str, list[Path]]:
    """How a folder holds its models, and their folders.

    Args:
        root: A local folder.

    Returns:
        ``("model", [root])`` for one model folder (``config.json`` at its root), ``("models", folders)`` for a
        folder of model folders, ``("zoo", folders)`` for ``<task>/<variant>/`` folders.

    Raises:
        ModelLoadError: If it holds none of these.
    """
    if (root / CONFIG).is_file():
        return "model", [root]
    own = sorted(config.parent for config in root.glob(f"*/{CONFIG}"))
    if own:
        return "models", own
    zoo = sorted(config.parent for config in root.glob(f"*/*/{CONFIG}"))
    if zoo:
        return "zoo", zoo
    raise ModelLoadError(f"no model in {root}: expected a model folder (with {CONFIG}), a folder of model folders, "
                         "or a zoo laid out as <task>/<variant>/")


RNN_WORDS = {"luong": "Luong", "bahdanau": "Bahdanau"}


def architecture(model: torch.nn.Module) -> str:
    """What a model is, in a few words, read from its config: ``Luong · general · local-m D=3``."""
    cfg = model.cfg
    if isinstance(model, Transformer):
        return f"Transformer · {cfg.heads} heads × {cfg.num_layers} layers 多头"
    if not model.has_attention:
        return "no attention 无注意力"
    words = [RNN_WORDS.get(cfg.decoder, cfg.decoder), cfg.score]
    if cfg.attention != "global":
        words.append(f"{cfg.attention} D={cfg.window}")
    return " · ".join(words)


def sides(translator: Translator) -> tuple[dict, dict]:
    """The source and target sides of a model: ``{"language", "direction", "tokenizer"}`` each.

    A model of your own records them (``task_spec``); the bundled tasks read Chinese and write English or
    Chinese, left to right.
    """
    spec = translator.task.spec or {}
    if spec:
        return spec.get("source", {}), spec.get("target", {})
    target = "zh" if translator.task.name == "couplet" else "en"
    return {"language": "zh", "direction": "ltr"}, {"language": target, "direction": "ltr"}


def is_rtl(side: dict) -> bool:
    """Whether a side's script runs right to left."""
    return side.get("direction") == "rtl"


def language_pair(translator: Translator) -> str:
    """``de → en`` (a side without a language code is named by its tokeniser)."""
    source, target = sides(translator)
    return " → ".join(side.get("language") or side.get("tokenizer", "?") for side in (source, target))


def own_label(name: str, translator: Translator) -> str:
    """The drop-down label of a model of your own: ``name · de → en · Luong · general``."""
    return f"{name} · {language_pair(translator)} · {architecture(translator.model)}"


def own_examples(translator: Translator, count: int = 5) -> list[str]:
    """Example inputs of a model of your own: short sources of its test split, else the one recorded with it.

    The test split is read again from the corpus the model records
    ([`splits_from_info`][attention_core.parallel.splits_from_info]); when those files are gone or changed, the
    short test source saved at training time (``meta["data"]["example"]``) is used.

    Args:
        translator: The model.
        count: At most this many examples.

    Returns:
        Up to ``count`` sources, shortest first (possibly none).
    """
    from attention_core.data import DataError
    from attention_core.parallel import splits_from_info

    data = translator.meta.get("data")
    try:
        sources = list(dict.fromkeys(source for source, _ in splits_from_info(data).test))
    except (DataError, OSError, ValueError, TypeError):
        example = data.get("example") if isinstance(data, dict) else None
        return [example] if isinstance(example, str) and example.strip() else []
    picked = sorted(sources[: 20 * count], key=len)[:count]  # short ones of the first few: quick to read
    return [source for source in sources if source in picked]


class ModelRegistry:
    """Translators by task and variant.

    Args:
        models: ``{task: {variant: translator}}``; models of your own are ``{OWN: {name: translator}}``.
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
        """Load the models of a local folder: one model, a folder of model folders, or a ``<task>/<variant>/`` zoo.

        A zoo's models are grouped by their task; any other model is one of your own
        ([`OWN`][demo.models.OWN]), named by its folder.

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
        layout, folders = model_layout(root)
        models: dict[str, dict[str, Translator]] = {}
        for folder in folders:
            translator = load_folder(folder, device or "cpu")
            if layout == "zoo":
                models.setdefault(translator.task.name, {})[folder.name] = translator
            else:
                models.setdefault(OWN, {})[folder.resolve().name] = translator
        return cls(models, "bundled zoo models/" if root.resolve() == BUNDLED else str(root), device)

    @classmethod
    def from_hub(cls, repo_id: str, revision: str | None = None,
                 device: str | torch.device | None = None) -> ModelRegistry:
        """Download a repo's model files and load them: one model at its root, model folders, or a zoo.

        Always the Hub: a local folder with the same name is never used instead. A model at the repo's
        root is named by the repo id (``you/de-en``), one in a folder ``you/de-en/<folder>``.

        Raises:
            ModelLoadError: If ``repo_id`` is not ``namespace/name``, the download fails, or a model is broken.
        """
        from huggingface_hub import snapshot_download

        if not REPO_ID.match(repo_id):
            raise ModelLoadError(f"{repo_id!r} is not a Hub repo id (namespace/name); a local folder goes to --models")
        try:
            folder = snapshot_download(repo_id, revision=revision, allow_patterns=REPO_PATTERNS)
        except Exception as err:  # network, auth or missing repo: one readable line
            raise ModelLoadError(f"cannot download {repo_id!r}: {str(err).splitlines()[0]}") from None
        if not Path(folder).is_dir():  # nothing matched: the repo holds no model file
            raise ModelLoadError(f"hf://{repo_id} holds no model files ({CONFIG}, {FILES[1]} …)")
        try:
            registry = cls.load(folder, device)
        except ModelLoadError as err:
            raise ModelLoadError(f"hf://{repo_id}: {err}".replace(str(folder), "the repo")) from None
        registry.source = f"hf://{repo_id}"
        if OWN in registry.models:
            single = model_layout(Path(folder))[0] == "model"
            registry.models[OWN] = {repo_id if single else f"{repo_id}/{name}": translator
                                    for name, translator in registry.models[OWN].items()}
        return registry

    @classmethod
    def combine(cls, registries: list[ModelRegistry]) -> ModelRegistry:
        """One registry of a zoo (at most one of them may hold one) and every model of your own.

        Raises:
            ModelLoadError: If two hold a zoo, or two models of your own have the same name.
        """
        zoos = [r for r in registries if set(r.models) - {OWN}]
        if len(zoos) > 1:
            raise ModelLoadError(f"two model zoos ({zoos[0].source} and {zoos[1].source}): give one, with "
                                 "--models DIR or --hub-repo ID")
        models: dict[str, dict[str, Translator]] = {task: dict(v) for task, v in zoos[0].models.items()
                                                    if task != OWN} if zoos else {}
        for registry in registries:
            for name, translator in registry.models.get(OWN, {}).items():
                if name in models.get(OWN, {}):
                    raise ModelLoadError(f"two models are named {name!r}: rename one folder")
                models.setdefault(OWN, {})[name] = translator
        device = next((r.device for r in registries if r.device is not None), None)
        return cls(models, " + ".join(r.source for r in registries), device)

    @classmethod
    def start(cls, models: str | Path = BUNDLED, hub_repo: str | None = None,
              device: str | torch.device | None = None) -> ModelRegistry:
        """The models the app serves, from its ``--models`` and ``--hub-repo``.

        A zoo (from either) replaces the bundled one, as it always has; models of your own (a model folder,
        a folder of them, or a repo holding one) come beside the bundled zoo, whose tabs stay.

        Args:
            models: A local folder (default: the bundled zoo); with ``hub_repo``, read only when not the default.
            hub_repo: A Hub repo id, or ``None``.
            device: As for [`load`][demo.models.ModelRegistry.load].

        Raises:
            ModelLoadError: With a one-line reason (a missing folder, no model, a broken one, an unreachable repo).
        """
        parts = [cls.from_hub(hub_repo, device=device)] if hub_repo else []
        if not hub_repo or Path(models).resolve() != BUNDLED:
            parts.append(cls.load(models, device))
        if not any(set(part.models) - {OWN} for part in parts) and BUNDLED.is_dir():
            parts.append(cls.load(BUNDLED, device))
        return cls.combine(parts) if len(parts) > 1 else parts[0]

    def tasks(self) -> list[str]:
        """Tasks with at least one model."""
        return list(self.models)

    def variants(self, task: str) -> list[tuple[str, str]]:
        """``(label, variant)`` choices for a task, in display order (models of your own: by name)."""
        have = self.models.get(task, {})
        if task == OWN:
            return [(own_label(name, have[name]), name) for name in sorted(have)]
        ordered = [v for v in VARIANT_LABELS if v in have]
        ordered += sorted(v for v in have if v not in VARIANT_LABELS)
        return [(variant_label(v, have[v].model), v) for v in ordered]

    def default_variant(self, task: str) -> str | None:
        """The variant selected at start: Luong-general when present (else the first)."""
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
