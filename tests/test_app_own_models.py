"""Models of your own in the app (#31): ``python app.py --models DIR`` and ``--hub-repo ID``.

Two tiny models are trained on corpora the tests write: German→English with BPE pieces on both sides, and
Hebrew→English, whose source runs right to left. The handlers are checked against the library's one generation
path; the real app answers through ``gradio_client`` (from a folder, and from a single-model repo on the local Hub
server), and a real browser opens the tab "你的模型 Your models", runs both models and leaves screenshots.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qsl

import gradio as gr
import pytest
from app_fixtures import ROOT, free_port, launch_app, open_details, small_registry
from corpus import SCREENSHOTS
from gradio_client import Client

from attention_core.cli import main as cli
from attention_core.decoding.folder import ModelLoadError
from demo.handlers import Settings, compare, model_summary, run
from demo.links import app_query, parse_query
from demo.models import BUNDLED, OWN, ModelRegistry, model_layout, own_examples
from demo.ui import compare_defaults, known_variants, tab_words

TAB = "你的模型 Your models"
TINY = ["--hidden", "32", "--emb", "32", "--quiet"]
"""A tiny model; with the learning rates below it learns these toy corpora in seconds."""
GERMAN = "ich sehe den alten Hund ."
HEBREW = "אני רואה את הכלב הגדול ."
TOKEN = "secret"


def write_de_en(path: Path, pairs: int = 600, seed: int = 0) -> None:
    """German→English sentences such as ``ich sehe den alten Hund .<TAB>i see the old dog .``."""
    rng = random.Random(seed)
    subjects = {"ich": ("i", ["sehe", "habe"]), "du": ("you", ["siehst", "hast"]),
                "wir": ("we", ["sehen", "haben"]), "er": ("he", ["sieht", "hat"])}
    verbs = {"sehe": "see", "siehst": "see", "sehen": "see", "sieht": "sees", "habe": "have", "hast": "have",
             "haben": "have", "hat": "has"}
    adjectives = {"alten": "old", "kleinen": "small", "großen": "big", "roten": "red"}
    nouns = {"Hund": "dog", "Mann": "man", "Baum": "tree", "Wagen": "car", "Vogel": "bird"}
    seen: set[tuple[str, str]] = set()
    while len(seen) < pairs:
        subject = rng.choice(list(subjects))
        english, forms = subjects[subject]
        verb = rng.choice(forms)
        described = rng.sample(list(adjectives), rng.choice([1, 2]))
        noun = rng.choice(list(nouns))
        seen.add((f"{subject} {verb} den {' '.join(described)} {noun} .",
                  f"{english} {verbs[verb]} the {' '.join(adjectives[a] for a in described)} {nouns[noun]} ."))
    path.write_text("".join(f"{de}\t{en}\n" for de, en in sorted(seen)), encoding="utf-8")


def write_he_en(path: Path) -> None:
    """Hebrew→English sentences (a right-to-left source): ``אני רואה את הכלב הגדול .<TAB>i see the big dog .``."""
    subjects = {"אני רואה": "i see", "אתה רואה": "you see", "הוא רואה": "he sees", "אנחנו רואים": "we see"}
    nouns = {"הכלב": "dog", "האיש": "man", "העץ": "tree", "המכונית": "car", "הציפור": "bird"}
    adjectives = {"הגדול": "big", "הקטן": "small", "הזקן": "old", "האדום": "red"}
    lines = [f"{s} את {n} {a} .\t{se} the {ae} {ne} .\n" for s, se in subjects.items() for n, ne in nouns.items()
             for a, ae in adjectives.items()]
    lines += [f"{s} את {n} .\t{se} the {ne} .\n" for s, se in subjects.items() for n, ne in nouns.items()]
    path.write_text("".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder of two trained models of your own: ``de-en`` (BPE both sides) and ``he-en`` (words, rtl source)."""
    root = tmp_path_factory.mktemp("own")
    write_de_en(root / "de-en.tsv")
    write_he_en(root / "he-en.tsv")
    models = root / "models"
    assert cli(["train", "--task", "parallel", "--corpus", str(root / "de-en.tsv"), "--source-tokenizer", "bpe",
                "--target-tokenizer", "bpe", "--source-bpe", "70", "--target-bpe", "60", "--source-lang", "de",
                "--target-lang", "en", "--out", str(models / "de-en"), "--epochs", "4", "--batch-size", "16",
                "--lr", "0.005", *TINY]) == 0
    assert cli(["train", "--task", "parallel", "--corpus", str(root / "he-en.tsv"), "--source-tokenizer", "word",
                "--target-tokenizer", "word", "--source-lang", "he", "--target-lang", "en", "--out",
                str(models / "he-en"), "--epochs", "12", "--batch-size", "8", "--lr", "0.01", "--patience", "12",
                *TINY]) == 0
    return models


