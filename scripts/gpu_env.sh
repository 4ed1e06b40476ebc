# Source on the GPU machine (bare image with torch/triton, no z3): installs the wheels carried
# in .whl/ (z3-solver) into /tmp/site and puts the repo on PYTHONPATH.
#   source scripts/gpu_env.sh && python bench/gpu_smoke.py --out $OUT
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
