"""The model zoo: every variant of both tasks, trained with one command, resumable.

``attention-lab zoo`` trains each variant in [`ZOO_ORDER`][attention_core.hub.zoo.ZOO_ORDER] into
``runs/<task>/<variant>/`` (skipping finished ones, resuming an interrupted one from its last
checkpoint), continues it in ``runs/<task>/<variant>-continued/`` when the task's recipe has a
second stage ([`TaskRecipe.continued`][attention_core.hub.zoo.TaskRecipe]), exports a float16 copy with
its model card to ``models/<task>/<variant>/`` and writes greedy and beam-5 evaluation reports to
``results/eval/``. Within a task every variant has the same sizes and training budget, so the
comparison is about attention alone.
"""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from attention_core.analysis.calibration import calibrate_overproduction
from attention_core.analysis.evaluation import evaluate
from attention_core.data.atomic import atomic_write_text
from attention_core.data.corpora import sha256_file
from attention_core.data.encoded import FOLDER as ENCODED
from attention_core.data.encoded import build_vocabs
from attention_core.data.info import DataInfo
from attention_core.data.subword import Subwords
from attention_core.data.tasks import TASKS, Splits, load_splits
from attention_core.decoding.folder import CONFIG, SUBWORDS, WEIGHTS, load_folder, save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.editing.namecache import cached_known_names
from attention_core.hub.card import write_card
from attention_core.model.transformer import TRANSFORMER
from attention_core.training.loop import TrainConfig, TrainError, fit
from attention_core.training.runlock import hold

VARIANTS: dict[str, dict] = {
    "none": dict(decoder="none"),
    "bahdanau": dict(decoder="bahdanau", score="concat"),
    "luong-dot": dict(decoder="luong", score="dot"),
    "luong-scaled_dot": dict(decoder="luong", score="scaled_dot"),
    "luong-general": dict(decoder="luong", score="general"),
    "luong-concat": dict(decoder="luong", score="concat"),
    "luong-location": dict(decoder="luong", score="location"),
    "luong-general-local-p": dict(decoder="luong", score="general", attention="local-p"),
    "transformer": dict(decoder="transformer", score="scaled_dot"),
}
"""Zoo variants: decoder, score and attention mode (the window and the Transformer's sizes come from the task's
recipe, [`TaskRecipe.transformer`][attention_core.hub.zoo.TaskRecipe]). The Transformer keeps the task's dropout,
embedding tying, data and training budget."""


@dataclass
class TaskRecipe:
    """Sizes and training budget shared by every variant of one task.

    Attributes:
        model: ``ModelConfig`` fields (sizes, dropout, embedding tying).
        train: Training settings.
        window: Half-width ``D`` of the local-p variant.
        extra: Extra training folders in the data folder (``poetry-couplet``, ``cmn-eng-extra``).
        continued: A second stage: the finished first-stage model is continued with these settings
            and a fresh optimiser (``fit(init=...)``; its ``epochs`` count from the first stage's
            first epoch). ``None``: one stage.
        transformer: The Transformer variant's sizes, chosen to match the RNN variants' parameter count.
        corpus: The task's own corpus, a key of ``CORPUS_LICENSES``.
        languages: The languages of its model cards (source first; one for a task within one language).
        example: The input its model cards translate in their usage example.
    """

    model: dict
    train: TrainConfig
    window: int
    corpus: str
    languages: tuple[str, ...]
    example: str
    extra: list[str] = field(default_factory=list)
    continued: TrainConfig | None = None
    transformer: dict = field(default_factory=lambda: dict(hidden_size=192, emb_size=192, heads=4, ff_size=768,
                                                           num_layers=2))


_TRANSLATION_TRAIN = TrainConfig(
    epochs=7, batch_size=64, lr=1e-3, min_freq=2, patience=3, label_smoothing=0.1, max_len=50, subword_vocab=4000,
    main_repeat=3, decay_epochs=2, final_lr_ratio=0.1,
)

