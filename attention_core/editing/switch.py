"""The names switch: a translation that carries names, numbers and left-out words through the model.

The model itself translates plainly ([`Translator.translate`][attention_core.decoding.translator.Translator.translate]).
With the switch on, three passes edit around it:

1. people's names and numbers become carriers the model copies
   ([`names.prepare`][attention_core.editing.names.prepare]), and are written back afterwards, names transliterated
   (pinyin) or as the dictionary writes them, numbers as English writes them
   ([`names.restore`][attention_core.editing.names.restore],
   [`attention_core.editing.numbers`][attention_core.editing.numbers]);
2. the common nouns the model left out ([`words.left_out`][attention_core.editing.words.left_out]): the sentence
   again, with those words carried too ([`attention_core.editing.words`][attention_core.editing.words]);
3. the names the model knows but left out ([`dropped_known`][attention_core.editing.names.dropped_known]): again,
   with those names carried too (and the words carried so far).

Chinese → English models only ([`reads_names`][attention_core.decoding.translator.Translator.reads_names]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attention_core.data.text import strip_invisible
from attention_core.decoding.config import DecodeConfig
from attention_core.decoding.translator import InputError, Output, Translator
from attention_core.editing.names import Prepared, dropped_known, prepare, restore
from attention_core.editing.words import find_words, left_out, overstated


def translate(
    translator: Translator,
    texts: Sequence[str],
    names: bool = True,
    config: DecodeConfig | None = None,
    *,
    batch_size: int = 64,
    max_tokens: int | None = None,
    **settings: Any,
) -> list[Output]:
    """Translate with the names switch (``names=True``) or without it (the plain translation).

    Args:
        translator: A Chinese → English model (with the switch on).
        texts: Source sentences.
        names: Whether the switch is on.
        config: How to decode ([`DecodeConfig`][attention_core.decoding.config.DecodeConfig]).
        batch_size: Sentences per batch.
        max_tokens: Reject inputs longer than this (``InputError``).
        **settings: Fields of ``DecodeConfig`` to change, as ``Translator.translate`` takes them.

    Returns:
        One [`Output`][attention_core.decoding.translator.Output] per text; with the switch, ``Output.names`` says
        what was done with each name.

    Raises:
        InputError: On an empty or over-long input, or the switch on for a model that does not read Chinese into
            English.
    """
    if not names:
        return translator.translate(texts, config, batch_size=batch_size, max_tokens=max_tokens, **settings)
    config = DecodeConfig.of(config, **settings).for_task(translator.task)
    if not translator.reads_names:
        raise InputError("the names switch is for models that translate Chinese into English")
    texts = [strip_invisible(t or "") for t in texts]
    for text in texts:
        translator.tokenize(text, max_tokens)  # errors speak of the text as typed

    def decode(prepared: Sequence[Prepared]) -> list[Output]:
        tokenised = [translator.task.tokenize_src(p.text) for p in prepared]  # the model reads the carriers
        outs = translator.decode(tokenised, config, batch_size) if prepared else []
        return [restore(out, p, translator.task.tokenize_src, translator.detokenize) for out, p in zip(outs, prepared)]

    known = translator.meta.get("known_names") or ()
    results = decode([prepare(t, known=known) for t in texts])
    # the common words the model left out: the sentence again, with those words carried too
    missing = {i: left_out(find_words(text), out.text) for i, (text, out) in enumerate(zip(texts, results))}
    words = _again(results, {i: prepare(texts[i], known=known, words=w) for i, w in missing.items() if w}, decode)
    # then the names it knows but left out: again, with those names carried too (and the words carried so far)
    again = {}
    for i, (text, out) in enumerate(zip(texts, results)):
        if dropped := dropped_known(text, known, out.text):
            redo = prepare(text, known=[k for k in known if k not in dropped], words=words.get(i, ()))
            had = {c.name.text for c in out.names.carried} if out.names else set()
            if had | set(dropped) <= {c.name.text for c in redo.carried}:
                again[i] = redo  # else carriers ran short (three people a sentence): no name is given up
    _again(results, again, decode)
    return results


def translate_paragraph(translator: Translator, text: str, max_sentence_tokens: int | None = None,
                        names: bool = True, **options: Any) -> list[Output]:
    """Split a paragraph into sentences and translate them in one batch, in order, with the switch or without.

    The sentences are [`Translator.sentences`][attention_core.decoding.translator.Translator.sentences]'s.

    Args:
        translator: The model.
        text: One or more sentences.
        max_sentence_tokens: Longest accepted sentence (tokens), or ``None`` for no limit.
        names: Whether the switch is on.
        **options: [`translate`][attention_core.editing.switch.translate]'s options.

    Returns:
        One [`Output`][attention_core.decoding.translator.Output] per sentence.

    Raises:
        InputError: On empty or non-Chinese input, or a sentence over the limit.
    """
    return translate(translator, translator.sentences(text, max_sentence_tokens), names, **options)


def _again(results: list[Output], again: dict[int, Prepared],
           decode: Any) -> dict[int, list]:
    """Translate some sentences again, with more carried.

    A new translation replaces ``results[i]`` when the model wrote every carried common word's carrier, once;
    else (it dropped one, or wrote one in another word's place too) the translation before stays.

    Args:
        results: The outputs so far, one per sentence (changed in place).
        again: The sentences to translate again, by index, prepared with what they carry.
        decode: Decodes prepared sentences and restores what they carry.

    Returns:
        The common words each replaced output carries, by index.
    """
    carried_words = {}
    for i, out, p in zip(again, decode(list(again.values())), again.values()):
        carried = [(c.name, placed) for c, placed in zip(p.carried, p.placed) if c.name.group == "word"]
        if (all(placed == "carried" for _, placed in carried)
                and not overstated([word for word, _ in carried], out.text)):
            results[i] = out
            carried_words[i] = [word for word, _ in carried]
    return carried_words
