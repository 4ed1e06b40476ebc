#!/usr/bin/env bash
# Create .venv and install symc with its test dependencies. Idempotent; run by `make`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    .venv/bin/python -m pip install -q "torch>=2.11"
else
    # CPU-only machine: the CPU build of torch (a plain `torch` would pull a multi-GB CUDA build).
    .venv/bin/python -m pip install -q "torch==2.13.0" \
        || .venv/bin/python -m pip install -q "torch>=2.11" --index-url https://download.pytorch.org/whl/cpu
fi
.venv/bin/python -m pip install -q -e ".[dev]"
