"""The flat package's names still work for one release, each saying where it went."""

import subprocess
import sys

import pytest


def _run(code: str) -> subprocess.CompletedProcess:
    """In a fresh interpreter: an old import must work without anything imported before it."""
    return subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", code], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(("old", "name", "new"), [
    ("pipeline", "Translator", "attention_core.decoding.translator"),
    ("search", "beam_search", "attention_core.decoding.search"),
    ("names", "prepare", "attention_core.editing.names"),
    ("metrics", "bleu", "attention_core.analysis.metrics"),
    ("trainconfig", "TrainConfig", "attention_core.training.trainconfig"),
])
def test_an_old_module_path_imports_the_module_at_its_new_place_with_a_warning(old, name, new):
    done = _run(f"import {new} as new\nfrom attention_core.{old} import {name}\nimport attention_core.{old} as old\n"
                f"assert old is new and {name} is new.{name}\nprint('same')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"
    assert f"attention_core.{old} moved to {new}" in done.stderr


def test_the_packages_that_kept_their_names_give_the_old_modules_names():
    done = _run("from attention_core.training import fit, TrainConfig, train_step\n"
                "from attention_core.data import Task, load_splits, TASKS\n"
                "from attention_core.hub import from_pretrained, load_folder, push, read_vocabularies, FORMAT\n"
                "import attention_core.hub as hub\n"
                "try:\n    hub.nothing_of_the_kind\nexcept AttributeError as err:\n    print(err)")
    assert done.returncode == 0, done.stderr
    assert "has no attribute 'nothing_of_the_kind'" in done.stdout


def test_a_method_that_left_the_translator_says_where_it_went():
    from test_translator import translator

    with pytest.raises(AttributeError, match=r"Translator.notes moved: use attention_core.analysis.notes.notes"):
        translator().notes  # noqa: B018
    with pytest.raises(AttributeError, match="'Translator' object has no attribute 'nope'"):
        translator().nope  # noqa: B018
    assert translator().translate(["我喜欢"], names=False)  # the plain translation, as asked
