"""``memgraph-host llm-check`` and ``llm-trace`` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

from host.cli.cli import main
from memgraph_plugin.llm.trace import LlmCall, LlmTraceLog

from .conftest import MODEL, answer, status


def settings_file(folder: Path, base_url: str, **extra: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f'llm_base_url = "{base_url}"', f'llm_model = "{MODEL}"', "llm_backoff_s = 0.001"]
    lines += [f"{k} = {v!r}" for k, v in extra.items()]
    (folder / "memgraph-host.toml").write_text("\n".join(lines) + "\n")
    return folder


def test_llm_check_reports_what_worked(tmp_path, chat_server, capsys):
    chat_server.reply(answer({"ok": True}))
    data = settings_file(tmp_path / "d", chat_server.base_url)
    assert main(["--data-dir", str(data), "llm-check"]) == 0
    out = capsys.readouterr().out
    assert f"server   {chat_server.base_url}" in out and f"model    {MODEL}" in out
    assert "format   json_schema" in out and "extract, route, summarise" in out
    assert chat_server.requests[0]["response_format"]["json_schema"]["name"] == "memgraph_probe"


def test_llm_check_says_why_it_failed(tmp_path, chat_server, capsys):
    chat_server.reply(status(404, "model 'test-model' not found, try pulling it first"))
    data = settings_file(tmp_path / "d", chat_server.base_url, llm_retries=0)
    assert main(["--data-dir", str(data), "llm-check"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and "try pulling it first" in err


def test_llm_check_without_a_server_configured(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path / "d"), "llm-check"]) == 1
    assert "llm_base_url is not set" in capsys.readouterr().out


def test_llm_trace_lists_calls_and_fallback_reasons(tmp_path, capsys):
    data = tmp_path / "d"
    log = LlmTraceLog(data)
    log.append(LlmCall("extract", MODEL, "llm", chat_id="c1", seq=1, attempts=1))
    log.append(
        LlmCall(
            "extract", MODEL, "fallback", chat_id="c2", seq=4, reason="timeout", error="too slow"
        )
    )
    assert main(["--data-dir", str(data), "llm-trace"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["time", "hook", "chat", "seq", "outcome"]
    assert "fallback" in lines[2] and "timeout" in lines[2] and "too slow" in lines[2]
    assert main(["--data-dir", str(data), "llm-trace", "--chat", "c2", "--json"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert '"reason": "timeout"' in line
    assert main(["--data-dir", str(tmp_path / "empty"), "llm-trace"]) == 1
