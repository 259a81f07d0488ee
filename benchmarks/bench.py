"""Speed benchmarks, side by side in one process: Attention Lab vs a tutorial-style reference.

Usage::

    python benchmarks/bench.py                 # writes results/benchmarks.json and results/benchmarks.md
    python benchmarks/bench.py --quick         # fewer repetitions (a smoke run)

Measured on real cmn-eng pairs (``../shared/data``) at the zoo's translation size (embeddings 128,
hidden 256, the zoo's vocabularies). Both models are built with the same sizes; the reference is
``benchmarks/reference.py``. Ratios are ours / reference.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import joey  # noqa: E402
from reference import TutorialSeq2Seq  # noqa: E402

from attention_core.data.batch import make_batch  # noqa: E402
from attention_core.data.tasks import bucketed_batches, encode_pairs, get_task, load_splits  # noqa: E402
from attention_core.decoding.folder import load_folder  # noqa: E402
from attention_core.hub.zoo import RECIPES, model_options  # noqa: E402
from attention_core.hub.zoo import VARIANTS as ZOO_VARIANTS  # noqa: E402
from attention_core.model.config import ModelConfig  # noqa: E402
from attention_core.model.seq2seq import build_model  # noqa: E402
from attention_core.training.loop import make_optimizer, train_step  # noqa: E402
from attention_core.training.precision import AMP_DTYPES, resolve_precision  # noqa: E402

TRANSFORMER = RECIPES["translation"].transformer  # the Transformer's zoo sizes (translation)

DATA = None  # the data folder: $ATTENTION_LAB_DATA or the user cache folder (attention_core.data.corpora.data_home)
MODEL = ROOT / "models" / "translation" / "luong-general"
EMB, HIDDEN = 128, 256
LUONG_GENERAL = ZOO_VARIANTS["luong-general"]
BATCH_SIZES = (32, 64, 128, 256)
VARIANTS: dict[str, dict] = {  # the zoo's variants (scaled dot costs what dot costs), local-p with D = 4
    name: {k: v for k, v in model_options("translation", name).items() if k in {*variant, "window", *TRANSFORMER}}
    for name, variant in ZOO_VARIANTS.items()
    if name != "luong-scaled_dot"
}
"""The variants measured one by one (ours)."""
RATIOS = {  # per batch size: pairs/s of one column ÷ another
    "speedup": ("ours", "reference"),
    "speedup_fp32": ("ours_fp32", "reference"),
    "speedup_vs_joey": ("ours", "joey"),
    "speedup_fp32_vs_joey": ("ours_fp32", "joey"),
    "speedup_vs_joey_bf16": ("ours", "joey_bf16"),
}
SUMMARY_KEYS = {
    "speedup": "train_speedup_vs_reference",
    "speedup_fp32": "train_speedup_vs_reference_fp32",
    "speedup_vs_joey": "train_speedup_vs_joey",
    "speedup_fp32_vs_joey": "train_speedup_vs_joey_fp32",
    "speedup_vs_joey_bf16": "train_speedup_vs_joey_bf16",
}
"""Per-batch-size ratio → top-level summary key of ``results/benchmarks.json`` (median over batch sizes)."""


def _ours(variant: dict, src_vocab: int, tgt_vocab: int):
    sizes = {"emb_size": EMB, "hidden_size": HIDDEN, "dropout": 0.0}  # the Transformer brings its own sizes
    cfg = ModelConfig(src_vocab_size=src_vocab, tgt_vocab_size=tgt_vocab, **{**sizes, **variant, "dropout": 0.0})
    return build_model(cfg)


def _params(model) -> int:
    return sum(p.numel() for p in model.parameters())


class PeakMemory:
    """Peak resident memory added while the ``with`` block runs, in MB (Linux; ``None`` elsewhere).

    Freed memory is handed back to the OS first (``malloc_trim``) and the kernel's high-water mark is reset
    (``/proc/self/clear_refs``), so each measurement starts from the current resident size.
    """

    def __init__(self) -> None:
        self.peak_mb: float | None = None

    @staticmethod
    def _status(field: str) -> int | None:
        try:
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))
        except (OSError, StopIteration):
            return None

    def __enter__(self) -> PeakMemory:
        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")  # reset VmHWM to the current VmRSS
            self._base = self._status("VmRSS")
        except OSError:
            self._base = None
        return self

    def __exit__(self, *exc) -> None:
        peak = self._status("VmHWM")
        if self._base is not None and peak is not None:
            self.peak_mb = round((peak - self._base) / 1024, 1)


def batch_stream(examples, batch_size: int, batches: int, prepare=None) -> list:
    """The fixed stream of ``batches`` real batches every system trains on."""
    stream = list(bucketed_batches(examples, batch_size, seed=1))
    stream = (stream * (1 + batches // max(1, len(stream))))[:batches]
    return [prepare(b) for b in stream] if prepare is not None else stream


def make_step(system: str, variant: str, precision: str, src_vocab, tgt_vocab):
    """A fresh model of one system (seed 0) and its training step: ``(step, prepare)``.

    Args:
        system: ``ours``, ``reference`` (always float32) or ``joey``.
        variant: A key of ``VARIANTS`` (``ours`` only; the others are Luong general).
        precision: ``fp32`` or ``bf16`` (``ours`` and ``joey``).
    """
    torch.manual_seed(0)
    V_src, V_tgt = len(src_vocab), len(tgt_vocab)
    if system == "ours":
        return ours_step(_ours(VARIANTS[variant], V_src, V_tgt), precision), None
    if system == "reference":
        return reference_step(TutorialSeq2Seq(V_src, V_tgt, EMB, HIDDEN, "general")), None
    model = joey.build(src_vocab, tgt_vocab, EMB, HIDDEN)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return (lambda b: joey.train_step(model, b, optimizer, AMP_DTYPES[precision])), joey.sort


def peak_memory_mb(system: str, variant: str, precision: str, batch_size: int, batches: int) -> float | None:
    """Peak training memory of one configuration, measured in a fresh process (``--probe``).

    In one long process the allocator's history (memory freed by earlier runs, then reused) shifts the
    resident-size high-water mark by tens of MB; a fresh process per configuration gives repeatable figures.
    """
    spec = json.dumps({"system": system, "variant": variant, "precision": precision, "batch_size": batch_size,
                       "batches": batches})
    run = subprocess.run([sys.executable, __file__, "--probe", spec], capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())})
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])["peak_mb"]
    except (IndexError, KeyError, json.JSONDecodeError):
        print(f"memory probe failed for {spec}: {run.stderr[-500:]}", file=sys.stderr)
        return None


def probe(spec: str) -> None:
    """``--probe``: build one configuration, train one pass over its stream, print its peak memory."""
    cfg = json.loads(spec)
    translator, _, _, examples = setup()
    step, prepare = make_step(cfg["system"], cfg["variant"], cfg["precision"], translator.src_vocab,
                              translator.tgt_vocab)
    stream = batch_stream(examples, cfg["batch_size"], cfg["batches"], prepare)
    with PeakMemory() as memory:
        for batch in stream:
            step(batch)
    print(json.dumps({"peak_mb": memory.peak_mb}))


def setup():
    """The bundled luong-general model (for its vocabularies and decoding), the task, splits, 3,000 train pairs."""
    translator = load_folder(MODEL)
    task = get_task("translation")
    splits = load_splits("translation", DATA)
    examples = encode_pairs(splits.train[:3000], task, translator.src_vocab, translator.tgt_vocab, max_len=50)
    return translator, task, splits, examples


def train_throughput(examples, batch_size: int, step, batches: int, prepare=None, rounds: int = 3) -> dict:
    """Pairs/s and target tokens/s of ``step(batch)`` over a fixed stream of real batches.

    One untimed pass over the stream first: oneDNN builds (JIT-compiles) its bfloat16 kernels once per
    matrix shape, and every batch has its own shape. Then ``rounds`` timed passes; the median counts.
    """
    stream = batch_stream(examples, batch_size, batches, prepare)
    for batch in stream:  # warm-up
        step(batch)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for batch in stream:
            step(batch)
        times.append(time.perf_counter() - started)
    seconds = statistics.median(times)
    pairs = sum(b.size for b in stream)
    tokens = sum(int(b.tgt_lengths.sum()) for b in stream)
    return {"pairs_per_s": round(pairs / seconds, 1), "tgt_tokens_per_s": round(tokens / seconds, 1),
            "batches": batches, "rounds": rounds, "seconds": round(seconds, 2)}


def repo_path(path: str | Path) -> str:
    """A path as a report names it: relative to the repository when inside it, else as given."""
    full = Path(path).resolve()
    return str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else str(path)


def write_report(out: str | Path, report: dict, markdown) -> None:
    """Write a benchmark's report as JSON and, beside it, as Markdown (``markdown(report)``); print the Markdown."""
    from attention_core.data.atomic import atomic_write_text

    out = Path(out)
    atomic_write_text(out, json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    atomic_write_text(out.with_suffix(".md"), markdown(report))
    print(markdown(report))


def take_turns(runs: dict, rounds: int) -> dict[str, list[float]]:
    """Seconds of each of ``runs`` (name → a call), ``rounds`` times each, taking turns, who goes first alternating.

    Whatever else the machine runs meanwhile slows every run alike; read the median of each list.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            started = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - started)
    return times


def ours_step(model, precision: str, label_smoothing: float = 0.0):
    """Our training step (``attention_core.training.loop.train_step``) with the trainer's optimiser and precision."""
    optimizer = make_optimizer(model.parameters(), lr=1e-3)
    return lambda batch: train_step(model, batch, optimizer, clip=1.0, label_smoothing=label_smoothing,
                                    amp_dtype=AMP_DTYPES[precision])


def reference_step(model):
    """The tutorial-style training step with Adam."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(batch):
        optimizer.zero_grad()
        model.loss(batch.src, batch.tgt_in, batch.tgt_out).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def _median_ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - started))
    return round(statistics.median(times), 2)


def scaling(reps: int) -> list[dict]:
    """Forward+backward time of batch 16 as source and target length grow (S = T = L)."""
    rows = []
    variants = {
        "none": dict(decoder="none"),
        "luong-dot global": dict(decoder="luong", score="dot"),
        "luong-dot local D=4": dict(decoder="luong", score="dot", attention="local-m", window=4),
        "luong-concat global": dict(decoder="luong", score="concat"),
    }
    for L in (8, 16, 32, 64, 128, 256):
        pairs = [(list(range(4, 4 + L)), list(range(4, 4 + L))) for _ in range(16)]
        batch = make_batch([(s, t[: L - 1]) for s, t in pairs])
        for name, variant in variants.items():
            model = _ours(variant, 300, 300)
            model.train()

            def step(model=model, batch=batch):
                logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_lengths)
                logits.float().mean().backward()

            ms = _median_ms(step, reps if L <= 64 else max(1, reps // 3))
            rows.append({"length": L, "variant": name, "train_step_ms": ms,
                         "attention_matrix_kib": round(16 * L * L * 4 / 1024, 1) if "none" not in name else 0})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=str(ROOT / "results" / "benchmarks.json"))
    p.add_argument("--probe", default=None, help=argparse.SUPPRESS)  # internal: one memory measurement
    args = p.parse_args()
    if args.probe:
        return probe(args.probe)
    torch.manual_seed(0)
    reps = 5 if args.quick else 30
    nbatches = 4 if args.quick else 16

    translator, task, splits, examples = setup()
    src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
    V_src, V_tgt = len(src_vocab), len(tgt_vocab)

    results: dict = {
        "machine": {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
                    "python": platform.python_version(), "torch": torch.__version__,
                    "device": "cuda" if torch.cuda.is_available() else "cpu"},
        "command": "python benchmarks/bench.py" + (" --quick" if args.quick else ""),
    }

    def measure(system: str, variant: str, prec: str, bs: int) -> dict:
        step, prepare = make_step(system, variant, prec, src_vocab, tgt_vocab)
        row = train_throughput(examples, bs, step, nbatches, prepare)
        row["peak_mb"] = peak_memory_mb(system, variant, prec, bs, nbatches)
        return row

    # training: ours (the trainer's default precision, and float32) vs the tutorial-style reference and
    # Joey NMT at equal size, several batch sizes. Joey as shipped trains in float32 on a CPU (its fp16
    # option is CUDA-only); "joey_bf16" wraps its step in our bfloat16 autocast to show how much of our
    # lead is mixed precision.
    precision = resolve_precision("auto", torch.device("cpu"))
    results["train_precision"] = precision
    systems = {"ours": ("ours", precision), "ours_fp32": ("ours", "fp32"), "reference": ("reference", "fp32")}
    if joey.available():
        systems.update(joey=("joey", "fp32"), joey_bf16=("joey", "bf16"))
    train_rows = []
    for bs in BATCH_SIZES:
        row = {"batch_size": bs, "precision": precision,
               "params_ours": _params(_ours(LUONG_GENERAL, V_src, V_tgt)),
               "params_reference": _params(TutorialSeq2Seq(V_src, V_tgt, EMB, HIDDEN, "general"))}
        if "joey" in systems:
            row["params_joey"] = _params(joey.build(src_vocab, tgt_vocab, EMB, HIDDEN))
        for key, (system, prec) in systems.items():
            row[key] = measure(system, "luong-general", prec, bs)
        for key, (num, den) in RATIOS.items():
            if num in row and den in row:
                row[key] = round(row[num]["pairs_per_s"] / row[den]["pairs_per_s"], 2)
        train_rows.append(row)
        print(json.dumps(row), flush=True)
    results["train"] = train_rows
    for key, summary in SUMMARY_KEYS.items():  # medians over the batch sizes
        if key in train_rows[0]:
            results[summary] = round(statistics.median(r[key] for r in train_rows), 2)

    variant_rows = []
    for name in VARIANTS:
        for bs in BATCH_SIZES:
            row = {"variant": name, "batch_size": bs}
            for key, prec in (("default", precision), ("fp32", "fp32")):
                row[key] = measure("ours", name, prec, bs)
            variant_rows.append(row)
            print(json.dumps(variant_rows[-1]), flush=True)
    results["train_variants"] = variant_rows

    # decoding: one sentence with its attention matrix, and the 1,000-sentence test set
    sentence = "我喜欢自然语言处理"
    translator.model.eval()
    greedy_ms = _median_ms(lambda: translator.translate([sentence]), reps)
    beam_ms = _median_ms(lambda: translator.translate([sentence], beam_size=5), reps)
    out = translator.translate([sentence])[0]
    ref = TutorialSeq2Seq(V_src, V_tgt, EMB, HIDDEN, "general").eval()
    ids = torch.tensor([src_vocab.encode(task.tokenize_src(sentence))])
    steps = out.weights.shape[0]
    ref_ms = _median_ms(lambda: ref.greedy(ids, steps), reps)
    results["greedy_latency_ms"] = greedy_ms
    results["latency"] = {"sentence": sentence, "output_steps": steps, "ours_greedy_ms": greedy_ms,
                          "ours_beam5_ms": beam_ms, "reference_greedy_ms": ref_ms,
                          "ratio_greedy": round(greedy_ms / ref_ms, 2)}
    print(json.dumps(results["latency"]), flush=True)

    test_sources = [s for s, _ in splits.test]
    started = time.perf_counter()
    outputs = translator.translate(test_sources)
    ours_greedy_s = time.perf_counter() - started
    started = time.perf_counter()
    translator.translate(test_sources, beam_size=5)
    ours_beam_s = time.perf_counter() - started
    started = time.perf_counter()
    for src, o in zip(test_sources, outputs):  # the reference decodes as many steps as we did
        ref.greedy(torch.tensor([src_vocab.encode(task.tokenize_src(src))]), o.weights.shape[0])
    ref_greedy_s = time.perf_counter() - started
    results["test_set_decoding"] = {"sentences": len(test_sources), "ours_greedy_s": round(ours_greedy_s, 2),
                                    "ours_beam5_s": round(ours_beam_s, 2), "reference_greedy_s": round(ref_greedy_s, 2),
                                    "speedup_greedy": round(ref_greedy_s / ours_greedy_s, 2)}
    if "joey" in systems:
        # Joey's own batched search on the same test set, batches of 64 sorted as Joey sorts them. Its
        # untrained weights never emit </s>, so each batch runs exactly as many steps as our trained model
        # needed for that batch: the same work, step for step.
        steps_per_sentence = [o.weights.shape[0] for o in outputs]
        jm = joey.build(src_vocab, tgt_vocab, EMB, HIDDEN)
        chunks = [list(range(i, min(i + 64, len(test_sources)))) for i in range(0, len(test_sources), 64)]
        test_batches = [
            (joey.sort(make_batch([(src_vocab.encode(task.tokenize_src(test_sources[i])), [4]) for i in c])),
             max(steps_per_sentence[i] for i in c))
            for c in chunks
        ]
        for label, beam in (("joey_greedy_s", 1), ("joey_beam5_s", 5)):
            started = time.perf_counter()
            for b, steps_needed in test_batches:
                joey.decode(jm, b, beam, max_len=steps_needed)
            results["test_set_decoding"][label] = round(time.perf_counter() - started, 2)
        one = joey.sort(make_batch([(src_vocab.encode(task.tokenize_src(sentence)), [4])]))
        results["latency"]["joey_greedy_ms"] = _median_ms(lambda: joey.decode(jm, one, 1, max_len=steps), reps)
    print(json.dumps(results["test_set_decoding"]), flush=True)

    results["scaling"] = scaling(3 if args.quick else 7)
    results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    Path(args.out).with_suffix(".md").write_text(markdown(results), encoding="utf-8")
    print(f"wrote {args.out}")


def markdown(r: dict) -> str:
    """The benchmark results as the docs page body."""
    m = r["machine"]
    prec = r["train_precision"]
    joey_ = "train_speedup_vs_joey" in r
    lines = [
        f"Measured with `{r['command']}` on {m['device']} ({m['cpu']}, {m['threads']} torch thread(s)), "
        f"torch {m['torch']}, Python {m['python']}. Reference: the tutorial-style implementation in "
        "`benchmarks/reference.py` at the same size (embeddings 128, hidden 256, the zoo's vocabularies).",
        "",
        f"Our trainer's default precision (`--precision auto`) on this machine: **{prec}**"
        + (" (bfloat16 mixed precision: this CPU multiplies bfloat16 natively)." if prec == "bf16" else ".")
        + " The reference and Joey NMT train in float32 (Joey's `fp16` option is CUDA-only).",
        "",
        f"**Training speed-up vs reference (median over batch sizes): {r['train_speedup_vs_reference']}×** "
        f"({r['train_speedup_vs_reference_fp32']}× with `--precision fp32`) · "
        + (f"**vs Joey NMT 2.3.0: {r['train_speedup_vs_joey']}×** ({r['train_speedup_vs_joey_fp32']}× in fp32; "
           f"{r['train_speedup_vs_joey_bf16']}× against Joey run under our bfloat16 autocast) · " if joey_ else "")
        + f"**one-sentence greedy decode with attention: {r['greedy_latency_ms']} ms** (median).",
        "",
        "## Training throughput (Luong general, real cmn-eng pairs)",
        "",
        f"Pairs per second (target tokens per second) over {r['train'][0]['ours']['batches']} fixed real batches: one "
        "untimed pass (oneDNN compiles its kernels once per matrix shape), then the median of "
        f"{r['train'][0]['ours']['rounds']} timed passes.",
        "",
        f"| batch | ours ({prec}) | ours (fp32) | reference | Joey NMT | Joey NMT + bf16 autocast |",
        "|---|---|---|---|---|---|",
    ]

    def cell(row: dict, key: str) -> str:
        return f"{row[key]['pairs_per_s']} ({row[key]['tgt_tokens_per_s']})" if key in row else "—"

    for row in r["train"]:
        lines.append(f"| {row['batch_size']} | " + " | ".join(
            cell(row, k) for k in ("ours", "ours_fp32", "reference", "joey", "joey_bf16")) + " |")
    lines += ["", "Ratios (higher is faster for us):", "",
              f"| batch | ours ({prec}) / reference | ours (fp32) / reference | ours ({prec}) / Joey "
              f"| ours (fp32) / Joey | ours ({prec}) / Joey + bf16 |", "|---|---|---|---|---|---|"]
    for row in r["train"]:
        lines.append(f"| {row['batch_size']} | " + " | ".join(
            f"{row[k]}×" if k in row else "—"
            for k in ("speedup", "speedup_fp32", "speedup_vs_joey", "speedup_fp32_vs_joey", "speedup_vs_joey_bf16"))
            + " |")
    lines += ["", "Peak memory of training above the built model, MB: gradients, Adam state, activations kept for the "
              "backward pass and workspace — the rise of the resident-size high-water mark over one pass of the same "
              "batches, each configuration in a fresh process:", "",
              f"| batch | ours ({prec}) | ours (fp32) | reference | Joey NMT | Joey NMT + bf16 autocast |",
              "|---|---|---|---|---|---|"]
    for row in r["train"]:
        lines.append(f"| {row['batch_size']} | " + " | ".join(
            str(row[k].get("peak_mb", "—")) if k in row else "—"
            for k in ("ours", "ours_fp32", "reference", "joey", "joey_bf16")) + " |")
    lines += ["", "## Training throughput and peak memory per variant", "",
              f"| variant | batch | pairs/s ({prec}) | tgt tokens/s ({prec}) | peak MB ({prec}) | pairs/s (fp32) "
              "| tgt tokens/s (fp32) | peak MB (fp32) |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {v['variant']} | {v['batch_size']} | {v['default']['pairs_per_s']} | "
              f"{v['default']['tgt_tokens_per_s']} | {v['default'].get('peak_mb', '—')} | {v['fp32']['pairs_per_s']} | "
              f"{v['fp32']['tgt_tokens_per_s']} | {v['fp32'].get('peak_mb', '—')} |" for v in r["train_variants"]]
    lat, dec = r["latency"], r["test_set_decoding"]
    lines += [
        "", "## Decoding", "",
        f"One sentence ({lat['sentence']}, {lat['output_steps']} steps, attention matrix returned): ours greedy "
        f"{lat['ours_greedy_ms']} ms, ours beam 5 {lat['ours_beam5_ms']} ms, reference greedy "
        f"{lat['reference_greedy_ms']} ms (ours / reference = {lat['ratio_greedy']}).",
        "",
        f"The {dec['sentences']}-sentence test set: ours greedy {dec['ours_greedy_s']} s (batched), ours beam 5 "
        f"{dec['ours_beam5_s']} s, reference greedy {dec['reference_greedy_s']} s (one sentence at a time, same "
        f"number of steps): {dec['speedup_greedy']}× faster."
        + (f" Joey NMT 2.3.0 (its own batched search, same size, the same number of steps per batch as our "
           f"greedy output): greedy {dec['joey_greedy_s']} s, beam 5 "
           f"{dec['joey_beam5_s']} s; one sentence greedy {lat['joey_greedy_ms']} ms."
           if "joey_greedy_s" in dec else ""),
        "", "## Scaling: the O(S·T) curve (batch 16, S = T = L, one training step)", "",
        "| L | " + " | ".join(sorted({row["variant"] for row in r["scaling"]}, key=str)) + " | attention matrix |",
    ]
    names = sorted({row["variant"] for row in r["scaling"]}, key=str)
    lines.append("|---" * (len(names) + 2) + "|")
    for L in sorted({row["length"] for row in r["scaling"]}):
        cells = {row["variant"]: row for row in r["scaling"] if row["length"] == L}
        kib = max(c["attention_matrix_kib"] for c in cells.values())
        lines.append(f"| {L} | " + " | ".join(f"{cells[n]['train_step_ms']} ms" for n in names) + f" | {kib} KiB |")
    lines += ["", f"Peak resident memory of the whole benchmark process: {r['peak_rss_mb']} MB.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    main()
