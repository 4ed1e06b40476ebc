#!/usr/bin/env bash
# The lead's one GPU benchmark call for issues 20-21 (~8 minutes on an H100; carry .whl):
#
#   bash scripts/gpu_bench_s3.sh            # -> $OUT/profile_step.json, $OUT/gpu_kernels*.json
#
# 1. bench/profile_step.py --quick: eager, torch.compile(dynamic=True), symc at T=128/512/1024
#    (wall/GPU ms, launches, category split, peak memory, ten slowest kernels, distinct kernels);
# 2. bench/launch_overhead.py: host us per Triton launch / per compiled-graph call;
# 3. bench/saved_bytes.py: bytes saved for backward per GPT block, eager / torch.compile / symc;
# 4. with the time left, bench/gpu_kernels.py --quick (memory-bound ops vs torch.compile static).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu_env.sh
source scripts/gpu_env.sh
unset TRITON_INTERPRET SYMC_CPU_BACKEND
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/symc_gpu_cache}
python3 -c "import torch, triton, z3, bytecode; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))" || exit 2
start=$(date +%s)
timeout "${PROFILE_BUDGET:-330}" python3 bench/profile_step.py --quick --out "$OUT" 2>&1 \
    | tee "$OUT/profile_step.log" | grep -v "^USDT\|profiler_st" | tail -120
timeout 60 python3 bench/launch_overhead.py --out "$OUT" 2>&1 | grep -v "^USDT" | tail -12
left=$(( ${BUDGET:-470} - ($(date +%s) - start) ))
if [ "$left" -gt 150 ]; then
    timeout 120 python3 bench/saved_bytes.py --out "$OUT" 2>&1 | tee "$OUT/saved_bytes.log" \
        | grep -v "^USDT" | tail -20
fi
left=$(( ${BUDGET:-470} - ($(date +%s) - start) ))
if [ "$left" -gt 60 ]; then
    timeout "$left" python3 bench/gpu_kernels.py --quick --out "$OUT" 2>&1 \
        | tee "$OUT/gpu_kernels.log" | tail -60
fi
ls -la "$OUT"
