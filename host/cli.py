"""``memgraph-host``: inspect plugins and hooks, and run the commands plugins contribute.

The CLI reads the global options (``--data-dir``, ``--plugins-dir``, ``--strict``), builds a
`Host` and loads its plugins *before* parsing the rest, so sub-commands contributed through
``host_cli_commands`` appear in ``--help`` and can be dispatched. Global options go before the
command: ``memgraph-host --data-dir ./d plugins --json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from host.commands import Command
from host.core import Host
from host.discovery import own_version
from host.errors import PluginError, SettingsError
from host.notify import implementations, summary
from host.records import PluginRecord

PROG = "memgraph-host"
DATA_DIR_ENV = "MEMGRAPH_HOST_DATA_DIR"
_VALUE_OPTIONS = ("--data-dir", "--plugins-dir")


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        default=os.environ.get(DATA_DIR_ENV, ".memgraph"),
        help=f"host data folder (default: ${DATA_DIR_ENV} or .memgraph)",
    )
    parser.add_argument(
        "--plugins-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="load every plugin in DIR (repeatable)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="a plugin that fails to load or raises in a hook is fatal (plugin development)",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {own_version()}")


def _global_prefix(argv: Sequence[str]) -> list[str]:
    """The arguments before the command name: only those are global options."""
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in _VALUE_OPTIONS:
            index += 2
        elif token.startswith("-"):
            index += 1
        else:
            break
    return list(argv[:index])


def build_parser(commands: Sequence[Command]) -> argparse.ArgumentParser:
    """The full parser: global options, the built-in commands, and ``commands``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A pluggy plugin host and its memory-graph plugin. Global options go "
        "before the command.",
    )
    _add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    plugins = _add_listing(
        sub,
        "plugins",
        cmd_plugins,
        help="list every plugin: source, version, hooks, published APIs, status or last error",
        description="List every plugin the host found, loaded, failed to load or blocked. "
        "The host is started (host_startup) so published APIs and startup errors show.",
    )
    plugins.add_argument(
        "--no-start", action="store_true", help="do not start the host (no host_startup calls)"
    )
    _add_listing(
        sub,
        "hooks",
        cmd_hooks,
        help="list hook specs with their flags and the implementations in call order",
        description="List every hook: its flags (historic, firstresult), where the spec is "
        "declared, and the implementing plugins in the order they are called.",
    )

    for command in commands:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        try:
            command.add_arguments(child)
        except Exception as exc:  # noqa: BLE001 - the other commands still work
            child.set_defaults(handler=_broken_command(command, exc))
            continue
        child.set_defaults(handler=_plugin_command_handler(command))
    return parser


