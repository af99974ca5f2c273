"""``memgraph-host``: inspect plugins, hooks and settings, and run the commands plugins contribute.

The CLI reads the global options (``--data-dir``, ``--plugins-dir``, ``--set``, ``--strict``,
``--debug``) from anywhere on the command line, builds a `Host` and loads its plugins *before*
parsing the rest, so sub-commands contributed through ``host_cli_commands`` appear in ``--help``
and can be dispatched. An error is one line on stderr and a non-zero exit status; ``--debug``
adds the traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from host.cli.listings import (
    add_config_arguments,
    add_plugins_arguments,
    cmd_config,
    cmd_hooks,
    cmd_plugins,
    hook_rows,
    plugin_chatter_to_stderr,
    plugin_rows,
)
from host.cli.namespace_option import in_namespace
from host.echoed import capped
from host.errors import CommandError, PluginError, SettingsError
from host.host import Host
from host.plugin_commands import Command
from host.plugins.notify import summary
from host.settings.redaction import redact_known
from host.version import own_version

__all__ = [
    "build_parser",
    "cmd_config",
    "cmd_hooks",
    "cmd_plugins",
    "hook_rows",
    "main",
    "plugin_rows",
]

PROG = "memgraph-host"
DATA_DIR_ENV = "MEMGRAPH_HOST_DATA_DIR"
DEFAULT_DATA_DIR = ".memgraph"


class CliError(Exception):
    """A usage problem a command reports: printed as one line, exit status 2."""


def _global_option_specs() -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "--data-dir",
            {
                "default": os.environ.get(DATA_DIR_ENV, DEFAULT_DATA_DIR),
                "help": f"host data folder (default: ${DATA_DIR_ENV} or {DEFAULT_DATA_DIR})",
            },
        ),
        (
            "--plugins-dir",
            {
                "action": "append",
                "default": [],
                "metavar": "DIR",
                "help": "load every plugin in DIR (repeatable)",
            },
        ),
        (
            "--set",
            {
                "action": "append",
                "default": [],
                "dest": "set_options",
                "metavar": "KEY=VALUE",
                "help": "set a setting for this run (repeatable; see `memgraph-host config`)",
            },
        ),
        (
            "--strict",
            {
                "action": "store_true",
                "default": False,
                "help": "a plugin that fails to load or raises in a hook is fatal "
                "(plugin development)",
            },
        ),
        (
            "--debug",
            {
                "action": "store_true",
                "default": False,
                "help": "show the full traceback of an error",
            },
        ),
    ]


def _add_global_options(
    parser: argparse.ArgumentParser, *, suppress: bool = False, skip: frozenset[str] = frozenset()
) -> None:
    """The options every command accepts, before or after the command name.

    ``suppress``: the copy on each sub-command leaves a value it was not given alone, so
    ``--data-dir d history x`` and ``history x --data-dir d`` mean the same. ``skip``: option
    strings a command defines for itself (``dev --plugins-dir``), which it keeps after its name.
    """
    for flag, spec in _global_option_specs():
        if flag in skip:
            continue
        if suppress:
            spec = {**spec, "default": argparse.SUPPRESS}
        parser.add_argument(flag, **spec)


def _global_parser(
    *, suppress: bool = False, skip: frozenset[str] = frozenset()
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, add_help=False, allow_abbrev=False)
    _add_global_options(parser, suppress=suppress, skip=skip)
    return parser


_VALUE_OPTIONS = frozenset({"--data-dir", "--plugins-dir", "--set"})


def global_options(argv: Sequence[str]) -> argparse.Namespace:
    """The global options wherever they are; after the name of a built-in command that
    defines one of them itself (``dev --plugins-dir``), that one is the command's."""
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in _VALUE_OPTIONS else 1
    head, tail = list(argv[:index]), list(argv[index + 1 :])
    options, _rest = _global_parser().parse_known_args(head)
    if index >= len(argv):
        return options
    own = _own_option_strings(argv[index])
    later, _rest = _global_parser(suppress=True, skip=own).parse_known_args(tail)
    for key, value in vars(later).items():
        if isinstance(value, list):
            setattr(options, key, [*getattr(options, key), *value])
        else:
            setattr(options, key, value)
    return options


def _own_option_strings(name: str) -> frozenset[str]:
    for command in builtin_commands():
        if command.name == name:
            probe = argparse.ArgumentParser(add_help=False)
            command.add_arguments(probe)
            return frozenset(s for a in probe._actions for s in a.option_strings)
    return frozenset()


def _global_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_global_options(parent, suppress=True)
    return parent


def builtin_commands() -> list[Command]:
    """The host's own commands; plugins add theirs through ``host_cli_commands``."""
    commands = [
        Command(
            "plugins",
            "list every plugin: source, version, hooks, published APIs, status or last error",
            add_plugins_arguments,
            cmd_plugins,
            start_host=False,
        ),
        Command(
            "hooks",
            "list hook specs with their flags and the implementations in call order",
            lambda p: p.add_argument("--json", action="store_true", help="print JSON"),
            cmd_hooks,
            start_host=False,
        ),
        Command(
            "config",
            "show every setting's effective value and where it came from (default, file, "
            "env, flag)",
            add_config_arguments,
            cmd_config,
            start_host=False,
        ),
    ]
    try:
        from host.reload import dev
    except Exception as exc:  # noqa: BLE001 - the rest of the CLI still works
        logging.getLogger("host.cli.cli").warning("the dev command is unavailable: %s", exc)
        return commands
    commands.append(
        Command(
            "dev",
            "watch a plugins folder and hot-reload its plugins into a running host",
            dev.add_dev_arguments,
            dev.dev_command,  # uses the CLI's host; returns a coroutine or (--restart) an int
            start_host=False,
        )
    )
    return commands


