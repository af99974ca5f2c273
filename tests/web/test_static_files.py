"""The explorer page's own files (not the vendored ones) ship as package data, and the page names
each script it loads in the order they depend on one another."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "memgraph_plugin" / "web" / "static"


def test_every_page_file_is_package_data() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["*"]
    files = [p.name for p in STATIC.iterdir() if p.is_file()]
    assert "favicon.svg" in files and "explorer-layout.js" in files
    assert [f for f in files if not any(fnmatch(f, p) for p in patterns)] == []


def test_the_page_loads_the_layout_after_its_libraries() -> None:
    page = (STATIC / "index.html").read_text("utf-8")
    scripts = re.findall(r'<script src="/static/([^"]+)"', page)
    assert scripts[:5] == [
        "vendor/cytoscape.min.js", "vendor/layout-base.js", "vendor/cose-base.js",
        "vendor/cytoscape-fcose.js", "explorer-layout.js",
    ]  # fmt: skip
    assert scripts.index("explorer-layout.js") < scripts.index("explorer.js")
    assert '<link rel="icon" href="/static/favicon.svg"' in page
