"""A plain, step-by-step Luong-attention seq2seq written the way the tutorials write it.

The speed reference for ``benchmarks/bench.py``: the same sizes and the same mathematics as
``attention_core`` (bidirectional LSTM encoder, Luong decoder with input feeding, ``general`` or
``concat`` score), but with the habits of a first implementation:

* the key projection ``W_a h_s`` is recomputed at every decoder step;
* the encoder runs over the padded batch (no packed sequences);
* the vocabulary projection and the loss are computed inside the step loop;
* greedy decoding loops over the sentences of a batch one at a time.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TutorialSeq2Seq(nn.Module):
    """Tutorial-style encoder–decoder with Luong attention."""

    def __init__(self, src_vocab: int, tgt_vocab: int, emb: int = 128, hidden: int = 256, score: str = "general"):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, emb, padding_idx=0)
        self.tgt_emb = nn.Embedding(tgt_vocab, emb, padding_idx=0)
        self.encoder = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.enc_proj = nn.Linear(2 * hidden, hidden)
        self.bridge_h = nn.Linear(2 * hidden, hidden)
        self.bridge_c = nn.Linear(2 * hidden, hidden)
        self.cell = nn.LSTMCell(emb + hidden, hidden)
        self.score_name = score
        self.W_a = nn.Linear(hidden, hidden, bias=False)
        if score == "concat":
            self.U_a = nn.Linear(hidden, hidden)
            self.v_a = nn.Linear(hidden, 1, bias=False)
        self.W_c = nn.Linear(2 * hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, tgt_vocab)
        self.hidden = hidden

    def encode(self, src):
        outputs, (h, c) = self.encoder(self.src_emb(src))  # padded: no packing
        keys = self.enc_proj(outputs)
        h = torch.tanh(self.bridge_h(torch.cat([h[0], h[1]], -1)))
        c = torch.tanh(self.bridge_c(torch.cat([c[0], c[1]], -1)))
        return keys, h, c

    def attend(self, h, keys, mask):
        if self.score_name == "concat":  # recomputes U_a h_s every step
            energy = self.v_a(torch.tanh(self.W_a(h).unsqueeze(1) + self.U_a(keys))).squeeze(-1)
        else:  # recomputes W_a h_s every step
            energy = torch.bmm(self.W_a(keys), h.unsqueeze(2)).squeeze(2)
        energy = energy.masked_fill(~mask, -1e9)
        weights = F.softmax(energy, dim=1)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights

    def step(self, y, h, c, feed, keys, mask):
        h, c = self.cell(torch.cat([self.tgt_emb(y), feed], -1), (h, c))
        context, weights = self.attend(h, keys, mask)
        feed = torch.tanh(self.W_c(torch.cat([context, h], -1)))
        return self.out(feed), h, c, feed, weights

    def loss(self, src, tgt_in, tgt_out):
        keys, h, c = self.encode(src)
        mask = src != 0
        feed = torch.zeros(src.size(0), self.hidden)
        total = 0.0
        for t in range(tgt_in.size(1)):  # projection and loss inside the loop
            logits, h, c, feed, _ = self.step(tgt_in[:, t], h, c, feed, keys, mask)
            total = total + F.cross_entropy(logits, tgt_out[:, t], ignore_index=0, reduction="sum")
        return total / (tgt_out != 0).sum()

    @torch.no_grad()
    def greedy(self, src, max_len: int, bos: int = 2):
        results = []
        for b in range(src.size(0)):  # one sentence at a time
            one = src[b : b + 1]
            keys, h, c = self.encode(one)
            mask = one != 0
            feed = torch.zeros(1, self.hidden)
            y = torch.tensor([bos])
            tokens, rows = [], []
            for _ in range(max_len):
                logits, h, c, feed, weights = self.step(y, h, c, feed, keys, mask)
                y = logits.argmax(-1)
                tokens.append(int(y))
                rows.append(weights[0].tolist())
            results.append((tokens, rows))
        return results