def _add_listing(
    sub: Any, name: str, handler: Callable[..., int], *, help: str, description: str
) -> argparse.ArgumentParser:
    """A built-in listing command: a table by default, ``--json`` for tools."""
    parser = sub.add_parser(name, help=help, description=description)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(handler=handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1


def _main(argv: list[str]) -> int:
    pre = argparse.ArgumentParser(prog=PROG, add_help=False)
    _add_global_options(pre)
    options, _rest = pre.parse_known_args(_global_prefix(argv))
    _configure_logging()
    try:
        with _plugin_chatter_to_stderr():
            host = Host(
                data_dir=options.data_dir,
                plugin_dirs=options.plugins_dir,
                strict=True if options.strict else None,
            )
            host.load_plugins()
            commands = _plugin_commands(host)
    except (PluginError, SettingsError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(host, args)
    except PluginError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


def _plugin_chatter_to_stderr() -> contextlib.AbstractContextManager[object]:
    """What plugins print while they load, start or stop goes to stderr, so a command's own
    output (``plugins --json``, ``export``) stays clean for the tools that read it."""
    return contextlib.redirect_stdout(sys.stderr)


def _configure_logging() -> None:
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s")


# ---------------------------------------------------------------------- plugin commands


def _builtin_extra_commands() -> list[Command]:
    """Commands that ship with the host but live in their own modules (``dev``)."""
    try:
        from host import dev
    except Exception as exc:  # noqa: BLE001 - the rest of the CLI still works
        logging.getLogger("host.cli").warning("the dev command is unavailable: %s", exc)
        return []
    return [
        Command(
            "dev",
            "watch a plugins folder and hot-reload its plugins into a running host",
            dev.add_dev_arguments,
            dev.dev_command,  # uses the CLI's host; returns a coroutine or (--restart) an int
            start_host=False,
        )
    ]


def _plugin_commands(host: Host) -> list[Command]:
    """Commands from ``host_cli_commands``; a bad contribution is recorded on its plugin."""
    taken = {"plugins", "hooks"}
    commands: list[Command] = []
    for command in _builtin_extra_commands():
        taken.add(command.name)
        commands.append(command)
    for result in host.call_hook("host_cli_commands", host=host):
        values = result.value if isinstance(result.value, list | tuple) else [result.value]
        for value in values:
            problem = None
            if not isinstance(value, Command):
                problem = f"host_cli_commands returned {value!r}, not a host.Command"
            elif value.name in taken:
                problem = f"command {value.name!r} is already taken; not added"
            if problem is not None:
                host.note_error(result.plugin, problem)
                if host.strict:
                    raise PluginError(f"plugin {result.plugin!r}: {problem}", plugin=result.plugin)
                continue
            taken.add(value.name)
            commands.append(value)
    return commands


def _broken_command(command: Command, exc: Exception) -> Callable[[Host, Any], int]:
    def handle(host: Host, args: argparse.Namespace) -> int:
        print(f"{PROG} {command.name}: error: its options failed: {summary(exc)}", file=sys.stderr)
        return 1

    return handle


def _plugin_command_handler(command: Command) -> Callable[[Host, argparse.Namespace], int]:
    def handle(host: Host, args: argparse.Namespace) -> int:
        try:
            result = asyncio.run(_run_command(host, command, args))
        except (PluginError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the command's name
            print(f"{PROG} {command.name}: error: {summary(exc)}", file=sys.stderr)
            if host.strict:
                raise
            return 1
        if result is None or result is True:
            return 0
        return int(result)

    return handle


async def _run_command(host: Host, command: Command, args: argparse.Namespace) -> Any:
    if command.start_host:
        with _plugin_chatter_to_stderr():
            await host.start()
    try:
        result = command.run(host, args)
        if inspect.isawaitable(result):
            result = await result
        return result
    finally:
        if command.start_host:
            with _plugin_chatter_to_stderr():
                await host.stop()


# ---------------------------------------------------------------------- plugins


def plugin_rows(host: Host) -> list[dict[str, Any]]:
    """One JSON-ready dict per plugin record."""
    return [_plugin_row(host, record) for record in host.plugin_records()]


def _plugin_row(host: Host, record: PluginRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "source": record.source,
        "origin": record.origin,
        "version": record.version,
        "status": record.status,
        "hooks": list(host.hooks_of(record.name)),
        "published": list(host.registry.owned_by(record.name)),
        "error": record.error,
        "traceback": record.traceback,
    }


def cmd_plugins(host: Host, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``memgraph-host plugins [--json] [--no-start]``."""
    out = out or sys.stdout
    started = False
    if not args.no_start:
        with _plugin_chatter_to_stderr():
            asyncio.run(host.start())
        started = True
    try:
        rows = plugin_rows(host)
    finally:
        if started:
            with _plugin_chatter_to_stderr():
                asyncio.run(host.stop())
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
        return 0
    if not rows:
        out.write("no plugins\n")
        return 0
    table = [["NAME", "SOURCE", "VERSION", "STATUS", "HOOKS", "PUBLISHES", "ORIGIN"]]
    for row in rows:
        status = row["status"]
        if row["error"]:
            status = f"{status}: {_clip(row['error'], 70)}"
        table.append(
            [
                row["name"],
                row["source"],
                row["version"] or "-",
                status,
                ", ".join(row["hooks"]) or "-",
                ", ".join(row["published"]) or "-",
                row["origin"] or "-",
            ]
        )
    out.write(_format_table(table))
    return 0


# ---------------------------------------------------------------------- hooks


def hook_rows(host: Host) -> list[dict[str, Any]]:
    """One JSON-ready dict per hook: flags, where it is declared, implementations in call order."""
    rows = []
    for name in sorted(n for n in vars(host.pm.hook) if not n.startswith("_")):
        caller = getattr(host.pm.hook, name)
        spec = caller.spec
        opts = spec.opts if spec is not None else {}
        wrappers = [i for i in reversed(caller.get_hookimpls()) if i.wrapper or i.hookwrapper]
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
    """``memgraph-host hooks [--json]``."""
    out = out or sys.stdout
    rows = hook_rows(host)
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
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


# ---------------------------------------------------------------------- formatting


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _format_table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
