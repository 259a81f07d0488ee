"""The ``attention-lab`` command line: a thin layer over the library.

Subcommands: ``train``, ``evaluate``, ``translate``, ``couplet``, ``zoo``, ``export``, ``push``, ``pull``, ``data``.
The reports and figures have their own command, ``python -m reports``.
Run ``attention-lab <command> --help`` (or ``python -m attention_core.cli``) for the options.
Errors (bad paths, unknown variants, empty input) print one ``error:`` line and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import torch.distributed as dist

from attention_core.analysis.evaluation import evaluate
from attention_core.analysis.notes import notes as output_notes
from attention_core.data import corpora
from attention_core.data.atomic import atomic_write_text
from attention_core.data.corpora import DATA_ENV, DEFAULT_REPO, MANIFEST, REPO_ENV, RUNS_ENV, runs_home
from attention_core.data.hubio import HubError
from attention_core.data.info import DataInfo
from attention_core.data.parallel import (
    FORMATS,
    PARALLEL,
    TOKENIZERS,
    Side,
    Source,
    TaskSpec,
    script_direction,
    split_parallel,
    splits_from_info,
)
from attention_core.data.tasks import SPLIT_SEED, TASKS, DataError, Splits, Task, load_splits
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.couplet import TONE_MODES, CoupletRules
from attention_core.decoding.folder import ModelLoadError, save_pretrained
from attention_core.decoding.translator import SENTENCE_TOKENS, InputError, Output, Translator
from attention_core.editing import switch
from attention_core.editing.namecache import cached_known_names
from attention_core.hub.pretrained import from_pretrained, pull, push
from attention_core.model.attention import CENTRES
from attention_core.model.config import RNN_TYPES, TRANSFORMER
from attention_core.model.decoder import DECODERS
from attention_core.model.scores import SCORES
from attention_core.training.allocator import AllocatorError, restart_if_faster
from attention_core.training.loop import (
    CHECKPOINT,
    TrainConfig,
    TrainError,
    claim_run_folder,
    fit,
    own_task,
    pick_device,
)
from attention_core.training.precision import PRECISIONS

DATA_HELP = f"data folder (default: ${DATA_ENV}, else ~/.cache/attention-lab/data; `attention-lab data pull` fills it)"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes end in one ``error:`` line and a pointer to ``--help``.

    argparse prints the whole usage block first (some 40 lines for ``train``), with the one useful line last. Options
    are written in full (no ``--dat`` for ``--data``): checks that ask whether an option was given read the command
    line as typed.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n(`{self.prog} --help` lists the options)\n")


def _field_help(cls: type) -> dict[str, str]:
    """Each attribute's description in a Google-style docstring's ``Attributes:`` section, on one line."""
    helps: dict[str, str] = {}
    name = None
    section = (cls.__doc__ or "").split("Attributes:", 1)[-1]
    for line in section.splitlines():
        field = re.match(r"^ {8}(\w+): (.*)$", line)
        if field:
            name, helps[field.group(1)] = field.group(1), field.group(2)
        elif name and line.startswith(" " * 12):
            helps[name] += " " + line.strip()
        elif line.strip():
            name = None
    link = re.compile(r"\[`?([^\]`]+)`?\]\[[\w.]+\]")  # mkdocstrings' [`Name`][module.Name] → Name
    return {k: link.sub(r"\1", v).replace("``", "").replace("%", "%%") for k, v in helps.items()}


def _window(value: str) -> int | None | str:
    if value in ("config", "global", "none", "None"):
        return None if value != "config" else "config"
    try:
        d = int(value)
    except ValueError:
        msg = f"window must be 'config', 'global' or an integer, got {value!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if d < 1:
        raise argparse.ArgumentTypeError(f"window must be at least 1, got {d}")
    return d


def _add_decoding(p: argparse.ArgumentParser) -> None:
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    p.add_argument(
        "--window",
        type=_window,
        default="config",
        help="decode-time window: 'config' (the model's own), 'global', or D >= 1",
    )
    p.add_argument("--hard", action="store_true", help="hard (argmax) attention at decode time")
    p.add_argument("--loop-guard", choices=["on", "off"], default=None,
                   help="keep outputs out of loops: no token more than three times in a row, no 6-gram twice "
                        "(default: on for translation, off for couplets and models of your own)")
    p.add_argument("--coverage", type=_coverage, default=None, metavar="BETA",
                   help="beam search's coverage penalty: outputs that leave source words without attention rank "
                        "lower (Wu et al. 2016); 0 = off (the default); beam search only (--beam 2 or more). The "
                        "score is log p per token: weights far below GNMT's 0.2 (results/coverage_penalty.md)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 … (default: CUDA if available)")


def _coverage(value: str) -> float:
    try:
        beta = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the coverage penalty must be a number, got {value!r}") from None
    if not 0 <= beta <= 100:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"the coverage penalty must be between 0 and 100, got {value}")
    return beta


def _decode_config(args: argparse.Namespace, constrained: bool | None = None) -> DecodeConfig:
    """The decoding flags as one [`DecodeConfig`][attention_core.decoding.config.DecodeConfig].

    ``--loop-guard on|off`` (absent: the task's default), ``--beam``, ``--window``, ``--hard``, ``--coverage`` and
    the couplet rules' flags where the command has them; ``constrained``: ``None`` for the task's default.
    """
    rules = _rules(args) if hasattr(args, "no_mirror") else None  # the commands that decode couplets
    return DecodeConfig(beam_size=args.beam, window=args.window, hard=args.hard, constrained=constrained, rules=rules,
                        loop_guard=None if args.loop_guard is None else args.loop_guard == "on", coverage=args.coverage)


def _add_couplet_rules(p: argparse.ArgumentParser) -> None:
    default = CoupletRules()
    p.add_argument("--no-mirror", action="store_true",
                   help="couplets: do not mirror the 上联's repetition pattern (声声 ↔ 事事)")
    p.add_argument("--allow-reuse", action="store_true", help="couplets: allow characters of the 上联 (重字)")
    p.add_argument("--tone", choices=TONE_MODES, default=default.tone,
                   help="couplets: last character's tone: classical = 平 after a 上联 ending 仄 (仄起平收), "
                   f"opposite = always the other class, off (default {default.tone})")
    p.add_argument("--cliche-penalty", type=float, default=default.cliche_penalty, metavar="λ",
                   help=f"couplets: penalty on over-frequent characters, 0 = off (default {default.cliche_penalty})")


def _rules(args: argparse.Namespace) -> CoupletRules:
    """The couplet rules chosen on the command line (``ValueError`` for a bad penalty)."""
    return CoupletRules(
        mirror=not args.no_mirror,
        no_reuse=not args.allow_reuse,
        tone=args.tone,
        cliche_penalty=args.cliche_penalty,
    ).validate()


def _add_corpus_reading(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="auto",
                   help="corpus format (auto: two files = lines, .jsonl/.json = jsonl, a dataset = hf, else tsv)")
    p.add_argument("--source-field", default="source", help="jsonl / hf: source field (dotted: translation.de)")
    p.add_argument("--target-field", default="target", help="jsonl / hf: target field (dotted: translation.en)")
    p.add_argument("--hf-split", default="train", help="hf: the dataset split to read")
    p.add_argument("--hf-config", default=None, help="hf: the dataset configuration, e.g. de-en for wmt19")


def _add_own_corpus(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(f"a corpus of your own (--task {PARALLEL})")
    g.add_argument("--corpus", nargs="+", default=None, metavar="FILE",
                   help="training pairs: a TSV (source<TAB>target), two line-aligned files, JSON lines, or a "
                        "Hugging Face dataset id or folder (pip install 'attention-lab[datasets]')")
    g.add_argument("--dev", nargs="+", default=None, metavar="FILE", help="dev pairs (default: 5 %% of --corpus)")
    g.add_argument("--test", nargs="+", default=None, metavar="FILE", help="test pairs (default: 5 %% of --corpus)")
    for side in ("source", "target"):
        g.add_argument(f"--{side}-tokenizer", choices=TOKENIZERS, default="word",
                       help=f"{side} tokens: char (characters), word (whitespace words), bpe (learned pieces)")
        g.add_argument(f"--{side}-bpe", type=int, default=Side().bpe_size, metavar="N",
                       help=f"{side} BPE pieces (with --{side}-tokenizer bpe)")
        g.add_argument(f"--{side}-lang", default="", help=f"{side} language code, e.g. de (for the model card)")
    _add_corpus_reading(g)


def _own_splits(args: argparse.Namespace) -> tuple[TaskSpec, Source, Source | None, Source | None]:
    """``train --task parallel``: the sides and where each split's pairs come from."""
    if not args.corpus:
        raise InputError(f"--task {PARALLEL} needs --corpus FILE (a TSV of source<TAB>target pairs, two "
                         "line-aligned files, JSON lines or a dataset)")
    if args.extra:
        raise InputError(f"--extra names the bundled corpora; with --task {PARALLEL} give --corpus (and --dev, --test)")
    reading = dict(fmt=args.format, source_field=args.source_field, target_field=args.target_field,
                   split=args.hf_split, config=args.hf_config)
    train = Source.of(args.corpus, **reading)
    dev = Source.of(args.dev, **{**reading, "split": "validation"}) if args.dev else None
    test = Source.of(args.test, **{**reading, "split": "test"}) if args.test else None
    spec = TaskSpec(Side(args.source_tokenizer, args.source_bpe, args.source_lang),
                    Side(args.target_tokenizer, args.target_bpe, args.target_lang))
    spec.source.check("source")
    spec.target.check("target")
    return spec, train, dev, test


def _own_task_and_splits(args: argparse.Namespace, seed: int) -> tuple[Task, Splits]:
    """The task (BPE learned or, with --resume, reread from --out) and the splits of a corpus of your own."""
    spec, train, dev, test = _own_splits(args)
    splits = split_parallel(train, dev, test, seed)
    spec = TaskSpec(replace(spec.source, direction=script_direction(s for s, _ in splits.train)),
                    replace(spec.target, direction=script_direction(t for _, t in splits.train)))
    return own_task(spec, splits.train, args.out, args.resume), splits


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the command line)."""
    parser = _Parser(prog="attention-lab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_train_parser(sub)
    _add_evaluate_parser(sub)
    _add_translate_parsers(sub)
    _add_zoo_parser(sub)
    _add_export_parser(sub)
    _add_push_parser(sub)
    _add_pull_parser(sub)
    _add_data_parser(sub)
    return parser


def _add_train_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``train``: architecture, training settings (a flag per ``TrainConfig`` field), data."""
    p = sub.add_parser("train", help="train a model: a bundled task from the data folder, or a corpus of your own")
    p.add_argument("--task", choices=[*TASKS, PARALLEL], required=True,
                   help=f"{PARALLEL}: any language pair, from --corpus (docs: Train on your own data)")
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--out", default=None,
                   help="output folder (the model and its checkpoint; default: <task>/<decoder>-<score>-<attention> "
                        f"in ${RUNS_ENV}, else ~/.cache/attention-lab/runs, outside the checkout)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--init", default=None, metavar="MODEL",
                   help="continue a trained model (folder or Hub repo id) with a fresh optimiser: its architecture, "
                        "vocabularies and data split are kept, and --epochs counts from its first epoch")
    p.add_argument("--decoder", choices=[*DECODERS, TRANSFORMER], default="luong",
                   help="transformer: a Transformer encoder-decoder (set --emb equal to --hidden)")
    p.add_argument("--score", choices=list(SCORES), default=None,
                   help="default: general (scaled_dot for --decoder transformer, the only one it takes)")
    p.add_argument("--attention", choices=list(CENTRES), default="global")
    p.add_argument("--window", type=int, default=None, help="half-width D for local attention")
    p.add_argument("--rnn", choices=RNN_TYPES, default="lstm")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--emb", type=int, default=256)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--heads", type=int, default=4, help="Transformer attention heads")
    p.add_argument("--ff-size", type=int, default=1024, help="Transformer feed-forward inner size")
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--tie-embeddings", action="store_true", help="output layer reuses target embeddings")
    p.add_argument("--share-embeddings", action="store_true", help="one vocabulary and embedding (couplets)")
    p.add_argument("--extra", nargs="*", default=None,
                   help="extra training folders in --data: poetry-couplet (couplets), cmn-eng-extra and tv4dialog "
                        "(translation; tv4dialog also holds out whole episodes as tv4dialog-test and tv4dialog-dev); "
                        "default: none, or the --init model's")
    p.add_argument("--split-seed", type=int, default=None, help=f"default: {SPLIT_SEED}, or the --init model's")
    helps = _field_help(TrainConfig)
    for field, default in TrainConfig().__dict__.items():
        flag = "--" + field.replace("_", "-")
        kind = type(default) if default is not None else int
        choices = PRECISIONS if field == "precision" else None
        p.add_argument(flag, type=kind, default=default, choices=choices, dest=f"train_{field}",
                       metavar=None if choices else field.upper(),
                       help=f"{helps.get(field, '')} (default: {'all' if default is None else default})")
    p.add_argument("--device", default=None)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_own_corpus(p)


