"""Decoding a request body's JSON: the one function the proxy, the JSON memory API and the
explorer's edits use, so every route takes and refuses the same bodies.

orjson first (about twice as fast on a long history), `json` for what orjson refuses and `json`
takes (NaN, integers past 64 bits). Nesting deeper than either takes (orjson stops at 1024
levels, `json` raises `RecursionError`) is a `TooDeep`, a `ValueError` the routes answer with
400. `decoded_off_loop` decodes a large body on a worker thread so one big body never stalls
the event loop that serves every other chat.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson

from .conversation import RequestError

#: Bodies of this many bytes or more are decoded on a worker thread (`decoded_off_loop`).
OFF_LOOP_BYTES = 1024 * 1024
#: The deepest nesting orjson decodes; deeper is refused by `json` too.
MAX_DEPTH = 1024


class TooDeep(RequestError):
    """A body whose JSON nests deeper than `MAX_DEPTH` (a `RequestError`: the proxy's 400)."""

    def __init__(self) -> None:
        super().__init__(f"the JSON is nested too deep (more than {MAX_DEPTH} levels)")


def decoded(raw: bytes) -> Any:
    """`raw`'s JSON; `TooDeep` for nesting past `MAX_DEPTH`, another `ValueError` for anything
    that is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except RecursionError:
        raise TooDeep() from None


async def decoded_off_loop(raw: bytes) -> Any:
    """`decoded`, on a worker thread for a body of `OFF_LOOP_BYTES` or more."""
    if len(raw) >= OFF_LOOP_BYTES:
        return await asyncio.to_thread(decoded, raw)
    return decoded(raw)
