"""A sub-command a plugin contributes to the ``memgraph-host`` CLI (hook ``host_cli_commands``)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from host.protocols import HostLike as Host


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """An ``add_arguments`` for a command that takes no options."""


@attrs.frozen
class Command:
    """``memgraph-host NAME ...``: ``add_arguments`` fills its parser, ``run`` does the work.

    ``run(host, args)`` returns an exit code (``None`` means 0) or an awaitable of one, which the
    CLI awaits with ``asyncio.run``. The CLI starts the host (``host_startup``) before ``run`` and
    stops it afterwards unless ``start_host`` is False (a command that manages its own host).
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Host, argparse.Namespace], int | Awaitable[int | None] | None]
    start_host: bool = attrs.field(kw_only=True, default=True)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or " " in self.name:
            raise ValueError(f"Command name must be one word, got {self.name!r}")
        if not callable(self.run) or not callable(self.add_arguments):
            raise TypeError(f"Command {self.name!r}: add_arguments and run must be callable")
