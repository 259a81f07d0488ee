"""Why an output may be poor, said to the reader in English and Chinese: the notes the app and the CLI show.

A note explains a poor output rather than hiding it: the input is longer than nearly all the training inputs, a
content word received almost no attention, or many source tokens are unknown to the model. The app shows them
under the output, the CLI prints them to standard error (``attention-lab translate``).
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.decoding.coverage import THRESHOLD as COVERAGE_THRESHOLD
from attention_core.decoding.translator import Output, Translator


@dataclass
class Note:
    """Why an output may be poor, for the visitor.

    See [`notes`][attention_core.analysis.notes.notes].

    Attributes:
        kind: ``long`` (longer than nearly all training sentences), ``untranslated`` (content words that received
            almost no attention) or ``unknown`` (many unknown characters).
        en: The note in English.
        zh: The note in Chinese.
    """

    kind: str
    en: str
    zh: str


def notes(translator: Translator, output: Output) -> list[Note]:
    """Say when an input is outside what the model learned, so a poor output is explained.

    * ``long``: the source is longer than 99 % of the training sources (``meta["source_lengths"]``,
      recorded by training; models without it get no length note);
    * ``untranslated``: content words that received almost no attention
      ([`untranslated`][attention_core.decoding.translator.Translator.untranslated]);
    * ``unknown``: more than a fifth of the source tokens are unknown.

    Args:
        translator: The model that wrote ``output``.
        output: One of its outputs.

    Returns:
        The notes, possibly none.
    """
    notes = []
    n = len(output.source_tokens)
    lengths = translator.meta.get("source_lengths")
    p99 = lengths.get("p99") if isinstance(lengths, dict) else None
    if type(p99) is int and n > p99:
        notes.append(Note(
            "long",
            f"this 上联 has {n} characters; 99 % of the training 上联 have at most {p99}, and a longer one "
            "gets a poorer 下联",
            f"这副上联有 {n} 个字，训练集中 99% 的上联不超过 {p99} 个字；上联越长，下联越差",
        ) if translator.task.characters_only else Note(
            "long",
            f"this sentence has {n} tokens; 99 % of the training sentences have at most {p99}, and "
            "quality drops with length (see BLEU by length in the results)",
            f"这句有 {n} 个词元（token），训练集中 99% 的句子不超过 {p99} 个；"
            "句子越长，译文越差（见结果页的按长度 BLEU）",
        ))
    untranslated = translator.untranslated(output)
    if untranslated:
        words = "、".join(w.text for w in untranslated)
        notes.append(Note(
            "untranslated",
            f"possibly untranslated: {words} received almost no attention (a content word with coverage below "
            f"{COVERAGE_THRESHOLD}); read by hand, such a flag was right about 3 times in 4",
            f"可能漏译：{words} 几乎没被注意到（覆盖度低于 {COVERAGE_THRESHOLD} 的实词）；"
            "我们逐条读过，这样的提示约四次有三次是对的",
        ))
    unknown = [u for u in output.unknown if u]
    if unknown and len(unknown) > n / 5:
        chars = " ".join(dict.fromkeys(unknown))
        notes.append(Note(
            "unknown",
            f"{len(unknown)} of {n} source tokens are unknown to the model ({chars}); it sees them as <unk>",
            f"{n} 个词元（token）中有 {len(unknown)} 个模型不认识（{chars}），只能当作 <unk>",
        ))
    return notes