RECIPES: dict[str, TaskRecipe] = {
    "translation": TaskRecipe(
        model=dict(hidden_size=256, emb_size=128, dropout=0.3, tie_embeddings=True),
        train=_TRANSLATION_TRAIN,
        window=4,
        corpus="cmn-eng",
        languages=("zh", "en"),
        example="我喜欢自然语言处理",
        extra=["cmn-eng-extra", "tv4dialog"],
        # a second stage, chosen on the two dev sets (results/translation_continued.md): two epochs of cmn-eng ×3 and
        # one extra pair drawn per cmn-eng pair, a fresh optimiser at a quarter of the learning rate
        continued=replace(_TRANSLATION_TRAIN, epochs=9, full_data_epochs=7, extra_ratio=1.0, lr=2.5e-4, patience=2,
                          decay_epochs=0),
    ),
    "couplet": TaskRecipe(  # the whole corpus (issue #25): results/couplet_capacity.md chose the size
        model=dict(hidden_size=352, emb_size=128, dropout=0.2, tie_embeddings=True, share_embeddings=True),
        train=TrainConfig(epochs=4, batch_size=64, lr=1e-3, min_freq=3, patience=2, label_smoothing=0.1, max_len=40),
        window=2,
        corpus="couplet",
        languages=("zh",),
        example="两个黄鹂鸣翠柳",
        extra=["poetry-couplet"],
        transformer=dict(hidden_size=232, emb_size=232, heads=4, ff_size=928, num_layers=2),
    ),
}
"""The recipe of each task.

Couplets: the whole cleaned wb14123 training set (699,109 pairs) and poetry-couplet, every pair every epoch, hidden
352 (4.6 M parameters, 9.3 MB in float16): at the same CPU time it beat hidden 256 on dev (greedy BLEU 1.61 against
1.32; beam 5 with the rules 1.20 against 0.96), and so did a Transformer of its size (1.44; 1.39), which is the
Transformer variant (d_model 232, 4.7 M); on the test sets the three tie at that budget
(``results/couplet_capacity.md``). Four epochs (946,087 pairs each): the default variant, trained for six, was best
on dev after the fourth (greedy BLEU 1.39, 1.50, 1.66, 1.84), and the two epochs after it, at a halved learning
rate, did not beat it (1.69, 1.81); its shipped weights are those of epoch 4, as a four-epoch run's are. The bundled
couplet models were trained at this recipe's ``gpu`` set (batch 512, learning rate 0.002, the same four epochs; see
``RECIPE_SETS``): seven of them on a lent H200 in float32 (``results/gpu_zoo_run.md``), ``luong-location`` and
``luong-general-local-p`` on a 2-core CPU in bfloat16.

Translation (issue #29): cmn-eng's training split three times an epoch (``main_repeat=3``), cmn-eng-extra and
tv4dialog (punctuated as visitors write; whole episodes held out as ``tv4dialog-test`` and ``tv4dialog-dev``):
303,555 pairs an epoch, hidden 256 with 4,000 BPE pieces on the English side. Seven epochs (issue #50: a recipe one
CPU thread finishes inside a session): the learning rate stays at 1e-3 for five and falls linearly over the last two
to 1e-4 (``decay_epochs=2``); the earlier recipe trained ten at a plateau schedule. Against the previous recipe
(cmn-eng + cmn-eng-extra only, 16 epochs) it raised the best dev BLEU from 29.01 to 30.33 (greedy) and the held-out TV
episodes from 4.69 to about 13 (``results/translation_recipe.md``). Then a second stage (``continued``): two epochs of
a curriculum — cmn-eng ×3 and one cmn-eng-extra or tv4dialog pair drawn per cmn-eng pair, 108,220 pairs an epoch — at
learning rate 2.5e-4 with a fresh optimiser (epochs 8 and 9). 2.34 M pair-steps
in all, against 3.25 M before; the default trained at it in 87 minutes of training here, one thread from the middle
of its first epoch, 442–588 pairs a second an epoch beside other work (``results/translation_recipe.md``). Of four
second stages (the curriculum at 5e-4, 2.5e-4 and 1.25e-4, the same mix at 5e-4) it scored best on the two dev
sets together, and it improves both (beam 5: cmn-eng dev 34.17 →
37.04, tv4dialog-dev 14.02 → 14.18; ``results/translation_continued.md``), in 8 minutes where two more epochs of the
same mix took 35. The bundled translation models were trained on the earlier recipes (see each model card); they are
replaced one by one as each is trained at this one."""

