"""Reading chat transcripts: JSONL of message objects, SillyTavern chat files (group chats too),
and JSON lists of the same objects, as a stream of `TranscriptMessage`.

A message object is ``{role|name|is_user, content|mes|text, time|send_date?}``. Roles: ``user``,
``assistant`` and ``system`` (also ``human``, ``ai``, ``bot``, ``model``, ``character``). Without a
role, ``is_user`` decides, else the name: the chat's user name (SillyTavern metadata) or, failing
that, the first speaker of the file is the user and every other speaker the assistant.

Problems surface while iterating, as `TranscriptError` with ``file:line: what is wrong``, after
every good message before the bad one has been yielded (whole messages only). A message whose
text is empty (SillyTavern writes ``"mes": ""`` for an image-only or aborted message) is no
error: it comes as ``empty=True``, and the ingest skips and counts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from host.chats.jsonl import split_lines

__all__ = ["TranscriptError", "TranscriptMessage", "message_from_object", "read_transcript"]

_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "character": "assistant",
    "char": "assistant",
    "gpt": "assistant",
    "system": "system",
}
_TEXT_KEYS = ("content", "mes", "text", "message")
_TIME_KEYS = ("time", "send_date", "timestamp", "date", "created_at")


class TranscriptError(ValueError):
    """A transcript that cannot be read: `where` is ``file:line``, `what` says what is wrong."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


@attrs.frozen
class TranscriptMessage:
    """One message of a transcript and where it came from (``file:line``)."""

    role: str
    text: str
    name: str = ""
    time: str = ""
    where: str = ""
    #: a message whose text is empty (SillyTavern's image-only or aborted ``"mes": ""``): read
    #: so that it can be counted, never added to the chat
    empty: bool = False


class _Speakers:
    """Role of a message without one: ``is_user``, else its name against the known user name,
    else the first speaker of the file is the user."""

    def __init__(self, user_name: str = "") -> None:
        self.user_name = user_name

    def role(self, raw: Mapping[str, Any], name: str) -> str | None:
        if isinstance(raw.get("is_user"), bool):
            return "user" if raw["is_user"] else "assistant"
        if not name:
            return None
        if not self.user_name:
            self.user_name = name
        return "user" if name == self.user_name else "assistant"


def message_from_object(
    raw: Any, where: str, speakers: _Speakers | None = None
) -> TranscriptMessage:
    """One message object -> a `TranscriptMessage` (a SillyTavern ``is_system`` note: role
    ``system``, kept in the chat but not extracted)."""
    if not isinstance(raw, Mapping):
        raise TranscriptError(where, f"expected a message object, got {type(raw).__name__}")
    speakers = speakers or _Speakers()
    name = raw.get("name", "")
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise TranscriptError(where, f"'name' must be a string, got {name!r}")
    name = name.strip()
    role_raw = raw.get("role")
    if role_raw is not None:
        if not isinstance(role_raw, str) or role_raw.strip().lower() not in _ROLES:
            known = ", ".join(sorted(set(_ROLES)))
            raise TranscriptError(where, f"unknown role {role_raw!r} (one of {known})")
        role = _ROLES[role_raw.strip().lower()]
    else:
        found = speakers.role(raw, name)
        if found is None:
            raise TranscriptError(where, "message has no 'role', 'is_user' or 'name'")
        role = found
    if raw.get("is_system") is True:
        role = "system"
    text = next((raw[k] for k in _TEXT_KEYS if k in raw), None)
    if not isinstance(text, str):
        keys = "/".join(_TEXT_KEYS)
        if text is None:
            raise TranscriptError(where, f"message has no text ({keys})")
        raise TranscriptError(where, f"message text must be a string, got {text!r}")
    when = next((raw[k] for k in _TIME_KEYS if raw.get(k) not in (None, "")), "")
    if isinstance(when, bool) or not isinstance(when, (str, int, float)):
        raise TranscriptError(where, f"'time' must be a string or a number, got {when!r}")
    empty = not text.strip()  # an image-only or aborted message: skipped and counted
    return TranscriptMessage(role, text, name, str(when).strip(), where, empty)


def read_transcript(path: str | Path) -> Iterator[TranscriptMessage]:
    """The messages of a transcript file, in order (see the module docstring for formats)."""
    path = Path(path)
    try:
        data = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptError(f"{path}:0", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}:0", f"cannot read: {exc}") from None
    head = data.lstrip()
    if not head:
        raise TranscriptError(f"{path}:1", "empty file: no messages")
    if head.startswith("["):
        return _json_list(path, data)
    if head.startswith("{"):
        return _jsonl(path, data)
    line = data[: len(data) - len(head)].count("\n") + 1
    raise TranscriptError(
        f"{path}:{line}", "unknown format: expected JSONL of message objects or a JSON list"
    )


def _jsonl(path: Path, data: str) -> Iterator[TranscriptMessage]:
    speakers = _Speakers()
    first = True
    for number, line in enumerate(split_lines(data), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            what = f"not valid JSON ({exc.msg}, column {exc.colno})"
            raise TranscriptError(where, what) from None
        if first and isinstance(raw, Mapping) and _is_metadata(raw):
            first = False
            user = raw.get("user_name")
            speakers.user_name = user.strip() if isinstance(user, str) else ""
            continue
        first = False
        yield message_from_object(raw, where, speakers)


def _is_metadata(raw: Mapping[str, Any]) -> bool:
    """A SillyTavern first line: chat metadata, no message text."""
    has_text = any(k in raw for k in _TEXT_KEYS)
    keys = ("user_name", "character_name", "chat_metadata")
    return not has_text and any(k in raw for k in keys)


def _json_list(path: Path, data: str) -> Iterator[TranscriptMessage]:
    decoder = json.JSONDecoder()
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        where = f"{path}:{exc.lineno}"
        raise TranscriptError(where, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    speakers = _Speakers()
    index = data.index("[") + 1
    line, counted = 1, 0  # lines before position `counted`
    while True:
        while index < len(data) and data[index] in " \t\r\n,":
            index += 1
        if index >= len(data) or data[index] == "]":
            return
        line += data.count("\n", counted, index)
        counted = index
        where = f"{path}:{line}"
        raw, index = decoder.raw_decode(data, index)
        yield message_from_object(raw, where, speakers)
