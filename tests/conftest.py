"""Shared test settings: offline Hub, no Gradio analytics, deterministic torch on one thread, a cache of their own.

The names a corpus knows ([`attention_core.editing.namecache`][attention_core.editing.namecache]) are cached in a fresh
temporary folder (``XDG_CACHE_HOME``), so a test neither reads what the user's runs left in ``~/.cache`` nor leaves
anything there; the corpora are still looked for where ``attention-lab data pull`` put them (``ATTENTION_LAB_DATA`` is
set to that folder first).

One torch thread per test process (and per process a test starts: the app, the CLI): two threads on a busy
2-core machine spin against each other and stall a test for minutes, and parallel test workers use the cores.
"""

import atexit
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from attention_core.data.corpora import DATA_ENV, data_home  # noqa: E402  (the default data folder, before XDG moves)

os.environ[DATA_ENV] = str(data_home())
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="attention-lab-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``cuda`` when no GPU is available."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _runs_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's runs folder (and encoded corpora) is its own: one test's corpus is never another's to read."""
    from attention_core.data.corpora import RUNS_ENV

    monkeypatch.setenv(RUNS_ENV, str(tmp_path_factory.mktemp("runs")))


@pytest.fixture
def model_dir(tmp_path):
    """A tiny untrained Chinese → English model (local-m attention) saved in a folder."""
    from attention_core.data.tasks import get_task
    from attention_core.data.vocab import Vocab
    from attention_core.decoding.folder import save_pretrained
    from attention_core.decoding.translator import Translator
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model

    src = Vocab(list(dict.fromkeys("我喜欢自然语言处理今天气很好")))
    tgt = Vocab("i like natural language processing the weather is nice today .".split())
    cfg = ModelConfig(
        src_vocab_size=len(src),
        tgt_vocab_size=len(tgt),
        hidden_size=16,
        emb_size=8,
        attention="local-m",
        window=2,
    )
    save_pretrained(Translator(build_model(cfg), src, tgt, get_task("translation")), tmp_path / "m")
    return tmp_path / "m"


# the docs site built strictly (as test_docs.py builds it) and served on 127.0.0.1, for the browser tests; each
# module that asks for it builds its own once
@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)]
    result = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
