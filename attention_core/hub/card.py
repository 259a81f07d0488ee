"""Model cards: what a model is, what it was trained on, and how to use it — the ``README.md`` of a model folder.

The zoo writes a card with its measured test metrics for every bundled model (``attention_core.hub.zoo``);
both kinds of card go through one writer, [`write_card`][attention_core.hub.card.write_card];
[`push`][attention_core.hub.pretrained.push] writes [`own_model_card`][attention_core.hub.card.own_model_card] for a
model of your own that has no card yet, so a model shared on the Hub says what it was trained on and how to open it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from attention_core.data.info import DataInfo
from attention_core.data.parallel import PARALLEL
from attention_core.decoding.translator import Translator
from attention_core.model.config import TRANSFORMER, ModelConfig

CARD_MARK = "<!-- written by attention-lab push: delete this line to keep your edits on the next push -->"
"""The line that marks a card as ours: [`push`][attention_core.hub.pretrained.push] writes such a card again each
time."""


def architecture(cfg: ModelConfig) -> str:
    """One sentence (three short lines) on the architecture, ending in a comma before the parameter count."""
    if cfg.decoder == TRANSFORMER:
        return (f"A Transformer encoder–decoder from Attention Lab ({cfg.num_layers} + {cfg.num_layers} layers, "
                f"d_model {cfg.hidden_size}, {cfg.heads} heads, feed-forward {cfg.ff_size}, pre-LayerNorm,\n"
                "sinusoidal positions, multi-head scaled dot-product attention),")
    window = f" (window D = {cfg.window})" if cfg.window else ""
    attends = (f"score `{cfg.score}`, attention `{cfg.attention}`{window}" if cfg.decoder != "none"
               else "no attention (the source reaches the decoder as one fixed vector)")
    return (f"A bidirectional-{cfg.rnn.upper()} encoder–decoder from Attention Lab,\n"
            f"decoder `{cfg.decoder}`, {attends},\n"
            f"hidden {cfg.hidden_size}, embeddings {cfg.emb_size},")


def write_card(translator: Translator, *, languages: Sequence[str], tag: str, title: str, about: str,
               sections: Sequence[tuple[str, str]], license_: str | None = None, mark: bool = False) -> str:
    """A model card: the Hub's front matter, the title, the architecture and size, then its sections.

    The one writer of both kinds of card: the zoo's ([`model_card`][attention_core.hub.zoo.model_card], with the
    measured test metrics) and a model of your own's ([`own_model_card`][attention_core.hub.card.own_model_card]).

    Args:
        translator: The model (its architecture and parameter count open the card).
        languages: The languages of the front matter (none: no ``language`` entry).
        tag: The task's tag (``translation``, ``couplet``).
        title: What follows "Attention Lab — " in the title.
        about: What follows the parameter count, up to the first section (newlines included).
        sections: ``(heading, body)`` in order, a blank line between two; each body ends in a newline.
        license_: The front matter's license, if any.
        mark: Start with [`CARD_MARK`][attention_core.hub.card.CARD_MARK] (a card ``push`` may write again).
    """
    cfg = translator.model.cfg
    kind = "transformer" if cfg.decoder == TRANSFORMER else "rnn"
    params = sum(p.numel() for p in translator.model.parameters())
    front = ("language:\n" + "".join(f"- {x}\n" for x in languages) if languages else "") + \
        (f"license: {license_}\n" if license_ else "")
    head = f"---\n{front}library_name: attention-lab\ntags:\n- seq2seq\n- attention\n- {kind}\n- {tag}\n---\n"
    head += f"{CARD_MARK}\n" if mark else ""
    body = "\n".join(f"## {heading}\n{text}" for heading, text in sections)
    return f"{head}\n# Attention Lab — {title}\n\n{architecture(cfg)}\n{params / 1e6:.2f} M parameters{about}{body}"


def _side(side: dict, name: str) -> str:
    tokens = {"char": "characters (a space is the token `▁`)", "word": "whitespace-separated words",
              "bpe": f"BPE pieces over whitespace words ({side.get('bpe_size')} pieces, Hugging Face `tokenizers`)"}
    language = f" ({side['language']})" if side.get("language") else ""
    direction = ", written right to left" if side.get("direction") == "rtl" else ""
    return f"- {name}{language}: {tokens.get(side.get('tokenizer'), side.get('tokenizer'))}{direction}"


def _sources(data: DataInfo) -> str:
    lines = []
    for split, record in data.own_sources.items():
        paths = record.get("paths") or []
        if record.get("format") == "hf":
            where = f"Hugging Face dataset `{paths[0] if paths else '?'}`, split `{record.get('split')}`"
        else:
            names = " + ".join(f"`{Path(p).name}`" for p in paths)
            where = f"{names} ({record.get('format')}"
            where += f", sha256 {', '.join(d[:12] for d in record.get('sha256') or [])})"
        if record.get("format") in ("jsonl", "hf"):
            where += f", fields `{record.get('source_field')}` → `{record.get('target_field')}`"
        lines.append(f"- {split}: {where}")
    return "\n".join(lines)


def own_model_card(translator: Translator, repo_id: str) -> str:
    """The ``README.md`` of a model trained on a corpus of your own (``--task parallel``).

    It names the corpus files (with their sha256), the split and its sizes, each side's tokeniser and language,
    the architecture, the training command and the best dev BLEU, and how to pull the model and open it in the app.

    Args:
        translator: The model (its ``task.spec`` and ``meta`` say what it was trained on).
        repo_id: The Hub repo it is pushed to (for the commands in the card).

    Raises:
        ValueError: For a bundled-task model (the zoo writes their cards).
    """
    if not translator.task.own:
        raise ValueError(f"own_model_card is for models of your own, not a {translator.task.name} model")
    cfg, meta, spec = translator.model.cfg, translator.meta, translator.task.spec or {}
    source, target = spec.get("source", {}), spec.get("target", {})
    data = DataInfo.read(meta.get("data"))
    languages = [x for x in (source.get("language"), target.get("language")) if x]
    pair = " → ".join(x or side for x, side in ((source.get("language"), "source"), (target.get("language"), "target")))
    example = (data.example or "…").replace("\\", "\\\\").replace('"', '\\"')
    sources = _sources(data) or "- not recorded"
    return write_card(
        translator, languages=languages, tag="translation", title=f"{pair} — `{cfg.decoder}` / `{cfg.score}`",
        about=". Trained with Attention Lab on a corpus of its owner's\n"
              f"(`attention-lab train --task {PARALLEL}`).\n\n",
        mark=True, sections=[
            ("Data", f"""{sources}

Split: {data.rule or "not recorded"} (seed {data.seed}); sizes {json.dumps(data.sizes or None)};
{data.skipped_lines} malformed lines skipped. The corpus's own license applies to this model.
"""),
            ("Tokens", f"{_side(source, 'source')}\n{_side(target, 'target')}\n"),
            ("Training", f"""```
{meta.get("command", "not recorded")}
```
Best dev BLEU {meta.get("best_dev_bleu")} (epoch history in `config.json`).
"""),
            ("Use", f"""```bash
pip install attention-lab   # or a clone of Attention Lab: pip install -r requirements.txt
attention-lab pull --repo {repo_id} --out my-model
attention-lab translate --model my-model "{example}" --show-attention
python app.py --models my-model        # the app, with this model in the tab "Your models"
python app.py --hub-repo {repo_id}     # or straight from the Hub
```
```python
from attention_core.hub import from_pretrained
translator = from_pretrained("{repo_id}")
print(translator.translate(["{example}"])[0].text)
```
"""),
        ])
