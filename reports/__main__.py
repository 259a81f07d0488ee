"""``python -m reports``: turn ``results/eval`` into ``results/`` tables, figures and the orderings page."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from attention_core.data.corpora import data_home
from attention_core.data.tasks import DataError
from attention_core.decoding.folder import ModelLoadError


def main(argv: Sequence[str] | None = None) -> int:
    """Write the reports; returns the exit status (2 with one ``error:`` line for a bad folder)."""
    parser = argparse.ArgumentParser(prog="python -m reports", description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--models", default=None, help="zoo folder for the alignment figures (default: bundled)")
    parser.add_argument("--data", default=None, help="data folder, for the test-set references of the bootstrap "
                        "(default: $ATTENTION_LAB_DATA, else the user cache; `attention-lab data pull` fills it)")
    parser.add_argument("--retrain-toy", action="store_true",
                        help="train the bottleneck figure's two toy models again (default: their stored accuracies, "
                             "results/theory_bottleneck.json, while the figure's settings are unchanged)")
    parser.add_argument("--tables", action="store_true",
                        help="only the tables and the orderings page, from results/eval (no figure is drawn, no model "
                             "run): while the zoo is retrained model by model, the figures keep their models")
    args = parser.parse_args(argv)
    from reports.report import write_report  # after parsing: --help stays instant

    try:
        for path in write_report(args.results, args.models, data_home(args.data), args.retrain_toy,
                                 args.tables):
            print(path)
    except (DataError, ModelLoadError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
