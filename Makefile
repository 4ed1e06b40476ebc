# Two commands: `make demo` (set up + run the main job) and `make test` (set up + run the tests).
# On a GPU machine: `make test-gpu` (the device-aware tests on CUDA, scripts/gpu_run.sh).
# Setup makes .venv once; on a machine without an NVIDIA GPU it installs the CPU build of torch.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.symc-installed

.PHONY: setup demo test test-gpu clean

$(STAMP): pyproject.toml scripts/setup.sh
	PY=$(PY) bash scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/symc demo $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS)

test-gpu:
	bash scripts/gpu_run.sh

clean:
	rm -rf $(VENV)
