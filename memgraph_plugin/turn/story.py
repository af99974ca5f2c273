"""Recorded stories: user/assistant turns with the extraction ops of each assistant message."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs


class StoryError(ValueError):
    """A story file that cannot be used; the message names the file and the bad part."""


@attrs.frozen
class Turn:
    """One turn: the user's message, the assistant's answer, and the ops recorded for the answer."""

    user: str
    assistant: str
    ops: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen
class Story:
    title: str
    turns: tuple[Turn, ...]

    def ops_by_seq(self) -> dict[int, list[dict[str, Any]]]:
        """Recorded ops keyed by the assistant message's seq (turn i has seq i, 1-based)."""
        return {i: [copy.deepcopy(dict(op)) for op in t.ops] for i, t in enumerate(self.turns, 1)}


def parse_story(data: Any, *, source: str = "story") -> Story:
    """Validate ``{"title", "turns": [{"user", "assistant", "ops"}]}`` into a ``Story``."""
    if not isinstance(data, Mapping):
        raise StoryError(f"{source}: top level must be an object with 'title' and 'turns'")
    turns_raw = data.get("turns")
    if not isinstance(turns_raw, list) or not turns_raw:
        raise StoryError(f"{source}: 'turns' must be a non-empty list")
    turns = []
    for i, raw in enumerate(turns_raw, 1):
        if not isinstance(raw, Mapping):
            raise StoryError(f"{source}: turn {i} must be an object")
        for key in ("user", "assistant"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise StoryError(f"{source}: turn {i} needs a non-empty string '{key}'")
        ops = raw.get("ops", [])
        if not isinstance(ops, list) or not all(isinstance(op, Mapping) for op in ops):
            raise StoryError(f"{source}: turn {i} 'ops' must be a list of objects")
        turns.append(Turn(raw["user"], raw["assistant"], tuple(ops)))
    return Story(str(data.get("title") or "untitled"), tuple(turns))


def load_story(path: str | Path) -> Story:
    """Read and validate a story JSON file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoryError(f"{path}: story file not found") from None
    except json.JSONDecodeError as exc:
        raise StoryError(f"{path}: not valid JSON ({exc})") from None
    return parse_story(data, source=str(path))