GPU_BATCH_SCALE = 8
"""How many times larger a batch the ``gpu`` recipes train on than the CPU ones (see ``RECIPE_SETS``)."""
GPU_LR_SCALE = 2.0
"""How many times larger a learning rate the ``gpu`` recipes take, in both stages (between linear and square-root
scaling with the batch, which would give 8 and 2.8)."""


def on_gpu(recipe: TaskRecipe) -> TaskRecipe:
    """A task's recipe for a GPU: the same model, data and epochs, larger batches and learning rates.

    A GPU trains these small models as fast as it launches their kernels, so its time goes with the number of
    batches, not their size: ``GPU_BATCH_SCALE`` times larger batches make an epoch about that many times shorter
    there (on a CPU, pairs per second hardly change from batch 64 up, ``results/benchmarks.md``). Fewer, larger
    steps take a larger learning rate, ``GPU_LR_SCALE`` times the CPU recipe's.
    """

    def scaled(cfg: TrainConfig) -> TrainConfig:
        return replace(cfg, batch_size=cfg.batch_size * GPU_BATCH_SCALE, lr=cfg.lr * GPU_LR_SCALE)

    return replace(recipe, train=scaled(recipe.train),
                   continued=None if recipe.continued is None else scaled(recipe.continued))


RECIPE_SETS: dict[str, dict[str, TaskRecipe]] = {
    "cpu": RECIPES,
    "gpu": {task: on_gpu(recipe) for task, recipe in RECIPES.items()},
}
"""``attention-lab zoo --recipe``: ``cpu`` (the recipes above, chosen on a 2-core CPU) or ``gpu`` (the same at
eight times the batch and twice the learning rate, for a lent GPU that trains the whole zoo at once:
``scripts/zoo_device.sh``)."""


def trained_recipe(task: str, settings: dict) -> str | None:
    """The name in [`RECIPE_SETS`][attention_core.hub.zoo.RECIPE_SETS] a run of ``task`` was trained at, if any.

    Args:
        task: ``translation`` or ``couplet``.
        settings: The run's training settings (``meta["train"]`` of its model): a recipe is known by the epochs,
            batch size and learning rate of its last stage (the ``continued`` one when the recipe has it); an
            earlier recipe that shared all three with today's would be taken for it.

    Returns:
        ``cpu``, ``gpu``, or ``None`` for a run of neither (an earlier recipe, or a run by hand).
    """
    key = (settings.get("epochs"), settings.get("batch_size"), settings.get("lr"))
    for name, recipes in RECIPE_SETS.items():
        recipe = recipes.get(task)
        last = recipe and (recipe.continued or recipe.train)
        if last is not None and key == (last.epochs, last.batch_size, last.lr):
            return name
    return None


DECODINGS: dict[str, list[tuple[str, int, bool | None]]] = {
    "translation": [("greedy", 1, None), ("beam5", 5, None)],
    "couplet": [("greedy", 1, True), ("beam5", 5, True), ("beam5", 5, False)],
}
"""How each zoo model is evaluated: label, beam size, couplet constraints (``None``: the task's default)."""

DEFAULT_VARIANT = "luong-general"
"""Each task's default model: trained first, and its pieces are the ones every other variant's corpus is made with."""


ZOO_ORDER: list[tuple[str, str]] = [
    ("translation", DEFAULT_VARIANT),
    ("couplet", DEFAULT_VARIANT),
    ("translation", "none"),
    ("couplet", "none"),
    *[
        (task, v)
        for task in ("translation", "couplet")
        for v in VARIANTS
        if v not in (DEFAULT_VARIANT, "none")
    ],
]
"""Training order: the app's defaults and the baselines first, so a partial zoo is already useful."""


