"""The Hub: a model saved, pushed and pulled (through a local server speaking the Hub's API) comes back the same."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.folder import WEIGHTS, ModelLoadError, load_folder, save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.hub.pretrained import from_pretrained, pull
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model


def _translator(**kw) -> Translator:
    vocab = Vocab(list("春风夏雨秋月冬雪山水花鸟，。"))
    cfg = ModelConfig(
        src_vocab_size=len(vocab),
        tgt_vocab_size=len(vocab),
        hidden_size=16,
        emb_size=8,
        decoder="luong",
        score="concat",
        attention="local-p",
        window=2,
        **kw,
    )
    return Translator(build_model(cfg).eval(), vocab, vocab, get_task("couplet"), {"note": "test"})


@pytest.mark.parametrize("tied", [False, True])
def test_save_load_round_trip_gives_identical_outputs(tmp_path, tied):
    translator = _translator(tie_embeddings=tied, share_embeddings=tied)
    save_pretrained(translator, tmp_path / "m")
    loaded = load_folder(tmp_path / "m")
    for a, b in zip(translator.model.state_dict().values(), loaded.model.state_dict().values()):
        torch.testing.assert_close(a, b)
    x = translator.translate(["春风夏雨", "山水"], beam_size=2)
    y = loaded.translate(["春风夏雨", "山水"], beam_size=2)
    assert [o.text for o in x] == [o.text for o in y]
    torch.testing.assert_close(x[0].weights, y[0].weights)
    assert loaded.meta == {"note": "test"}
    assert not list((tmp_path / "m").glob("*.tmp"))  # atomic writes leave no temporaries


def test_half_precision_export_is_half_the_size_and_still_loads(tmp_path):
    translator = _translator()
    save_pretrained(translator, tmp_path / "full")
    save_pretrained(translator, tmp_path / "half", half=True)
    full = (tmp_path / "full" / "model.safetensors").stat().st_size
    half = (tmp_path / "half" / "model.safetensors").stat().st_size
    assert half < 0.6 * full
    assert load_file(str(tmp_path / "half" / "model.safetensors"))["generator.weight"].dtype == torch.float16
    model = load_folder(tmp_path / "half").model
    assert next(model.parameters()).dtype == torch.float32


def test_mismatched_tensors_are_named(tmp_path):
    save_pretrained(_translator(), tmp_path / "m")
    path = tmp_path / "m" / "model.safetensors"
    state = load_file(str(path))
    state["generator.bias"] = torch.zeros(3)
    del state["decoder.W_c.weight"]
    save_file(state, str(path))
    with pytest.raises(ModelLoadError) as err:
        load_folder(tmp_path / "m")
    assert "decoder.W_c.weight" in str(err.value) and "generator.bias" in str(err.value)


def test_config_mismatch_and_missing_files_are_explained(tmp_path):
    save_pretrained(_translator(), tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    config["model"]["hidden_size"] = 32
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="shape"):
        load_folder(tmp_path / "m")
    (tmp_path / "m" / "tgt_vocab.json").unlink()
    with pytest.raises(ModelLoadError, match="tgt_vocab.json"):
        load_folder(tmp_path / "m")
    with pytest.raises(ModelLoadError, match="does not exist"):
        from_pretrained(tmp_path / "nothing")


def test_download_through_a_local_hub_server(tmp_path):
    from hub_server import serve

    translator = _translator()
    save_pretrained(translator, tmp_path / "repos" / "lab" / "couplet")
    (tmp_path / "repos" / "lab" / "couplet" / "README.md").write_text("# card")
    server, endpoint = serve(tmp_path / "repos")
    code = (
        "import sys; from attention_core.hub import from_pretrained, ModelLoadError\n"
        "t = from_pretrained('lab/couplet')\n"
        "print(t.translate(['春风'])[0].text)\n"
        "try:\n    from_pretrained('lab/missing')\nexcept ModelLoadError as e:\n    print('ERR', e)\n"
    )
    env = {
        **os.environ,
        "HF_ENDPOINT": endpoint,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_ETAG_TIMEOUT": "5",
        "HF_HUB_DOWNLOAD_TIMEOUT": "5",
    }
    try:
        result = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    expected = translator.translate(["春风"])[0].text
    assert lines[0] == expected
    assert lines[1].startswith("ERR cannot download 'lab/missing'")
    assert (tmp_path / "hf").exists()  # really went through the Hub cache
    shutil.rmtree(tmp_path / "hf")


def test_offline_without_cache_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="cannot download"):
        from_pretrained("nobody/nothing-here")


def test_a_failed_pull_leaves_no_folder_it_made(tmp_path):
    """A download that fails (offline; a repo lacking its weights) removes the folder it made, half a model
    included, and leaves a folder that was there as it was."""
    from hub_server import serve

    save_pretrained(_translator(), tmp_path / "repos" / "lab" / "broken")
    (tmp_path / "repos" / "lab" / "broken" / WEIGHTS).unlink()
    save_pretrained(_translator(), tmp_path / "repos" / "lab" / "good")  # word targets: no subwords.json
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("the user's")
    server, endpoint = serve(tmp_path / "repos")
    code = (
        "import sys; from attention_core.cli import main\n"
        "print(main(['pull', '--repo', 'lab/broken', '--out', sys.argv[1]]),"
        " main(['pull', '--repo', 'lab/broken', '--out', sys.argv[2]]))\n"
    )
    replace = ("import sys; from attention_core.cli import main\n"
               "main(['pull', '--repo', 'lab/good', '--out', sys.argv[1]])")
    new = tmp_path / "new" / "model"
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    try:
        result = subprocess.run([sys.executable, "-c", code, str(new), str(kept)], env=env, capture_output=True,
                                text=True, timeout=120)
        stale = tmp_path / "stale"
        stale.mkdir()
        (stale / "subwords.json").write_text("{}")  # an older subword model's pieces
        (stale / "notes.txt").write_text("mine")
        (stale / "README.md").write_text("the old model's card")
        replaced = subprocess.run([sys.executable, "-c", replace, str(stale)], env=env, capture_output=True,
                                  text=True, timeout=120)
    finally:
        server.shutdown()
    assert replaced.returncode == 0 and replaced.stdout.strip() == str(stale), replaced.stderr[-2000:]
    assert not (stale / "subwords.json").exists() and (stale / "notes.txt").read_text() == "mine"
    assert not (stale / "README.md").exists()  # lab/good has no card: the old one would describe another model
    assert not list(tmp_path.glob("**/.pull-*"))  # the staging folder is gone
    assert load_folder(stale).task.subwords is None  # the new model, not pieces of the old one
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["2", "2"]
    assert "cannot download 'lab/broken'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "new").exists()  # config.json and the vocabularies had come: removed with the folder
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]
    offline = subprocess.run([sys.executable, "-c", code, str(new), str(kept)], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert offline.stdout.split() == ["2", "2"] and "offline" in offline.stderr
    assert not (tmp_path / "new").exists() and sorted(p.name for p in kept.iterdir()) == ["mine.txt"]
    with pytest.raises(ModelLoadError, match="is a file, not a folder"):
        pull("lab/broken", local_dir=kept / "mine.txt" / "model")


def test_the_app_loads_a_zoo_from_a_hub_repo(tmp_path):
    from hub_server import serve

    translator = _translator()
    save_pretrained(translator, tmp_path / "repos" / "lab" / "zoo" / "couplet" / "luong-concat")
    server, endpoint = serve(tmp_path / "repos")
    code = (
        "from demo.models import ModelRegistry\n"
        "r = ModelRegistry.from_hub('lab/zoo', device='cpu')\n"
        "print(r.source, r.variants('couplet'))\n"
        "print(r.get('couplet', 'luong-concat').translate(['春风'])[0].text)\n"
    )
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    try:
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("hf://lab/zoo") and "luong-concat" in lines[0]
    assert lines[1] == translator.translate(["春风"])[0].text


PUSH_SCRIPT = """
import json, os, sys
from attention_core.cli import main
from attention_core.hub.pretrained import push
from demo.models import ModelRegistry
from safetensors.torch import save_file