@pytest.fixture(scope="module")
def registry(folder) -> ModelRegistry:
    return ModelRegistry.load(folder, "cpu")


def test_a_folder_is_read_by_its_layout(folder, tmp_path):
    assert model_layout(folder) == ("models", [folder / "de-en", folder / "he-en"])
    assert model_layout(folder / "de-en") == ("model", [folder / "de-en"])
    assert model_layout(BUNDLED)[0] == "zoo"
    (tmp_path / "notes").mkdir()
    with pytest.raises(ModelLoadError, match="no model in .*expected a model folder"):
        model_layout(tmp_path)
    one = ModelRegistry.load(folder / "he-en", "cpu")
    assert one.tasks() == [OWN] and [v for _, v in one.variants(OWN)] == ["he-en"]
    both = ModelRegistry.start(folder / "de-en", device="cpu")  # beside the bundled zoo, whose tabs stay
    assert {"translation", "couplet", OWN} <= set(both.tasks())
    with pytest.raises(ModelLoadError, match="two model zoos"):
        ModelRegistry.combine([both, ModelRegistry.load(BUNDLED, "cpu")])


def test_the_task_and_direction_come_from_the_saved_model(registry):
    labels = dict((v, label) for label, v in registry.variants(OWN))
    assert labels == {"de-en": "de-en · de → en · Luong · general", "he-en": "he-en · he → en · Luong · general"}
    summary = model_summary(registry, "he-en")
    assert "source 源: words 词" in summary and "right to left" in summary and "`he-en.tsv`" in summary
    assert "BPE pieces" in model_summary(registry, "de-en") and "right to left" not in model_summary(registry, "de-en")
    assert all(len(e) > 0 for e in own_examples(registry.models[OWN]["de-en"]))
    hebrew, german = tab_words(registry, OWN, "he-en"), tab_words(registry, OWN, "de-en")
    assert (hebrew.input, hebrew.output, hebrew.input_rtl, hebrew.output_rtl) == ("source 源 he", "output 输出 en",
                                                                                True, False)
    assert not german.input_rtl and german.placeholder == "Type a sentence in de 输入一句"


def test_a_run_is_the_library_output_with_an_eos_row_per_output_token(registry):
    translator = registry.models[OWN]["de-en"]
    expected = translator.translate([GERMAN], beam_size=3)[0]
    assert "##" in " ".join(expected.source_tokens)  # BPE pieces on the source side
    result = run(registry, OWN, GERMAN, Settings("de-en", beam_size=3), pieces=True)
    assert result.text == expected.text
    assert result.state["source"] == expected.source_tokens
    assert result.state["output"] == expected.row_labels and expected.row_labels[-1] == "<eos>"
    z = result.figure.data[0].z
    assert (len(z), len(z[0])) == (len(expected.row_labels), len(expected.source_tokens))
    assert list(result.figure.layout.xaxis.range) == [-0.5, len(expected.source_tokens) - 0.5]  # left to right
    assert "de-en · Luong · general" in result.info and "beam 3" in result.info
    words = run(registry, OWN, GERMAN, Settings("de-en", beam_size=3))  # pieces merged into words
    assert len(words.figure.data[0].z) == len(words.state["words"]) <= len(expected.row_labels)


