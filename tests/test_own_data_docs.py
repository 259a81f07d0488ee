"""The page "Train on your own data" (docs/guide/own-data.md, .en.md) runs as written.

Every ```bash block of the page is run, in order, in a temporary folder: the page's own generator writes the tiny
German→English corpus, a model trains in seconds, the error examples fail with the ``error:`` line the page shows
under them, ``push`` and ``pull`` go through the local Hub server (``tests/hub_server.py``), and each
``python app.py …`` line starts the app, which must serve the model in its own tab. Outputs the page shows are
compared where they do not depend on the machine (the data file, the split sizes, the source pieces, the model card).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from app_fixtures import free_port
from fences import FENCE
from hub_server import COMMIT, serve

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"zh": ROOT / "docs" / "guide" / "own-data.md", "en": ROOT / "docs" / "guide" / "own-data.en.md"}
APP = "python app.py"
TAB = "你的模型 Your models"
TOKEN = "secret"


@dataclass
class Step:
    """One ```bash block of the page and the ```text block right under it (its output), if any."""

    script: str
    shown: str | None

    @property
    def apps(self) -> list[str]:
        """The block's ``python app.py …`` lines (a server each: started and checked, not run to the end)."""
        return [line for line in self.script.splitlines() if line.startswith(APP)]

    @property
    def commands(self) -> str:
        """The block without its app lines."""
        return "\n".join(line for line in self.script.splitlines() if not line.startswith(APP)) + "\n"

    @property
    def error(self) -> str | None:
        """The ``error:`` line the page says the block ends with, if it is an error example."""
        return self.shown.strip() if self.shown and self.shown.startswith("error: ") else None


def steps(page: Path) -> list[Step]:
    text = page.read_text(encoding="utf-8")
    fences = list(FENCE.finditer(text))
    found = []
    for fence, after in zip(fences, [*fences[1:], None]):
        if fence.group(1) != "bash":
            continue
        shown = None
        if after is not None and after.group(1) == "text" and not text[fence.end():after.start()].strip():
            shown = after.group(2)
        found.append(Step(fence.group(2), shown))
    return found


def test_both_editions_hold_the_same_commands_and_outputs():
    zh, en = (steps(page) for page in PAGES.values())
    assert len(zh) >= 10
    assert zh == en
    blocks = {name: [m.group(0) for m in FENCE.finditer(page.read_text(encoding="utf-8"))]
              for name, page in PAGES.items()}
    assert blocks["zh"] == blocks["en"]  # every code block, the model card's excerpt included


def test_the_page_is_in_the_nav_under_practice_with_an_english_title():
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "      - 训练你自己的数据 Train on your own data: guide/own-data.md\n" in mkdocs
    assert "            训练你自己的数据 Train on your own data: Train on your own data\n" in mkdocs
    title = PAGES["en"].read_text(encoding="utf-8").splitlines()[0]
    assert title == "# Train on your own data"


@dataclass
class Ran:
    step: Step
    code: int
    out: str
    err: str
    apps: list[dict]


def _serve_app(line: str, cwd: Path, env: dict, docs: Path) -> dict:
    """Start one ``python app.py …`` line of the page (on a free port, with a stub docs site); what it served."""
    port = free_port()
    cmd = [sys.executable, str(ROOT / "app.py"), *shlex.split(line)[2:], "--port", str(port), "--docs", str(docs)]
    log = cwd / f"app-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5) as response:
                    return {"line": line, "config": response.read().decode("utf-8"), "log": ""}
            except OSError:
                time.sleep(0.5)
        return {"line": line, "config": None, "log": log.read_text(encoding="utf-8", errors="replace")}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> tuple[list[Ran], Path, object]:
    """Every step of the Chinese page, run in order in an empty folder, with the local Hub server for push/pull."""
    work = tmp_path_factory.mktemp("own-data")
    docs = tmp_path_factory.mktemp("docs-stub")
    (docs / "index.html").write_text("<title>docs</title>", encoding="utf-8")
    server, endpoint = serve(tmp_path_factory.mktemp("hub"), tokens=frozenset({TOKEN}))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "OMP_NUM_THREADS": "1", "GRADIO_ANALYTICS_ENABLED": "False", "HF_ENDPOINT": endpoint,
           "HF_HOME": str(tmp_path_factory.mktemp("hf")), "HF_HUB_OFFLINE": "0", "HF_TOKEN": TOKEN,
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_ETAG_TIMEOUT": "5",
           "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    results = []
    try:
        for step in steps(PAGES["zh"]):
            done = subprocess.run(["bash", "-e", "-c", step.commands], cwd=work, env=env, capture_output=True,
                                  text=True, timeout=300)
            apps = [_serve_app(line, work, env, docs) for line in step.apps] if done.returncode == 0 else []
            results.append(Ran(step, done.returncode, done.stdout, done.stderr, apps))
            if done.returncode and not step.error:
                break  # the later steps need this one
    finally:
        server.shutdown()
    return results, work, server