def _add_evaluate_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``evaluate``: the model, the split or pairs, decoding."""
    p = sub.add_parser("evaluate", help="score a model on its test (or dev) split; write a JSON report")
    p.add_argument("--model", required=True, help="model folder or Hub repo id")
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--split", choices=["test", "dev", "poetry-test", "tv4dialog-test", "tv4dialog-dev"],
                   default="test",
                   help="poetry-test: couplet models only, the classical poetry-couplet/test set; tv4dialog-test, "
                        "tv4dialog-dev: translation models, the held-out TV episodes (any model, with or without "
                        "tv4dialog in its training data)")
    p.add_argument("--limit", type=int, default=None, help="score only the first N pairs")
    p.add_argument("--unconstrained", action="store_true", help="couplets: no decoding constraints")
    _add_couplet_rules(p)
    p.add_argument("--report", default=None, help="write the JSON report here")
    p.add_argument("--test", nargs="+", default=None, metavar="FILE",
                   help="score on these pairs instead (TSV, JSON lines, two line-aligned files or a dataset; "
                        "read as --format, --source-field, --target-field, --hf-split say)")
    _add_corpus_reading(p)
    _add_decoding(p)


def _add_translate_parsers(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``translate`` and ``couplet``: the inputs, the model, decoding, what to show."""
    for name, help_ in (
        ("translate", "translate sentences: Chinese into English, or with a model of your own"),
        ("couplet", "write a 下联 for each 上联"),
    ):
        p = sub.add_parser(name, help=help_)
        what = ("sentences (Chinese paragraphs are split at 。！？; a model of your own reads one input a line)"
                if name == "translate" else "first lines (上联)")
        p.add_argument("text", nargs="*", help=f"input {what} (default: one per line on stdin)")
        p.add_argument("--model", required=True, help="model folder or Hub repo id")
        p.add_argument("--show-attention", action="store_true", help="print the alignment matrix")
        p.add_argument("--pieces", action="store_true",
                       help="with --show-attention: one row per subword piece (default: per word)")
        if name == "couplet":
            p.add_argument("--unconstrained", action="store_true", help="no decoding constraints")
            _add_couplet_rules(p)
        else:
            p.add_argument("--names", action="store_true",
                           help="Chinese → English: carry people's names and numbers through the model and write "
                                "names in pinyin (张伟 → Zhang Wei) or as the CC-CEDICT dictionary writes them "
                                "(玛丽 → Mary), numbers as English writes them (九十九块钱 → 99 yuan, 九点四十五分 → "
                                "9:45, 五月十日 → May 10th)")
        _add_decoding(p)


