#!/usr/bin/env bash
# Issue 21 on a GPU in one call, under ~9 minutes (carry .whl; results under $OUT):
#   bash scripts/gpu_host21.sh
# 1. the kernel error flags on CUDA (tests/inductor/test_error_flags.py: an out-of-range embedding
#    id and cross-entropy target still raise, naming the kernel; a step under
#    torch.cuda.set_sync_debug_mode("error") never syncs) and the extern calls;
# 2. bench/profile_step.py --modes symc --lengths 512: wall vs GPU ms and the host syncs per step
#    (MODES=symc,torch_dynamic for the comparison, if the time allows).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu_host21}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu_env.sh
source scripts/gpu_env.sh
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/symc_gpu_cache}
unset TRITON_INTERPRET SYMC_CPU_BACKEND
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))"
SYMC_TEST_DEVICE=cuda timeout 200 python3 -m pytest -q -p no:xdist -p no:cacheprovider \
    tests/inductor/test_error_flags.py tests/inductor/test_extern_call.py 2>&1 | tail -15
echo "== profile at ${SECONDS}s"
timeout 330 python3 bench/profile_step.py --quick --modes "${MODES:-symc}" --lengths "${LENGTHS:-512}" \
    --top 40 --out "$OUT" 2>&1 | tail -40
echo "== done at ${SECONDS}s"
