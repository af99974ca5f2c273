"""The host's own listing commands: ``plugins``, ``hooks`` and ``config`` (table or ``--json``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import sys
from typing import Any, TextIO

from host.cli.console import add_json_option, print_json, print_table
from host.host import Host
from host.plugins.hook_guard import describe_stuck, stuck_state
from host.plugins.notify import implementations
from host.plugins.pluggy_internals import call_order, hook_callers
from host.plugins.records import PluginRecord
from host.settings.redaction import redact_known, redactor_for
from host.settings.settings_doc import format_value, setting_rows, settings_markdown


def plugin_chatter_to_stderr() -> contextlib.AbstractContextManager[object]:
    """What plugins print while they load, start or stop goes to stderr, so a command's own
    output (``plugins --json``, ``export``) stays clean for the tools that read it."""
    return contextlib.redirect_stdout(sys.stderr)


# ---------------------------------------------------------------------- plugins


def add_plugins_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser, "plugins")
    parser.add_argument(
        "--start",
        action="store_true",
        help="also start the host (run every host_startup) to show the APIs plugins publish "
        "at startup and startup errors; off by default: listing has no side effects",
    )
    parser.add_argument(
        "--no-start",
        action="store_true",
        help="do not start the host (the default; kept for scripts)",
    )


#: the PUBLISHES column of a plugin that publishes from ``host_startup`` when the host was not
#: started: what it publishes is not known before its startup runs
NOT_STARTED = "? (at startup: --start shows it)"


def plugin_rows(host: Host, *, started: bool = True) -> list[dict[str, Any]]:
    """One JSON-ready dict per plugin record. ``published_known`` is false for a plugin that
    publishes from ``host_startup`` when the host was not started."""
    return [_plugin_row(host, record, started) for record in host.plugin_records()]


def _plugin_row(host: Host, record: PluginRecord, started: bool = True) -> dict[str, Any]:
    stuck = stuck_state(host.pm, record.name)
    hooks = list(host.hooks_of(record.name))
    published = list(host.registry.owned_by(record.name))
    stuck_json = None
    if stuck is not None:
        stuck_json = {"hook": stuck.cause.hook, "reason": stuck.cause.reason}
        stuck_json.update(since=stuck.since, retry_at=stuck.retry_at)
    return {
        "name": record.name,
        "source": record.source,
        "origin": record.origin,
        "version": record.version,
        "status": record.status,
        "hooks": hooks,
        "published": published,
        "published_known": started or bool(published) or "host_startup" not in hooks,
        "error": redact_known(record.error) if record.error else record.error,
        "traceback": redact_known(record.traceback) if record.traceback else record.traceback,
        "stuck": stuck_json,  # timed out: skipped until retry_at
        "stuck_text": None if stuck is None else describe_stuck(stuck),
    }


def cmd_plugins(host: Host, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``memgraph-host plugins [--json] [--start]``."""
    started = bool(getattr(args, "start", False)) and not getattr(args, "no_start", False)
    if started:
        with plugin_chatter_to_stderr():
            asyncio.run(host.start())
    try:
        rows = plugin_rows(host, started=started)
    finally:
        if started:
            with plugin_chatter_to_stderr():
                asyncio.run(host.stop())
    if args.json:
        print_json(rows, out)
        return 0
    table = []
    for row in rows:
        status = row["status"]
        if row["stuck_text"]:
            status = f"{status}: {row['stuck_text']}"
        elif row["error"]:
            status = f"{status}: {_clip(row['error'], 70)}"
        table.append(
            [
                row["name"],
                row["source"],
                row["version"],
                status,
                ", ".join(row["hooks"]),
                ", ".join(row["published"]) if row["published_known"] else NOT_STARTED,
                row["origin"],
            ]
        )
    if not table:
        (out or sys.stdout).write("no plugins\n")
        return 0
    print_table(["NAME", "SOURCE", "VERSION", "STATUS", "HOOKS", "PUBLISHES", "ORIGIN"], table, out)
    return 0


# ---------------------------------------------------------------------- hooks


def hook_rows(host: Host) -> list[dict[str, Any]]:
    """One JSON-ready dict per hook: flags, where it is declared, implementations in call order."""
    rows = []
    callers = hook_callers(host.pm)
    for name in sorted(n for n in callers if not n.startswith("_")):
        caller = callers[name]
        spec = caller.spec
        opts = spec.opts if spec is not None else {}
        wrappers = [i for i in call_order(caller) if i.wrapper or i.hookwrapper]
        rows.append(
            {
                "name": name,
                "spec": _namespace_name(spec.namespace) if spec is not None else None,
                "historic": bool(opts.get("historic")),
                "firstresult": bool(opts.get("firstresult")),
                "implementations": [
                    _impl_row(impl) for impl in [*wrappers, *implementations(host.pm, name)]
                ],
            }
        )
    return rows


def _impl_row(impl: Any) -> dict[str, Any]:
    flags = [
        flag
        for flag in ("tryfirst", "trylast", "wrapper", "hookwrapper", "optionalhook")
        if getattr(impl, flag, False)
    ]
    return {"plugin": impl.plugin_name, "flags": flags}


def _namespace_name(namespace: object) -> str:
    """``host.hookspecs`` for a module, ``package.module.Class`` for a class of specs."""
    if inspect.ismodule(namespace):
        return namespace.__name__
    cls = namespace if isinstance(namespace, type) else type(namespace)
    return f"{cls.__module__}.{cls.__qualname__}"


def cmd_hooks(host: Host, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``memgraph-host hooks [--json]``: each hook, then its implementations in call order."""
    out = out or sys.stdout
    rows = hook_rows(host)
    if args.json:
        print_json(rows, out)
        return 0
    for row in rows:
        flags = [flag for flag in ("historic", "firstresult") if row[flag]]
        head = row["name"] + (f" [{', '.join(flags)}]" if flags else "")
        spec = row["spec"] or "no spec"
        out.write(f"{head}  ({spec})\n")
        if not row["implementations"]:
            out.write("    (no implementations)\n")
        for number, impl in enumerate(row["implementations"], start=1):
            extra = f" [{', '.join(impl['flags'])}]" if impl["flags"] else ""
            out.write(f"    {number}. {impl['plugin']}{extra}\n")
    return 0


# ---------------------------------------------------------------------- config


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser, "settings")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the settings reference (docs/settings.md) generated from the schema",
    )


def cmd_config(host: Host, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``memgraph-host config [--json | --markdown]``: every declared key, its effective value
    and where it came from (default, file, env, flag)."""
    out = out or sys.stdout
    if args.markdown:
        out.write(settings_markdown())
        return 0
    sources = dict(host.settings_sources)
    if host.plugin_dirs and any(
        str(d) not in host.settings["plugin_dirs"] for d in host.plugin_dirs
    ):
        sources["plugin_dirs"] = "flag"
    values = {**host.settings, "plugin_dirs": tuple(str(d) for d in host.plugin_dirs)}
    values = redactor_for(host.settings).value(values)  # storage_options secrets: ***
    rows = setting_rows(values, sources)
    if args.json:
        print_json(rows, out)
        return 0
    print_table(
        ["KEY", "VALUE", "SOURCE", "TYPE"],
        [
            [r["key"], format_value(values.get(r["key"], r["default"])), r["source"], r["type"]]
            for r in rows
        ],
        out,
    )
    return 0


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