def zoo_models(only: Sequence[str] | None = None, task: str | None = None) -> list[str]:
    """The ``task/variant`` names of the zoo's models, in training order.

    Args:
        only: Names to check and keep (``attention-lab zoo --only``, the scripts' ``ZOO_ONLY``); none: every model.
        task: With no ``only``, keep this task's models.

    Raises:
        ValueError: A name of ``only`` is no zoo model (the message names the zoo's models).
    """
    known = [f"{t}/{v}" for t, v in ZOO_ORDER]
    unknown = [name for name in only or [] if name not in known]
    if unknown:
        raise ValueError(f"no zoo model {', '.join(unknown)}; the zoo has {', '.join(known)}")
    return list(only) if only else [name for name in known if task is None or name.startswith(f"{task}/")]


CORPUS_LICENSES: dict[str, str] = {
    "cmn-eng": "Tatoeba / ManyThings.org cmn-eng, CC-BY 2.0 FR (attribution: tatoeba.org contributors)",
    "cmn-eng-extra": "cmn-eng-extra (further Tatoeba pairs from the Tatoeba test set v2021-08-07 in "
    "Helsinki-NLP/OPUS-MT-testsets, training only), CC-BY 2.0 FR (attribution: tatoeba.org contributors)",
    "tv4dialog": "tv4dialog (Chinese–English subtitles of four US TV series, github.com/zll17/TV4Dialog; Zhang & Zhou, "
    "\"Automatically Annotate TV Series Subtitles for Dialogue Corpus Construction\", APSIPA 2019; episodes held out "
    "as tv4dialog-test and tv4dialog-dev), CC BY 2.0",
    "couplet": "couplet test set MIT (v-zich/couplet-clean-dataset); training set: {train} of the wb14123 corpus "
    "(no license file; the corpus repository is AGPL-3.0, its couplets were scraped from a Sina blog: research and "
    "teaching use)",
    "poetry-couplet": "poetry-couplet (颔联/颈联 of Tang and Song regulated verse, derived from chinese-poetry, MIT)",
}
"""The license line of each corpus a zoo model may train on (``couplet``'s ``{train}``: which training set)."""
COUPLET_TRAIN_SETS = {
    "ca0503e9af48b997e771723930ff375ad31c2d6977ae03a0cf77297d7371b2b3":
        "the whole training set, cleaned (699,109 pairs)",
    "01335f2b1fe3a8b429538a0a0c24815cd3b4e4e6aa6f9f6dd877ce5ea26c0105": "a 55,326-pair New-Year subset (train-55k)",
}
"""``couplet/train/in.txt`` by its sha256 (``shared/data/couplet/README.md``): which training set a model saw."""


def data_licenses(task: str, data: DataInfo) -> str:
    """The model card's data and license line, from the corpora a model's metadata says it trained on.

    Args:
        task: ``translation`` or ``couplet``.
        data: What the model trained on (its corpus files and extra corpora).
    """
    lines = [CORPUS_LICENSES[RECIPES[task].corpus]]
    if "{train}" in lines[0]:  # a corpus with several training sets: which one
        train = data.checksums().get("couplet/train")
        lines = [lines[0].format(train=COUPLET_TRAIN_SETS.get(train, "a training set"))]
    lines += [CORPUS_LICENSES.get(extra, extra) for extra in data.extra]
    return "; ".join(lines)


def model_options(task: str, variant: str) -> dict:
    """The ``ModelConfig`` fields of one zoo model."""
    recipe = RECIPES[task]
    options = {**recipe.model, **VARIANTS[variant]}
    if options["decoder"] == TRANSFORMER:
        options.update(recipe.transformer)
    if options.get("attention") == "local-p":
        options["window"] = recipe.window
    return options


