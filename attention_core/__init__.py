"""Attention Lab's library: every classic attention mechanism for RNN sequence-to-sequence models.

The pieces, one concept per module:

* [`scores`][attention_core.scores] — dot, scaled dot, general (bilinear), concat (additive);
* [`attention`][attention_core.attention] — masking, local windows, soft/hard weights, context;
* [`encoder`][attention_core.encoder], [`decoder`][attention_core.decoder],
  [`seq2seq`][attention_core.seq2seq] — the model and ``build_model``;
* [`search`][attention_core.search] — greedy and beam search;
* [`couplet`][attention_core.couplet] — the rules of a 下联, enforced while decoding;
* [`training`][attention_core.training] — loss and the training step.
"""

from attention_core.attention import CENTRES, Attention, attention
from attention_core.config import ModelConfig
from attention_core.couplet import CoupletConstraint, CoupletRules
from attention_core.decoder import DECODERS
from attention_core.scores import SCORES, build_score
from attention_core.search import Hypothesis, beam_search, beam_search_nbest, greedy
from attention_core.seq2seq import Seq2Seq, build_model

__all__ = [
    "CENTRES",
    "DECODERS",
    "SCORES",
    "Attention",
    "CoupletConstraint",
    "CoupletRules",
    "Hypothesis",
    "ModelConfig",
    "Seq2Seq",
    "attention",
    "beam_search",
    "beam_search_nbest",
    "build_model",
    "build_score",
    "greedy",
]

__version__ = "0.1.0"
