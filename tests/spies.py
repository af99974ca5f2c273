"""Recording plugins shared by the recall and sample-plugin tests: each implements one hook."""

from __future__ import annotations

from typing import Any

from host import hookimpl


class Spy:
    """A plugin that keeps, in call order, what its one hook was called with."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []


class Companion(Spy):
    """Only subscribes to ``memgraph_injection_changed``: ``seen`` holds ``(chat_id, state)``."""

    @hookimpl
    def memgraph_injection_changed(self, chat_id: str, state: Any) -> None:
        self.seen.append((chat_id, state))


class CommitSpy(Spy):
    """Only subscribes to ``memgraph_commit``: ``seen`` holds ``(chat_id, commit)``."""

    @hookimpl
    def memgraph_commit(self, chat_id: str, commit: Any) -> None:
        self.seen.append((chat_id, commit))