def _one(results: list[Ran], needle: str) -> Ran:
    found = [r for r in results if needle in r.step.script]
    assert len(found) == 1, needle
    return found[0]


def test_every_command_succeeds_and_every_error_example_fails_with_its_line(ran):
    results, work, _ = ran
    assert len(results) == len(steps(PAGES["zh"])), results[-1].err[-2000:]
    for r in results:
        if r.step.error:
            assert r.code == 2, r.step.script
            assert r.err.strip().splitlines()[-1] == r.step.error
            assert "Traceback" not in r.err
        else:
            assert r.code == 0, f"{r.step.script}\n{r.err[-3000:]}"
    assert sum(r.step.error is not None for r in results) == 6
    assert not (work / "bad-model").exists()  # a refused corpus writes nothing


def test_the_shown_outputs_are_what_the_commands_print(ran):
    results, work, _ = ran
    head = _one(results, "head -n 3 de-en.tsv")
    assert head.out == head.step.shown
    assert len((work / "de-en.tsv").read_text(encoding="utf-8").splitlines()) == 1052

    train = _one(results, "--source-tokenizer bpe")
    shown = train.step.shown.splitlines()
    assert shown[0] in train.err.splitlines()  # note: skipped 2 malformed … lines
    start, shown_start = json.loads(train.out.splitlines()[0]), json.loads(shown[1])
    for key in ("event", "train_pairs", "dev_pairs", "src_vocab", "tgt_vocab", "parameters"):
        assert start[key] == shown_start[key], key
    assert json.loads(train.out.splitlines()[-1])["event"] == "done"

    for needle in ("evaluate --model de-en-model\n", "--test mine.de"):
        evaluate = _one(results, needle)
        printed = [json.loads(line) for line in evaluate.out.splitlines()]
        assert [r["n"] for r in printed] == [json.loads(line)["n"] for line in evaluate.step.shown.splitlines()]
        assert all(0 <= r["bleu"] <= 100 + 1e-9 for r in printed)
        for line in evaluate.step.shown.splitlines():  # the page shows the keys and the rounding evaluate prints
            record = json.loads(line)
            assert record.keys() == printed[0].keys() and all(round(v, 2) == v for v in record.values()), line

    attention = _one(results, "--show-attention")
    lines, shown = attention.out.splitlines(), attention.step.shown.splitlines()
    assert lines[1] == shown[1]  # the source pieces: Wir m ##ö ##g ##en den klein ##en Baum.
    assert "m   ##ö   ##g  ##en" in shown[1]
    assert lines[-2].startswith("coverage") and len(lines[-2].split()) == len(shown[1].split()) + 1

    from attention_core.decoding.folder import load_folder

    model = load_folder(work / "de-en-model")
    assert model.task.tokenize_src("Maus.") == ["<unk>", "##au", "##s", "##."]
    assert model.meta["data"]["sizes"] == {"train": 946, "dev": 52, "test": 52}
    assert model.meta["data"]["skipped_lines"] == 2


def test_push_and_pull_go_through_the_hub_and_the_card_is_the_one_shown(ran):
    results, work, server = ran
    hub = _one(results, "attention-lab push")
    assert [repo for repo, _, _ in server.commits] == ["you/de-en"]
    pulled, model = work / "de-en-pulled", work / "de-en-model"
    commit, folder, translation = hub.out.splitlines()  # push, pull and translate print one line each
    assert commit.endswith(f"/you/de-en/commit/{COMMIT}") and folder == str(pulled.resolve()) and translation
    for name in ("README.md", "config.json", "model.safetensors", "src_vocab.json", "tgt_vocab.json",
                 "src_subwords.json", "subwords.json"):
        assert (pulled / name).read_bytes() == (model / name).read_bytes(), name
    card = (model / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"^```text\n(---\n.*?)^```", PAGES["zh"].read_text(encoding="utf-8"), re.S | re.M).group(1)
    assert card.startswith(shown)  # the page shows the card down to its training command


def test_the_app_serves_your_model_in_its_own_tab(ran):
    results, _, _ = ran
    apps = [app for r in results for app in r.apps]
    assert [app["line"] for app in apps] == ["python app.py --models de-en-model", "python app.py --hub-repo you/de-en"]
    for app in apps:
        assert app["config"] is not None, app["log"][-3000:]
        assert TAB in app["config"] and "de → en · Luong · general" in app["config"], app["line"]  # the model's label


def test_the_pages_app_link_opens_the_model_in_its_tab():
    from urllib.parse import parse_qsl

    from demo.links import parse_query

    for page in PAGES.values():
        query = re.search(r"`http://127\.0\.0\.1:7860/\?(tab=own[^`]*)`", page.read_text(encoding="utf-8")).group(1)
        parsed = parse_query(dict(parse_qsl(query)))
        assert parsed["tab"] == "own" and parsed["controls"] == {"variant": "de-en-model"}
        assert parsed["text"] == "Wir mögen den kleinen Baum."