def model_card(folder: Path, task: str, variant: str, reports: dict[str, dict], command: str) -> str:
    """The README.md (model card) of a zoo model, with its measured test metrics.

    Written by [`write_card`][attention_core.hub.card.write_card], as a model of your own's card is.
    """
    translator = load_folder(folder)
    meta = translator.meta
    data = DataInfo.read(meta.get("data"))
    rows = "\n".join(
        f"| {name} | {r['n']} | {r['bleu']:.2f} | {r['chrf']:.2f} | {r.get('unk_outputs', '—')} |"
        for name, r in reports.items()
    )
    rules = ""
    if TASKS[task].constrained:  # the couplet rules a reader checks
        keys = ("top_char_share", "distinct_ratio", "repetition_mirrored", "no_reuse", "tone_opposition", "no_unk")
        lines = []
        for name, r in reports.items():
            if name.endswith("beam5") and "couplet" in r:
                for who, m in ((name, r["couplet"]), (name.split(":")[0] + ": human 下联", r["couplet_reference"])):
                    lines.append(f"| {who} | " + " | ".join(f"{m[k]:.3f}" for k in keys) + " |")
        rules = ("\n## The rules a reader checks (beam 5, default rules; see `attention_core.analysis.metrics`)\n\n"
                 "| test set | most frequent char share | distinct ratio | repetition mirrored | no 重字 | "
                 "last tone opposite | no <unk> |\n|---|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n")
    return write_card(
        translator, languages=RECIPES[task].languages, tag=task, title=f"{task} — `{variant}`", license_="other",
        about=f", weights stored in float16.\n{_subword_line(translator)}\n", sections=[
            ("Data and license", f"{data_licenses(task, data)}. Split: {data.rule} (seed {data.seed}); "
                                 f"sizes {json.dumps(data.sizes or None)}.\n"),
            ("Training", f"```\n{command}\n```\n{_stages_line(meta)}Best dev BLEU {meta.get('best_dev_bleu')} "
                         "(epoch history in `config.json`).\n"),
            ("Test metrics (measured)", "Scoring: sacrebleu, output detokenised and lower-cased; couplets per "
                                        "character.\n\n| test set: decoding | pairs | BLEU | chrF | outputs with "
                                        f"`<unk>` |\n|---|---|---|---|---|\n{rows}\n{rules}"),
            ("Use", f"""```python
from attention_core.hub import from_pretrained
translator = from_pretrained("path/or/repo-id")
print(translator.translate(["{RECIPES[task].example}"])[0].text)
```
"""),
        ])


def _stages_line(meta: dict) -> str:
    """The model card's sentence on a second training stage (empty for a one-stage model)."""
    first = meta.get("continued_from")
    if not isinstance(first, dict):
        return ""
    train = first.get("train") or {}
    lr, epochs, decay = train.get("lr"), first.get("epochs"), train.get("decay_epochs")
    if decay:  # the first stage's schedule ended with it (TrainConfig.decay_epochs)
        lr = f"{lr}, falling linearly over the last {decay} to {lr * train.get('final_lr_ratio', 1):g}"
    return (f"Two stages: after {epochs} epoch{'' if epochs == 1 else 's'} (learning rate {lr}), the model was "
            f"continued with a fresh optimiser at learning rate {(meta.get('train') or {}).get('lr')} "
            "(`TaskRecipe.continued`)"
            + ("; no continued epoch beat it on the dev set, so these are its first-stage weights"
               if len(meta.get("history") or []) <= (epochs or 0) else "") + ".\n")


def _subword_line(translator: Translator) -> str:
    """The model card's sentence on subword targets (empty for whole-token models)."""
    if translator.task.subwords is None:
        return ""
    return (f"English targets are {len(translator.tgt_vocab) - 4} BPE subword pieces (`subwords.json`, Hugging Face "
            "`tokenizers`), so any word can be spelled; `<unk>` is never generated.\n")


def calibration_pairs(splits: Splits, per_source: int = 1000, seed: int = 0) -> list[tuple[str, str]]:
    """Training pairs for measuring over-production: ``per_source`` from the task's own corpus and as many extra."""
    rng = random.Random(seed)
    main = splits.train if splits.main_train_size is None else splits.train[: splits.main_train_size]
    extra = [] if splits.main_train_size is None else splits.train[splits.main_train_size :]
    return rng.sample(main, min(per_source, len(main))) + rng.sample(extra, min(per_source, len(extra)))


def add_counts(translator: Translator, splits: Splits, train_cfg: TrainConfig, options: dict) -> None:
    """Give a trained model's vocabularies their token counts, recounted from its training split.

    Raises:
        ValueError: If the recount does not rebuild exactly the model's vocabularies.
    """
    train_pairs = splits.train[: train_cfg.max_train] if train_cfg.max_train else splits.train
    src, tgt = build_vocabs(translator.task, train_pairs, train_cfg.min_freq, bool(options.get("share_embeddings")))
    if src.itos != translator.src_vocab.itos or tgt.itos != translator.tgt_vocab.itos:
        raise ValueError("the training split does not rebuild this model's vocabularies; cannot add counts")
    translator.src_vocab.counts, translator.tgt_vocab.counts = src.counts, tgt.counts


