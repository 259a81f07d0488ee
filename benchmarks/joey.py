"""Joey NMT 2.3.0 at Attention Lab's size, for side-by-side speed runs in one process.

Optional: ``pip install -r benchmarks/requirements-joey.txt``. Joey's recurrent model is built
with the same sizes as ours (embeddings 128, hidden 256, bidirectional LSTM encoder, LSTM decoder
with input feeding and Luong "general" attention, no dropout) and the same vocabularies; batches are
our batches with the special ids swapped into Joey's order (``<unk>`` 0, ``<pad>`` 1).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

import torch
from torch import Tensor

from attention_core.data.batch import Batch
from attention_core.data.vocab import Vocab
from attention_core.training.precision import autocast

logging.getLogger("joeynmt").setLevel(logging.ERROR)


def available() -> bool:
    """Whether joeynmt can be imported."""
    try:
        import joeynmt  # noqa: F401
    except ImportError:
        return False
    return True


def _joey_vocab(vocab: Vocab):
    from joeynmt.vocabulary import Vocabulary

    cfg = SimpleNamespace(unk_token="<unk>", pad_token="<pad>", bos_token="<bos>", eos_token="<eos>",
                          unk_id=0, pad_id=1, bos_id=2, eos_id=3, lang_tags=[], sep_token=None)
    return Vocabulary(vocab.itos[4:], cfg)


def build(src_vocab: Vocab, tgt_vocab: Vocab, emb: int = 128, hidden: int = 256):
    """Joey's recurrent model with our sizes and vocabularies, and its loss."""
    from joeynmt.model import build_model

    embeddings = {"embedding_dim": emb, "scale": False}
    cfg = {
        "initializer": "xavier_uniform",
        "encoder": {"type": "recurrent", "rnn_type": "lstm", "embeddings": embeddings, "hidden_size": hidden,
                    "bidirectional": True, "dropout": 0.0, "num_layers": 1},
        "decoder": {"type": "recurrent", "rnn_type": "lstm", "embeddings": embeddings, "hidden_size": hidden,
                    "dropout": 0.0, "hidden_dropout": 0.0, "num_layers": 1, "input_feeding": True,
                    "init_hidden": "bridge", "attention": "luong"},
    }
    model = build_model(cfg, _joey_vocab(src_vocab), _joey_vocab(tgt_vocab))
    model.loss_function = ("crossentropy", 0.0)  # Joey builds its XentLoss from (name, smoothing)
    return model


def _swap(x: Tensor) -> Tensor:
    """Our ids (<pad> 0, <unk> 1) → Joey's (<unk> 0, <pad> 1)."""
    return torch.where(x == 0, 1, torch.where(x == 1, 0, x))


def sort(batch: Batch) -> Batch:
    """Joey's encoder packs without ``enforce_sorted=False``: its loader sorts by source length."""
    order = torch.argsort(batch.src_lengths, descending=True)
    return Batch(*(getattr(batch, f).index_select(0, order) for f in batch.__dataclass_fields__))


def train_step(model, batch: Batch, optimizer: torch.optim.Optimizer, amp_dtype: torch.dtype | None = None) -> float:
    """One Joey training step on a batch sorted by ``sort`` (loss normalised per token, as Joey does).

    ``amp_dtype`` wraps the forward pass in ``torch.autocast`` as our trainer does; Joey itself has no
    CPU mixed precision (its ``fp16`` option is switched off on a CPU), so ``None`` is Joey as shipped.
    """
    model.train()
    src, trg_in, trg = _swap(batch.src), _swap(batch.tgt_in), _swap(batch.tgt_out)
    src_mask = (src != 1).unsqueeze(1)
    trg_mask = (trg != 1).unsqueeze(1)
    optimizer.zero_grad()
    with autocast("cpu", amp_dtype):
        loss, *_ = model(return_type="loss", src=src, trg=trg, trg_input=trg_in, src_mask=src_mask,
                         src_length=batch.src_lengths, trg_mask=trg_mask)
    loss = loss.float() / trg_mask.sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


@torch.inference_mode()
def decode(model, batch: Batch, beam_size: int = 1, max_len: int = 60):
    """Joey's own greedy or beam search on a batch sorted by ``sort`` (attention scores returned)."""
    from joeynmt.search import beam_search, greedy

    model.eval()
    src = _swap(batch.src)
    src_mask = (src != 1).unsqueeze(1)
    encoder_output, encoder_hidden, _, _ = model(return_type="encode", src=src, src_length=batch.src_lengths,
                                                 src_mask=src_mask)
    if beam_size == 1:
        return greedy(src_mask, max_len, model, encoder_output, encoder_hidden, return_attention=True,
                      return_prob="none")
    return beam_search(model, beam_size, encoder_output, encoder_hidden, src_mask, max_len, alpha=1.0,
                       n_best=1, return_attention=True, return_prob="none")
