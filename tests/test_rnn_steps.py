"""The written-out LSTM steps give what ``nn.LSTM`` gives."""

import torch

from attention_core.model.rnn_steps import GoldLSTM


def test_gold_lstm_is_the_lstm_over_the_joined_inputs() -> None:
    """Stepping ``[E y_{t−1}; x_t]`` with the gold share hoisted equals ``nn.LSTM`` over the joined sequence."""
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(5 + 3, 4, batch_first=True)
    gold, extra = torch.randn(2, 6, 5), torch.randn(2, 6, 3)
    h0, c0 = torch.randn(2, 4), torch.randn(2, 4)
    want, _ = rnn(torch.cat([gold, extra], -1), (h0[None], c0[None]))
    lstm, h, c, got = GoldLSTM(rnn, gold), h0, c0, []
    for t in range(6):
        h, c = lstm(t, extra[:, t], h, c)
        got.append(h)
    torch.testing.assert_close(torch.stack(got, 1), want, rtol=1e-5, atol=1e-6)


def test_gold_lstm_with_a_constant_input() -> None:
    """An input the same at every step folds into the hoisted share (the no-attention decoder's summary)."""
    torch.manual_seed(1)
    rnn = torch.nn.LSTM(5 + 3, 4, batch_first=True)
    gold, summary = torch.randn(2, 6, 5), torch.randn(2, 3)
    want, _ = rnn(torch.cat([gold, summary[:, None].expand(-1, 6, -1)], -1))
    lstm, h, c, got = GoldLSTM(rnn, gold, constant=summary), torch.zeros(2, 4), torch.zeros(2, 4), []
    for t in range(6):
        h, c = lstm(t, None, h, c)
        got.append(h)
    torch.testing.assert_close(torch.stack(got, 1), want, rtol=1e-5, atol=1e-6)
