"""User values echoed in error messages, cut short: an error names what was wrong and where, but a
100k-character id or value is shown as its first `SHOWN_CHARS` characters and "...".

`shown(value)` is a value's repr for a message; `capped(text)` cuts every long run of a finished
message (a run: characters between spaces, quotes, dots, colons, slashes, commas and brackets, so
``nodes.<id>.parentId`` or ``no node '<id>'`` keep their shape).
"""

from __future__ import annotations

import re

#: Characters of one echoed value an error message shows (then "...").
SHOWN_CHARS = 80

_LONG_RUN = re.compile(r"[^\s'\".:/,()\[\]{}=]{" + str(SHOWN_CHARS + 1) + ",}")


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """`value`'s repr for an error message, cut to `limit` characters (then "...")."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def capped(text: str) -> str:
    """`text` with every run longer than `SHOWN_CHARS` characters cut to that many and "..."."""
    if len(text) <= SHOWN_CHARS:
        return text
    return _LONG_RUN.sub(lambda m: m[0][:SHOWN_CHARS] + "...", text)
