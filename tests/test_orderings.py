"""The orderings page (``reports.report.orderings``) says what was measured, for each task's own models."""

from __future__ import annotations

from reports.report import orderings


def _variant(bleu: float, entropy: float, hidden: int) -> dict:
    return {"beam5": {"bleu": bleu}, "greedy": {"alignment": {"entropy": entropy}, "model": {"hidden_size": hidden}}}


def test_the_scaled_dot_sentence_names_the_models_own_key_size():
    reports = {
        "couplet": {"luong-dot": _variant(1.71, 1.40, 352), "luong-scaled_dot": _variant(0.95, 2.07, 352)},
        "translation": {"luong-dot": _variant(29.2, 1.22, 256), "luong-scaled_dot": _variant(23.8, 2.11, 256)},
    }
    text = orderings(reports)
    couplet, translation = text.split("### ")[1:3]
    assert "2.07 nats scaled vs 1.40 unscaled" in couplet and "√352 = 18.8 flattens" in couplet
    assert "√256 = 16 flattens" in translation and "√352" not in translation
    assert "no outputs saved: no interval" in couplet  # no outputs, no verdict claimed


def test_the_scaled_dot_sentence_quotes_the_uniform_ceiling_only_when_measured():
    measured = _variant(0.95, 2.07, 352)
    measured["greedy"]["alignment"]["uniform_entropy"] = 2.1139
    text = orderings({"couplet": {"luong-dot": _variant(1.71, 1.40, 352), "luong-scaled_dot": measured},
                      "translation": {"luong-dot": _variant(29.2, 1.22, 256),
                                      "luong-scaled_dot": _variant(23.8, 2.11, 256)}})
    couplet, translation = text.split("### ")[1:3]
    assert "1.40 unscaled, 2.11 for equal weights over every source position" in couplet
    assert "equal weights" not in translation  # a report from before the ceiling was measured claims none


def test_while_the_zoo_is_retrained_models_on_other_data_are_not_compared_and_the_table_says_whose_data():
    from reports.report import table

    reports = {"translation": {"none": _variant(19.3, 0.0, 256), "luong-dot": _variant(29.2, 1.22, 256),
                               "luong-general": _variant(34.7, 0.97, 256), "bahdanau": _variant(27.9, 1.5, 256)}}
    new, old = "cmn-eng ×3 + cmn-eng-extra + tv4dialog", "cmn-eng + cmn-eng-extra"
    data = {"none": new, "luong-general": new, "luong-dot": old, "bahdanau": old}
    text = orderings(reports, data={"translation": data})
    assert "dot vs general (global): not compared while the zoo is retrained: `luong-dot` was trained on " \
           f"{old}, `luong-general` on {new}" in text
    assert "beat `none` (19.30) with a 95 % interval above 0: 0/1; not shown for `luong-general`; not compared " \
           "while the zoo is retrained (other data than `none`'s): `bahdanau`, `luong-dot`" in text \
           or "not compared while the zoo is retrained (other data than `none`'s): `luong-dot`, `bahdanau`" in text
    assert f"Ranking by BLEU, trained on {new}: `luong-general` (34.70) > `none` (19.30)" in text
    assert f"Ranking by BLEU, trained on {old}: `luong-dot` (29.20) > `bahdanau` (27.90)" in text
    refs = ["the cat sat on the mat", "a dog ran home", "it rains today"]
    outputs = {"none": ["the cat", "a dog", "it rains"], "luong-general": refs, "luong-dot": refs, "bahdanau": refs}
    scored = {v: {"beam5": {"bleu": r["beam5"]["bleu"], "chrf": 50.0, "outputs": outputs[v], "task": "translation"}}
              for v, r in reports["translation"].items()}
    rows, md = table("translation", scored, refs, data)
    by_variant = {r["variant"]: r for r in rows}
    assert "bleu_beam5_vs_none" in by_variant["luong-general"]  # the same data as none: compared
    assert "bleu_beam5_vs_none" not in by_variant["luong-dot"] and "bleu_beam5_vs_none" not in by_variant["bahdanau"]
    _, _, head, rule, *body = md.splitlines()  # the note, a blank line, then the table
    assert head.startswith("| variant | trained on | BLEU greedy |") and rule.count("|---") == head.count(" | ") + 1
    assert f"| luong-dot | {old} | — | 29.2 |" in md and f"| none | {new} |" in md
    assert "not the attention's alone" in md.splitlines()[0] and rows[0]["trained_on"] == new  # said before the table
    assert f"| luong-dot | {old} | — | 29.2 | — | 50.0 | other data than none's |" in md
    # one data for all: no column, no note, every comparison made
    same = {v: new for v in data}
    rows, md = table("translation", scored, refs, same)
    assert all("bleu_beam5_vs_none" in r for r in rows if r["variant"] != "none")
    assert "trained on" not in md and "not the attention's alone" not in md
    assert "not compared" not in orderings(reports, data={"translation": same})
