"""A model folder is untrusted input: every malformed one is a ``ModelLoadError`` that names the problem,
raised quickly and before any large allocation."""

import json
import re
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.folder import ModelLoadError, expected_tensors, load_folder, save_pretrained
from attention_core.decoding.translator import Translator
from attention_core.hub.pretrained import from_pretrained
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

CLEAR_REFS = Path("/proc/self/clear_refs")


def _translator() -> Translator:
    vocab = Vocab(list("春风夏雨秋月冬雪山水花鸟，。"))
    cfg = ModelConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), hidden_size=16, emb_size=8,
                      decoder="luong", score="general")
    return Translator(build_model(cfg).eval(), vocab, vocab, get_task("couplet"))


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> Path:
    return save_pretrained(_translator(), tmp_path_factory.mktemp("valid") / "m")


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def _edit_config(folder: Path, model: dict | None = None, **top) -> None:
    config = json.loads((folder / "config.json").read_text())
    config["model"].update(model or {})
    config.update(top)
    (folder / "config.json").write_text(json.dumps(config))


def _edit_vocab(folder: Path, index: int, value) -> None:
    data = json.loads((folder / "tgt_vocab.json").read_text())
    data["tokens"][index] = value
    (folder / "tgt_vocab.json").write_text(json.dumps(data))


def _peak_rss_kib() -> int:
    return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))


def _rss_kib() -> int:
    return int(re.search(r"VmRSS:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))


def _shrink_hidden(folder: Path) -> None:
    _edit_config(folder, {"hidden_size": 4096})  # within bounds: only the header check can catch it


def _nan_weight(folder: Path) -> None:
    state = load_file(str(folder / "model.safetensors"))
    state["generator.bias"][0] = float("nan")
    save_file(state, str(folder / "model.safetensors"))


def _int_weight(folder: Path) -> None:
    state = load_file(str(folder / "model.safetensors"))
    state["generator.bias"] = state["generator.bias"].long()
    save_file(state, str(folder / "model.safetensors"))


def _truncate_weights(folder: Path) -> None:
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])


def _huge_header(folder: Path) -> None:
    (folder / "model.safetensors").write_bytes((10**12).to_bytes(8, "little") + b"{}")


def _huge_config(folder: Path) -> None:
    (folder / "config.json").write_bytes(b" " * (2 << 20))


CASES = {
    "hidden_size=10**9": (lambda f: _edit_config(f, {"hidden_size": 10**9}), "hidden_size"),
    "hidden_size=20000": (lambda f: _edit_config(f, {"hidden_size": 20000}), "hidden_size"),
    "hidden_size=4096 (header)": (_shrink_hidden, "shape"),
    "num_layers=10**6": (lambda f: _edit_config(f, {"num_layers": 10**6}), "num_layers"),
    "large layers and sizes": (lambda f: _edit_config(f, {"num_layers": 16, "hidden_size": 8192}), "GiB"),
    'hidden_size="8"': (lambda f: _edit_config(f, {"hidden_size": "8"}), "hidden_size"),
    "hidden_size=8.7": (lambda f: _edit_config(f, {"hidden_size": 8.7}), "hidden_size"),
    "hidden_size=true": (lambda f: _edit_config(f, {"hidden_size": True}), "hidden_size"),
    "window=[1]": (lambda f: _edit_config(f, {"attention": "local-m", "window": [1]}), "window"),
    "decoder={}": (lambda f: _edit_config(f, {"decoder": {}}), "decoder"),
    "pad_id=999": (lambda f: _edit_config(f, {"pad_id": 999}), "pad_id"),
    "eos_id=999": (lambda f: _edit_config(f, {"eos_id": 999}), "eos_id"),
    "eos_id=unk_id": (lambda f: _edit_config(f, {"eos_id": 1}), "eos_id"),
    "bos_id swapped": (lambda f: _edit_config(f, {"bos_id": 3, "eos_id": 2}), "bos_id"),
    "length_ratio=1e300": (lambda f: _edit_config(f, {"length_ratio": 1e300}), "length_ratio"),
    "length_ratio=NaN": (lambda f: _edit_config(f, {"length_ratio": float("nan")}), "length_ratio"),
    "dropout='x'": (lambda f: _edit_config(f, {"dropout": "x"}), "dropout"),
    "tie_embeddings='yes'": (lambda f: _edit_config(f, {"tie_embeddings": "yes"}), "tie_embeddings"),
    "format=99": (lambda f: _edit_config(f, format=99), "format"),
    "format='1'": (lambda f: _edit_config(f, format="1"), "format"),
    "task=5": (lambda f: _edit_config(f, task=5), "task"),
    "task unknown": (lambda f: _edit_config(f, task="poetry"), "task"),
    "meta=[]": (lambda f: _edit_config(f, meta=[]), "meta"),
    "model=[]": (lambda f: _edit_config_raw(f, "model", []), "model config"),
    "config not JSON": (lambda f: (f / "config.json").write_text("{"), "config.json"),
    "config too large": (_huge_config, "config.json"),
    "int token": (lambda f: _edit_vocab(f, 5, 7), "tgt_vocab.json"),
    "null token": (lambda f: _edit_vocab(f, 6, None), "tgt_vocab.json"),
    "duplicate token": (lambda f: _edit_vocab(f, 6, "春"), "unique"),
    "specials moved": (lambda f: _edit_vocab(f, 0, "x"), "specials"),
    "vocab not JSON": (lambda f: (f / "src_vocab.json").write_bytes(b"\xff\xfe"), "src_vocab.json"),
    "counts=str": (lambda f: _edit_vocab_field(f, "counts", "many"), "counts"),
    "NaN weight": (_nan_weight, "NaN"),
    "int64 weight": (_int_weight, "I64"),
    "truncated weights": (_truncate_weights, "safetensors"),
    "header of 10**12 bytes": (_huge_header, "safetensors"),
}