def test_a_right_to_left_source_is_drawn_right_to_left(registry):
    result = run(registry, OWN, HEBREW, Settings("he-en"))
    source = result.state["source"]
    assert source[0] == "אני" and result.state["rtl"] is True
    assert list(result.figure.layout.xaxis.range) == [len(source) - 0.5, -0.5]
    assert result.steps.layout.xaxis.autorange == "reversed"
    assert result.text.strip()


def test_compare_takes_two_of_your_models(registry):
    assert compare_defaults(registry, OWN) == ("de-en", "de-en")  # he-en reads another language
    both = compare(registry, OWN, GERMAN, Settings("de-en"), Settings("he-en", hard=True))
    assert both.a.text and both.b.text and "hard" in both.b.info
    assert "he-en" in both.b.info and both.a.state["rtl"] is False and both.b.state["rtl"] is True


def test_bad_input_is_a_message(registry):
    with pytest.raises(gr.Error, match="Please type"):
        run(registry, OWN, "   ", Settings("de-en"))
    with pytest.raises(gr.Error, match="limit here is 1000"):
        run(registry, OWN, "Hund " * 300, Settings("de-en"))
    with pytest.raises(gr.Error, match="no own model 'fr-en' is loaded.*de-en, he-en"):
        run(registry, OWN, GERMAN, Settings("fr-en"))
    unknown = run(registry, OWN, "Katze Maus", Settings("he-en"))  # any language: unknown words, no error
    assert "unknown to the model" in unknown.info


def test_examples_fall_back_to_the_recorded_one_when_the_corpus_is_gone(registry):
    translator = copy.copy(registry.models[OWN]["de-en"])
    data = json.loads(json.dumps(translator.meta["data"]))
    data["sources"]["train"]["paths"] = ["/nowhere/de-en.tsv"]
    translator.meta = {**translator.meta, "data": data}
    assert own_examples(translator) == [data["example"]]
    translator.meta = {}
    assert own_examples(translator) == []


def test_url_parameters_open_a_model_of_your_own(registry):
    query = app_query("own", text=HEBREW, model="he-en", beam=1, hard=True)
    parsed = parse_query(dict(parse_qsl(query[1:])))
    assert parsed["text"] == HEBREW
    assert parsed["tab"] == OWN and parsed["controls"] == {"variant": "he-en", "beam": 1, "hard": True}
    checked, problems = known_variants(registry, parse_query({"tab": "own", "model": "fr-en", "text": "x"}))
    assert "variant" not in checked["controls"]
    assert problems == ["model=fr-en: 没有这个模型 / no such model is loaded here (available: de-en, he-en)"]
    sides = parse_query({"tab": "compare", "task": "own", "a_model": "de-en", "b_model": "nope"})
    checked, problems = known_variants(registry, sides)
    assert checked["a"] == {"variant": "de-en"} and checked["b"] == {} and problems[0].startswith("b_model=nope")
    assert known_variants(small_registry(), parse_query({"tab": "own", "text": "x"})) == (
        {}, ["tab=own: 这里没有这类模型 / no such models are loaded here (start the app with --models DIR or "
             "--hub-repo ID)"])


@pytest.fixture(scope="module")
def app(folder):
    """``python app.py --models FOLDER``: the process (its log readable without waiting) and its address."""
    proc, url = launch_app(models=folder)
    os.set_blocking(proc.stdout.fileno(), False)
    yield proc, url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def app_url(app):
    return app[1]


def _log_so_far(proc: subprocess.Popen) -> str:
    """What the app has written to its log since the last call (it runs on; the pipe does not block)."""
    time.sleep(1)
    chunks = []
    while True:
        try:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def _plot(value: dict) -> dict:
    """The plotly figure a ``gr.Plot`` output carries through ``gradio_client``."""
    return json.loads(value["plot"]) if isinstance(value.get("plot"), str) else value["plot"]


