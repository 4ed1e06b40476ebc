# One device call: symc and torch.compile(dynamic=True) step profile at T=512 with every kernel (SYMC_LOGS=kernels source in $OUT/kernels.log), then bench/gpu_kernels.py --quick.
source scripts/gpu_env.sh; unset TRITON_INTERPRET SYMC_CPU_BACKEND; export SYMC_CACHE_DIR=/tmp/symc_gpu_cache
nvidia-smi --query-gpu=name --format=csv
SYMC_LOGS=kernels timeout 200 python3 bench/profile_step.py --modes symc,torch_dynamic --lengths 512 --top 400 --steps 5 --out $OUT > $OUT/profile.log 2> $OUT/kernels.log; echo rc=$?
tail -5 $OUT/profile.log
timeout 300 python3 bench/gpu_kernels.py --quick --out $OUT > $OUT/kern.log 2>&1; echo rc=$?
tail -40 $OUT/kern.log
