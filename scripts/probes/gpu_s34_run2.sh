# Session 34, device call 2: cuDNN attention probe, the CUDA attention tests, symc's step profile
# at T=512/1024 (attention now cuDNN on sm90).
source scripts/gpu_env.sh; unset TRITON_INTERPRET SYMC_CPU_BACKEND; export SYMC_CACHE_DIR=/tmp/symc_gpu_cache
timeout 90 python3 scripts/probes/cudnn_attention.py > $OUT/cudnn_attention.txt 2>&1; echo cudnn rc=$?
grep -v "^schema" $OUT/cudnn_attention.txt | tail -30
SYMC_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/inductor/test_cuda_attention.py 2>&1 | tail -15
timeout 260 python3 bench/profile_step.py --modes symc --lengths 512,1024 --steps 10 --top 25 --out $OUT > $OUT/profile.log 2>&1; echo profile rc=$?
grep -v "^USDT\|Warning\|_warn_once" $OUT/profile.log | tail -45
