# Session 34, device call 5: after the ce20/host21/qkv20 merges: GPU tests of three phases (the
# tiled kernels, attention views and cuDNN attention among them), then the step profile.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BUDGET=${TEST_BUDGET:-300} PHASES=${PHASES:-regressions,triton_kernels,training} OUT=$OUT \
    bash scripts/gpu_run.sh > "$OUT/tg.log" 2>&1; echo "test-gpu rc=$?"
grep -E "^(phase|  )|passed|failed|FAILED" "$OUT/tg.log" | tail -30
source scripts/gpu_env.sh; unset TRITON_INTERPRET SYMC_CPU_BACKEND; export SYMC_CACHE_DIR=/tmp/symc_gpu_cache
timeout ${PROFILE_BUDGET:-200} python3 bench/profile_step.py --modes symc,torch_dynamic --lengths 512,1024 \
    --steps 5 --top 400 --out "$OUT" > "$OUT/profile.log" 2>&1; echo "profile rc=$?"
grep "^==" "$OUT/profile.log"
