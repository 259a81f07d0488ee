"""The Transformer-vs-RNN page: intervals from real outputs, training from the models' logs, speed from the bench."""

import json
from dataclasses import asdict

from attention_core.hub.zoo import RECIPE_SETS, trained_recipe
from reports.comparison import markdown, quality_rows, recipe_label, training_rows, write_comparison

REFS = [f"the cat number {i} sat on the mat" for i in range(60)]


def _report(outputs: list[str], bleu: float) -> dict:
    return {"task": "translation", "bleu": bleu, "chrf": bleu + 10, "outputs": outputs,
            "alignment": {"entropy": 1.0, "diagonality": 0.5}}


def _reports() -> dict:
    good = list(REFS)  # the Transformer reproduces every reference
    poor = [f"a dog {i}" for i in range(60)]
    half = [r if i % 2 else f"a dog {i}" for i, r in enumerate(REFS)]
    return {"translation": {
        "transformer": {"beam5": _report(good, 90.0), "greedy": _report(good, 90.0)},
        "luong-general": {"beam5": _report(half, 40.0), "greedy": _report(half, 40.0)},
        "luong-dot": {"beam5": _report(poor, 45.0)},  # the best RNN by its (stated) BLEU
    }}


def test_the_transformer_is_compared_with_the_default_and_the_best_rnn_with_intervals():
    rows = quality_rows(_reports(), {"translation": REFS})
    assert [r["rnn"] for r in rows] == ["luong-general", "luong-dot"]
    general, dot = rows
    assert general["interval"]["low"] > 0  # all outputs right vs half: clearly better
    assert dot["interval"]["low"] > general["interval"]["low"]
    assert quality_rows({"translation": {"luong-general": {"beam5": _report(REFS, 1)}}}, {}) == []
    no_refs = quality_rows(_reports(), {})
    assert all(r["interval"] is None for r in no_refs)
    assert "—" in markdown(no_refs, [], None)


def test_training_rows_and_the_page_read_logs_and_the_benchmark(tmp_path):
    models, results = tmp_path / "models", tmp_path / "results"
    gpu, earlier = RECIPE_SETS["gpu"]["translation"], {"batch_size": 64, "lr": 0.001}  # the bundled ones' own
    for variant, seconds, train in (("luong-general", 100.0, asdict(gpu.continued)), ("transformer", 60.0, earlier)):
        folder = models / "translation" / variant
        folder.mkdir(parents=True)
        history = [{"epoch": e, "dev_bleu": b, "seconds": seconds, "pairs_per_s": 300.0 + e}
                   for e, b in ((1, 10.0), (2, 12.5), (3, 12.0))]
        (folder / "config.json").write_text(json.dumps({"meta": {"history": history, "train": train,
                                                                 "command": "attention-lab zoo"}}))
    rows = training_rows(models)
    # known by the settings it trained at, not the command line: the translation recipe's last stage is the continued
    assert [r["recipe"] for r in rows] == ["gpu", "earlier (batch 64, lr 0.001)"]
    assert trained_recipe("translation", asdict(RECIPE_SETS["cpu"]["translation"].continued)) == "cpu"
    assert trained_recipe("couplet", asdict(RECIPE_SETS["gpu"]["couplet"].train)) == "gpu"
    assert trained_recipe("couplet", {"epochs": 5, "batch_size": 64, "lr": 0.001}) is None  # the 55k zoo's, not cpu's
    assert recipe_label("translation", {}) == "unknown"
    assert [(r["variant"], r["epochs"], r["best_epoch"], r["train_minutes"]) for r in rows] == [
        ("luong-general", 3, 2, 5.0), ("transformer", 3, 2, 3.0)]
    results.mkdir()
    bench = {"training": [{"variant": "transformer", "fp32": {"pairs_per_s": 150.0}},
                          {"variant": "luong-general", "fp32": {"pairs_per_s": 100.0}}],
             "latency": [{"task": "translation", "variant": "transformer", "greedy_ms": 20.0, "beam5_ms": 40.0},
                         {"task": "translation", "variant": "luong-general", "greedy_ms": 10.0, "beam5_ms": 40.0}],
             "test_set": []}
    (results / "transformer_bench.json").write_text(json.dumps(bench))
    page = write_comparison(results, models, _reports(), {"translation": REFS}).read_text()
    assert "| training pairs/s (fp32, batch 64) | 150.0 | 100.0 | 1.50× |" in page
    assert "| translation: one sentence, greedy (ms) | 20.0 | 10.0 | 2.00× |" in page
    assert "| translation | `transformer` | earlier (batch 64, lr 0.001) | 3 | 2 | 12.5 | 3.0 | 302.0 |" in page
    assert write_comparison(results, models, {"translation": {}}, {}) is None


def test_sizes_are_read_from_the_saved_models(tmp_path):
    from attention_core.data.tasks import get_task
    from attention_core.data.vocab import Vocab
    from attention_core.decoding.folder import save_pretrained
    from attention_core.decoding.translator import Translator
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model
    from reports.comparison import size_rows

    vocab = Vocab(list("春风夏雨"))
    options = {"luong-general": dict(hidden_size=8, emb_size=4, tie_embeddings=True),
               "transformer": dict(decoder="transformer", score="scaled_dot", hidden_size=8, emb_size=8, heads=2,
                                   ff_size=16, num_layers=2, tie_embeddings=True, share_embeddings=True)}
    counts = {}
    for variant, kw in options.items():
        model = build_model(ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), **kw))
        counts[variant] = sum(p.numel() for p in model.parameters())  # shared weights once
        save_pretrained(Translator(model, vocab, vocab, get_task("couplet")), tmp_path / "couplet" / variant)
    rows = size_rows(tmp_path)
    assert [(r["variant"], r["parameters"]) for r in rows] == list(counts.items())
    assert rows[1]["shape"] == "2 + 2 layers, d_model 8, 2 heads, feed-forward 16"
    assert rows[0]["shape"] == "bi-LSTM hidden 8, embeddings 4, luong general"
    page = markdown([], [], None, rows)
    assert f"| couplet | `transformer` | 2 + 2 layers, d_model 8, 2 heads, feed-forward 16 | " \
           f"{counts['transformer'] / 1e6:.2f} M |" in page
