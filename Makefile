# Every target sets itself up: .venv is created on first use (again when its Python is gone or
# broken) and the project is re-installed into it whenever pyproject.toml is newer than the stamp.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint clean settings-doc

$(PY):
	$(PYTHON) -m venv --clear $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -q

demo: $(STAMP)
	$(VENV)/bin/memgraph-host demo

bench: $(STAMP)
	$(PY) bench/run.py

# Regenerate docs/settings.md from the settings schema (after declaring a key).
settings-doc: $(STAMP)
	$(VENV)/bin/memgraph-host --data-dir "$$(mktemp -d)" config --markdown > docs/settings.md

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .memgraph demo-data
