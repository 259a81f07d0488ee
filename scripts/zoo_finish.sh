#!/usr/bin/env bash
# Finish a zoo trained on a lent GPU machine (scripts/zoo_device.sh): unpack the archives its calls brought back into
# runs/zoo/, then export and evaluate every model here (`attention-lab zoo --stage finish --recipe gpu`) into
# runs/zoo/models and runs/zoo/results, the first step of CONTRIBUTING.md's "Re-bundling the model zoo".
#
#   bash scripts/zoo_finish.sh FOLDER [FOLDER …]    the folders the calls' files came back to
#   (the corpora: $ATTENTION_LAB_DATA, else ~/.cache/attention-lab/data, as for every attention-lab command)
#
# Resumable: a model finished already is not measured again (its reports are kept with its weights' sha256).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bash scripts/zoo_finish.sh FOLDER [FOLDER …]"; exit 2; }
cd "$(dirname "$0")/.."
RUNS=runs/zoo
mkdir -p "$RUNS/returned"
for folder in "$@"; do
  gathered=$(mktemp -d)
  for bundle in "$folder"/models-*.tar; do  # a call's models gathered into a few files (scripts/zoo_pack.py)
    [ -e "$bundle" ] || continue
    tar xf "$bundle" -C "$gathered"
    cp "$bundle" "$RUNS/returned/"
  done
  for archive in "$folder"/*--*.tar.xz "$gathered"/*--*.tar.xz; do
    [ -e "$archive" ] || continue
    for run in $(tar tJf "$archive" | cut -d/ -f1-2 | sort -u); do  # a run brought back again replaces the old
      rm -rf "${RUNS:?}/$run"                                          # (a PARTIAL.json left there would stay),
      first="$RUNS/${run%-continued}"                                  # and an earlier call's first-stage weights
      if [ -f "$first/PARTIAL.json" ]; then rm -rf "$first"; fi        # of that model (finish would refuse them)
    done
    tar xJf "$archive" -C "$RUNS"
    cp "$archive" "$RUNS/returned/"
    echo "unpacked $(basename "$archive")"
  done
  rm -rf "$gathered"
  for logs in "$folder"/logs-*.tar.xz; do
    [ -e "$logs" ] || continue
    mkdir -p "$RUNS/device/$(basename "$logs" .tar.xz)"
    tar xJf "$logs" -C "$RUNS/device/$(basename "$logs" .tar.xz)"
  done
done
attention-lab zoo --runs "$RUNS" --models "$RUNS/models" --results "$RUNS/results" --stage finish --recipe gpu \
  --only $(python -c "from attention_core.zoo import ALL_MODELS; print(' '.join(f'{t}/{v}' for t, v in ALL_MODELS))")