OVERPRODUCTION = "overproduction.json"
"""The cliché table of a couplet run, kept in its run folder with the weights it was measured on."""


def give_overproduction(trained: Translator, run_dir: Path, splits: Splits, name: str) -> None:
    """Give a trained couplet model its over-production table (the cliché penalty's), measured once per weights.

    A model finished here after training elsewhere (``--stage finish``) has float16 weights in its run folder, so its
    table is measured on the weights it ships with.
    The table measured by [`calibrate_overproduction`][attention_core.analysis.calibration.calibrate_overproduction]
    (five rounds of decoding 2,000 training 上联s, minutes on a CPU) is kept in ``run_dir`` as
    ``overproduction.json`` with the SHA-256 of the run's weights, and reused while they are unchanged, so
    running the zoo again does not measure a finished model again. An unreadable file is measured again.
    The key is the weights alone, as for the evaluation reports: a change of the calibration itself
    (its pairs, rounds or rules) needs the file deleted.
    """
    path, weights = run_dir / OVERPRODUCTION, sha256_file(run_dir / WEIGHTS)
    try:
        saved = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        saved = {}  # unreadable: measure again
    if isinstance(saved, dict) and saved.get("weights_sha256") == weights and isinstance(saved.get("table"), dict):
        trained.meta["overproduction"] = saved["table"]
        return
    table = calibrate_overproduction(trained, calibration_pairs(splits))
    atomic_write_text(path, json.dumps({"weights_sha256": weights, "table": table}, ensure_ascii=False, indent=1))
    print(json.dumps({"event": "calibrated", "model": name, "overproduced": len(table)}), flush=True)


def _current_report(path: Path, weights: str, loop_guard: bool, coverage: float = 0.0) -> dict | None:
    """The report at ``path``; ``None`` if missing, of other weights or decoded with another loop guard or coverage.

    A report kept without a weights fingerprint counts as current; one without a loop-guard setting was decoded
    without the guard, one without a coverage penalty without the penalty.
    """
    if not path.exists():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    decoding = report.get("decoding", {})
    coverage = coverage if decoding.get("beam_size", 1) > 1 else 0.0  # greedy search has no penalty
    if decoding.get("loop_guard", False) != loop_guard or (decoding.get("coverage") or 0.0) != coverage:
        return None
    return report if report.get("weights_sha256", weights) == weights else None


STAGES = ("all", "train", "finish")
"""What ``attention-lab zoo --stage`` does for each model: ``train`` trains (or resumes) it, ``finish`` exports and
evaluates a model already trained into its run folder (on another machine: a GPU trains, a CPU finishes), ``all``
both."""


PARTIAL = "PARTIAL.json"
"""In a run folder brought back from another machine: the model's training had not ended (``scripts/zoo_pack.py
--final``), so ``--stage finish`` refuses it."""


def shipped_pieces(models: Path, task: str, recipe: str) -> Subwords | None:
    """The subword pieces of the task's default model in ``models``, when it was trained at ``recipe``.

    The zoo's first model of a task writes the task's encoded corpus; when the default model was trained before
    (an earlier session, or the bundled one), the corpus is made with its pieces instead of new ones, so that the
    other variants share its vocabularies and differ from it only in their attention.

    Args:
        models: The models folder (``--models``).
        task: ``translation`` or ``couplet``.
        recipe: The recipe set the variants are trained at.

    Returns:
        The pieces, or ``None`` when there is no such model, it has no pieces, or another recipe trained it.
    """
    folder = models / task / DEFAULT_VARIANT
    if not (folder / SUBWORDS).is_file() or not (folder / CONFIG).is_file():
        return None
    settings = json.loads((folder / CONFIG).read_text(encoding="utf-8")).get("meta", {}).get("train") or {}
    return Subwords.load(folder / SUBWORDS) if trained_recipe(task, settings) == recipe else None


