"""The evaluate report: scores computed as documented, outputs in order for paired tests, couplet rules for couplets."""

import pytest
import torch

from attention_core.analysis.evaluation import evaluate
from attention_core.analysis.metrics import bleu
from attention_core.data.tasks import get_task
from attention_core.data.vocab import Vocab
from attention_core.decoding.translator import Translator
from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model

CHARS = "两个黄鹂鸣翠柳一行白鹭上青天"


def translator(task: str) -> Translator:
    torch.manual_seed(0)
    src = Vocab(list(dict.fromkeys(CHARS)))
    tgt = src if task == "couplet" else Vocab("two yellow birds sing in the willows .".split())
    cfg = ModelConfig(len(src), len(tgt), hidden_size=16, emb_size=8, share_embeddings=task == "couplet")
    return Translator(build_model(cfg).eval(), src, tgt, get_task(task))


PAIRS = [("两个黄鹂鸣翠柳", "一行白鹭上青天"), ("白鹭", "黄鹂"), ("青天", "翠柳")]


def test_translation_report() -> None:
    model = translator("translation")
    pairs = [(zh, "two yellow birds sing .") for zh, _ in PAIRS]
    report = evaluate(model, pairs, beam_size=2, examples=2)
    assert report["n"] == 3 and report["task"] == "translation"
    assert report["bleu"] == pytest.approx(bleu(report["outputs"], [t for _, t in pairs], "13a", lowercase=True))
    assert report["outputs"] == [o.text for o in model.translate([s for s, _ in pairs], beam_size=2)]
    assert len(report["examples"]) == 2 and report["examples"][0]["source"] == pairs[0][0]
    assert report["decoding"]["beam_size"] == 2 and report["decoding"]["loop_guard"] is True
    assert "couplet" not in report and set(report["alignment"]) == {"entropy", "diagonality", "uniform_entropy"}


def test_couplet_report_scores_the_rules_on_outputs_and_references() -> None:
    report = evaluate(translator("couplet"), PAIRS)
    assert report["decoding"]["constrained"] is True and report["decoding"]["rules"] is not None
    assert set(report["couplet"]) == set(report["couplet_reference"])
    assert report["couplet_reference"]["no_unk"] == 1.0  # the human 下联s
