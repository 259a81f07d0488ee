"""Measuring the cliché table: which characters a couplet model over-produces, by decoding training 上联s.

The table feeds the cliché penalty of [`CoupletRules`][attention_core.decoding.couplet.CoupletRules]; the zoo measures
it once per trained model ([`give_overproduction`][attention_core.hub.zoo.give_overproduction]).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence

from attention_core.data.vocab import is_punctuation
from attention_core.decoding.couplet import CoupletRules
from attention_core.decoding.translator import Translator


def calibrate_overproduction(
    translator: Translator,
    pairs: Sequence[tuple[str, str]],
    rounds: int = 5,
    beam_size: int = 5,
    rules: CoupletRules | None = None,
) -> dict[str, float]:
    """Measure which characters a couplet model over-produces, and by how much (``o(y)``, in nats).

    Each round decodes the 上联s of ``pairs`` with the penalty measured so far at ``λ = 1`` and adds
    ``max(0, log(f_model(y) / f_ref(y)))`` for every character, where ``f_model`` is the character's
    share among the outputs and ``f_ref`` its (add-one smoothed) share among the human 下联s of the
    same pairs. The result is stored as ``translator.meta["overproduction"]`` (and returned); the
    cliché penalty reads it. Use training pairs, never a test set.

    Args:
        translator: A couplet model.
        pairs: ``(上联, 下联)`` texts to measure on.
        rounds: Decoding rounds.
        beam_size: Beam size of the measuring decodes.
        rules: The other rules while measuring (default: ``CoupletRules()``); the penalty is set to 1.

    Returns:
        ``{character: o(y)}`` for the characters with ``o(y) > 0``, rounded to 3 decimals.
    """
    rules = dataclasses.replace(rules or CoupletRules(), cliche_penalty=1.0)
    task, vocab = translator.task, translator.tgt_vocab
    refs = Counter(ch for _, ref in pairs for ch in task.tokenize_tgt(ref) if not is_punctuation(ch))
    total_ref = sum(refs.values())
    table: dict[str, float] = {}
    translator.meta["overproduction"] = table
    for _ in range(rounds):
        outputs = translator.translate([s for s, _ in pairs], beam_size=beam_size, rules=rules)
        made = Counter(ch for out in outputs for ch in out.tokens if not is_punctuation(ch))
        total = sum(made.values())
        for ch, n in made.items():
            excess = math.log((n / total) / ((refs[ch] + 1) / (total_ref + len(vocab))))
            if excess > 0:
                table[ch] = round(table.get(ch, 0.0) + excess, 3)
    return table
