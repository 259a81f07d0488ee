#!/usr/bin/env bash
# One prepared call on a lent GPU machine for issue #52: is the training step sync-free there, and how fast is it?
#
#   bash scripts/device_prepare.sh              # here, once: .gpu/ (corpora, Python 3.12 packages, names cache)
#   run (device tool): bash scripts/device_step.sh    carrying .gpu     (about 3 minutes of device time)
#
# 1. the CUDA tests of the step: tests/test_sync_free.py (torch.cuda.set_sync_debug_mode("error") around a step of
#    every variant) and tests/test_cuda.py;
# 2. benchmarks/gpu_step.py: luong-general's training step alone at the gpu recipe (bf16), then fp32 for comparison.
# Everything it writes lands in $OUT (the device tool brings it back): pytest's report, results/gpu_step.{json,md}.
set -u
W=${ZOO_WORK:-/tmp/zoo}
OUT=${OUT:-/tmp/step-out}
mkdir -p "$W/data" "$OUT"
[ -d /tmp/site312 ] || tar xJf .gpu/site.tar.xz -C /tmp || { echo "unpack of .gpu/site.tar.xz failed"; exit 1; }
[ -d "$W/data/cmn-eng" ] || tar xJf .gpu/data.tar.xz -C "$W/data" || { echo "unpack of .gpu/data.tar.xz failed"; exit 1; }
export PYTHONPATH=${ZOO_SITE:-/tmp/site312}:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
  GRADIO_ANALYTICS_ENABLED=False ATTENTION_LAB_DATA=$W/data XDG_CACHE_HOME=$W/cache
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 240 python3 -m pytest -q -p no:xdist -o addopts="" -m cuda tests/test_sync_free.py tests/test_cuda.py \
  2>&1 | tail -40 | tee "$OUT/pytest-cuda.txt"
timeout 150 python3 benchmarks/gpu_step.py --data "$W/data" --out "$OUT/gpu_step.json" 2>&1 | tail -12
timeout 90 python3 benchmarks/gpu_step.py --data "$W/data" --precision fp32 --batches 20 --out "$OUT/gpu_step_fp32.json" \
  2>&1 | tail -6