def _add_zoo_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``zoo``: where runs, models and results go; which models; the recipe set."""
    p = sub.add_parser("zoo", help="train, export and evaluate the whole model zoo (resumable)")
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--runs", default=None,
                   help=f"training folders with checkpoints (default: ${RUNS_ENV}, else ~/.cache/attention-lab/runs)")
    p.add_argument("--models", default="models", help="where the shipped float16 models go")
    p.add_argument("--results", default="results")
    p.add_argument("--only", nargs="*", default=None, help="task/variant names, e.g. couplet/none")
    p.add_argument("--device", default=None)
    p.add_argument("--precision", choices=PRECISIONS, default="auto",
                   help="training precision (the bundled models: fp32)")
    p.add_argument("--stage", choices=("all", "train", "finish"), default="all",
                   help="train: train (or resume) only; finish: export and evaluate models trained into --runs "
                        "elsewhere (a GPU trains, a CPU finishes); all: both")
    p.add_argument("--recipe", choices=("cpu", "gpu"), default="cpu",
                   help="cpu: the recipes chosen on a CPU (batch 64); gpu: the same at eight times the batch and twice "
                        "the learning rate, for a GPU that trains the whole zoo at once")
    p.add_argument("--pieces-from", default="models",
                   help="a models folder whose default model (luong-general) lends its BPE pieces to a task's encoded "
                        "corpus when that is first made, if it was trained at --recipe (default: the bundled models)")
    p.add_argument("--quiet", action="store_true")


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``export``: the model and the new folder."""
    p = sub.add_parser("export", help="copy a model folder (optionally in float16)")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--half", action="store_true", help="store weights as float16")


