"""The measured comparison of the Transformer with the RNN variants (``results/transformer.md``).

Quality comes from the zoo's evaluation reports (``results/eval``), with a 95 % paired-bootstrap
interval of every BLEU difference; training from the models' own logs (``config.json`` history);
speed from ``results/transformer_bench.json`` (``python benchmarks/transformer.py``), when present.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from safetensors import safe_open

from attention_core.hub.zoo import trained_recipe
from demo.models import DEFAULT_VARIANT
from reports.common import SET_TITLES, bootstrap, interval

TRANSFORMER = "transformer"


def _best_rnn(variants: dict[str, dict[str, dict]]) -> str:
    """The RNN variant with the highest beam-5 BLEU on a test set."""
    rnns = {v: r["beam5"]["bleu"] for v, r in variants.items() if v != TRANSFORMER and "beam5" in r}
    return max(rnns, key=rnns.get)


def quality_rows(reports: dict[str, dict[str, dict[str, dict]]], references: dict[str, list[str]]) -> list[dict]:
    """Per test set: the Transformer against the app's default RNN and the best RNN, beam 5.

    Args:
        reports: ``{set: {variant: {decoding: report}}}`` (``reports.report.load_reports``).
        references: Reference outputs per test set.

    Returns:
        One row per (test set, RNN compared with), with both BLEU scores, chrF and the interval of
        ``Transformer − RNN``.
    """
    rows = []
    for key, variants in reports.items():
        tf = variants.get(TRANSFORMER, {})
        if "beam5" not in tf:
            continue
        for rnn in dict.fromkeys((DEFAULT_VARIANT, _best_rnn(variants))):
            if "beam5" not in variants.get(rnn, {}):
                continue
            a, b = tf["beam5"], variants[rnn]["beam5"]
            interval = None
            if references.get(key) and "outputs" in a and "outputs" in b:
                interval = bootstrap(a, b, references[key])
            rows.append({
                "set": key, "rnn": rnn,
                "transformer_bleu": round(a["bleu"], 2), "rnn_bleu": round(b["bleu"], 2),
                "transformer_chrf": round(a["chrf"], 2), "rnn_chrf": round(b["chrf"], 2),
                "transformer_greedy_bleu": round(tf.get("greedy", {}).get("bleu", float("nan")), 2),
                "interval": interval,
                "entropy": {v: r.get("greedy", {}).get("alignment", {}).get("entropy")
                            for v, r in ((TRANSFORMER, tf), (rnn, variants[rnn]))},
            })
    return rows


def training_rows(models: Path) -> list[dict]:
    """Per task and model: epochs, best epoch, training time and logged pairs/s (from ``config.json``)."""
    rows = []
    for task in ("translation", "couplet"):
        for variant in (DEFAULT_VARIANT, TRANSFORMER):
            path = models / task / variant / "config.json"
            if not path.is_file():
                continue
            meta = json.loads(path.read_text("utf-8"))["meta"]
            history = meta.get("history", [])
            if not history:
                continue
            best = max(history, key=lambda h: h["dev_bleu"])
            rows.append({
                "task": task, "variant": variant, "epochs": len(history), "best_epoch": best["epoch"],
                "best_dev_bleu": best["dev_bleu"],
                "train_minutes": round(sum(h["seconds"] for h in history) / 60, 1),
                "median_pairs_per_s": round(statistics.median(h["pairs_per_s"] for h in history), 1),
                "recipe": recipe_label(task, meta.get("train") or {}),
            })
    return rows


def recipe_label(task: str, settings: dict) -> str:
    """The zoo recipe a model was trained at (``attention-lab zoo --recipe``).

    A model of an earlier recipe is labelled by its batch size and learning rate; one without training settings
    in its metadata, ``unknown``.
    """
    if settings.get("batch_size") is None or settings.get("lr") is None:
        return "unknown"  # a model saved before its metadata kept the training settings
    return trained_recipe(task, settings) or f"earlier (batch {settings['batch_size']}, lr {settings['lr']})"


def size_rows(models: Path) -> list[dict]:
    """Per task: the shape and stored parameter count of ``luong-general`` and the Transformer.

    Parameters are counted from the ``model.safetensors`` header (tied weights are stored once), so
    nothing is loaded.
    """
    rows = []
    for task in ("translation", "couplet"):
        for variant in (DEFAULT_VARIANT, TRANSFORMER):
            folder = models / task / variant
            if not (folder / "config.json").is_file() or not (folder / "model.safetensors").is_file():
                continue
            cfg = json.loads((folder / "config.json").read_text("utf-8"))["model"]
            if cfg["decoder"] == TRANSFORMER:
                shape = (f"{cfg['num_layers']} + {cfg['num_layers']} layers, d_model {cfg['hidden_size']}, "
                         f"{cfg['heads']} heads, feed-forward {cfg['ff_size']}")
            else:
                shape = (f"bi-{cfg['rnn'].upper()} hidden {cfg['hidden_size']}, embeddings {cfg['emb_size']}, "
                         f"{cfg['decoder']} {cfg['score']}")
            with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
                parameters = sum(math.prod(f.get_slice(name).get_shape()) for name in f.keys())
            rows.append({"task": task, "variant": variant, "shape": shape, "parameters": parameters})
    return rows


def markdown(quality: list[dict], training: list[dict], bench: dict | None, sizes: list[dict] | None = None) -> str:
    """The comparison as Markdown with ``###`` sections (the docs include it under a ``##`` heading)."""
    lines = [
        "Same splits, vocabularies, training budget (epochs, early stopping, learning rate schedule) and "
        "decoding as the RNN zoo. Written by `python -m reports`.",
        "",
        *(["| task | variant | shape | parameters |", "|---|---|---|---|"]
          + [f"| {r['task']} | `{r['variant']}` | {r['shape']} | {r['parameters'] / 1e6:.2f} M |" for r in sizes or []]
          + [""] if sizes else []),
        "### Quality (test sets, beam 5; couplets with the reader's rules)",
        "",
        "| test set | RNN | BLEU Transformer | BLEU RNN | Transformer − RNN [95 % CI] | chrF Transformer | chrF RNN "
        "| mean attention entropy Transformer / RNN (nats) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in quality:
        ent = r["entropy"]
        entropy = " / ".join("—" if ent[v] is None else f"{ent[v]:.2f}" for v in (TRANSFORMER, r["rnn"]))
        lines.append(f"| {SET_TITLES.get(r['set'], r['set'])} | `{r['rnn']}` | {r['transformer_bleu']:.2f} | "
                     f"{r['rnn_bleu']:.2f} | {interval(r['interval'])} | {r['transformer_chrf']:.2f} | "
                     f"{r['rnn_chrf']:.2f} | {entropy} |")
    lines += [
        "",
        "The Transformer's entropy is that of its last layer's encoder–decoder attention, averaged over heads "
        "(the map the app shows by default).",
        "",
        "### Training (from each model's own log)",
        "",
        "| task | variant | recipe | epochs run | best epoch | best dev BLEU | training minutes "
        "| median pairs/s logged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in training:
        lines.append(f"| {r['task']} | `{r['variant']}` | {r['recipe']} | {r['epochs']} | {r['best_epoch']} | "
                     f"{r['best_dev_bleu']} | {r['train_minutes']} | {r['median_pairs_per_s']} |")
    lines += ["", "Logged speeds come from different runs and machines: the `cpu` and earlier recipes' on a shared "
              "2-core CPU, "
              "the `gpu` recipe's (eight times the batch, `attention-lab zoo --recipe gpu`) on a GPU shared by the "
              "zoo's other runs (`results/gpu_zoo_run.md`); the side-by-side benchmark below is the fair speed "
              "comparison.", ""]
    if bench:
        speed = {row["variant"]: row["fp32"]["pairs_per_s"] for row in bench["training"]}
        latency = {(row["task"], row["variant"]): row for row in bench["latency"]}
        lines += ["### Speed (`python benchmarks/transformer.py`, one process)", "",
                  "| measure | Transformer | luong-general | Transformer ÷ luong-general |", "|---|---|---|---|"]
        if TRANSFORMER in speed and DEFAULT_VARIANT in speed:
            a, b = speed[TRANSFORMER], speed[DEFAULT_VARIANT]
            lines.append(f"| training pairs/s (fp32, batch 64) | {a} | {b} | {a / b:.2f}× |")
        for task in ("translation", "couplet"):
            tf, rnn = latency.get((task, TRANSFORMER)), latency.get((task, DEFAULT_VARIANT))
            if tf and rnn:
                for key, label in (("greedy_ms", "greedy"), ("beam5_ms", "beam 5")):
                    lines.append(f"| {task}: one sentence, {label} (ms) | {tf[key]} | {rnn[key]} | "
                                 f"{tf[key] / rnn[key]:.2f}× |")
        tests = {row["variant"]: row for row in bench.get("test_set", [])}
        if TRANSFORMER in tests and DEFAULT_VARIANT in tests:
            for key, label in (("greedy_s", "greedy"), ("beam5_s", "beam 5")):
                a, b = tests[TRANSFORMER][key], tests[DEFAULT_VARIANT][key]
                lines.append(f"| translation test split ({tests[TRANSFORMER]['sentences']} sentences), {label} (s) "
                             f"| {a} | {b} | {a / b:.2f}× |")
        lines.append("")
    return "\n".join(lines) + "\n"


def write_comparison(results: Path, models: Path, reports: dict, references: dict[str, list[str]]) -> Path | None:
    """Write ``results/transformer.md`` and ``.json``; ``None`` when no Transformer was evaluated."""
    quality = quality_rows(reports, references)
    if not quality:
        return None
    bench_path = results / "transformer_bench.json"
    bench = json.loads(bench_path.read_text("utf-8")) if bench_path.is_file() else None
    training, sizes = training_rows(models), size_rows(models)
    path = results / "transformer.md"
    path.write_text(markdown(quality, training, bench, sizes), encoding="utf-8")
    path.with_suffix(".json").write_text(json.dumps({"quality": quality, "training": training, "sizes": sizes},
                                                    indent=2) + "\n")
    return path
