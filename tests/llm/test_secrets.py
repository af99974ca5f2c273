"""Configured secrets are never printed: llm-check, warnings, traces, config."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from host.cli.cli import main
from host.settings.redaction import REDACTED, redact, redactor_for, secret_values
from memgraph_plugin.llm.trace import LlmTraceLog
from memgraph_plugin.turn import pipeline_for

from .conftest import started_host, status

KEY = "sk-test-9f8e7d6c5b4a3210"
ENV = "MEMGRAPH_TEST_SECRET_KEY"


def echoing_key(body: object) -> object:
    return status(401, f"Incorrect API key provided: {KEY}\r. Check it.")(body)


def write_settings(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memgraph-host.toml").write_text(
        f'llm_base_url = "{base_url}"\nllm_model = "m"\nllm_api_key_env = "{ENV}"\n'
        "llm_retries = 0\nllm_backoff_s = 0.001\n"
    )
    return folder


def test_llm_check_prints_no_key_with_a_trailing_cr_nor_an_echoing_error_body(
    tmp_path: Path, chat_server, capsys, monkeypatch
) -> None:
    monkeypatch.setenv(ENV, KEY + "\r")
    chat_server.reply(echoing_key)
    data = write_settings(tmp_path / "d", chat_server.base_url)
    assert main(["--data-dir", str(data), "llm-check"]) == 1
    out = capsys.readouterr()
    assert KEY not in out.out + out.err
    assert REDACTED in out.err and "HTTP 401" in out.err
    # the key is sent without its stray "\r" (a header cannot hold one)
    assert chat_server.headers[0]["Authorization"] == f"Bearer {KEY}"


async def test_warnings_and_traces_hold_no_key(
    tmp_path: Path, chat_server, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(ENV, KEY + "\r")
    chat_server.reply(echoing_key)
    host = await started_host(tmp_path, **chat_server.settings(llm_api_key_env=ENV, llm_retries=0))
    caplog.set_level(logging.WARNING)
    host.chat("c1").add_message("user", "Mel adopted a dog called Rex.")
    await pipeline_for(host).add_assistant_message("c1", "How nice, Rex!")
    await host.stop()
    trace = (host.data_dir / "traces" / "llm.jsonl").read_text("utf-8")
    assert trace and KEY not in trace and REDACTED in trace
    assert [c.outcome for c in LlmTraceLog(host.data_dir).read()][0] == "fallback"
    assert caplog.records and KEY not in caplog.text
    recall_traces = list((host.data_dir / "traces").rglob("*.jsonl"))
    assert all(KEY not in p.read_text("utf-8") for p in recall_traces)


def test_config_prints_no_storage_option_secret(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "memgraph-host.toml").write_text(
        "[storage_options]\n"
        'aws_access_key_id = "AKIAEXAMPLEID0001"\n'
        'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET"\n'
        'region = "eu-west-1"\n'
    )
    assert main(["--data-dir", str(data), "config"]) == 0
    table = capsys.readouterr().out
    assert main(["--data-dir", str(data), "config", "--json"]) == 0
    as_json = capsys.readouterr().out
    for out in (table, as_json):
        assert "wJalrXUtnFEMI" not in out and "AKIAEXAMPLEID0001" not in out
        assert "eu-west-1" in out and REDACTED in out
    row = next(r for r in json.loads(as_json) if r["key"] == "storage_options")
    assert row["value"]["aws_secret_access_key"] == REDACTED


def test_redact_serves_any_caller_given_the_settings() -> None:
    settings = {"llm_api_key_env": ENV, "storage_options": {"sas_token": "sv=2024&sig=abcd"}}
    environ = {ENV: f" {KEY}\r\n"}
    assert secret_values(settings, environ) >= {KEY, "sv=2024&sig=abcd"}
    text = f'auth "Bearer {KEY}\\r" and {json.dumps("sv=2024&sig=abcd")} stay out'
    assert redact(text, settings, environ) == 'auth "Bearer ***\\r" and "***" stay out'
    assert redactor_for({"llm_model": "sk-not-secret"}, environ)("sk-not-secret") == (
        "sk-not-secret"
    )
