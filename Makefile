# Every target sets itself up: .venv is created on first use (again when its Python is gone or
# broken) and the project is re-installed into it whenever pyproject.toml is newer than the stamp.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The explorer page's graph library and its layout extension (fcose, with the cose-base and
# layout-base it needs), vendored from the npm registry at build time (not committed), each with
# its licence; and the browser its tests drive (Debian's chromium; Playwright's own browser
# download cannot run).
CYTOSCAPE_VERSION := 3.34.4
FCOSE_VERSION := 2.2.0
COSE_BASE_VERSION := 2.2.0
LAYOUT_BASE_VERSION := 2.0.1
VENDOR := memgraph_plugin/web/static/vendor
CYTOSCAPE := $(VENDOR)/cytoscape.min.js
FCOSE := $(VENDOR)/cytoscape-fcose.js
COSE_BASE := $(VENDOR)/cose-base.js
LAYOUT_BASE := $(VENDOR)/layout-base.js
VENDORED := $(CYTOSCAPE) $(LAYOUT_BASE) $(COSE_BASE) $(FCOSE)
CHROMIUM := /usr/bin/chromium

.PHONY: test demo bench lint clean vendor settings-doc screenshot

$(PY):
	$(PYTHON) -m venv --clear $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# $(call npm_vendor,PACKAGE,VERSION,FILE IN THE PACKAGE,TARGET): `npm pack` checks the tarball's
# integrity; the file and the package's LICENSE (as TARGET's name .LICENSE) land in $(VENDOR).
define npm_vendor
	command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq npm)
	mkdir -p $(VENDOR)
	tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent $(1)@$(2) >/dev/null \
		&& tar -xzf $(1)-$(2).tgz) \
		&& cp $$tmp/package/$(3) $(4).tmp \
		&& cp $$tmp/package/LICENSE $(basename $(basename $(4))).LICENSE && mv $(4).tmp $(4); \
		status=$$?; rm -rf $$tmp; exit $$status
endef

$(CYTOSCAPE):
	$(call npm_vendor,cytoscape,$(CYTOSCAPE_VERSION),dist/cytoscape.min.js,$@)

$(LAYOUT_BASE):
	$(call npm_vendor,layout-base,$(LAYOUT_BASE_VERSION),layout-base.js,$@)

$(COSE_BASE):
	$(call npm_vendor,cose-base,$(COSE_BASE_VERSION),cose-base.js,$@)

$(FCOSE):
	$(call npm_vendor,cytoscape-fcose,$(FCOSE_VERSION),cytoscape-fcose.js,$@)

$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

vendor: $(VENDORED)

test: $(STAMP) $(VENDORED) $(CHROMIUM)
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -q

demo: $(STAMP)
	$(VENV)/bin/memgraph-host demo

# Retake docs/explorer.png: the browser test's screenshot of the demo chat in the explorer.
screenshot: $(STAMP) $(VENDORED) $(CHROMIUM)
	EXPLORER_SCREENSHOT=$(CURDIR)/docs/explorer.png $(PY) -m pytest -q \
		tests/web/test_explorer_picture.py -k screenshot

bench: $(STAMP)
	$(PY) bench/run.py

# Regenerate docs/settings.md from the settings schema (after declaring a key).
settings-doc: $(STAMP)
	$(VENV)/bin/memgraph-host --data-dir "$$(mktemp -d)" config --markdown > docs/settings.md

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .memgraph demo-data $(VENDOR)