def test_the_app_answers_with_an_output_and_an_attention_matrix(app_url, registry):
    client = Client(app_url, verbose=False)
    expected = registry.models[OWN]["de-en"].translate([GERMAN])[0]
    # text, then model, window, hard, beam, then the pieces switch and a Transformer's layer and head
    text, info, heatmap, *_ = client.predict(GERMAN, "de-en", "default", False, 1, True, None, None,
                                             api_name="/own")
    assert text == expected.text and "de-en" in info
    z = _plot(heatmap)["data"][0]["z"]
    assert (len(z), len(z[0])) == (len(expected.row_labels), len(expected.source_tokens))
    a, _, _, b, info_b, _, entropy, *_ = client.predict(
        "own", HEBREW, "he-en", "default", False, 1, "he-en", "default", True, 2, None, None, None, None,
        api_name="/compare")
    assert a and b and "beam 2" in info_b and "hard" in info_b
    with pytest.raises(Exception, match="Please type"):
        client.predict("", "de-en", "default", False, 1, True, None, None, api_name="/own")
    with urllib.request.urlopen(app_url + "config", timeout=30) as response:
        config = response.read().decode("utf-8")
    assert all(tab in config for tab in (TAB, "翻译 Translation", "对联 Couplet", "对比 Compare"))


def test_a_visitor_mistake_is_a_message_not_a_traceback_in_the_server_log(app):
    """Empty input, an input too long: the visitor reads why; the server's log (a Space's logs) gets
    no traceback for it, as it did for every such mistake."""
    proc, url = app
    client = Client(url, verbose=False)
    _log_so_far(proc)
    mistakes = [(("", "de-en", "default", False, 1, True, None, None), "Please type"),
                (("  \n ", "he-en", "default", False, 1, True, None, None), "Please type"),
                (("Wort " * 300, "de-en", "default", False, 1, True, None, None), "the limit here is 1000")]
    for inputs, message in mistakes:
        with pytest.raises(Exception, match=message):
            client.predict(*inputs, api_name="/own")
    log = _log_so_far(proc)
    assert "Traceback" not in log and "gradio.exceptions.Error" not in log, log[-3000:]


def _hub_env(endpoint: str, home: Path) -> dict[str, str]:
    return {"HF_ENDPOINT": endpoint, "HF_HOME": str(home), "HF_HUB_OFFLINE": "0", "HF_TOKEN": TOKEN,
            "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_ETAG_TIMEOUT": "5",
            "HF_HUB_DOWNLOAD_TIMEOUT": "5"}


