"""The settings reference: effective-settings rows for ``memgraph-host config`` and the Markdown of
``docs/settings.md``, both made from the settings schema.

Regenerate the doc after declaring a key: ``make settings-doc`` (which runs
``memgraph-host config --markdown > docs/settings.md``); a test fails while it is stale.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from host.settings.settings import DEFAULT
from host.settings.settings_schema import SCHEMA, Setting, env_name

#: The project's modules that declare keys; the doc lists what they (and their imports) declare.
DOC_MODULES = (
    "host.settings.settings",
    "memgraph_plugin.plugin",
    "sample_plugins.curator",
    "sample_plugins.scout",
)
#: Owners (top-level packages) whose keys the project's doc covers.
DOC_PACKAGES = ("host", "extension_registry", "memgraph_plugin", "sample_plugins")

_INTRO = """\
# Settings

<!-- Generated from the settings schema by `make settings-doc`
(`memgraph-host config --markdown > docs/settings.md`); do not edit by hand. -->

Every setting has one declared type, default and meaning (the schema in
`host/settings/settings_schema.py`: each subsystem declares its keys beside its code, as the fields
of a frozen attrs class). Where a value comes from, lowest to highest precedence:

1. the declared **default** below;
2. the **file** `<data_dir>/memgraph-host.toml` (TOML; `--data-dir` picks the data dir);
3. the **environment**: `MEMGRAPH_HOST_<KEY>` (the key in upper case, e.g.
   `MEMGRAPH_HOST_RECALL_TOP_K=8`), read with the key's type;
4. a **flag**: `memgraph-host --set KEY=VALUE` (repeatable, anywhere on the command line) or,
   from Python, `Host(settings={...})`.

A key nobody declared is an error, in any of these places, that names the closest valid key
(`memgraph-host.toml:3: unknown setting 'recal_top_k'; did you mean 'recall_top_k'?`), and so is
a value of the wrong type. Plugins may declare keys of their own (below); they are checked once
the plugins are loaded. `memgraph-host config` prints the effective value of every key and where it
came from (`--json` for tools, `--markdown` for this page).

`MEMGRAPH_HOST_STRICT`, `MEMGRAPH_HOST_BLOCK` and `MEMGRAPH_HOST_DATA_DIR` are switches of the
command line and the host, not settings (see the README).

Example `memgraph-host.toml`:

```toml
embedding_profile = "hashing"
recall_top_k = 8
recall_rollout = "shadow"
storage_uri = "s3://my-bucket/memgraph"

[storage_options]
aws_region = "eu-west-1"
```

A plugin declares its keys in its own module, as fields of a class decorated with
`settings_room` (the field name is the key), and reads them with `read_room`:

```python
from host.settings.settings_schema import read_room, setting, settings_room


@settings_room
class TidyKeys:
    tidy_every: int = setting(5, "How many turns between two tidy runs.", minimum=1)


assert read_room({"tidy_every": 7}, TidyKeys).tidy_every == 7
```
"""

_SECTIONS = (
    ("host", "Host"),
    ("memgraph_plugin", "Memory graph"),
    ("sample_plugins", "Sample plugins"),
)


def import_doc_modules(modules: Iterable[str] = DOC_MODULES) -> None:
    """Import the modules whose import declares the project's keys (missing ones skipped)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            continue


def _package(setting: Setting) -> str:
    return setting.owner.split(".", 1)[0]


def format_value(value: Any) -> str:
    """A value as it would be written in TOML-ish text (``unset`` for None)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {format_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def settings_markdown(settings: Iterable[Setting] | None = None) -> str:
    """``docs/settings.md``: the intro and one table per owning package."""
    if settings is None:
        import_doc_modules()
        settings = [s for s in SCHEMA if _package(s) in DOC_PACKAGES]
    chosen = list(settings)
    parts = [_INTRO]
    titles = dict(_SECTIONS)
    packages = [p for p, _ in _SECTIONS] + sorted(
        {_package(s) for s in chosen} - {p for p, _ in _SECTIONS}
    )
    for package in packages:
        rows = [s for s in chosen if _package(s) == package]
        if not rows:
            continue
        parts.append(f"\n## {titles.get(package, package)}\n")
        parts.append("| key | type | default | meaning |")
        parts.append("|-----|------|---------|---------|")
        for s in rows:
            doc = s.doc.replace("|", "\\|") + f" (env `{env_name(s.key)}`; from `{s.owner}`)"
            parts.append(f"| `{s.key}` | {s.type_text()} | `{format_value(s.default)}` | {doc} |")
    return "\n".join(parts) + "\n"


def setting_rows(values: Mapping[str, Any], sources: Mapping[str, str]) -> list[dict[str, Any]]:
    """One JSON-ready row per declared key (and per set key nobody declared): the effective
    value, where it came from, the default, type and doc."""
    rows = []
    for setting in SCHEMA:
        value = values.get(setting.key, setting.default)
        rows.append(
            {
                "key": setting.key,
                "value": _jsonable(value),
                "source": sources.get(setting.key, DEFAULT),
                "default": _jsonable(setting.default),
                "type": setting.type_text(),
                "owner": setting.owner,
                "doc": setting.doc,
            }
        )
    return rows


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, str | int | float | bool | list) or value is None:
        return value
    return str(value)