def final_run(runs: Path, task: str, variant: str) -> Path:
    """The run folder that holds a zoo model's final weights: its second stage's when the recipe has one."""
    return runs / task / (variant if RECIPES[task].continued is None else f"{variant}-continued")


def build_one(task: str, variant: str, splits: Splits, runs: Path, models: Path, results: Path, data: str,  # noqa: PLR0913 — to do: the zoo's run settings into one config (issue #55)
              device: str | None = None, progress: bool = True, precision: str = "auto", stage: str = "all",
              recipe: str = "cpu", pieces_from: Path | None = None) -> None:
    """Train (or resume), export and evaluate one zoo model (``precision``: see ``TrainConfig.precision``).

    ``stage`` ([`STAGES`][attention_core.hub.zoo.STAGES]) does only the training, or only the export and evaluation of
    a model trained into ``runs`` elsewhere; a ``finish`` for a model whose final run folder holds no trained model
    raises ``TrainError``. ``recipe`` names one of [`RECIPE_SETS`][attention_core.hub.zoo.RECIPE_SETS]. A variant
    other than the default makes the task's encoded corpus (when it is not made yet) with the pieces of the default
    model in ``pieces_from`` (default: ``models``), when that was trained at ``recipe``.
    """
    name = f"{task}/{variant}"
    chosen = RECIPE_SETS[recipe][task]
    train_cfg = replace(chosen.train, precision=precision)
    run_dir, model_dir = final_run(runs, task, variant), models / task / variant
    options = model_options(task, variant)
    command = f"attention-lab zoo --data {shlex.quote(data)} --only {name}"
    if precision != "auto":
        command += f" --precision {precision}"
    if recipe != "cpu":
        command += f" --recipe {recipe}"
    if stage != "finish":
        print(json.dumps({"event": "zoo", "model": name, "options": options, "train": asdict(train_cfg)}),
              flush=True)
        pieces = shipped_pieces(pieces_from or models, task, recipe) if variant != DEFAULT_VARIANT else None
        fit(TASKS[task], splits, runs / task / variant, options, train_cfg, resume=True, device=device,
            progress=progress, command=command, encoded=runs / ENCODED, pieces=pieces, find_names=cached_known_names)
        continued = chosen.continued
        if continued is not None:
            first = load_folder(runs / task / variant)
            fit(TASKS[task], splits, run_dir, options, replace(continued, precision=precision), resume=True,
                device=device, progress=progress, command=command, init=first, find_names=cached_known_names)
    if stage == "train":
        print(json.dumps({"event": "zoo-trained", "model": name}), flush=True)
        return
    for folder in (run_dir, runs / task / variant):  # brought back before its training had ended
        if (folder / PARTIAL).is_file():
            raise TrainError(f"{folder} was trained only partly ({(folder / PARTIAL).read_text().strip()}): train "
                             "it to the end first")
    if not (run_dir / WEIGHTS).is_file():
        raise TrainError(f"{run_dir} holds no trained model to finish: train it first (--stage train or all)")
    trained = load_folder(run_dir)
    last = chosen.continued or chosen.train
    settings = trained.meta.get("train") or {}
    if stage == "finish" and trained_recipe(task, settings) != recipe:
        raise TrainError(f"{run_dir} was trained at batch {settings.get('batch_size')}, learning rate "
                         f"{settings.get('lr')}; the {recipe} recipe trains at batch {last.batch_size}, learning rate "
                         f"{last.lr}: finish it with the --recipe it was trained with")
    if trained.tgt_vocab.counts is None:  # a run from before vocabularies kept their counts
        add_counts(trained, splits, train_cfg, options)
    if TASKS[task].constrained and "overproduction" not in trained.meta:  # the cliché penalty's calibration
        give_overproduction(trained, run_dir, splits, name)
    save_pretrained(trained, model_dir, half=True)
    translator = load_folder(model_dir, device or "cpu")  # measure the shipped float16 weights
    weights = sha256_file(model_dir / WEIGHTS)
    reports = {}
    for set_name, pairs in splits.evaluation_sets().items():
        stem = task if set_name == "test" else f"{task}-{set_name}"
        for label, beam, constrained in DECODINGS[task]:
            suffix = "" if constrained in (None, True) else "-unconstrained"
            path = results / "eval" / f"{stem}--{variant}--{label}{suffix}.json"
            report = _current_report(path, weights, TASKS[task].loop_guard, TASKS[task].coverage)
            if report is None:
                report = evaluate(translator, pairs, beam_size=beam, constrained=constrained)
                report.update(model_path=str(model_dir), split=set_name, weights_sha256=weights)
                atomic_write_text(path, json.dumps(report, ensure_ascii=False, indent=2))
            reports[f"{set_name}: {label}{suffix}"] = report
    # the command that trained it, as its metadata says (finished elsewhere, this one has other paths)
    command = trained.meta.get("command") or command
    atomic_write_text(model_dir / "README.md", model_card(model_dir, task, variant, reports, command))
    bleus = {k: round(r["bleu"], 2) for k, r in reports.items()}
    print(json.dumps({"event": "zoo-done", "model": name, **bleus}), flush=True)


