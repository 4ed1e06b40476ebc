#!/usr/bin/env bash
# Issue 21's C launcher (inductor/runtime/c_launch.py) on a GPU in one call, under ~190 s:
#   bash scripts/gpu_host21.sh            # carry .whl; results under $OUT
# 1. bench/launch_overhead.py with the C launcher (lo_on/) and without (SYMC_C_LAUNCH=0, lo_off/);
# 2. bench/c_launch_check.py: a small GPT, symc vs eager losses and gradients, launcher layouts;
# 3. bench/profile_step.py --quick --modes symc --lengths 512, with whatever time is left.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu_host21}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu_env.sh
source scripts/gpu_env.sh
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/symc_gpu_cache}
unset TRITON_INTERPRET SYMC_CPU_BACKEND
BUDGET=${BUDGET:-188}
left() { echo $((BUDGET - SECONDS)); }
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))"
timeout 45 python3 bench/launch_overhead.py --out "$OUT/lo_on" 2>&1 | tail -12
SYMC_C_LAUNCH=0 timeout 40 python3 bench/launch_overhead.py --out "$OUT/lo_off" 2>&1 | tail -4
echo "== check at ${SECONDS}s"
timeout 60 python3 bench/c_launch_check.py --out "$OUT" --precisions "${PRECISIONS:-fp32,bf16_autocast}" 2>&1 | tail -8
echo "== profile at ${SECONDS}s, $(left)s left"
if [ "$(left)" -gt 20 ]; then
    timeout "$(left)" python3 bench/profile_step.py --quick --modes symc --lengths "${LENGTHS:-512}" \
        --out "$OUT" 2>&1 | tail -25
fi
echo "== done at ${SECONDS}s"
