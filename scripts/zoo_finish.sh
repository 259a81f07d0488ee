#!/usr/bin/env bash
# Finish a zoo trained on a lent GPU machine (scripts/zoo_device.sh): unpack the archives its calls brought back into
# RUNS (ZOO_RUNS, else $ATTENTION_LAB_RUNS/zoo, else ~/.cache/attention-lab/runs/zoo), then export and evaluate every
# model here (`attention-lab zoo --stage finish --recipe gpu`) into RUNS/models and RUNS/results, the first step of CONTRIBUTING.md's "Re-bundling the model zoo".
#
#   bash scripts/zoo_finish.sh [--unpack-only] FOLDER [FOLDER …]    the folders the calls' files came back to
#   (the corpora: $ATTENTION_LAB_DATA, else ~/.cache/attention-lab/data, as for every attention-lab command;
#   ZOO_RUNS: another runs folder)
#
# A run brought back finished replaces the one there (and an earlier call's partial first-stage weights of the same
# model); a partial one (PARTIAL.json) never replaces a finished one, whatever the order of the folders.
# Resumable: a model finished already is not measured again (its reports are kept with its weights' sha256).
set -euo pipefail
UNPACK_ONLY=0
if [ "${1:-}" = --unpack-only ]; then UNPACK_ONLY=1; shift; fi
[ $# -gt 0 ] || { echo "usage: bash scripts/zoo_finish.sh [--unpack-only] FOLDER [FOLDER …]"; exit 2; }
FOLDERS=()
for folder in "$@"; do FOLDERS+=("$(cd "$folder" && pwd)"); done
cd "$(dirname "$0")/.."
RUNS=${ZOO_RUNS:-${ATTENTION_LAB_RUNS:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-lab/runs}/zoo}
mkdir -p "$RUNS/returned"

finished() {  # a run folder holding weights that are not partial
  [ -f "$1/model.safetensors" ] && [ ! -f "$1/PARTIAL.json" ]
}

unpack() {  # one model's archive into $RUNS
  local archive=$1 run runs listing partial=0
  listing=$(tar tJf "$archive")  # read once (grep -q on a pipe under pipefail can fail when tar is cut off)
  runs=$(cut -d/ -f1-2 <<< "$listing" | sort -u)
  for run in $runs; do
    [[ $run == */?* ]] || { echo "skipped $(basename "$archive"): it holds $run, not a task/run folder"; return; }
  done
  if grep -q '/PARTIAL.json$' <<< "$listing"; then partial=1; fi
  for run in $runs; do
    if [ "$partial" = 1 ] && { finished "$RUNS/$run" || finished "$RUNS/$run-continued"; }; then
      echo "kept $RUNS/$run's finished model: $(basename "$archive") holds only a partial one"; return
    fi
  done
  for run in $runs; do
    rm -rf "${RUNS:?}/$run"  # a run brought back again replaces the old (a PARTIAL.json left there would stay)
    if [ "$partial" = 0 ] && [ -f "$RUNS/${run%-continued}/PARTIAL.json" ]; then
      rm -rf "${RUNS:?}/${run%-continued}"  # an earlier call's first-stage weights of it: finish would refuse them
    fi
  done
  tar xJf "$archive" -C "$RUNS"
  cp -f "$archive" "$RUNS/returned/"
  echo "unpacked $(basename "$archive")"
}

for folder in "${FOLDERS[@]}"; do
  gathered=$(mktemp -d)
  for bundle in "$folder"/models-*.tar; do  # a call's models gathered into a few files (scripts/zoo_pack.py)
    [ -e "$bundle" ] || continue
    tar xf "$bundle" -C "$gathered"
    cp -f "$bundle" "$RUNS/returned/"
  done
  for archive in "$folder"/*--*.tar.xz "$gathered"/*--*.tar.xz; do
    [ -e "$archive" ] || continue
    unpack "$archive"
  done
  rm -rf "$gathered"
  for logs in "$folder"/logs-*.tar.xz; do
    [ -e "$logs" ] || continue
    mkdir -p "$RUNS/device/$(basename "$logs" .tar.xz)"
    tar xJf "$logs" -C "$RUNS/device/$(basename "$logs" .tar.xz)"
  done
done
[ "$UNPACK_ONLY" = 0 ] || exit 0
attention-lab zoo --runs "$RUNS" --models "$RUNS/models" --results "$RUNS/results" --stage finish --recipe gpu \
  --only $(python -c "from attention_core.hub.zoo import ZOO_ORDER; print(' '.join(f'{t}/{v}' for t, v in ZOO_ORDER))")