def run_zoo(  # noqa: PLR0913 — to do: the zoo's run settings into one config (issue #55)
    data: str,
    runs: str = "runs",
    models: str = "models",
    results: str = "results",
    only: list[str] | None = None,
    device: str | None = None,
    progress: bool = True,
    precision: str = "auto",
    stage: str = "all",
    recipe: str = "cpu",
    pieces_from: str | None = "models",
) -> None:
    """Train, export and evaluate every zoo model (see the module docstring).

    Several ``attention-lab zoo`` processes may run at once (one per core or GPU): each model is
    claimed by one process, the others move on to the next.

    Args:
        data: The data folder.
        runs: Training folders (checkpoints; not shipped).
        models: Where the shipped float16 models go.
        results: Where evaluation reports go (``results/eval``).
        only: Restrict to ``task/variant`` names.
        device: Force a device.
        progress: Show progress bars.
        precision: Training precision (``TrainConfig.precision``). The bundled models were trained
            in ``fp32`` at earlier recipes (``auto`` is bfloat16 on a CPU that supports it).
        stage: ``all``, ``train`` or ``finish`` ([`STAGES`][attention_core.hub.zoo.STAGES]). ``finish`` goes on past a
            model it cannot finish (not trained here, trained only partly or at another recipe) and names them all
            at the end.
        recipe: ``cpu`` or ``gpu`` ([`RECIPE_SETS`][attention_core.hub.zoo.RECIPE_SETS]).
        pieces_from: A models folder whose default model lends its pieces to a task's encoded corpus when that is
            first made ([`shipped_pieces`][attention_core.hub.zoo.shipped_pieces]; the bundled ``models``, as the
            other variants are trained beside the default that ships); ``None``: ``models``.

    Raises:
        TrainError: A model cannot be trained, or (``finish``) some could not be finished.
    """
    if stage not in STAGES:
        raise ValueError(f"stage {stage!r}: choose one of {', '.join(STAGES)}")
    if recipe not in RECIPE_SETS:
        raise ValueError(f"recipe {recipe!r}: choose one of {', '.join(RECIPE_SETS)}")
    splits_cache: dict[str, Splits] = {}
    unfinished: list[str] = []
    for task, variant in ZOO_ORDER:
        name = f"{task}/{variant}"
        if only and name not in only:
            continue
        if task not in splits_cache:
            splits_cache[task] = load_splits(task, data, extra=RECIPES[task].extra)
        with hold(Path(runs) / task / variant) as mine:
            if not mine:
                print(json.dumps({"event": "zoo-skip", "model": name, "reason": "claimed by another process"}),
                      flush=True)
                continue
            try:
                build_one(task, variant, splits_cache[task], Path(runs), Path(models), Path(results), data, device,
                          progress, precision, stage, recipe, Path(pieces_from or models))
            except TrainError as err:
                if stage != "finish":
                    raise
                unfinished.append(f"{name} ({err})")  # the others are finished all the same
                print(json.dumps({"event": "zoo-skip", "model": name, "reason": str(err)}), flush=True)
    if unfinished:
        raise TrainError(f"not finished: {'; '.join(unfinished)}")