def _add_push_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``push``: the model folder and the Hub repo."""
    p = sub.add_parser("push", help="upload a model folder to the Hugging Face Hub")
    p.add_argument("--model", required=True)
    p.add_argument("--repo", required=True, help="repo id, e.g. you/attention-lab-couplet")
    p.add_argument("--private", action="store_true")


def _add_pull_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``pull``: the Hub repo and where to put it."""
    p = sub.add_parser("pull", help="download a model from the Hugging Face Hub")
    p.add_argument("--repo", required=True)
    p.add_argument("--revision", default=None)
    p.add_argument("--out", default=None, help="download into this folder (default: the Hub cache)")


def _add_data_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand ``data``: pull, verify, push or describe the corpora."""
    p = sub.add_parser("data", help="get the corpora: pull from a Hub dataset repo, verify, push")
    p.add_argument("action", choices=["pull", "verify", "push", "manifest"],
                   help="pull: download and check; verify: check the data folder against the manifest; "
                        "push: upload a verified folder with its dataset card; manifest: write the manifest of a "
                        "folder (maintainers)")
    p.add_argument("corpora", nargs="*", help="only these corpora, e.g. couplet cmn-eng (default: all)")
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--repo", default=None,
                   help=f"Hub dataset repo id (default: ${REPO_ENV}, else {DEFAULT_REPO})")
    p.add_argument("--revision", default=None, help="pull: branch, tag or commit")
    p.add_argument("--private", action="store_true", help="push: create the repo as private")
    p.add_argument("--manifest", default=str(MANIFEST), help="the manifest (default: the one shipped with the code)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def format_alignment(out: Output, pieces: bool = False) -> str:
    """The attention matrix as a text table: one row per output word, one column per source token.

    Under it, ``coverage``: the total attention each source token received over the output's pieces
    ([`Output.coverage`][attention_core.decoding.translator.Output.coverage]).

    Args:
        out: An output.
        pieces: One row per subword piece instead of per word (a word's row is the mean of its
            pieces' rows; see [`Output.word_rows`][attention_core.decoding.translator.Output.word_rows]).
    """
    cols = out.source_tokens
    width = max([5, *(len(c) + 1 for c in cols)])
    rows, weights = (out.row_labels, out.weights) if pieces else out.word_rows()
    label_w = max([len("coverage") + 1, *(len(r) + 1 for r in rows)])
    lines = [" " * label_w + "".join(c.rjust(width) for c in cols)]
    for label, row in zip(rows, weights.tolist()):
        lines.append(label.ljust(label_w) + "".join(f"{w:.2f}".rjust(width) for w in row))
    lines.append("coverage".ljust(label_w) + "".join(f"{c:.2f}".rjust(width) for c in out.coverage.tolist()))
    if out.centres is not None and (pieces or len(rows) == len(out.row_labels)):
        lines.append("p_t".ljust(label_w) + " ".join(f"{c:.1f}" for c in out.centres.tolist()))
    return "\n".join(lines)


_ARCH_FLAGS = {"hidden_size": "hidden", "emb_size": "emb", "num_layers": "layers"}
"""``ModelConfig`` fields whose ``train`` flag has another name (the others share theirs)."""


def _load(model: str, device: str | None) -> Translator:
    return from_pretrained(model, device=pick_device(device))


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run the subcommand ``args.command`` (a key of ``COMMANDS``)."""
    return COMMANDS[args.command](args, argv)


def _train(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab train``: a bundled task from the data folder, or a corpus of your own."""
    train_cfg = TrainConfig(**{k[6:]: v for k, v in vars(args).items() if k.startswith("train_")}).validate()
    pick_device(args.device)  # a bad setting, device or --out fails before the corpus is read
    if args.out is None:
        score = args.score or ("scaled_dot" if args.decoder == TRANSFORMER else "general")
        args.out = str(runs_home() / args.task / f"{args.decoder}-{score}-{args.attention}")
        print(f"training into {args.out} (--out chooses another folder)", file=sys.stderr)
    claim_run_folder(args.out, args.resume)
    init = _load(args.init, "cpu") if args.init else None
    options, data_info = _model_options(args, argv, init)
    task, splits = _training_data(args, argv, init, data_info)
    if args.resume and not (Path(args.out) / CHECKPOINT).is_file():
        print(f"note: {args.out} holds no checkpoint to resume; starting a new run", file=sys.stderr)
    if splits.info.get("skipped_lines"):
        print(
            f"note: skipped {splits.info['skipped_lines']} malformed or empty corpus lines",
            file=sys.stderr,
        )
    result = fit(
        task,
        splits,
        args.out,
        options,
        train_cfg,
        resume=args.resume,
        device=args.device,
        progress=not args.quiet,
        command="attention-lab " + shlex.join(argv),
        init=init,
        find_names=cached_known_names,
    )
    if not (dist.is_initialized() and dist.get_rank() != 0):  # under torchrun, like fit's events: rank 0
        print(json.dumps({"event": "done", **{k: v for k, v in result.items() if k != "history"}}))
    return 0


def _model_options(args: argparse.Namespace, argv: Sequence[str],
                   init: Translator | None) -> tuple[dict, DataInfo]:
    """The architecture the flags ask for, and ``--init``'s data settings.

    Returns:
        ``(options, data_info)``: with ``--init``, only the flags given (to be checked against the model's),
        and what it was trained on; without it, every architecture flag and an empty ``DataInfo``.
    """
    options = dict(
        decoder=args.decoder,
        score=args.score or ("scaled_dot" if args.decoder == TRANSFORMER else "general"),
        attention=args.attention,
        window=args.window,
        rnn=args.rnn,
        hidden_size=args.hidden,
        emb_size=args.emb,
        num_layers=args.layers,
        heads=args.heads,
        ff_size=args.ff_size,
        dropout=args.dropout,
        tie_embeddings=args.tie_embeddings,
        share_embeddings=args.share_embeddings,
    )
    data_info = DataInfo()
    if init is not None:
        if init.task.name != args.task:
            raise TrainError(f"--init {args.init} is a {init.task.name} model; use --task {init.task.name}")
        # only the architecture flags given on the command line, checked against the model's: those
        # that differ from their defaults, and those written out in full even with the default value
        defaults = dict(build_parser().parse_args(["train", "--task", args.task, "--out", "-"]).__dict__)
        given = {flag for flag, value in vars(args).items() if defaults.get(flag, value) != value}
        given |= {dest for dest in vars(args) for arg in argv
                  if arg.split("=", 1)[0] == "--" + dest.replace("_", "-")}
        options = {k: v for k, v in options.items() if _ARCH_FLAGS.get(k, k) in given}
        data_info = DataInfo.read(init.meta.get("data"))
    return options, data_info


def _training_data(args: argparse.Namespace, argv: Sequence[str], init: Translator | None,
                   data_info: DataInfo) -> tuple[Task, Splits]:
    """The task and its splits: the bundled corpus (checked against ``--init``'s) or a corpus of your own."""
    needed = {"seed"} if args.split_seed is None else set()
    needed |= {"extra"} if args.extra is None else set()
    if needed & set(data_info.unreadable):  # what the flags leave to the model's record, the record must say
        raise TrainError(f"--init {args.init}: its data split is unreadable; give --split-seed and --extra")
    seed = args.split_seed if args.split_seed is not None else data_info.seed if data_info.seed is not None \
        else SPLIT_SEED
    extra = args.extra if args.extra is not None else list(data_info.extra)
    if args.task != PARALLEL and (args.corpus or args.dev or args.test):
        raise InputError(f"--corpus, --dev and --test are for a corpus of your own: add --task {PARALLEL} "
                         f"(--task {args.task} trains on the bundled corpus in the data folder)")
    if args.task == PARALLEL:
        task, splits = _own_task_and_splits(args, seed)
    else:
        task, splits = TASKS[args.task], load_splits(args.task, args.data, seed, extra)
        if init is not None and not any(arg.split("=", 1)[0] == "--data" for arg in argv):
            _check_init_corpora(args.init, data_info, DataInfo.read(splits.info), args.data)
    return task, splits


def _evaluate(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab evaluate``: score a model on a split (or pairs given) and write the JSON report."""
    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit must be at least 1, got {args.limit}")
    if args.report:
        _check_destination(args.report)  # before the decoding, not after it
    translator = _load(args.model, args.device)
    pairs = _evaluation_pairs(args, translator)
    pairs = pairs[: args.limit] if args.limit else pairs
    report = evaluate(translator, pairs, _decode_config(args, False if args.unconstrained else None))
    report["model_path"] = str(args.model)
    report["split"] = "given: " + " ".join(args.test) if args.test else args.split
    summary = {k: round(report[k], 2) if isinstance(report[k], float) else report[k]
               for k in ("n", "bleu", "chrf", "decode_seconds")}
    if "couplet" in report:
        summary["couplet"] = report["couplet"]
    print(json.dumps(summary, ensure_ascii=False), flush=True)  # shown even if the report cannot be written
    if args.report:
        atomic_write_text(args.report, json.dumps(report, ensure_ascii=False, indent=2))
    return 0


def _evaluation_pairs(args: argparse.Namespace, translator: Translator) -> list[tuple[str, str]]:
    """The pairs ``--test`` names, or the model's ``--split`` (its own data split, read again from the data folder)."""
    if args.test:
        return Source.of(args.test, args.format, args.source_field, args.target_field, args.hf_split,
                         args.hf_config).read().pairs
    if translator.task.own:
        splits = splits_from_info(translator.meta.get("data"))
    else:
        seed = translator.meta.get("data", {}).get("seed", SPLIT_SEED)
        extra = translator.meta.get("data", {}).get("extra", [])
        splits = load_splits(translator.task.name, args.data, seed, extra)
    sets = {**splits.evaluation_sets(), "dev": splits.dev, **splits.extra_devs}
    if args.split.startswith("tv4dialog") and args.split not in sets and translator.task.name == "translation":
        held_out = load_splits(translator.task.name, args.data, seed, ["tv4dialog"])  # the same episodes
        sets |= {**held_out.extra_tests, **held_out.extra_devs}
    if args.split not in sets:
        needs = ("a translation model and tv4dialog (attention-lab data pull tv4dialog)"
                 if args.split.startswith("tv4dialog") else "a couplet model and poetry-couplet/test")
        raise InputError(f"--split {args.split} needs {needs}")
    return sets[args.split]


def _translate(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab translate`` and ``couplet``: outputs on stdout, notes and names on stderr."""
    translator = _load(args.model, args.device)
    if translator.task.characters_only != (args.command == "couplet"):  # a couplet model writes 下联 only
        raise InputError(
            f"{args.model} is a {translator.task.name} model; use "
            f"'attention-lab {'couplet' if args.command == 'translate' else 'translate'}'"
        )
    texts = args.text or _stdin_lines()
    _check_utf8(texts)
    if not texts:
        raise InputError("no input: pass sentences as arguments or one per line on stdin")
    if len(texts) > 1:  # one bad line among many: say which
        for i, text in enumerate(texts, 1):
            try:
                translator.tokenize(text)
            except InputError as err:
                raise InputError(f"input {i}: {err}") from None
    names = bool(getattr(args, "names", False))  # the editing layer's switch (translate only)
    if args.command == "couplet":
        outputs = translator.translate(texts, _decode_config(args, not args.unconstrained), max_tokens=400)
        paragraphs = [[out] for out in outputs]
    elif translator.task.own:  # a model of your own: one input a line, in any language
        paragraphs = [[out] for out in switch.translate(translator, texts, names, _decode_config(args))]
    else:  # each line may hold several sentences: one output per sentence, printed as one line
        config = _decode_config(args)
        paragraphs = [switch.translate_paragraph(translator, text, SENTENCE_TOKENS, names, config=config)
                      for text in texts]
    for outputs in paragraphs:
        _print_outputs(translator, outputs, args)
    return 0


def _print_outputs(translator: Translator, outputs: Sequence[Output], args: argparse.Namespace) -> None:
    """One input's outputs (its sentences) as one line; each one's notes, names and attention after it."""
    print(" ".join(out.text for out in outputs))
    for i, out in enumerate(outputs, 1):
        where = f"sentence {i}: " if len(outputs) > 1 else ""
        for note in output_notes(translator, out):
            print(f"note: {where}{note.en}", file=sys.stderr)
        for label in ("name", "number", "word"):
            for line in out.names.lines(label) if out.names else []:
                print(f"{label}: {where}{line}", file=sys.stderr)
        if args.show_attention:
            print((f"[{where.rstrip(': ')}]\n" if where else "") + format_alignment(out, args.pieces) + "\n")


def _zoo(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab zoo``: train, export and evaluate the model zoo (resumable)."""
    from attention_core.hub.zoo import run_zoo, zoo_models

    try:
        zoo_models(args.only)
    except ValueError as err:
        raise InputError(f"--only: {err}") from None
    run_zoo(args.data, str(runs_home(args.runs)), args.models, args.results, args.only, args.device, not args.quiet,
            args.precision, args.stage, args.recipe, args.pieces_from)
    return 0


def _export(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab export``: copy a model folder into a new one, optionally in float16."""
    out = Path(args.out)
    if not args.out.strip() or out.is_file() or (out.is_dir() and any(out.iterdir())):
        raise InputError(f"--out {args.out!r}: export writes a new model folder; give a new or empty folder "
                         "(it never replaces what is there)")
    translator = _load(args.model, "cpu")
    save_pretrained(translator, args.out, half=args.half)
    readme = Path(args.model) / "README.md"
    if readme.is_file():
        atomic_write_text(Path(args.out) / "README.md", readme.read_text(encoding="utf-8"))
    print(f"exported to {args.out}")
    return 0


def _hub(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``attention-lab push`` and ``pull``: a model folder to or from the Hugging Face Hub."""
    try:
        if args.command == "push":
            print(push(args.model, args.repo, private=args.private))
        else:
            print(pull(args.repo, args.revision, args.out))
    except (HubError, ModelLoadError) as err:  # no or bad token, unreachable Hub, missing repo or file
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def _check_init_corpora(model: str, trained: DataInfo, now: DataInfo, data: str) -> None:
    """Refuse to continue ``--init`` on corpora that changed since it was trained, unless ``--data`` names them.

    Its dev set would be drawn anew from the changed corpus, perhaps from pairs the model trained on, and the run
    would be called a continuation of the model's own training. A continuation on other data is asked for by name.
    The corpus files are compared by their place in the data folder (``couplet/train``), wherever it is.
    """
    before = trained.checksums()
    changed = [place for place, sha in now.checksums().items() if before.get(place, sha) != sha]
    if changed:
        raise TrainError(
            f"--init {model} was trained on another {', '.join(changed)} than the one in {data}: its dev set would be "
            f"drawn anew, perhaps from pairs the model trained on. To continue on these corpora anyway, name them: "
            f"--data {data}"
        )


def _check_destination(path: str) -> None:
    """Refuse a report path that cannot be written, before the work whose result it holds."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"--report {path} is a folder: give a file name, e.g. {target / 'report.json'}")
    parent = next((p for p in target.parents if p.exists()), Path("."))
    if not parent.is_dir():
        raise InputError(f"--report {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK):
        raise InputError(f"--report {path}: cannot write in {parent}")


_NOT_UTF8 = "is not UTF-8 text (GBK or another encoding?): convert it, e.g. `iconv -f gbk -t utf-8`"


def _stdin_lines() -> list[str]:
    """The non-blank lines on standard input (``InputError`` if they are not UTF-8)."""
    try:
        return [line for line in sys.stdin.read().splitlines() if line.strip()]
    except UnicodeDecodeError:
        raise InputError(f"the input on stdin {_NOT_UTF8}") from None


def _check_utf8(texts: Sequence[str]) -> None:
    """Refuse input that was not UTF-8 (the shell hands such bytes over as lone surrogates)."""
    for i, text in enumerate(texts, 1):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"input {i} {_NOT_UTF8}") from None


def _data(args: argparse.Namespace) -> int:
    """``attention-lab data``: pull, verify, push or measure the corpora."""
    if args.action == "manifest":
        names = args.corpora or sorted({e.corpus for e in corpora.read_manifest(args.manifest)})
        atomic_write_text(args.manifest, corpora.manifest_json(corpora.build_manifest(args.data, names)))
        print(f"wrote {args.manifest}")
        return 0
    try:
        entries = corpora.select(corpora.read_manifest(args.manifest), args.corpora)
        if args.action == "pull":
            corpora.pull(args.data, args.repo, args.corpora, args.revision, args.manifest, not args.quiet)
            print(f"{len(entries)} files verified in {args.data}")
        elif args.action == "verify":
            corpora.verify(args.data, entries, not args.quiet)
            print(f"{len(entries)} files verified in {args.data} ({sum(e.size for e in entries) / 1e6:.1f} MB)")
        else:
            print(corpora.push(args.data, corpora.data_repo(args.repo), private=args.private, corpora=args.corpora,
                               manifest=args.manifest, progress=not args.quiet))
    except (HubError, corpora.CorpusError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0



COMMANDS: dict[str, Callable[[argparse.Namespace, Sequence[str]], int]] = {
    "train": _train,
    "evaluate": _evaluate,
    "translate": _translate,
    "couplet": _translate,
    "zoo": _zoo,
    "export": _export,
    "data": lambda args, argv: _data(args),
    "push": _hub,
    "pull": _hub,
}
"""Each subcommand's function, by name."""

def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``attention-lab``; returns the exit status.

    Started from a shell (``argv`` not given), ``train`` and ``zoo`` first start again under a faster memory
    allocator where the system has one ([`attention_core.training.allocator`][attention_core.training.allocator]).
    """
    if argv is None:
        try:
            restart_if_faster(sys.argv[1:])
        except AllocatorError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command == "data" and not any(r.startswith("-") for r in rest):
        args.corpora += rest  # corpus names after the options: `data pull --data DIR couplet`
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if "data" in vars(args):
        args.data = str(corpora.data_home(args.data))
    if getattr(args, "coverage", None) and args.beam == 1:
        print("note: --coverage applies to beam search (--beam 2 or more); greedy search ignores it", file=sys.stderr)
    try:
        if args.command in ("train", "zoo"):
            with _runs_on_without_reader():
                return _run(args, argv)
        return _run(args, argv)
    except BrokenPipeError:  # `attention-lab translate … | head -3`: the reader has what it wanted
        _to_devnull()
        return 141  # as a shell reports a process ended by SIGPIPE
    except (DataError, ModelLoadError, InputError, TrainError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.command == "train":
            saved = (Path(args.out) / CHECKPOINT).is_file()
            again = " and the same --init" if args.init else ""
            print("interrupted; " + (f"the last checkpoint is saved: continue with --resume{again}" if saved
                                     else "nothing was saved yet"), file=sys.stderr)
        elif args.command == "zoo":
            print("interrupted; run the same command again to continue from the last checkpoints", file=sys.stderr)
        else:
            print("interrupted", file=sys.stderr)
        return 130


def _to_devnull(stream=None) -> None:
    """Point a stream's file (default: stdout) at the null device (its reader has gone): no later write fails."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), (stream or sys.stdout).fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's captured stream)
        pass


class _ReaderGone:
    """``sys.stdout`` or ``sys.stderr`` for ``train`` and ``zoo``: a long training is not stopped by its log's reader.

    When the reader goes away (``… | head -1``, ``… 2>&1 | head -1``, a ``tee`` that was stopped), the run goes on,
    says so once on stderr if anything still reads it, and its epoch lines are still kept in the run's
    ``metrics.jsonl``.
    """

    def __init__(self, stream):
        self.stream, self.gone = stream, False

    def _guard(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            if not self.gone:
                self.gone = True
                _to_devnull(self.stream)  # before the note: if stderr is this stream, the note goes nowhere
                print("note: nothing reads the output any more; training goes on (each run folder keeps its "
                      "epochs in metrics.jsonl)", file=sys.stderr, flush=True)
            return len(args[0]) if args else None

    def write(self, text: str) -> int:
        return self._guard(self.stream.write, text)

    def flush(self) -> None:
        self._guard(self.stream.flush)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def _runs_on_without_reader():
    """Run a ``train`` or ``zoo`` with ``_ReaderGone`` as stdout and stderr."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _ReaderGone(out), _ReaderGone(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":
    sys.exit(main())
