"""Known names the model leaves out (issue #29): does translating the sentence again with them carried help?

The names switch leaves to the model the names its corpus taught it (``meta["known_names"]``: 大卫, 安娜, 上海 …), and
since ``attention_core.editing.names.dropped_known`` it translates a sentence again, with the name carried, when the
output leaves out a known name the dictionary gives an English name. This measures that second translation on one model:
the names switch on, with and without it, on every sentence of the visitor set, cmn-eng dev and tv4dialog-dev that
holds a known name it checks (``attention_core.editing.names.checked_known``: the only sentences it can change). Beam 5,
decoded as the app decodes.

Usage::

    python benchmarks/known_names.py --model runs/zoo/models/translation/luong-general   # → results/known_names.*

Per set: the sentences with such a name, the outputs that change, the names written (any of the dictionary's forms,
whole word, any case) without and with the second translation, and BLEU (sacrebleu 13a, lower-cased) on
those sentences with a paired bootstrap (1,000 samples). Every changed output is listed beside its reference.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import write_report  # noqa: E402
from names import compare  # noqa: E402
from visitor import BEAM, model_parser, model_sets  # noqa: E402


def translate(translator, sources: Sequence[str], second: bool) -> list[str]:
    """The names switch's outputs (beam 5, each source as the app splits it), with or without the second translation
    of a known name left out."""
    import torch

    from attention_core.decoding.translator import SENTENCE_TOKENS
    from attention_core.editing import switch
    from attention_core.editing.names import dropped_known

    switch.dropped_known = dropped_known if second else (lambda text, known, output: [])
    try:
        with torch.inference_mode():
            return [" ".join(o.text for o in switch.translate_paragraph(translator, s, SENTENCE_TOKENS, beam_size=BEAM))
                    for s in sources]
    finally:
        switch.dropped_known = dropped_known


def markdown(report: dict) -> str:
    lines = [
        f"The second translation of a known name left out (`attention_core.editing.names.dropped_known`) on model "
        f"`{report['model']}` (weights sha256 `{report['weights_sha256'][:12]}…`, {report['known']} known names), "
        f"beam {report['beam_size']}, the names switch on, "
        "without and with it: the sentences of each set that hold a known person's name it checks "
        "(`checked_known`: the only ones it can change), the names written in any of the dictionary's forms (whole "
        "word, any case), and "
        "BLEU on those sentences (sacrebleu 13a, lower-cased), Δ by paired bootstrap (1,000 samples, 95 % "
        "interval). Written by `python benchmarks/known_names.py`.",
        "",
        "| set | sentences with a known name | names | written without | written with | outputs changed | "
        "BLEU without | BLEU with | Δ [95 % interval] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in report["sets"].items():
        t = s["on_vs_off"]
        lines.append(f"| {name} | {s['n']} | {s['names']} | {s['written_without']} | {s['written_with']} | "
                     f"{s['changed']} | {s['bleu_off']:.2f} | {s['bleu_on']:.2f} | "
                     f"{t['delta']:+.2f} [{t['low']:+.2f}, {t['high']:+.2f}] |")
    lines += ["", "Every output that changes:", "", "| set | Chinese | reference | without | with |",
              "|---|---|---|---|---|"]
    lines += [f"| {c['set']} | {c['chinese']} | {c['reference']} | {c['without']} | {c['with']} |"
              for c in report["changed"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    from attention_core.data.corpora import sha256_file
    from attention_core.decoding.folder import WEIGHTS, load_folder
    from attention_core.editing.names import checked_known, name_written

    args = model_parser(__doc__, "known_names.json").parse_args()
    model = Path(args.model)
    translator = load_folder(model, "cpu")
    known = translator.meta.get("known_names") or []
    if not known:
        sys.exit(f"{model} keeps no known names (meta['known_names']): nothing to measure")
    sets = model_sets(args.data, tests=False)  # the dev sets and the visitor set
    shown = model.resolve().relative_to(ROOT) if model.resolve().is_relative_to(ROOT) else model
    report: dict = {"model": str(shown), "weights_sha256": sha256_file(model / WEIGHTS), "beam_size": BEAM,
                    "known": len(known), "sets": {}, "changed": []}
    for name, pairs in sets.items():
        chosen = [(zh, en, checked_known(zh, known)) for zh, en in pairs]
        chosen = [c for c in chosen if c[2]]
        sources, refs = [zh for zh, _, _ in chosen], [en for _, en, _ in chosen]
        without, with_ = translate(translator, sources, False), translate(translator, sources, True)
        report["sets"][name] = compare(without, with_, refs) | {
            "names": sum(len(n) for _, _, n in chosen),
            "written_without": sum(name_written(n, o) for (_, _, names), o in zip(chosen, without) for n in names),
            "written_with": sum(name_written(n, o) for (_, _, names), o in zip(chosen, with_) for n in names)}
        report["changed"] += [{"set": name, "chinese": zh, "reference": en, "without": a, "with": b}
                              for (zh, en, _), a, b in zip(chosen, without, with_) if a != b]
        print(name, report["sets"][name], flush=True)
    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
