"""While a task's zoo is being retrained, the app names each model's data wherever two models can be compared."""

from __future__ import annotations

from app_fixtures import small_registry

from demo.handlers import Settings, compare, run
from demo.models import ModelRegistry
from demo.provenance import (
    EARLIER,
    NEW,
    data_groups,
    data_status,
    mixed_zoo_note,
    model_data_line,
    same_data,
    training_data,
    variant_choices,
)
from demo.ui import build_app

NEW_META = {"data": {"sources": [{"path": "../shared/data/cmn-eng/cmn.txt"},
                            {"path": "../shared/data/cmn-eng-extra/cmn-extra.txt"},
                            {"path": "../shared/data/tv4dialog/tv4dialog.tsv"}]},
       "train": {"main_repeat": 3}}
OLD_META = {"data": {"sources": [{"path": "../shared/data/cmn-eng/cmn.txt"},
                            {"path": "../shared/data/cmn-eng-extra/cmn-extra.txt"}]},
       "train": {"main_repeat": 1}}


def registry(new: set[str]) -> ModelRegistry:
    """The small test models, those in ``new`` on the new mix and the rest on the earlier data."""
    reg = small_registry()
    for variant, translator in reg.models["translation"].items():
        translator.meta = dict(NEW_META if variant in new else OLD_META)
    for translator in reg.models["couplet"].values():
        translator.meta = {"data": {"sources": [{"path": "../shared/data/couplet/train/in.txt"},
                                                {"path": "../shared/data/couplet/train/out.txt"}]}}
    return reg


def test_a_models_data_is_named_from_its_metadata():
    assert training_data(NEW_META) == "cmn-eng ×3 + cmn-eng-extra + tv4dialog"
    assert training_data(OLD_META) == "cmn-eng + cmn-eng-extra"
    assert training_data({"data": {"sources": [{"path": "a/couplet/in.txt"}, {"path": "a/couplet/out.txt"}]}}) == \
        "couplet"  # a corpus of several files, once
    assert training_data({}) is None and training_data({"data": "?"}) is None


def test_a_mixed_zoo_is_said_in_the_drop_downs_and_under_each_output():
    reg = registry({"none", "luong-dot"})  # the default (here: none) is retrained, with one more
    default = reg.default_variant("translation")
    groups = data_groups(reg, "translation")
    assert list(groups.values())[0][0] == default  # the default model's data first
    assert sorted(v for vs in groups.values() for v in vs) == sorted(reg.models["translation"])
    assert [data_status(reg, "translation", v) for v in ("none", "luong-dot", "bahdanau")] == [NEW, NEW, EARLIER]
    note = mixed_zoo_note(reg, "translation")
    assert note.startswith("Retraining in progress") and "**" not in note  # a drop-down's info is plain text
    assert f"{NEW} (cmn-eng ×3 + cmn-eng-extra + tv4dialog): no attention" in note and "Luong · dot" in note
    assert f"{EARLIER} (cmn-eng + cmn-eng-extra): Bahdanau" in note
    assert mixed_zoo_note(reg, "couplet") is None  # the couplets are all on one data
    assert model_data_line(reg, "translation", "luong-dot") == f"{NEW}: cmn-eng ×3 + cmn-eng-extra + tv4dialog"
    assert model_data_line(reg, "translation", "bahdanau") == \
        f"{EARLIER}: cmn-eng + cmn-eng-extra (not yet retrained 尚未重训)"
    assert dict((v, label) for label, v in variant_choices(reg, "translation"))["bahdanau"].endswith(f" · {EARLIER}")

    result = compare(reg, "translation", "今天天气很好", Settings("none"), Settings("bahdanau"))
    assert f"{NEW}: cmn-eng ×3" in result.a.info.split("  \n")[0]
    assert f"{EARLIER}: cmn-eng + cmn-eng-extra" in result.b.info.split("  \n")[0]
    assert f"{EARLIER}: cmn-eng + cmn-eng-extra" in result.b.summary  # the line a visitor sees without the details
    assert "different data" in result.a.summary and "different data" in result.b.summary
    same = compare(reg, "translation", "今天天气很好", Settings("none"), Settings("luong-dot"))
    assert "different data" not in same.a.summary + same.b.summary + same.a.info
    assert "新数据" not in run(reg, "couplet", "两个黄鹂鸣翠柳", Settings("luong-dot")).info

    app = build_app(reg)
    blocks = {block.elem_id: block for block in app.blocks.values()
              if str(getattr(block, "elem_id", "")).endswith("-variant")}
    assert blocks["translation-variant"].info == note
    assert blocks["compare-A-variant"].info == note and blocks["compare-B-variant"].info == note
    assert not blocks["couplet-variant"].info
    labels = [label for label, _ in blocks["translation-variant"].choices]
    assert any(label.endswith(EARLIER) for label in labels) and any(label.endswith(NEW) for label in labels)


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
    assert compare_defaults(registry({"none", "luong-general-local-p"}), "translation") == \
        ("none", "luong-general-local-p")
    whole = registry(set(small_registry().models["translation"]))
    assert compare_defaults(whole, "translation") == ("none", [v for _, v in whole.variants("translation")][-1])


def test_same_data_finds_a_variants_group():
    groups = {"new": ["luong-general", "none"], "old": ["luong-dot"]}
    assert same_data(groups, "none") == (0, ["luong-general", "none"])
    assert same_data(groups, "luong-dot") == (1, ["luong-dot"])
    assert same_data(groups, "transformer") == (-1, [])
