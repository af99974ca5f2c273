# Every target sets itself up: .venv is created on first use (again when its Python is gone or
# broken) and the project is re-installed into it whenever pyproject.toml is newer than the stamp.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The explorer page's graph library, vendored from the npm registry at build time (not committed),
# and the browser its tests drive (Debian's chromium; Playwright's own browser download cannot run).
CYTOSCAPE_VERSION := 3.34.4
VENDOR := memgraph_plugin/web/static/vendor
CYTOSCAPE := $(VENDOR)/cytoscape.min.js
CHROMIUM := /usr/bin/chromium

.PHONY: test demo bench lint clean vendor settings-doc

$(PY):
	$(PYTHON) -m venv --clear $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(CYTOSCAPE):
	command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq npm)
	mkdir -p $(VENDOR)
	tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent cytoscape@$(CYTOSCAPE_VERSION) >/dev/null \
		&& tar -xzf cytoscape-$(CYTOSCAPE_VERSION).tgz) \
		&& cp $$tmp/package/dist/cytoscape.min.js $(CYTOSCAPE).tmp \
		&& cp $$tmp/package/LICENSE $(VENDOR)/cytoscape.LICENSE && mv $(CYTOSCAPE).tmp $(CYTOSCAPE); \
		status=$$?; rm -rf $$tmp; exit $$status

$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

vendor: $(CYTOSCAPE)

test: $(STAMP) $(CYTOSCAPE) $(CHROMIUM)
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
	rm -rf $(VENV) .memgraph demo-data $(VENDOR)
