"""TrainConfig: a bad setting is refused by name before any work, with the rule it broke."""

import dataclasses

import pytest

from attention_core.training.trainconfig import TrainConfig


@pytest.mark.parametrize(("field", "value"), [
    ("epochs", 0), ("batch_size", 0), ("lr", 0.0), ("lr", -1e-3), ("max_len", 0), ("max_dev", 0),
    ("label_smoothing", 1.0), ("extra_ratio", -0.5), ("main_repeat", 0), ("checkpoint_minutes", -1.0),
    ("lr_decay", 1.0), ("subword_vocab", 3), ("final_lr_ratio", 0.0), ("teacher_forcing", 1.5),
    ("precision", "fp8"),
])
def test_a_bad_setting_is_named_with_its_rule(field, value):
    cfg = dataclasses.replace(TrainConfig(), **{field: value})
    with pytest.raises(ValueError, match=rf"^{field} .*got {value!r}"):
        cfg.validate()


def test_the_defaults_and_a_decay_inside_the_run_are_valid_and_one_longer_is_not():
    assert TrainConfig().validate() == TrainConfig()
    assert TrainConfig(epochs=7, decay_epochs=2).validate().decay_epochs == 2
    with pytest.raises(ValueError, match=r"decay_epochs must be between 0 and epochs \(7\), got 8"):
        TrainConfig(epochs=7, decay_epochs=8).validate()
