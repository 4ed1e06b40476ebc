# Session 34, device calls 5 and 6: the GPU tests of the phases that exercise kernels, attention and
# training, then the step profile of symc and torch.compile(dynamic=True) at T=512 and 1024.
#   PHASES=... TEST_BUDGET=... bash scripts/probes/gpu_s34_final.sh     (carry .whl)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BUDGET=${TEST_BUDGET:-270} PHASES=${PHASES:-regressions,triton_kernels,training} OUT=$OUT \
    bash scripts/gpu_run.sh > "$OUT/tg.log" 2>&1; echo "test-gpu rc=$?"
grep -E "passed|failed|FAILED|Error" "$OUT/tg.log" | tail -25
source scripts/gpu_env.sh; unset TRITON_INTERPRET SYMC_CPU_BACKEND; export SYMC_CACHE_DIR=/tmp/symc_gpu_cache
timeout ${PROFILE_BUDGET:-240} python3 bench/profile_step.py --modes symc,torch_dynamic --lengths 512,1024 \
    --steps ${STEPS:-5} --top 400 --out "$OUT" > "$OUT/profile.log" 2>&1; echo "profile rc=$?"
grep "^==" "$OUT/profile.log"
grep -v "^USDT\|Warning\|_warn_once" "$OUT/profile.log" | sed -n '/training step/,/slowest/p' | head -12
