"""The settings schema: declared keys, misspelled keys as errors, sources, `config`, docs."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from host import Host
from host.cli.cli import main
from host.errors import SettingsError
from host.settings.settings_doc import import_doc_modules, settings_markdown
from host.settings.settings_schema import SCHEMA, setting, settings_room

ROOT = Path(__file__).resolve().parents[3]


def _host(tmp_path: Path, toml: str = "", **kwargs) -> Host:
    data = tmp_path / "d"
    data.mkdir(exist_ok=True)
    if toml:
        (data / "memgraph-host.toml").write_text(textwrap.dedent(toml))
    return Host(data_dir=data, entry_points=False, **kwargs)


def test_misspelled_file_key_names_file_line_and_closest_key(tmp_path: Path) -> None:
    host = _host(tmp_path, 'embedding_profile = "hashing"\nrecal_top_k = 8\n')
    with pytest.raises(SettingsError) as err:
        host.load_plugins()
    text = str(err.value)
    assert "memgraph-host.toml:2" in text
    assert "'recal_top_k'" in text and "did you mean 'recall_top_k'" in text


def test_misspelled_explicit_and_env_keys_are_errors(tmp_path: Path, monkeypatch) -> None:
    host = _host(tmp_path, settings={"storage_optimise_every": 3})
    with pytest.raises(SettingsError, match="did you mean 'storage_optimize_every'"):
        host.load_plugins()
    monkeypatch.setenv("MEMGRAPH_HOST_RECALL_ROLOUT", "shadow")
    host = _host(tmp_path)
    with pytest.raises(SettingsError, match="MEMGRAPH_HOST_RECALL_ROLOUT.*'recall_rollout'"):
        host.load_plugins()


def test_wrong_type_is_an_error_naming_the_key(tmp_path: Path) -> None:
    # raised when the host is made (key already declared) or when its plugins load
    with pytest.raises(SettingsError, match=r"toml:1: setting recall_rollout = 'sometimes'"):
        _host(tmp_path, 'recall_rollout = "sometimes"\n').load_plugins()
    with pytest.raises(SettingsError, match="recall_top_k = True: expected integer >= 0"):
        _host(tmp_path, "recall_top_k = true\n").load_plugins()


def test_env_and_flag_texts_are_read_with_the_key_type(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMGRAPH_HOST_RECALL_TOP_K", "9")
    monkeypatch.setenv("MEMGRAPH_HOST_RECALL_GRAPH_EXPANSION", "off")
    host = _host(
        tmp_path,
        "recall_top_k = 4\nrecall_hops = 2\n",
        setting_texts={"embedding_profile": "hashing", "recall_hops": "3"},
    )
    host.load_plugins()
    assert host.settings["recall_top_k"] == 9
    assert host.settings["recall_graph_expansion"] is False
    assert host.settings["recall_hops"] == 3
    sources = host.settings_sources
    assert sources["recall_top_k"] == "env MEMGRAPH_HOST_RECALL_TOP_K"
    assert sources["recall_hops"] == "flag"
    assert "recall_rollout" not in sources


def test_a_plugin_declares_its_own_keys(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "tidy.py").write_text(
        "from host.settings.settings_schema import setting, settings_room\n"
        "@settings_room\n"
        "class TidyKeys:\n"
        "    tidy_every: int = setting(5, 'How often tidy runs.', minimum=1)\n"
    )
    host = _host(tmp_path, "tidy_every = 7\n", plugin_dirs=[plugins])
    host.load_plugins()
    assert host.settings["tidy_every"] == 7
    host = _host(tmp_path, "tidy_evry = 7\n", plugin_dirs=[plugins])
    with pytest.raises(SettingsError, match="did you mean 'tidy_every'"):
        host.load_plugins()


def test_declaring_checks_the_default_and_conflicting_types() -> None:
    with pytest.raises(SettingsError, match="declaring bad_default: setting bad_default = 'x'"):

        @settings_room
        class BadDefault:
            bad_default: int = setting("x", "doc")

    with pytest.raises(SettingsError, match="already declared"):

        @settings_room
        class Elsewhere:
            recall_top_k: str = setting("6", "doc")

    assert "bad_default" not in SCHEMA
    assert SCHEMA.get("recall_top_k").owner == "memgraph_plugin.settings_keys"


def test_built_in_defaults_match_the_code() -> None:
    from memgraph_plugin import settings_keys as keys
    from memgraph_plugin.storage.settings import StorageSettings

    import_doc_modules()
    stored = StorageSettings.from_settings({}, data_dir="x")
    expect = {
        # the recall code reads these declarations themselves (settings_keys.RECALL)
        "recall_top_k": keys.RECALL.recall_top_k.default,
        "recall_seed_count": keys.RECALL.recall_seed_count.default,
        "recall_hops": keys.RECALL.recall_hops.default,
        "recall_max_expanded": keys.RECALL.recall_max_expanded.default,
        "recall_vector_min_score": keys.RECALL.recall_vector_min_score.default,
        "recall_recent_window": keys.RECALL.recall_recent_window.default,
        "recall_budget_chars": keys.RECALL.recall_budget_chars.default,
        "recall_rollout": keys.RECALL.recall_rollout.default,
        "recall_quality_window": keys.RECALL.recall_quality_window.default,
        "recall_quality_max_error_rate": keys.RECALL.recall_quality_max_error_rate.default,
        "storage_retention_seconds": stored.retention_seconds,
        "storage_optimize_every": stored.optimize_every,
        "storage_checkpoint_every": stored.checkpoint_every,
        "storage_keep_checkpoints": stored.keep_checkpoints,
        "storage_history_seconds": stored.history_seconds,
    }
    for key, value in expect.items():
        assert SCHEMA.default(key) == value, key


def test_llm_keys_match_what_the_llm_code_reads() -> None:
    from memgraph_plugin.llm.settings import SETTINGS

    import_doc_modules()
    for key, (default, _doc) in SETTINGS.items():
        assert key in SCHEMA, key
        assert SCHEMA.default(key) == default, key


# keys read in the code: settings.get("k" / number_setting(settings, "k" / X_SETTING = "k" /
# a room's field the code reads through (int_setting(settings, RECALL.k), RECALL.k.name)
_READS = re.compile(
    r"""settings\.get\(\s*["']([a-z_]+)["']"""
    r"""|_setting\(\s*[a-z_.]*settings,\s*["']([a-z_]+)["']"""
    r"""|[A-Z_]*SETTING\s*(?:,\s*[A-Z_]+\s*)?=\s*["']([a-z_]+)["']"""
    r"""|\b(?:GRAPH|STORAGE|RECALL|LLM|WRITE_LIMITS|HTTP|_KEYS)\.([a-z]+_[a-z_]+)\b"""
)


def test_every_key_the_code_reads_is_declared() -> None:
    import_doc_modules()
    read: set[str] = set()
    for package in ("host", "memgraph_plugin", "sample_plugins"):
        for path in (ROOT / package).rglob("*.py"):
            for match in _READS.finditer(path.read_text(encoding="utf-8")):
                read.add(next(g for g in match.groups() if g))
    assert read >= {"recall_top_k", "storage_retention_seconds", "recall_rollout"}
    missing = sorted(k for k in read if k not in SCHEMA)
    assert not missing, f"read but not declared in the settings schema: {missing}"


def test_docs_settings_md_is_current() -> None:
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert doc == settings_markdown(), "docs/settings.md is stale: run `make settings-doc`"


def test_config_command_shows_values_and_sources(tmp_path: Path, capsys, monkeypatch) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "memgraph-host.toml").write_text('recall_rollout = "shadow"\n')
    monkeypatch.setenv("MEMGRAPH_HOST_RECALL_TOP_K", "9")
    code = main(["config", "--json", "--data-dir", str(data), "--set", "recall_hops=2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {row["key"]: row for row in json.loads(out)}
    assert rows["recall_rollout"]["value"] == "shadow"
    assert rows["recall_rollout"]["source"] == f"file {data / 'memgraph-host.toml'}"
    assert (rows["recall_top_k"]["value"], rows["recall_top_k"]["source"]) == (
        9,
        "env MEMGRAPH_HOST_RECALL_TOP_K",
    )
    assert (rows["recall_hops"]["value"], rows["recall_hops"]["source"]) == (2, "flag")
    assert (rows["recall_seed_count"]["value"], rows["recall_seed_count"]["source"]) == (
        3,
        "default",
    )
    code = main(["--data-dir", str(data), "config"])
    out, _ = capsys.readouterr()
    assert code == 0 and "recall_rollout" in out and "shadow" in out and "default" in out


def test_config_markdown_is_the_doc(capsys, tmp_path: Path) -> None:
    assert main(["--data-dir", str(tmp_path / "d"), "config", "--markdown"]) == 0
    out, _ = capsys.readouterr()
    assert out == (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")


def test_cli_misspelled_key_is_one_line_error(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "memgraph-host.toml").write_text("recall_topk = 3\n")
    code = main(["--data-dir", str(data), "plugins"])
    _out, err = capsys.readouterr()
    assert code != 0
    assert err.strip().count("\n") == 0 and "did you mean 'recall_top_k'" in err
    assert "Traceback" not in err