def _start(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``python app.py ARGS`` expected to stop at start-up, before it serves."""
    return subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", str(free_port()), *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


def test_the_app_opens_a_single_model_repo_from_the_hub(folder, tmp_path):
    from hub_server import serve

    model = tmp_path / "de-en"
    shutil.copytree(folder / "de-en", model)
    server, endpoint = serve(tmp_path / "repos", tokens=frozenset({TOKEN}))
    env = _hub_env(endpoint, tmp_path / "hf")
    try:
        pushed = subprocess.run([sys.executable, "-m", "attention_core.cli", "push", "--model", str(model), "--repo",
                                 "you/de-en"], env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
        assert pushed.returncode == 0, pushed.stderr[-2000:]
        proc, url = launch_app(args=("--hub-repo", "you/de-en"), env=env)
        try:
            client = Client(url, verbose=False)
            text, info, heatmap, *_ = client.predict(GERMAN, "you/de-en", "default", False, 1, True, None, None,
                                                     api_name="/own")
            expected = ModelRegistry.load(model, "cpu").models[OWN]["de-en"].translate([GERMAN])[0]
            assert text == expected.text and "you/de-en" in info
            assert len(_plot(heatmap)["data"][0]["z"]) == len(expected.row_labels)
            out, *_ = client.predict("今天天气很好", "luong-general", "default", False, 1, api_name="/translation")
            assert out.strip()  # the bundled tabs stay
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        missing = _start(["--hub-repo", "you/missing"], env)
    finally:
        server.shutdown()
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines()[-1].startswith("error: cannot download 'you/missing'")


def test_a_folder_without_a_model_is_one_error_line(tmp_path):
    (tmp_path / "notes.txt").write_text("no model here")
    done = _start(["--models", str(tmp_path)], {})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: no model in {tmp_path}: expected a model folder (with config.json), a " \
                                  "folder of model folders, or a zoo laid out as <task>/<variant>/"


OUTPUT_WRITTEN = "() => { const t = document.querySelector('#own-output textarea'); return t && t.value.length > 3; }"


def test_browser_runs_your_model_and_draws_its_heatmap(app_url):
    from test_app_live import _app_page

    heat = "#own-heatmap .js-plotly-plot"
    with _app_page(app_url, 1800) as page:
        assert page.get_by_role("tab", name=TAB).get_attribute("aria-selected") == "true"  # opens on your models
        assert "de → en" in page.locator("#own-model").inner_text()
        page.locator("#own-input textarea").fill(GERMAN)
        page.locator("#own-run").click()
        page.wait_for_function(OUTPUT_WRITTEN, timeout=60_000)
        page.locator(f"{heat} svg.main-svg").first.wait_for(timeout=60_000)
        assert page.locator(f"{heat} .heatmaplayer, {heat} .hm").count() > 0
        x = page.evaluate(f"() => document.querySelector('{heat}').layout.xaxis.range")
        assert x[0] < x[1]
        assert page.locator(".toast-body.error").count() == 0
        page.screenshot(path=str(SCREENSHOTS / "app-own.png"), full_page=True)

        page.goto(app_url + app_query("own", model="he-en", text=HEBREW), wait_until="load")
        page.wait_for_function(OUTPUT_WRITTEN, timeout=60_000)
        assert page.locator("#own-input textarea").get_attribute("dir") == "rtl"
        assert "he → en" in page.locator("#own-model").inner_text()
        page.locator(f"{heat} svg.main-svg").first.wait_for(timeout=60_000)
        page.wait_for_function(f"() => {{ const p = document.querySelector('{heat}');"
                               " return p && p.layout.xaxis.range[0] > 0; }", timeout=30_000)
        page.screenshot(path=str(SCREENSHOTS / "app-own-rtl.png"), full_page=True)

        page.get_by_role("tab", name="对比 Compare").click()  # Compare with your models: both sides choose among them
        page.locator("#compare-task").get_by_text("你的模型 Your models").click()
        page.wait_for_function("() => document.querySelector('#compare-input textarea').value.endsWith(' .')",
                               timeout=30_000)
        page.locator("#compare-B-hard").get_by_text("hard 硬").click()
        page.locator("#compare-run").click()
        for side in ("A", "B"):
            page.wait_for_function(f"() => {{ const t = document.querySelector('#compare-{side}-output textarea');"
                                   " return t && t.value.length > 3; }", timeout=60_000)
            page.locator(f"#compare-{side}-heatmap .js-plotly-plot svg.main-svg").first.wait_for(timeout=60_000)
        open_details(page, "compare-A")
        open_details(page, "compare-B")
        assert "de-en" in page.locator("#compare-A-info").inner_text()  # B: the same model, hard (not he-en)
        assert "de-en" in page.locator("#compare-B-info").inner_text()
        assert "hard" in page.locator("#compare-B-info").inner_text()
        assert page.locator(".toast-body.error").count() == 0
        page.screenshot(path=str(SCREENSHOTS / "app-own-compare.png"), full_page=True)


@pytest.mark.parametrize("device,message", [("banana", "unknown device 'banana'"), ("cuda:99", "cuda")])
def test_a_device_typo_at_start_is_one_error_line(device, message):
    done = _start(["--device", device], {})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith("error:") and message in done.stderr