def _edit_config_raw(folder: Path, key: str, value) -> None:
    config = json.loads((folder / "config.json").read_text())
    config[key] = value
    (folder / "config.json").write_text(json.dumps(config))


def _edit_vocab_field(folder: Path, key: str, value) -> None:
    data = json.loads((folder / "tgt_vocab.json").read_text())
    data[key] = value
    (folder / "tgt_vocab.json").write_text(json.dumps(data))


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_folder_is_a_fast_small_model_load_error(valid, tmp_path, case):
    corrupt, field = CASES[case]
    load_folder(valid)  # warm up: imports and lazily created objects are not the case's cost
    folder = _copy(valid, tmp_path / "m")
    corrupt(folder)
    measure = CLEAR_REFS.exists()
    if measure:
        CLEAR_REFS.write_text("5")  # reset this process's peak RSS (VmHWM) to its current RSS
        before = _rss_kib()
    started = time.perf_counter()
    with pytest.raises(ModelLoadError) as err:
        load_folder(folder)
    elapsed = time.perf_counter() - started
    assert field in str(err.value)
    assert elapsed < 1.0, f"{case}: {elapsed:.2f} s"
    if measure:
        grown_mib = (_peak_rss_kib() - before) / 1024
        assert grown_mib < 100, f"{case}: peak RSS grew by {grown_mib:.0f} MiB"


def test_the_peak_measurement_sees_a_real_allocation():
    """The memory check above would catch a model being built: 200 MiB of touched memory shows up."""
    if not CLEAR_REFS.exists():
        pytest.skip("needs Linux /proc/self/clear_refs")
    CLEAR_REFS.write_text("5")
    before = _rss_kib()
    x = torch.ones(50 * 2**20)  # 200 MiB, written
    del x
    assert (_peak_rss_kib() - before) / 1024 > 150


def test_the_bundled_models_pass_validation():
    for folder in sorted(Path("models").glob("*/*/config.json"))[:2]:
        translator = load_folder(folder.parent)
        assert translator.model.cfg.eos_id == translator.tgt_vocab.eos_id


def test_the_bundled_zoo_is_complete_loads_offline_and_stays_under_the_size_cap():
    """Every zoo variant of both tasks, the Transformers included: at most 150 MB, each file under 10 MB (issue #25)."""
    from attention_core.hub.zoo import VARIANTS, ZOO_ORDER
    from attention_core.model.transformer import Transformer

    root = Path(__file__).resolve().parents[1] / "models"
    assert sorted(p.parent.relative_to(root).as_posix() for p in root.glob("*/*/config.json")) == sorted(
        f"{task}/{variant}" for task, variant in ZOO_ORDER)
    assert {variant for _, variant in ZOO_ORDER} == set(VARIANTS)  # every variant is in some task's zoo
    sizes = {f.relative_to(root).as_posix(): f.stat().st_size for f in root.rglob("*") if f.is_file()}
    assert sum(sizes.values()) <= 150e6, f"models/ holds {sum(sizes.values()) / 1e6:.1f} MB"
    # a Space refuses a plain-git file of 10 MB or more (larger ones only through Git LFS)
    large = {name: size for name, size in sizes.items() if size >= 10e6}
    assert not large, large
    for task in ("translation", "couplet"):
        translator = load_folder(root / task / "transformer")
        assert isinstance(translator.model, Transformer)
        params = sum(p.numel() for p in translator.model.parameters())
        rnn = sum(p.numel() for p in load_folder(root / task / "luong-general").model.parameters())
        assert 0.8 < params / rnn < 1.25  # a parameter count comparable to the RNN variants'


def test_size_estimate_runs_on_the_meta_device_and_counts_parameters():
    cfg = _translator().model.cfg
    shapes = expected_tensors(cfg)
    model = build_model(cfg)
    assert sum(s.numel() for s in shapes.values()) == sum(p.numel() for p in model.parameters())
    with pytest.raises(ModelLoadError, match="GiB"):
        expected_tensors(cfg, max_bytes=1000)


def test_a_local_folder_named_like_a_repo_id_is_ambiguous(valid, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _copy(valid, (tmp_path / "lab").mkdir() or tmp_path / "lab" / "couplet")
    with pytest.raises(ModelLoadError, match="both a local folder and a Hub repo id"):
        from_pretrained("lab/couplet")
    assert from_pretrained("./lab/couplet").task.name == "couplet"
    with pytest.raises(ModelLoadError, match="cannot download"):  # hf:// always means the Hub (offline here)
        from_pretrained("hf://lab/couplet")
