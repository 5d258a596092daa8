# The two commands of the README:  `make demo`  and  `make test`.
# Both create .venv and install the project into it first; nothing is installed by hand.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test unit integration e2e bench lint clean

$(STAMP): pyproject.toml scripts/bootstrap_system.sh
	bash scripts/bootstrap_system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/sira-seek demo

test: $(STAMP)
	bash scripts/bootstrap_system.sh --browser
	$(PY) -m pytest

unit: $(STAMP)
	$(PY) -m pytest tests/unit

integration: $(STAMP)
	$(PY) -m pytest tests/integration tests/e2e

bench: $(STAMP)
	$(PY) benchmarks/df_lookup.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy sira_seek esplugin cli

clean:
	rm -rf $(VENV) build *.egg-info
