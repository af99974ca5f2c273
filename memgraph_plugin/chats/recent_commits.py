"""The newest commits of a loaded chat with what each replaced, so that rolling back the last
messages (a regenerate, an edit, a delete) is undone in memory: it costs what those commits
changed, not a reload of the chat (see `PersistedChats.rollback_recent`)."""

from __future__ import annotations

from collections import deque

import attrs

from memgraph_plugin.engine.graph.store_transactions import Before

__all__ = ["RECENT_COMMITS", "RecentCommit", "RecentCommits"]

RECENT_COMMITS = 32  # commits kept per loaded chat; an older target takes the storage path


@attrs.frozen
class RecentCommit:
    """One commit of this process on the chat: versions and message seqs around it."""

    version_before: int
    version: int
    seq_before: int
    seq: int
    before: Before


class RecentCommits:
    """The chat's newest commits, contiguous (each starts where the previous one ended) and in
    message order; anything else (another writer, an import) starts it over. After a rollback
    in memory the commits it undid go and the rest stay: the chat's state is again the one
    they end at, now under the rollback's version."""

    def __init__(self, size: int = RECENT_COMMITS) -> None:
        self._commits: deque[RecentCommit] = deque(maxlen=size)
        self._head: int | None = None  # the chat's version the kept commits lead up to

    def __len__(self) -> int:
        return len(self._commits)

    def clear(self) -> None:
        self._commits.clear()
        self._head = None

    def note(self, commit: RecentCommit) -> None:
        """Keep `commit`; a gap in versions or a step back in seq forgets the older ones."""
        last = self._commits[-1] if self._commits else None
        if last is not None and (
            self._head != commit.version_before or commit.seq_before < last.seq
        ):
            self._commits.clear()
        if commit.seq < commit.seq_before:
            self.clear()
            return
        self._commits.append(commit)
        self._head = commit.version

    def rolled_back(self, target: int, version: int) -> None:
        """The chat went back to `target` as commit `version`: the commits after it are gone."""
        while self._commits and self._commits[-1].version > target:
            self._commits.pop()
        self._head = version if self._commits else None

    def target(self, *, version: int | None = None, seq: int | None = None) -> int | None:
        """The version a rollback to `version` (or to after message `seq`: the newest version
        whose seq is <= it, as storage answers) lands on, when these commits reach back to it
        and it undoes at least one; else None."""
        if not self._commits:
            return None
        first, last = self._commits[0], self._commits[-1]
        if seq is not None:
            version = None
            if last.seq <= seq:
                return None  # the newest state already (storage answers a no-op commit)
            for commit in self._commits:
                if commit.seq <= seq:
                    version = commit.version
            if version is None and first.seq_before <= seq:
                version = first.version_before
        if version is None or not first.version_before <= version < last.version:
            return None
        # a version these commits pass through: not one a rollback among them undid (after
        # a rollback from 7 to 5 as version 8, the kept commits jump from 5 to 8: the states
        # of 6 and 7 are not theirs)
        if version != first.version_before and all(c.version != version for c in self._commits):
            return None
        return version

    def befores_after(self, version: int) -> list[Before]:
        """What the commits after `version` replaced, oldest first."""
        return [c.before for c in self._commits if c.version > version]
