# Two commands: `make demo` (set up + run the main job) and `make test` (set up + run the tests).
# Setup makes .venv once; on a machine without an NVIDIA GPU it installs the CPU build of torch.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.symc-installed

.PHONY: setup demo test clean

$(STAMP): pyproject.toml scripts/setup.sh
	PY=$(PY) bash scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/symc demo $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV)
