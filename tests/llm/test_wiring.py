"""Which LLM plugins a host gets from its settings, the settings' validation, the prompt files."""

from __future__ import annotations

import logging
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from memgraph_plugin.llm import LlmSettingsError, llm_settings
from memgraph_plugin.llm.prompts import PROMPT_NAMES, render

from .conftest import started_host

ROOT = Path(__file__).resolve().parents[2]
BASE = {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m"}


def llm_plugins(host) -> set[str]:
    return {r.name for r in host.plugin_records() if r.name.startswith("memgraph-llm-")}


async def test_without_a_base_url_no_llm_plugin_runs(tmp_path):
    host = await started_host(tmp_path, llm_model="ignored")
    try:
        assert llm_plugins(host) == set()
    finally:
        await host.stop()


async def test_the_settings_file_turns_the_hooks_on(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "memgraph-host.toml").write_text(
        'llm_base_url = "http://127.0.0.1:11434/v1"\nllm_model = "qwen2.5:7b"\n'
        'llm_hooks = ["extract", "summarise"]\n'
    )
    host = await started_host(tmp_path)
    try:
        assert llm_plugins(host) == {"memgraph-llm-extract", "memgraph-llm-summarise"}
    finally:
        await host.stop()
    assert llm_plugins(host) == set()


async def test_a_setting_that_cannot_work_leaves_the_offline_defaults(tmp_path, caplog):
    with caplog.at_level(logging.ERROR):
        host = await started_host(tmp_path, llm_base_url="http://127.0.0.1:9/v1")
    try:
        assert llm_plugins(host) == set()
        assert "llm_model is required" in caplog.text
    finally:
        await host.stop()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"llm_model": None}, "llm_model is required"),
        ({"llm_base_url": "localhost:11434"}, "must start with http"),
        ({"llm_timeout_s": -1}, "llm_timeout_s=-1 must be a number"),
        ({"llm_retries": 1.5}, "llm_retries=1.5 must be an integer"),
        ({"llm_hooks": ["extract", "dream"]}, "unknown hook(s) ['dream']"),
        ({"llm_response_format": "xml"}, "llm_response_format='xml' must be one of"),
    ],
)
def test_bad_settings_name_the_setting(extra, message):
    with pytest.raises(LlmSettingsError) as caught:
        llm_settings({**BASE, **extra})
    assert message in str(caught.value)


def test_settings_defaults_and_spellings():
    assert llm_settings({"llm_model": "m"}) is None
    s = llm_settings({**BASE, "llm_base_url": "http://h/v1/", "llm_hooks": "route, summarise"})
    assert s.base_url == "http://h/v1" and s.hooks == {"route", "summarise"}
    assert s.uses("route") and not s.uses("extract") and s.api_key() == "not-needed"
    assert (s.timeout_s, s.retries, s.rerank_count) == (60.0, 2, 20)


def test_every_prompt_is_a_file_shipped_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["memgraph_plugin.llm"]
    folder = ROOT / "memgraph_plugin" / "llm"
    files = sorted(p.relative_to(folder).as_posix() for p in (folder / "prompts").iterdir())
    assert files == sorted(f"prompts/{n}.md" for n in PROMPT_NAMES)
    assert all(any(fnmatch(f, p) for p in patterns) for f in files)
    assert "$error" not in render("retry", error="x") and "x" in render("retry", error="x")
    with pytest.raises(KeyError):
        render("route_user", query="q")  # a placeholder left unfilled is an error
