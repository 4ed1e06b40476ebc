#!/usr/bin/env bash
# The lead's GPU benchmark calls for issues 20-21 (carry .whl), in parts that fit one device call:
#
#   PARTS=profile,launch,varlen_gpt bash scripts/gpu_bench.sh     # -> $OUT/*.json
#   PARTS=varlen_bert,kernels BUDGET=500 bash scripts/gpu_bench.sh
#
# profile      bench/profile_step.py --quick: eager, torch.compile(dynamic=True), symc at
#              T=128/512/1024 (wall/GPU ms, launches, category split, peak memory, slowest kernels)
# launch       bench/launch_overhead.py: host us per Triton launch / per compiled-graph call
# saved        bench/saved_bytes.py: bytes saved for backward per GPT block
# varlen_gpt   bench/train_varlen.py --model gpt: torch.compile(dynamic=True) and symc, tokens/s,
# varlen_bert  compiles and peak memory over 40 lengths (--model bert: HF BERT with padding masks)
# kernels      bench/gpu_kernels.py --quick with the time left (memory-bound ops vs torch static)
# Each part runs under `timeout` with what is left of BUDGET (seconds, default 560).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
PARTS=${PARTS:-profile,launch,saved,kernels}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu_env.sh
source scripts/gpu_env.sh
unset TRITON_INTERPRET SYMC_CPU_BACKEND
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/symc_gpu_cache}
python3 -c "import torch, triton, z3, bytecode; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))" || exit 2
start=$(date +%s)
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - start) )); }
part() {   # part NAME SECONDS_WANTED COMMAND...: run when enough budget is left
    local name=$1 want=$2; shift 2
    case ",$PARTS," in *",$name,"*) ;; *) return ;; esac
    local budget; budget=$(left)
    if [ "$budget" -lt 30 ]; then echo "gpu_bench: no time left for $name" >&2; return; fi
    [ "$budget" -gt "$want" ] && budget=$want
    echo "=== $name (up to ${budget} s)"
    timeout "$budget" "$@" 2>&1 | tee "$OUT/$name.log" | grep -v "^USDT\|profiler_st" | tail -60
}
part profile 330 python3 bench/profile_step.py --quick --out "$OUT"
part launch 60 python3 bench/launch_overhead.py --out "$OUT"
part saved 120 python3 bench/saved_bytes.py --out "$OUT"
part varlen_gpt 330 python3 bench/train_varlen.py --model gpt --modes torch_dynamic,symc \
    --out "$OUT/train_varlen_gpt.json"
part varlen_bert 400 python3 bench/train_varlen.py --model bert --modes torch_dynamic,symc \
    --out "$OUT/train_varlen_bert.json"
part kernels 100000 python3 bench/gpu_kernels.py --quick --out "$OUT"
ls -la "$OUT"
