#!/usr/bin/env bash
# The GPU test run in one command, from a bare GPU machine (the lead's device call):
#
#   bash scripts/gpu_run.sh                 # carry .whl; the summary goes to $OUT (or bench/results)
#   BUDGET=300 PHASES=regressions,models bash scripts/gpu_run.sh
#
# Installs the carried wheels (.whl/: z3-solver, bytecode, expecttest) through scripts/gpu_env.sh,
# checks that torch sees CUDA and that triton and z3 import, then runs scripts/gpu_tests.py with
# SYMC_TEST_DEVICE=cuda. Writes $OUT/test_gpu_summary.json (copy it to bench/results/) and
# $OUT/test_gpu.log. Exit status 0 only when every phase passed.
set -u
cd "$(dirname "$0")/.."
PY=${PY:-python3}
if ! "$PY" -c "import torch" 2>/dev/null && [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu_env.sh
source scripts/gpu_env.sh
export SYMC_TEST_DEVICE=${SYMC_TEST_DEVICE:-cuda} SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/symc_gpu_cache}
# Each pytest worker starts its own pool of Triton compile processes (one per core by default):
# 8 workers x 16 spawned processes oversubscribed the 16 cores and phases ran out of time.
export SYMC_TRITON_COMPILE_WORKERS=${SYMC_TRITON_COMPILE_WORKERS:-2}
unset TRITON_INTERPRET SYMC_CPU_BACKEND
[ -d .whl ] || echo "gpu_run: no .whl/ here: z3-solver and bytecode must already be installed" \
    "(carry .whl, made as scripts/gpu_env.sh says)" >&2
"$PY" - <<'PY' || { echo "gpu_run: environment check failed (see above)" >&2; exit 2; }
import os, sys, torch, triton, z3, bytecode, sympy
print(f"python {sys.version.split()[0]}  torch {torch.__version__}  triton {triton.__version__}"
      f"  z3 {z3.get_version_string()}  bytecode {bytecode.__version__}")
if os.environ["SYMC_TEST_DEVICE"] == "cuda":
    assert torch.cuda.is_available(), "SYMC_TEST_DEVICE=cuda but torch sees no CUDA device"
    print("device:", torch.cuda.get_device_name(0))
PY
set -o pipefail
"$PY" scripts/gpu_tests.py --out "$OUT" --device "$SYMC_TEST_DEVICE" --budget "${BUDGET:-480}" \
    --workers "${WORKERS:-8}" --phases "${PHASES:-}" 2>&1 | tee "$OUT/test_gpu.log"
