#!/usr/bin/env bash
# Train the model zoo on this machine's CPU cores: one single-thread worker a core, resumable, in the background.
#
#   bash scripts/zoo_cpu.sh start     start (or resume) the workers; a worker already running is left alone
#   bash scripts/zoo_cpu.sh status    each run's epochs and dev BLEU, and each worker's pairs/s in its epoch so far
#   bash scripts/zoo_cpu.sh pause     SIGSTOP the workers (to time the test suite on an idle machine)
#   bash scripts/zoo_cpu.sh resume    SIGCONT them
#
# ZOO_ONLY="task/variant …" limits the zoo (default: the translation zoo, issue #29), ZOO_WORKERS the workers
# (default: the cores), ZOO_STAGGER the seconds between two workers' starts (default 60), ZOO_RECIPE the recipe set
# (default gpu: the set the bundled couplet zoo was trained at, so a lent GPU can finish the same runs), ZOO_RUNS the
# folder (default $ATTENTION_LAB_RUNS/zoo, else ~/.cache/attention-lab/runs/zoo: outside the checkout, so a work tree
# laid anew leaves the runs alone). Each model is claimed by one worker (attention_core/training/runlock.py); a worker stopped by
# the session's end or a crash resumes from its last checkpoint when `start` runs again (at most --checkpoint-minutes,
# 10, lost), and finished models are skipped. RUNS holds the checkpoints, RUNS/models the exported float16 models,
# RUNS/results/eval their evaluations and RUNS/cpu-N.log each worker's log. The folder stays on this machine: a new
# machine starts again (CONTRIBUTING, "Re-bundling the model zoo"). Measured here (results/cores.md):
# two one-thread runs side by side do 1.93 runs' work, one two-thread run 1.37-1.41.
set -u
cd "$(dirname "$0")/.."
RUNS=${ZOO_RUNS:-${ATTENTION_LAB_RUNS:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-lab/runs}/zoo}
PIDS=$RUNS/cpu-workers.pid
[ -n "${VIRTUAL_ENV:-}" ] || [ ! -f .venv/bin/activate ] || . .venv/bin/activate
running() {  # the pids in $PIDS that are still zoo workers (a pid the system gave to another process is not)
  [ -f "$PIDS" ] || return 0
  while read -r pid; do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "zoo --runs $RUNS " && echo "$pid"
  done < "$PIDS"
}
models() {  # $ZOO_ONLY when each is a zoo model, else the translation zoo in the zoo's order
  python3 - ${ZOO_ONLY:-} <<'PY'
import sys
from attention_core.hub.zoo import zoo_models
try:
    print(" ".join(zoo_models(sys.argv[1:], task="translation")))
except ValueError as err:
    sys.exit(f"ZOO_ONLY: {err}")
PY
}
case "${1:-}" in
  start)
    command -v attention-lab >/dev/null || {
      echo "attention-lab is not installed: pip install -r requirements.txt"; exit 2; }
    data=${ATTENTION_LAB_DATA:-$HOME/.cache/attention-lab/data}  # where `attention-lab data pull` puts the corpora
    [ -n "${ATTENTION_LAB_DATA:-}" ] || [ ! -d ../shared/data ] || data=../shared/data  # or beside the clone
    [ -d "$data" ] || { echo "no data folder at $data: set ATTENTION_LAB_DATA or run attention-lab data pull"; exit 2; }
    export ATTENTION_LAB_DATA; ATTENTION_LAB_DATA=$(cd "$data" && pwd)
    only=$(models) || exit 2
    # the cores: nproc counts OMP_NUM_THREADS (one, exported below and often set by hand) instead of the cores
    workers=${ZOO_WORKERS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}
    export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
    mkdir -p "$RUNS"
    alive=$(running); echo "$alive" | sed '/^$/d' > "$PIDS"
    have=$(sed -n '$=' "$PIDS"); have=${have:-0}
    [ "$have" -eq 0 ] || echo "$have worker(s) already running, left alone: $(tr '\n' ' ' < "$PIDS")"
    for w in $(seq $((have + 1)) "$workers"); do
      # shellcheck disable=SC2086  # one argument a model
      nohup attention-lab zoo --runs "$RUNS" --models "$RUNS/models" --results "$RUNS/results" \
        --recipe "${ZOO_RECIPE:-gpu}" --precision bf16 --only $only >> "$RUNS/cpu-$w.log" 2>&1 &
      echo $! >> "$PIDS"
      echo "worker $w: pid $!, log $RUNS/cpu-$w.log"
      [ "$w" -eq "$workers" ] || sleep "${ZOO_STAGGER:-60}"  # the first worker claims its model before the next looks
    done
    ;;
  status)
    [ -d "$RUNS" ] || { echo "no zoo in $RUNS: bash scripts/zoo_cpu.sh start"; exit 0; }
    python3 - "$RUNS" <<'PY'  # one interpreter for every run's checkpoint
import json, sys, torch
from pathlib import Path
runs = Path(sys.argv[1])
for path in sorted(runs.glob("*/*/checkpoint.pt")):
    state = json.loads(torch.load(path, map_location="cpu", weights_only=True)["state"])  # the trainer's format
    last = (state.get("history") or [{}])[-1]
    best = "-" if state.get("best_bleu", -1) < 0 else round(state["best_bleu"], 2)
    partial = state.get("partial")
    inside = f", {partial['pairs']:,} pairs into epoch {partial['epoch']} at its last checkpoint" if partial else ""
    print(f"{path.parent.relative_to(runs).as_posix():40s} epochs done {state.get('epoch', 0):2d}  "
          f"last dev BLEU {last.get('dev_bleu', '-')}  best {best}  "
          f"{'finished' if state.get('finished') else 'training' + inside}")
PY
    for log in "$RUNS"/cpu-*.log; do
      [ -e "$log" ] || continue
      speed=$(tail -c 4000 "$log" | tr '\r' '\n' | grep -o 'pairs_s=[0-9]*' | tail -1)
      echo "$log: ${speed:-no progress bar yet}"
    done
    exported=$(cd "$RUNS/models" 2>/dev/null && ls -d */* 2>/dev/null | tr '\n' ' ')
    echo "exported: ${exported:-none yet}"
    echo "workers alive: $(running | wc -l)"
    ;;
  pause) running | xargs -r kill -STOP ;;
  resume) running | xargs -r kill -CONT ;;
  *) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 2 ;;
esac
