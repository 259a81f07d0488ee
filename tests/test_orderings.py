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
