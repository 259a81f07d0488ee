"""Beam search's coverage penalty (Wu et al. 2016) on one translation model: does it help, and at which weight β?

Usage::

    python benchmarks/coverage_penalty.py            # → results/coverage_penalty.{md,json}
    python benchmarks/coverage_penalty.py --model runs/zoo3/models/translation/luong-general

Beam 5 (``Translator.translate(coverage=β)``): a finished hypothesis scores ``log p / len + β Σ_j log min(Σ_t a_tj,
1)``. For each β, on the two dev sets (where a setting would be chosen): BLEU (sacrebleu 13a, lower-cased), its
difference from β = 0 by paired bootstrap (1,000 samples, 95 % interval), chrF, the outputs that change and the
length of the outputs against the references' (words, all outputs together).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import repo_path, write_report  # noqa: E402
from names import compare  # noqa: E402
from visitor import BEAM, model_parser, model_sets  # noqa: E402

BETAS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
"""The weights compared (0: off, the default)."""


def markdown(report: dict) -> str:
    """One table: every β on each dev set."""
    lines = [
        f"Beam search's coverage penalty (`beam_search_nbest(coverage=β)`, Wu et al. 2016) on model "
        f"`{report['model']}`, beam {report['beam_size']}: a finished output scores log p / length + β Σ_j log "
        "min(attention received by source character j, 1). BLEU (sacrebleu 13a, lower-cased), Δ against β = 0 by "
        "paired bootstrap (1,000 samples, 95 % interval), chrF, outputs changed, and the outputs' length in words "
        "against the references'. Written by `python benchmarks/coverage_penalty.py`.",
        "",
        "| set | sentences | β | BLEU | Δ [95 % interval] | chrF | changed | length ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in report["sets"].items():
        for beta, r in rows.items():
            d = r["vs_off"]
            delta = "—" if float(beta) == 0 else f"{d['delta']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]"
            lines.append(f"| {name} | {r['n']} | {beta} | {r['bleu']:.2f} | {delta} | {r['chrf']:.2f} | "
                         f"{r['changed']} | {r['length_ratio']:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    args = model_parser(__doc__, "coverage_penalty.json").parse_args()

    import torch

    from attention_core.analysis.metrics import chrf
    from attention_core.data.text import tokenize_english
    from attention_core.decoding.folder import load_folder

    translator = load_folder(args.model, "cpu")
    report: dict = {"model": repo_path(args.model), "beam_size": BEAM, "sets": {}}
    with torch.inference_mode():
        for name, pairs in model_sets(args.data, tests=False).items():
            if name == "visitor set":
                continue  # a test set: a setting is chosen on dev
            sources, refs = [s for s, _ in pairs], [e for _, e in pairs]
            words = sum(len(tokenize_english(r)) for r in refs)
            off, rows = None, {}
            for beta in BETAS:
                outs = [o.text for o in translator.translate(sources, beam_size=BEAM, coverage=beta)]
                off = outs if off is None else off
                c = compare(off, outs, refs)
                rows[str(beta)] = {"n": len(refs), "bleu": c["bleu_on"], "vs_off": c["on_vs_off"],
                                   "chrf": round(chrf(outs, refs, lowercase=True), 2), "changed": c["changed"],
                                   "length_ratio": round(sum(len(tokenize_english(o)) for o in outs) / words, 3)}
                print(name, beta, rows[str(beta)], flush=True)
            report["sets"][name] = rows
    write_report(args.out, report, markdown)


if __name__ == "__main__":
    main()
