"""``memgraph-host llm-check`` (ask the configured server one small structured question) and
``memgraph-host llm-trace`` (the LLM calls: used, retried, or fallen back and why)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from host.cli.cli import CliError
from host.cli.console import add_json_option, print_json, print_table
from host.plugin_commands import Command
from host.settings.redaction import redactor_for

from .prompts import clip
from .provider import JsonSchema, LlmError
from .settings import LlmSettingsError, llm_settings
from .trace import LlmTraceLog

PROBE = JsonSchema(
    "memgraph_probe",
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
)


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    return None


async def run_check(host: Any, args: argparse.Namespace) -> int:
    """One structured request to the configured server; what worked, or what failed and why."""
    from .openai_compat import OpenAICompatibleProvider

    try:
        settings = llm_settings(host.settings)
    except LlmSettingsError as exc:
        print(f"memgraph-host llm-check: {exc}", file=sys.stderr)
        return 1
    if settings is None:
        print("no LLM configured: llm_base_url is not set (the offline defaults answer)")
        return 1
    provider = OpenAICompatibleProvider(settings)
    clean = redactor_for(host.settings)
    messages = [{"role": "user", "content": 'Answer with the JSON object {"ok": true}.'}]
    started = time.perf_counter()
    try:
        answer = await provider.complete(messages, schema=PROBE)
        json.loads(answer.text)
    except (LlmError, LlmSettingsError) as exc:
        print(clean(f"memgraph-host llm-check: {exc}"), file=sys.stderr)
        return 1
    except ValueError:
        print(clean(f"memgraph-host llm-check: the answer is not JSON: {clip(answer.text, 200)!r}"))
        return 1
    seconds = time.perf_counter() - started
    print(f"server   {settings.base_url}")
    print(f"model    {answer.model}")
    print(f"format   {answer.response_format}")
    for note in answer.notes:
        print(clean(f"note     {note}"))
    took = f"({seconds:.2f} s, {answer.attempts} attempt(s))"
    print(f"answer   {clean(clip(answer.text, 200))}  {took}")
    print(f"hooks    {', '.join(sorted(settings.hooks)) or '(none)'}")
    return 0


def _trace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chat", default=None, help="only this chat's calls")
    parser.add_argument("--last", type=int, default=20, help="how many calls, newest last (20)")
    add_json_option(parser, "calls (one JSON object per line)")


COLUMNS = ("time", "hook", "chat", "seq", "outcome", "reason", "tries", "ms", "error")


def run_trace(host: Any, args: argparse.Namespace) -> int:
    """The newest LLM calls as a table (or JSON lines)."""
    if args.last < 1:
        raise CliError("--last must be at least 1")
    calls = LlmTraceLog(host.data_dir).read(chat_id=args.chat, last=args.last)
    if not calls:
        print(f"no LLM calls recorded in {host.data_dir}", file=sys.stderr)
        return 1
    if args.json:
        print_json([c.to_json() for c in calls], lines=True)
        return 0
    rows = [
        (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c.time)),
            c.hook,
            c.chat_id,
            c.seq,
            c.outcome,
            c.reason,
            c.attempts,
            f"{c.duration_ms:.0f}",
            clip(c.error or c.first_error or "", 80),
        )
        for c in calls
    ]
    print_table(COLUMNS, rows)
    return 0


def llm_commands() -> list[Command]:
    """The commands the built-in plugin's ``host_cli_commands`` adds."""
    return [
        Command(
            "llm-check",
            "ask the configured LLM server one small structured question",
            _no_arguments,
            run_check,
            start_host=False,
        ),
        Command(
            "llm-trace",
            "show the LLM calls (used, retried, or fallen back and why)",
            _trace_arguments,
            run_trace,
            start_host=False,
        ),
    ]
