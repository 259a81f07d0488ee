"""While a task's zoo is being retrained, the app names each model's data wherever two models can be compared."""

from __future__ import annotations

from app_fixtures import small_registry

from demo.handlers import Settings, compare, run
from demo.models import ModelRegistry
from demo.provenance import data_groups, mixed_zoo_note, model_data_line, training_data
from demo.ui import build_app

NEW = {"data": {"sources": [{"path": "../shared/data/cmn-eng/cmn.txt"},
                            {"path": "../shared/data/cmn-eng-extra/cmn-extra.txt"},
                            {"path": "../shared/data/tv4dialog/tv4dialog.tsv"}]},
       "train": {"main_repeat": 3}}
OLD = {"data": {"sources": [{"path": "../shared/data/cmn-eng/cmn.txt"},
                            {"path": "../shared/data/cmn-eng-extra/cmn-extra.txt"}]},
       "train": {"main_repeat": 1}}


def registry(new: set[str]) -> ModelRegistry:
    """The small test models, those in ``new`` on the new mix and the rest on the earlier data."""
    reg = small_registry()
    for variant, translator in reg.models["translation"].items():
        translator.meta = dict(NEW if variant in new else OLD)
    for translator in reg.models["couplet"].values():
        translator.meta = {"data": {"sources": [{"path": "../shared/data/couplet/train/in.txt"},
                                                {"path": "../shared/data/couplet/train/out.txt"}]}}
    return reg


def test_a_models_data_is_named_from_its_metadata():
    assert training_data(NEW) == "cmn-eng ×3 + cmn-eng-extra + tv4dialog"
    assert training_data(OLD) == "cmn-eng + cmn-eng-extra"
    assert training_data({"data": {"sources": [{"path": "a/couplet/in.txt"}, {"path": "a/couplet/out.txt"}]}}) == \
        "couplet"  # a corpus of several files, once
    assert training_data({}) is None and training_data({"data": "?"}) is None


def test_a_mixed_zoo_is_said_in_the_drop_downs_and_under_each_output():
    reg = registry({"luong-dot"})
    default = reg.default_variant("translation")
    groups = data_groups(reg, "translation")
    assert list(groups.values())[0][0] == default  # the default model's data first
    assert sorted(v for vs in groups.values() for v in vs) == sorted(reg.models["translation"])
    note = mixed_zoo_note(reg, "translation")
    assert "being retrained" in note and "the other 3" in note and "cmn-eng ×3 + cmn-eng-extra + tv4dialog" in note
    assert "Luong · dot" in note and mixed_zoo_note(reg, "couplet") is None  # the couplets are all on one data
    assert model_data_line(reg, "translation", "luong-dot") == \
        "trained on cmn-eng ×3 + cmn-eng-extra + tv4dialog 训练数据"

    result = compare(reg, "translation", "今天天气很好", Settings("none"), Settings("luong-dot"))
    assert "trained on cmn-eng + cmn-eng-extra 训练数据" in result.a.info.split("  \n")[0]
    assert "trained on cmn-eng ×3 + cmn-eng-extra + tv4dialog 训练数据" in result.b.info.split("  \n")[0]
    assert "trained on cmn-eng + cmn-eng-extra" in result.a.summary  # the line a visitor sees without the details
    assert "trained on" not in run(reg, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot")).info

    app = build_app(reg)
    infos = {block.elem_id: block.info for block in app.blocks.values()
             if str(getattr(block, "elem_id", "")).endswith("-variant")}
    assert infos["translation-variant"] == note
    assert infos["compare-A-variant"] == note and infos["compare-B-variant"] == note
    assert not infos["couplet-variant"]


def test_once_every_model_is_on_one_data_the_note_is_gone():
    reg = registry(set(small_registry().models["translation"]))
    assert mixed_zoo_note(reg, "translation") is None
    assert model_data_line(reg, "translation", "none") is None
    result = run(reg, "translation", "今天天气很好", Settings("none"))
    assert "trained on" not in result.info and "trained on" not in result.summary
    app = build_app(reg)
    assert not any(getattr(block, "info", None) for block in app.blocks.values()
                   if str(getattr(block, "elem_id", "")).endswith("-variant"))


def test_compare_starts_with_two_models_on_the_same_data():
    from demo.ui import compare_defaults

    mixed = registry({"none", "luong-dot"})
    assert compare_defaults(mixed, "translation") == ("none", "luong-dot")
    assert compare_defaults(registry({"bahdanau"}), "translation")[1] in {"luong-dot", "luong-general-local-p"}
    whole = registry(set(small_registry().models["translation"]))
    assert compare_defaults(whole, "translation") == ("none", [v for _, v in whole.variants("translation")][-1])
