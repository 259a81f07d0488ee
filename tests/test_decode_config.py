"""DecodeConfig: one typed set of decoding settings, the task's defaults filled in, the same decoding either way."""

import dataclasses

import pytest
import torch
from test_translator import translator

from attention_core.data.tasks import get_task
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.repetition import LoopGuard


def test_the_tasks_defaults_fill_what_is_left_open():
    translation, couplet = get_task("translation"), get_task("couplet")
    filled = DecodeConfig().for_task(translation)
    assert filled.constrained is False and filled.loop_guard == LoopGuard() and filled.guard == LoopGuard()
    assert filled.coverage == translation.coverage
    assert DecodeConfig().for_task(couplet).constrained is True
    assert DecodeConfig().for_task(couplet).guard is None  # couplets: no loop guard by default
    kept = DecodeConfig(constrained=False, loop_guard=LoopGuard(max_run=2), coverage=0.4).for_task(couplet)
    assert (kept.constrained, kept.guard, kept.coverage) == (False, LoopGuard(max_run=2), 0.4)
    assert DecodeConfig(loop_guard=False).for_task(translation).guard is None
    assert filled.for_task(translation) == filled  # filling twice changes nothing


def test_a_setting_it_does_not_have_is_named():
    with pytest.raises(TypeError, match="unknown decoding setting.*beam\\b.*DecodeConfig has beam_size"):
        DecodeConfig.of(beam=5)
    with pytest.raises(TypeError, match="editing.switch.translate"):
        translator().translate(["我喜欢"], names=True)
    with pytest.raises(ValueError):
        translator().translate(["我喜欢"], coverage=-1.0)  # greedy too: checked before any search


def test_by_keyword_or_as_one_config_it_is_the_same_decoding():
    model = translator()
    texts = ["我喜欢自然语言处理", "今天天气很好", "我"]
    for settings in ({}, {"beam_size": 3}, {"beam_size": 2, "window": 1, "hard": True}, {"max_len": 2}):
        by_keyword = model.translate(texts, **settings)
        as_config = model.translate(texts, DecodeConfig(**settings))
        changed = model.translate(texts, DecodeConfig(beam_size=7), **settings)  # keywords change the config
        for a, b, c in zip(by_keyword, as_config, changed):
            assert a.tokens == b.tokens and torch.equal(a.weights, b.weights)
            assert c.tokens == a.tokens or settings.get("beam_size", 1) == 1


def test_decode_takes_tokens_and_gives_translate_s_outputs():
    model = translator()
    config = DecodeConfig(beam_size=2)
    outs = model.decode([list("我喜欢"), list("今天")], config, batch_size=1)
    assert [o.tokens for o in outs] == [o.tokens for o in model.translate(["我喜欢", "今天"], config)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.beam_size = 3  # type: ignore[misc]


def test_the_searches_take_the_same_config():
    from attention_core.decoding.search import beam_search, beam_search_nbest, greedy

    model = translator().model
    src, lengths = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]]), torch.tensor([4, 2])
    config = DecodeConfig(beam_size=3, max_len=5, window=1, alpha=0.5)
    for search in (greedy, beam_search):
        by_config, by_name = search(model, src, lengths, config), search(model, src, lengths, beam_size=3, max_len=5,
                                                                          window=1, alpha=0.5)
        assert [h.tokens for h in by_config] == [h.tokens for h in by_name]
        assert all(len(h.tokens) <= 5 for h in by_config)
    default, five = beam_search_nbest(model, src, lengths), beam_search_nbest(model, src, lengths, beam_size=5)
    assert [[h.tokens for h in n] for n in default] == [[h.tokens for h in n] for n in five]  # beam 5 by default
    with pytest.raises(TypeError, match="config must be a DecodeConfig, got int 3: pass settings by name"):
        beam_search(model, src, lengths, 3)


def test_a_beam_size_left_open_is_each_callers_default():
    from attention_core.decoding.search import beam_search_nbest

    model = translator()
    assert DecodeConfig().for_task(model.task).beam_size == 1  # translate and evaluate: greedy
    src, lengths = torch.tensor([[4, 5, 6, 7]]), torch.tensor([4])
    open_, five = (beam_search_nbest(model.model, src, lengths, DecodeConfig(max_len=6)),
                   beam_search_nbest(model.model, src, lengths, DecodeConfig(beam_size=5, max_len=6)))
    assert [[h.tokens for h in n] for n in open_] == [[h.tokens for h in n] for n in five]  # the search's: beam 5
