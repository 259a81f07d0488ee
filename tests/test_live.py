import gradio as gr
import pytest
import torch

from attention_core.data.toy import alignment_hits
from demo.live import LiveSettings, SequenceError, parse_sequence, train_live, try_sequence


def test_short_run_streams_updates_learns_and_aligns_anti_diagonally():
    updates = list(train_live(LiveSettings(task="reverse", min_len=5, max_len=12, steps=600, every=100)))
    assert len(updates) == 6
    assert updates[-1].accuracy > updates[0].accuracy + 0.1
    assert updates[-1].accuracy >= 0.9
    assert alignment_hits("reverse", torch.tensor(updates[-1].weights), 12) / 12 >= 0.8
    assert updates[-1].heatmap.data[0].type == "heatmap"
    text, fig = try_sequence(updates[-1].model, "1 2 3 4 5")
    assert text == "5 4 3 2 1"
    assert "done" in updates[-1].status and not any("done" in u.status for u in updates[:-1])
    # the controls may say another task by now: the heatmap names what the model was trained on, and a sequence
    # longer than its training ones is said to be
    trained = {"task": "reverse", "step": 600, "max_len": 12}
    _, fig = try_sequence(updates[-1].model, "1 2 3 4 5", trained=trained)
    assert "model trained on reverse" in fig.layout.title.text and "longer" not in fig.layout.title.text
    _, fig = try_sequence(updates[-1].model, "1" * 20, trained=trained)
    assert "longer than its training sequences (≤ 12)" in fig.layout.title.text


def test_the_baseline_has_no_heatmap_and_learns_less():
    attn = list(train_live(LiveSettings(task="reverse", min_len=10, max_len=16, steps=400, every=400)))[-1]
    base = list(train_live(LiveSettings(task="reverse", min_len=10, max_len=16, steps=400, every=400,
                                        attention=False)))[-1]
    assert base.accuracy < attn.accuracy - 0.2
    assert base.heatmap.data == ()


@pytest.mark.parametrize(
    "settings,message",
    [
        (LiveSettings(task="shuffle"), "unknown task"),
        (LiveSettings(min_len=9, max_len=3), "lengths"),
        (LiveSettings(max_len=500), "lengths"),
        (LiveSettings(steps=10**6), "steps"),
        (LiveSettings(window=0), "window"),
        (LiveSettings(score=None), "unknown score None"),
        (LiveSettings(score="bilinear"), "unknown score"),
    ],
)
def test_bad_settings_get_clear_messages(settings, message):
    with pytest.raises(gr.Error, match=message):
        next(train_live(settings))


def test_sequence_input_is_checked():
    assert parse_sequence("3,1 4") == [7, 5, 8]
    for bad in ("", "1 2 x", "1" * 40):
        with pytest.raises(SequenceError):
            parse_sequence(bad)
    text, _ = try_sequence(None, "1 2 3")  # said in the output box, not an error badge with no text
    assert "train a model first" in text
