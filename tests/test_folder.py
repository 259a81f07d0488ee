"""A model folder on disk: the files it holds, and a config.json that does not fit refused in one line, unread."""

import json

import pytest
from safetensors import safe_open
from test_pretrained import _translator

from attention_core.decoding.folder import (
    CONFIG,
    FILES,
    FORMAT,
    MAX_JSON_BYTES,
    SUBWORDS,
    WEIGHTS,
    ModelLoadError,
    load_folder,
    read_config,
    save_pretrained,
)


def test_a_saved_folder_holds_its_files_and_a_tied_weight_once(tmp_path):
    translator = _translator(tie_embeddings=True)
    folder = save_pretrained(translator, tmp_path / "m")
    assert {p.name for p in folder.iterdir()} == set(FILES)  # a word model: no subwords.json
    config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    assert config["format"] == FORMAT and config["task"] == "couplet" and config["meta"] == {"note": "test"}
    with safe_open(str(folder / WEIGHTS), "pt") as f:
        stored = set(f.keys())
    tied = set(translator.model.tied_parameters)
    assert tied and not stored & tied  # aliases are stored under their source name only
    assert load_folder(folder).model.cfg == translator.model.cfg


def test_a_word_model_saved_over_a_subword_model_takes_the_old_subwords_away(tmp_path):
    folder = save_pretrained(_translator(), tmp_path / "m")
    (folder / SUBWORDS).write_text("{}", encoding="utf-8")  # left by a subword model saved here before
    save_pretrained(_translator(), folder)
    assert not (folder / SUBWORDS).exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.update(format=FORMAT + 1), f"format must be {FORMAT}, got {FORMAT + 1}"),
    (lambda c: c.update(extra_field=1), "unknown field"),
    (lambda c: c.update(meta=[1]), "meta must be a JSON object, got list"),
    (lambda c: c["meta"].update(known_names="张伟"), "meta.known_names must be a list of names"),
    (lambda c: c["meta"].update(truecase=["x"]), "meta.truecase must map words to words"),
    (lambda c: c.pop("model"), "the model field is missing"),
])
def test_a_config_that_does_not_fit_is_refused_naming_what(tmp_path, change, message):
    folder = save_pretrained(_translator(), tmp_path / "m")
    config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    change(config)
    (folder / CONFIG).write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelLoadError, match=message):
        read_config(folder)


def test_an_oversized_config_is_refused_before_it_is_read(tmp_path):
    folder = save_pretrained(_translator(), tmp_path / "m")
    (folder / CONFIG).write_bytes(b" " * (MAX_JSON_BYTES[CONFIG] + 1))
    with pytest.raises(ModelLoadError, match=CONFIG):
        load_folder(folder)
