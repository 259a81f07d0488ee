"""Small untrained models for handler tests, and a launcher for the real app on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from demo.models import ModelRegistry

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {
    "none": dict(decoder="none"),
    "bahdanau": dict(decoder="bahdanau", score="concat"),
    "luong-dot": dict(decoder="luong", score="dot"),
    "luong-general-local-p": dict(decoder="luong", score="general", attention="local-p", window=2),
}


def small_registry() -> ModelRegistry:
    zh = Vocab(list(dict.fromkeys("两个黄鹂鸣翠柳我喜欢自然语言处理今天气很好春风，。")))
    en = Vocab("i like natural language processing the weather is nice today .".split())
    models: dict = {"translation": {}, "couplet": {}}
    for name, options in VARIANTS.items():
        for task, tgt in (("translation", en), ("couplet", zh)):
            cfg = ModelConfig(src_vocab_size=len(zh), tgt_vocab_size=len(tgt), hidden_size=16, emb_size=8,
                              **options)
            models[task][name] = Translator(build_model(cfg).eval(), zh, tgt, get_task(task))
    return ModelRegistry(models, "test models")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_app(models: Path | None = None, docs: Path | None = None, args: tuple[str, ...] = (),
               env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``python app.py`` (the bundled models unless ``models`` is given); wait until it answers.

    ``docs``: where the app builds (and serves at ``/docs``) its documentation site. Default: a stub site in a
    temporary folder, so the app builds nothing and writes nothing inside the repository. ``args``: more
    options (``--hub-repo ID``); ``env``: more environment variables (a local Hub server's ``HF_ENDPOINT``).
    """
    port = free_port()
    if docs is None:
        docs = Path(tempfile.mkdtemp(prefix="attention-lab-docs-")) / "site"
        docs.mkdir()
        (docs / "index.html").write_text("<title>docs</title>", encoding="utf-8")
    cmd = [sys.executable, str(ROOT / "app.py"), "--port", str(port), "--docs", str(docs)]
    if models is not None:
        cmd += ["--models", str(models)]
    cmd += list(args)
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "OMP_NUM_THREADS": "1", **(env or {})}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"app exited: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("app did not start within 120 s")


def subword_registry(root: Path) -> ModelRegistry:
    """A tiny untrained translation zoo under ``root`` whose models write BPE pieces (a Transformer and an RNN).

    Their outputs are pieces, so the app's word view merges rows (what the gradient view must follow too).
    """
    import torch

    from attention_core.data.subword import Subwords
    from attention_core.data.text import tokenize_english
    from attention_core.decoding.folder import save_pretrained

    english = ["unbelievable weather today .", "i like natural language processing ."] * 3
    subwords = Subwords.train([tokenize_english(s) for s in english], vocab_size=30)
    zh = Vocab(list(dict.fromkeys("我喜欢自然语言处理今天气很好，。！")))
    en = Vocab(sorted(p for p in subwords.tokenizer.get_vocab() if not p.startswith("<")))
    spec = get_task("translation").with_subwords(subwords)
    for variant, options in (("transformer", dict(decoder="transformer", score="scaled_dot", hidden_size=24,
                                                  emb_size=24, heads=4, ff_size=48, num_layers=2, dropout=0.0)),
                             ("luong-dot", dict(decoder="luong", score="dot", hidden_size=16, emb_size=8))):
        torch.manual_seed(0)
        cfg = ModelConfig(src_vocab_size=len(zh), tgt_vocab_size=len(en), **options)
        save_pretrained(Translator(build_model(cfg).eval(), zh, en, spec), root / "translation" / variant)
    return ModelRegistry.load(root, "cpu")


def open_details(page, key: str, timeout: int = 120_000) -> None:
    """Open the folded details box ``#{key}-details`` in a browser page, unless it is open already.

    Gradio draws a closed box's contents only once it is opened, so ``#{key}-info`` exists only then.
    """
    label = page.locator(f"#{key}-details button.label-wrap").first
    label.wait_for(timeout=timeout)
    if "open" not in (label.get_attribute("class") or "").split():
        label.click()
    page.locator(f"#{key}-info").wait_for(state="attached", timeout=timeout)