model, pulled, app_out, extra = sys.argv[1:5]
codes = [main(["push", "--model", model, "--repo", "lab/none"])]
push(model, "lab/zoo", path_in_repo="translation/none")
open(extra, "wb").write(b"x" * 1000)  # a file the app's zoo download must not fetch
codes.append(main(["pull", "--repo", "lab/none", "--out", pulled]))
t = ModelRegistry.from_hub("lab/zoo", device="cpu").get("translation", "none")
tied = t.model.tied_parameters
save_file({k: v.contiguous() for k, v in t.model.state_dict().items() if k not in tied}, app_out)
os.environ["HF_TOKEN"] = "bad-token-123"
codes.append(main(["push", "--model", model, "--repo", "lab/none"]))
del os.environ["HF_TOKEN"]
codes.append(main(["push", "--model", model, "--repo", "lab/none"]))
print(json.dumps(codes))
"""


def test_push_then_pull_round_trip_through_a_local_hub_server(tmp_path):
    """``attention-lab push`` → ``attention-lab pull`` and the app's ``--hub-repo`` give back every tensor."""
    from hub_server import serve

    bundled = Path(__file__).resolve().parents[1] / "models" / "translation" / "none"
    model = tmp_path / "none"
    shutil.copytree(bundled, model)
    (model / "notes.txt").write_text("not part of a model")  # push uploads model files only
    server, endpoint = serve(tmp_path / "repos", tokens=frozenset({"secret"}))
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "HF_TOKEN": "secret", "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
           "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    extra = tmp_path / "repos" / "lab" / "zoo" / "translation" / "none" / "optimizer.bin"
    args = [str(model), str(tmp_path / "pulled"), str(tmp_path / "app.safetensors"), str(extra)]
    try:
        result = subprocess.run([sys.executable, "-c", PUSH_SCRIPT, *args], env=env, capture_output=True,
                                text=True, timeout=120)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [0, 0, 2, 2]
    assert "the Hub refused the token for 'lab/none' (HTTP 401)" in result.stderr
    assert "no Hugging Face token: set HF_TOKEN" in result.stderr
    assert "bad-token-123" not in result.stderr + result.stdout
    files = ["README.md", "config.json", "model.safetensors", "src_vocab.json", "subwords.json", "tgt_vocab.json"]
    assert sorted(p.name for p in bundled.iterdir()) == files  # the bundled translation models use subwords
    assert [(repo, sorted(paths)) for repo, _, paths in server.commits] == [
        ("lab/none", files), ("lab/zoo", [f"translation/none/{f}" for f in files])]
    original = load_file(str(bundled / "model.safetensors"))
    pulled = load_file(str(tmp_path / "pulled" / "model.safetensors"))
    assert original.keys() == pulled.keys()
    for name, tensor in original.items():
        assert pulled[name].dtype == tensor.dtype
        assert torch.equal(pulled[name], tensor), name
    for name in ("README.md", "config.json", "src_vocab.json", "tgt_vocab.json", "subwords.json"):  # and the card
        assert (tmp_path / "pulled" / name).read_bytes() == (bundled / name).read_bytes()
    served = load_file(str(tmp_path / "app.safetensors"))
    assert served.keys() == original.keys()
    for name, tensor in original.items():
        torch.testing.assert_close(served[name], tensor.float(), rtol=0, atol=0)
    assert not list((tmp_path / "hf").rglob("optimizer.bin"))  # the zoo download fetched model files only
