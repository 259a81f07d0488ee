"""The models the app serves, loaded once at start-up from the bundled folder, a folder of your own or a Hub repo.

Two kinds of model live side by side: the **zoo** (``models/<task>/<variant>/``, one tab per task) and
**models of your own** ([`OWN`][demo.models.OWN]: any trained model folder, shown in their own tab). A folder
or a Hub repo is read by its layout ([`model_layout`][demo.models.model_layout]): one model at its root, a
folder of model folders, or a zoo.

The app reads every model's config at start-up (a [`Card`][demo.models.Card]: enough for the page) and loads its
weights on first use ([`LazyModels`][demo.models.LazyModels]), or in the background once the page answers
([`ModelRegistry.load_all`][demo.models.ModelRegistry.load_all]); other callers load them at once.

Models are loaded on the CPU (or the device asked for) and placed on CUDA by
[`ModelRegistry.get`][demo.models.ModelRegistry.get] when a request finds CUDA available. On a
ZeroGPU Space CUDA exists only inside a ``spaces.GPU``-decorated call, which is where the handlers
call ``get``; elsewhere a GPU machine simply gets its models on the GPU at the first request.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from attention_core.data.info import DataInfo
from attention_core.data.tasks import Task
from attention_core.decoding.folder import (
    CONFIG,
    FILES,
    OPTIONAL_FILES,
    ModelLoadError,
    load_folder,
    read_config,
    read_vocabularies,
)
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig

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


def variant_label(variant: str, model: torch.nn.Module | ModelConfig | None = None) -> str:
    """The drop-down label of a variant; a Transformer's names its heads and layers, read from its config.

    Args:
        variant: Zoo variant name (the model folder's name), or the name of a model of your own.
        model: The model, or its config (a model not loaded yet), when there is one.

    Returns:
        E.g. ``"Transformer · 4 heads × 2 layers 多头"``; a name the zoo does not know is followed by the
        model's [`architecture`][demo.models.architecture].
    """
    cfg = getattr(model, "cfg", model)
    if cfg is not None and cfg.decoder == TRANSFORMER:
        name = "Transformer" if variant == "transformer" else variant
        return f"{name} · {cfg.heads} heads × {cfg.num_layers} layers 多头"
    if variant in VARIANT_LABELS or cfg is None:
        return VARIANT_LABELS.get(variant, variant)
    return f"{variant} · {architecture(cfg)}"


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
TRANSFORMER, NO_ATTENTION = "transformer", "none"
"""The ``ModelConfig.decoder`` of a Transformer, and of the baseline without attention."""


def architecture(model: torch.nn.Module | ModelConfig) -> str:
    """What a model is, in a few words, read from its config (or the model's): ``Luong · general · local-m D=3``."""
    cfg = getattr(model, "cfg", model)
    if cfg.decoder == TRANSFORMER:
        return f"Transformer · {cfg.heads} heads × {cfg.num_layers} layers 多头"
    if cfg.decoder == NO_ATTENTION:
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


def own_label(name: str, translator: Translator | Card) -> str:
    """The drop-down label of a model of your own: ``name · de → en · Luong · general``."""
    model = translator.cfg if isinstance(translator, Card) else translator.model
    return f"{name} · {language_pair(translator)} · {architecture(model)}"


def own_examples(translator: Translator, count: int = 5) -> list[str]:
    """Example inputs of a model of your own: short sources of its test split, else the one recorded with it.

    The test split is read again from the corpus the model records
    ([`splits_from_info`][attention_core.data.parallel.splits_from_info]); when those files are gone or changed, the
    short test source saved at training time (``meta["data"]["example"]``) is used.

    Args:
        translator: The model.
        count: At most this many examples.

    Returns:
        Up to ``count`` sources, shortest first (possibly none).
    """
    from attention_core.data.parallel import splits_from_info
    from attention_core.data.tasks import DataError

    data = translator.meta.get("data")
    try:
        sources = list(dict.fromkeys(source for source, _ in splits_from_info(data).test))
    except (DataError, OSError, ValueError, TypeError):
        example = DataInfo.read(data).example
        return [example] if example else []
    picked = sorted(sources[: 20 * count], key=len)[:count]  # short ones of the first few: quick to read
    return [source for source in sources if source in picked]


@dataclass
class Card:
    """What the page needs to know of a model, read from its folder's config without its weights.

    It answers for ``task``, ``meta`` and ``reads_names`` as the model's ``Translator`` does, so
    [`sides`][demo.models.sides] and [`own_examples`][demo.models.own_examples] take either.

    Attributes:
        cfg: The model's config.
        task: Its task (without the subword models, which only decoding needs).
        meta: What training recorded (data, known names, dev BLEU …).
    """

    cfg: ModelConfig
    task: Task
    meta: dict

    @classmethod
    def read(cls, folder: Path) -> Card:
        """A model folder's card: its config and vocabularies checked, its weights not read.

        Raises:
            ModelLoadError: Naming the bad file or field.
        """
        cfg, task, meta = read_config(folder)
        read_vocabularies(folder, cfg)
        return cls(cfg, task, meta)

    @classmethod
    def of(cls, translator: Translator) -> Card:
        """The card of a loaded model."""
        return cls(translator.model.cfg, translator.task, translator.meta)

    @property
    def has_attention(self) -> bool:
        """Whether the model attends (not the baseline)."""
        return self.cfg.decoder != NO_ATTENTION

    @property
    def reads_names(self) -> bool:
        """Whether the names switch applies: the library's rule, which reads the task alone.

        See [`Translator.reads_names`][attention_core.decoding.translator.Translator.reads_names].
        """
        return Translator.reads_names.fget(self)


class LazyModels(Mapping):
    """A group's models by name, each loaded from its folder the first time it is asked for (then kept).

    Its keys, ``len`` and ``in`` need no loading; the values are ``Translator``s. Two requests for one model at once
    load it once.

    Args:
        folders: ``{name: (folder, card)}``.
        device: Where to load them (``None``: the CPU).
    """

    def __init__(self, folders: dict[str, tuple[Path, Card]], device: str | torch.device | None = None) -> None:
        self._folders = dict(folders)
        self._device = device
        self._loaded: dict[str, Translator] = {}
        self._locks = {name: threading.Lock() for name in self._folders}

    def __getitem__(self, name: str) -> Translator:
        if name not in self._folders:
            raise KeyError(name)
        with self._locks[name]:
            if name not in self._loaded:
                self._loaded[name] = load_folder(self._folders[name][0], self._device or "cpu")
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._folders

    def __iter__(self) -> Iterator[str]:
        return iter(self._folders)

    def __len__(self) -> int:
        return len(self._folders)

    def card(self, name: str) -> Card:
        """A model's card (no loading)."""
        return self._folders[name][1]

    def is_loaded(self, name: str) -> bool:
        """Whether a model's weights are loaded."""
        return name in self._loaded

    def renamed(self, rename: Callable[[str], str]) -> LazyModels:
        """The same models (loaded or not) under new names."""
        out = LazyModels({rename(n): entry for n, entry in self._folders.items()}, self._device)
        out._loaded = {rename(n): t for n, t in self._loaded.items()}
        return out

    @classmethod
    def merged(cls, groups: list[Mapping]) -> LazyModels:
        """Several groups' models in one (a group of loaded ``Translator``s joins as loaded).

        Raises:
            ModelLoadError: If two have the same name.
        """
        out = cls({})
        for group in groups:
            for name in group:
                if name in out:
                    raise ModelLoadError(f"two models are named {name!r}: rename one folder")
                if isinstance(group, LazyModels):
                    out._folders[name] = group._folders[name]
                    if group.is_loaded(name):
                        out._loaded[name] = group._loaded[name]
                    out._device = out._device or group._device
                else:
                    out._folders[name] = (Path(), Card.of(group[name]))
                    out._loaded[name] = group[name]
                out._locks[name] = threading.Lock()
        return out


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
    def load(cls, root: str | Path = BUNDLED, device: str | torch.device | None = None,
             lazy: bool = False) -> ModelRegistry:
        """Load the models of a local folder: one model, a folder of model folders, or a ``<task>/<variant>/`` zoo.

        A zoo's models are grouped by their task; any other model is one of your own
        ([`OWN`][demo.models.OWN]), named by its folder.

        Args:
            root: A local folder (never a Hub repo id: use [`from_hub`][demo.models.ModelRegistry.from_hub]).
            device: Load and serve there; ``None`` loads on the CPU and serves on CUDA when a request
                finds it available.
            lazy: Read each model's config and vocabularies now (a broken one still fails here) and its weights
                on first use ([`LazyModels`][demo.models.LazyModels]): the app answers without waiting for them.

        Raises:
            ModelLoadError: If ``root`` holds no model, or one folder is broken (named in the message).
        """
        root = Path(root)
        if not root.is_dir():
            raise ModelLoadError(f"model folder {root} does not exist (a Hub repo id goes to --hub-repo)")
        layout, folders = model_layout(root)
        found: dict[str, dict[str, tuple[Path, Card]]] = {}
        loaded: dict[str, dict[str, Translator]] = {}
        for folder in folders:
            translator = None if lazy else load_folder(folder, device or "cpu")
            card = Card.read(folder) if lazy else Card.of(translator)
            group = card.task.name if layout == "zoo" else OWN
            name = folder.name if layout == "zoo" else folder.resolve().name
            found.setdefault(group, {})[name] = (folder, card)
            if translator is not None:
                loaded.setdefault(group, {})[name] = translator
        models = ({group: LazyModels(entries, device) for group, entries in found.items()} if lazy else loaded)
        return cls(models, "bundled zoo models/" if root.resolve() == BUNDLED else str(root), device)

    @classmethod
    def from_hub(cls, repo_id: str, revision: str | None = None,
                 device: str | torch.device | None = None, lazy: bool = False) -> ModelRegistry:
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
            registry = cls.load(folder, device, lazy)
        except ModelLoadError as err:
            raise ModelLoadError(f"hf://{repo_id}: {err}".replace(str(folder), "the repo")) from None
        registry.source = f"hf://{repo_id}"
        if OWN in registry.models:
            single = model_layout(Path(folder))[0] == "model"

            def rename(name: str) -> str:
                return repo_id if single else f"{repo_id}/{name}"

            own = registry.models[OWN]
            registry.models[OWN] = (own.renamed(rename) if isinstance(own, LazyModels)
                                    else {rename(name): translator for name, translator in own.items()})
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
        models: dict[str, Mapping[str, Translator]] = {
            task: v if isinstance(v, LazyModels) else dict(v) for task, v in zoos[0].models.items() if task != OWN
        } if zoos else {}
        own = [registry.models[OWN] for registry in registries if OWN in registry.models]
        if own:
            models[OWN] = LazyModels.merged(own)
        device = next((r.device for r in registries if r.device is not None), None)
        return cls(models, " + ".join(r.source for r in registries), device)

    @classmethod
    def start(cls, models: str | Path = BUNDLED, hub_repo: str | None = None,
              device: str | torch.device | None = None, lazy: bool = False) -> ModelRegistry:
        """The models the app serves, from its ``--models`` and ``--hub-repo``.

        A zoo (from either) replaces the bundled one, as it always has; models of your own (a model folder,
        a folder of them, or a repo holding one) come beside the bundled zoo, whose tabs stay.

        Args:
            models: A local folder (default: the bundled zoo); with ``hub_repo``, read only when not the default.
            hub_repo: A Hub repo id, or ``None``.
            device: As for [`load`][demo.models.ModelRegistry.load].
            lazy: As for [`load`][demo.models.ModelRegistry.load]: weights on first use (the app).

        Raises:
            ModelLoadError: With a one-line reason (a missing folder, no model, a broken one, an unreachable repo).
        """
        parts = [cls.from_hub(hub_repo, device=device, lazy=lazy)] if hub_repo else []
        if not hub_repo or Path(models).resolve() != BUNDLED:
            parts.append(cls.load(models, device, lazy))
        if not any(set(part.models) - {OWN} for part in parts) and BUNDLED.is_dir():
            parts.append(cls.load(BUNDLED, device, lazy))
        return cls.combine(parts) if len(parts) > 1 else parts[0]

    def tasks(self) -> list[str]:
        """Tasks with at least one model."""
        return list(self.models)

    def variants(self, task: str) -> list[tuple[str, str]]:
        """``(label, variant)`` choices for a task, in display order (models of your own: by name)."""
        have = self.models.get(task, {})
        if task == OWN:
            return [(own_label(name, self.card(task, name)), name) for name in sorted(have)]
        ordered = [v for v in VARIANT_LABELS if v in have]
        ordered += sorted(v for v in have if v not in VARIANT_LABELS)
        return [(variant_label(v, self.card(task, v).cfg), v) for v in ordered]

    def card(self, task: str, variant: str | None) -> Card | None:
        """What the page needs to know of a model, without loading it; ``None`` for a model not here."""
        have = self.models.get(task, {})
        if variant not in have:
            return None
        return have.card(variant) if isinstance(have, LazyModels) else Card.of(have[variant])

    def load_all(self, only: list[tuple[str, str | None]] | None = None,
                 report: Callable[[str], None] | None = None) -> int:
        """Load models' weights now (a lazy registry's, in the background once the page answers).

        A model that fails is reported (``report``) and skipped: a request for it says why.

        Args:
            only: These ``(task, variant)`` (those not here are skipped); ``None``: every model.
            report: Where to say what failed.

        Returns:
            How many models are loaded of those asked for.
        """
        every = [(task, variant) for task in self.models for variant in self.models[task]]
        count = 0
        for task, variant in every if only is None else [key for key in only if key in every]:
            try:
                self.models[task][variant]
                count += 1
            except ModelLoadError as err:
                if report:
                    report(f"model {task}/{variant} could not be loaded: {err}")
        return count

    def default_variant(self, task: str) -> str | None:
        """The variant selected at start: Luong-general when present (else the first)."""
        names = [v for _, v in self.variants(task)]
        return DEFAULT_VARIANT if DEFAULT_VARIANT in names else (names[0] if names else None)

    def transformer_shape(self, task: str, variant: str | None) -> tuple[int, int] | None:
        """``(layers, heads)`` of a loaded Transformer variant; ``None`` for an RNN or a variant not loaded."""
        card = self.card(task, variant)
        if card is None or card.cfg.decoder != TRANSFORMER:
            return None
        return card.cfg.num_layers, card.cfg.heads

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
