"""One decoding step (``ModelStep``) and teacher forcing compute the same thing: decoding can be replayed."""

import pytest
import torch

from attention_core.model.config import ModelConfig
from attention_core.model.seq2seq import build_model
from attention_core.model.step import ModelStep


@pytest.mark.parametrize("decoder", ["luong", "bahdanau", "none", "transformer"])
def test_stepping_equals_teacher_forcing(decoder: str) -> None:
    """Feeding a sequence step by step gives the logits and weights teacher forcing gives for it in one pass."""
    torch.manual_seed(0)
    score = "scaled_dot" if decoder == "transformer" else "general"
    model = build_model(ModelConfig(20, 20, decoder=decoder, score=score, hidden_size=16, emb_size=16,
                                    dropout=0.0)).eval()
    src, lengths = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]]), torch.tensor([4, 2])
    tgt_in = torch.tensor([[2, 11, 12, 13], [2, 14, 15, 16]])
    with torch.no_grad():
        logits, weights = model(src, lengths, tgt_in)
        memory, state = model.encode(src, lengths)
        for t in range(tgt_in.size(1)):
            step = model.step(tgt_in[:, t], state, memory, t)
            assert isinstance(step, ModelStep) and step.logits.shape == (2, 20)
            torch.testing.assert_close(step.logits, logits[:, t], rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(step.weights, weights[:, t], rtol=1e-4, atol=1e-5)
            state = step.state
