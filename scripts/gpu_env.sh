# Source on the GPU machine (a bare image with torch and triton, without z3-solver and bytecode):
# installs the wheels carried in .whl/ into /tmp/site and puts the repo on PYTHONPATH.
#
#   here, once:  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                  --implementation cp --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 \
#                  -d .whl z3-solver==5.4.1.0 bytecode==0.19.1
#   there:       source scripts/gpu_env.sh && python3 bench/gpu_smoke.py --out $OUT   (carry .whl)
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