def build_parser(commands: Sequence[Command]) -> argparse.ArgumentParser:
    """The full parser: global options, the built-in commands, and ``commands``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A pluggy plugin host and its memory-graph plugin. Global options may go "
        "anywhere on the command line.",
    )
    _add_global_options(parser)
    parser.add_argument("--version", action="version", version=f"{PROG} {own_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = {c.name for c in commands}
    for command in [*(c for c in builtin_commands() if c.name not in names), *commands]:
        child = sub.add_parser(
            command.name,
            help=command.help,
            description=command.help,
            parents=[_global_parent()],  # one each: resolving a conflict edits the actions
            conflict_handler="resolve",  # a command's own option wins over a global one
        )
        try:
            command.add_arguments(child)
        except Exception as exc:  # noqa: BLE001 - the other commands still work
            child.set_defaults(handler=_broken_command(command, exc))
            continue
        child.set_defaults(handler=_command_handler(command))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        return _main(args_list)
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one clear line; --debug adds the traceback
        return report_error(exc, debug=debug)
    finally:
        try:  # what is still buffered for a reader that has gone: the same quiet exit
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_closed_pipe()


def _closed_pipe(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is the reader of our output going away."""
    while exc is not None:
        if isinstance(exc, BrokenPipeError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _quiet_closed_pipe() -> int:
    """The reader closed the pipe (``| head``): not an error. Point stdout at /dev/null, so the
    interpreter's final flush does not fail a second time, and exit 0 quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (captured in tests): nothing to flush
        pass
    return 0


def report_error(exc: BaseException, *, debug: bool, command: str | None = None) -> int:
    """Print ``exc`` as one line on stderr (with the traceback under ``--debug``); exit code.
    A closed output pipe is no error: quiet, 0."""
    if _closed_pipe(exc):
        return _quiet_closed_pipe()
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    where = f"{PROG} {command}" if command else PROG
    coded = isinstance(getattr(exc, "code", None), str)  # an engine error: "BAD_ARGS: ..."
    known = isinstance(exc, PluginError | SettingsError | CliError | CommandError) or coded
    text = str(exc) if known else summary(exc)
    line = capped(redact_known(" ".join(text.split()))) or type(exc).__name__
    hint = "" if debug or known else " (--debug shows the traceback)"
    print(f"{where}: error: {line}{hint}", file=sys.stderr)
    if isinstance(exc, CommandError):
        return exc.exit_code
    return 2 if isinstance(exc, CliError) else 1


def setting_texts(pairs: Sequence[str]) -> dict[str, str]:
    """``--set KEY=VALUE`` pairs as a dict of texts (typed later by the settings schema)."""
    texts: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--set expects KEY=VALUE, got {pair!r}")
        texts[key.strip()] = value
    return texts


def _main(argv: list[str]) -> int:
    options = global_options(argv)
    _configure_logging(options.debug)
    with plugin_chatter_to_stderr():
        host = Host(
            data_dir=options.data_dir,
            plugin_dirs=options.plugins_dir,
            strict=True if options.strict else None,
            setting_texts=setting_texts(options.set_options),
        )
        host.load_plugins()
        commands = plugin_commands(host)
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    return handler(host, args)


def _configure_logging(debug: bool) -> None:
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(
            level=logging.DEBUG if debug else logging.WARNING,
            format="%(name)s: %(levelname)s: %(message)s",
        )


# ---------------------------------------------------------------------- plugin commands


def plugin_commands(host: Host) -> list[Command]:
    """Commands from ``host_cli_commands``; a bad contribution is recorded on its plugin."""
    taken = {c.name for c in builtin_commands()}
    commands: list[Command] = []
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


_plugin_commands = plugin_commands  # the name older tests and scripts use


def _broken_command(command: Command, exc: Exception) -> Callable[[Host, Any], int]:
    def handle(host: Host, args: argparse.Namespace) -> int:
        print(f"{PROG} {command.name}: error: its options failed: {summary(exc)}", file=sys.stderr)
        return 1

    return handle


def _command_handler(command: Command) -> Callable[[Host, argparse.Namespace], int]:
    def handle(host: Host, args: argparse.Namespace) -> int:
        try:
            args = in_namespace(args)  # --namespace: the chat ids given are that namespace's
            if command.start_host:
                result = asyncio.run(_run_started(host, command, args))
            else:
                result = command.run(host, args)
                if inspect.isawaitable(result):
                    result = asyncio.run(_awaited(result))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the command's name
            return report_error(
                exc, debug=bool(getattr(args, "debug", False)), command=command.name
            )
        if result is None or result is True:
            return 0
        return int(result)

    return handle


async def _awaited(value: Any) -> Any:
    return await value


async def _run_started(host: Host, command: Command, args: argparse.Namespace) -> Any:
    with plugin_chatter_to_stderr():
        await host.start()
    try:
        result = command.run(host, args)
        if inspect.isawaitable(result):
            result = await result
        return result
    finally:
        with plugin_chatter_to_stderr():
            await host.stop()


if __name__ == "__main__":
    raise SystemExit(main())
