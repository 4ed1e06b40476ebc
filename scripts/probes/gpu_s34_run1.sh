# Session 34, device call 1: cuDNN attention probe, host phases per mode, then gpu_kernels --quick.
source scripts/gpu_env.sh; unset TRITON_INTERPRET SYMC_CPU_BACKEND; export SYMC_CACHE_DIR=/tmp/symc_gpu_cache
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 90 python3 scripts/probes/cudnn_attention.py > $OUT/cudnn_attention.txt 2>&1; echo cudnn rc=$?
tail -25 $OUT/cudnn_attention.txt
timeout 300 python3 scripts/probes/host_phases.py --out $OUT > $OUT/host_phases.log 2>&1; echo phases rc=$?
grep -v "^USDT\|Warning" $OUT/host_phases.log | tail -8
head -70 $OUT/host_phases_symc.prof.txt
