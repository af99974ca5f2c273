"""Reading a chat-completions body, reusing what a recent body already decoded.

A front end sends the whole visible history with every request, so a chat's body begins with
the bytes of its previous one: at 10k messages, 1.2 MB of which only the last few messages are
new. `HistoryReader` keeps the recent bodies (raw bytes, decoded body, conversation, and where
their newest messages start in the bytes). A body that shares its opening bytes with a kept one
is decoded from the last message start inside the shared bytes on: that tail is parsed as
``{"messages":[`` + the rest of the body, which puts the parser in the same place the full body
had it there (inside the top-level object's ``messages`` list); the earlier messages, and the
conversation read from them, are the kept body's own objects.

A message start is only recorded once proven: the bytes from it parse, behind that opener, to
exactly the messages the full decode gave. A body whose bytes differ early (a system prompt
with the time in it), a second ``messages`` key (however spelt: ``"m\\u0065ssages"`` too), or
anything orjson refuses is decoded whole. The result is always what decoding the whole body
gives.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

import orjson

from .conversation import Conversation, RequestError, read_conversation
from .json_body import decoded

#: What the parser has read when it meets a message of the top-level ``messages`` list.
OPENER = b'{"messages":['


def _spellings(letter: str) -> bytes:
    """A regex of the ways JSON can write `letter` inside a string: itself or ``\\uXXXX``."""
    code = "".join(f"[{h.lower()}{h.upper()}]" if h.isalpha() else h for h in f"{ord(letter):04x}")
    return f"(?:{re.escape(letter)}|\\\\u{code})".encode()


#: A JSON string whose decoded text is ``messages``, however it is spelt: each letter as itself
#: or as a ``\\u`` escape (``"m\\u0065ssages"``). Found anywhere (a value too), it is only
#: ever a reason to decode the whole body.
KEY = re.compile(b'"' + b"".join(_spellings(c) for c in "messages") + b'"')
#: Bytes of a body's opening that find the kept bodies it may continue.
PROBE = 256
#: Message starts found per body, from its newest message back (an edit further back than this
#: decodes the body whole).
STARTS = 8
#: '{' positions tried per message start (a message full of code has many).
TRIES = 64
#: Kept bodies: at most this many, and this many bytes in all.
MAX_BODIES = 64
MAX_BYTES = 64 * 1024 * 1024
#: Bodies smaller than this are decoded whole (nothing to gain).
MIN_BYTES = 16 * 1024
_WHITESPACE = b" \t\r\n"


class _Kept:
    """One decoded body: its bytes, the body, its conversation and proven message starts
    ((message index, byte offset of its '{'), ascending)."""

    __slots__ = ("body", "conv", "raw", "starts")

    def __init__(
        self, raw: bytes, body: dict[str, Any], conv: Conversation, starts: list[tuple[int, int]]
    ) -> None:
        self.raw, self.body, self.conv, self.starts = raw, body, conv, starts


class HistoryReader:
    """Decodes request bodies (`read`) with the recent ones kept (see the module note)."""

    def __init__(self, max_bodies: int = MAX_BODIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_bodies, self.max_bytes = max_bodies, max_bytes
        self._kept: OrderedDict[int, _Kept] = OrderedDict()  # id(kept) -> kept, oldest first
        self._by_probe: dict[bytes, list[_Kept]] = {}
        self._bytes = 0
        self.reused = 0  # bodies read from a kept one (tests and the bench look)
        self._lock = threading.Lock()

    def read(self, raw: bytes) -> tuple[dict[str, Any], Conversation]:
        """The body and its conversation; `ValueError` (`RequestError` included) for a body
        that is not JSON or not a chat-completions object. Safe from several threads at once
        (the proxy reads large bodies on worker threads): the kept bodies are looked up and
        changed under one lock, a body that continues none is decoded outside it."""
        if len(raw) >= MIN_BYTES:
            with self._lock:
                found = self._continued(raw)
                if found is not None:
                    self.reused += 1
                    return found
        body = decoded(raw)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        conv = read_conversation(body)
        if len(raw) >= MIN_BYTES:
            with self._lock:
                self._keep(raw, body, conv, None, 0)
        return body, conv

    # ------------------------------------------------------------------ continuing

    def _continued(self, raw: bytes) -> tuple[dict[str, Any], Conversation] | None:
        best: tuple[int, _Kept] | None = None
        for kept in self._by_probe.get(raw[:PROBE], ()):
            shared = _shared_length(raw, kept.raw)
            if best is None or shared > best[0]:
                best = (shared, kept)
        if best is None:
            return None
        shared, kept = best
        start = next(((i, at) for i, at in reversed(kept.starts) if at <= shared), None)
        if start is None or KEY.search(raw, start[1]):  # a second "messages" key: whole
            return None
        index, at = start
        try:
            tail = orjson.loads(OPENER + raw[at:])
        except orjson.JSONDecodeError:
            return None  # decoded whole, which names the problem
        messages = tail.get("messages")
        if not isinstance(messages, list):
            return None
        body: dict[str, Any] = {}
        for key, value in kept.body.items():  # the keys before "messages": in the shared bytes
            if key == "messages":
                break
            body[key] = value
        body["messages"] = kept.body["messages"][:index] + messages
        for key, value in tail.items():
            if key != "messages":
                body[key] = value
        conv = read_conversation(body, prefix=kept.conv, reused=index)
        self._drop(kept)  # this body continues it: the kept one is not needed again
        self._keep(raw, body, conv, [s for s in kept.starts if s[1] <= at], at)
        return body, conv

    # ------------------------------------------------------------------ keeping

    def _keep(
        self,
        raw: bytes,
        body: dict[str, Any],
        conv: Conversation,
        carried: list[tuple[int, int]] | None,
        low: int,
    ) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return
        if carried is None and len(KEY.findall(raw)) != 1:
            return  # "messages" twice (however spelt): never continued
        found = message_starts(raw, messages, low)
        starts = sorted({*(carried or ()), *found})[-2 * STARTS :]
        if not starts:
            return
        kept = _Kept(raw, body, conv, starts)
        self._kept[id(kept)] = kept
        self._by_probe.setdefault(raw[:PROBE], []).append(kept)
        self._bytes += len(raw)
        while self._kept and (len(self._kept) > self.max_bodies or self._bytes > self.max_bytes):
            self._drop(next(iter(self._kept.values())))

    def _drop(self, kept: _Kept) -> None:
        if self._kept.pop(id(kept), None) is None:
            return
        self._bytes -= len(kept.raw)
        probe = kept.raw[:PROBE]
        same = [k for k in self._by_probe.get(probe, ()) if k is not kept]
        if same:
            self._by_probe[probe] = same
        else:
            self._by_probe.pop(probe, None)


def message_starts(raw: bytes, messages: list[Any], low: int = 0) -> list[tuple[int, int]]:
    """(index, byte offset) of the '{' opening each of the last `STARTS` messages of `raw`'s
    top-level ``messages`` list (`messages`: that list, decoded), from its newest back, none
    before byte `low`. A position counts only when the bytes from it parse, behind `OPENER`, to
    exactly the messages from that one on (the newest) or to exactly that message (the others),
    so a '{' inside a string or a nested object never does."""
    out: list[tuple[int, int]] = []
    end = len(raw)  # where the search for the next (earlier) start stops
    following: int | None = None  # the start of the message after the one looked for
    for index in range(len(messages) - 1, max(-1, len(messages) - 1 - STARTS), -1):
        at = _start_of(raw, messages, index, low, end, following)
        if at is None:
            break
        out.append((index, at))
        end = following = at
    out.reverse()
    return out


def _start_of(
    raw: bytes, messages: list[Any], index: int, low: int, end: int, following: int | None
) -> int | None:
    probe = end
    for _ in range(TRIES):
        at = raw.rfind(b"{", low, probe)
        if at < 0:
            return None
        probe = at
        before = raw[max(low, at - 64) : at].rstrip(_WHITESPACE)[-1:]
        if before not in (b",", b"["):
            continue
        try:
            if following is None:  # the newest message: up to the end of the body
                tail = orjson.loads(OPENER + raw[at:])
                if isinstance(tail, dict) and tail.get("messages") == messages[index:]:
                    return at
            else:  # up to the next message's start, less the comma between them
                piece = raw[at:following].rstrip(_WHITESPACE)
                if piece.endswith(b","):
                    one = orjson.loads(OPENER + piece[:-1] + b"]}")
                    if one == {"messages": [messages[index]]}:
                        return at
        except orjson.JSONDecodeError:
            continue
    return None


def _shared_length(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (compared a block at a time, in C)."""
    n = min(len(a), len(b))
    at, block = 0, 65536
    while at < n and a[at : at + block] == b[at : at + block]:
        at += block
    if at >= n:
        return n
    low, high = at, min(at + block, n)  # the first difference is in [low, high)
    while high - low > 64:
        mid = (low + high) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid
    while low < high and a[low] == b[low]:
        low += 1
    return low
