"""Where a request body holds text that UTF-8 cannot encode: a lone surrogate.

JSON may escape a UTF-16 surrogate on its own (``"\\ud800"``); Python's `json` decodes it into
a string that no UTF-8 writer takes (the chat file, the upstream's body), while orjson refuses
such a body outright. The proxy refuses it with a 400 naming the place, before anything is
stored or forwarded. A raw body without a surrogate escape is passed at the cost of one scan
of its bytes.
"""

from __future__ import annotations

import re
from typing import Any

#: A ``\\u`` escape in the surrogate range (D800-DFFF): only such a body is looked through.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def unencodable_place(raw: bytes, body: Any) -> str | None:
    """Where in `body` (decoded from `raw`) a string holds a lone surrogate, as
    ``messages[2].content`` (a key or a string itself counts too); None when there is none."""
    if _SURROGATE_ESCAPE.search(raw) is None:
        return None
    return _place(body, "")


def _place(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return None if _encodable(value) else (path or "the body")
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and not _encodable(key):
                return f"a key of {path or 'the body'}"
            found = _place(item, name)
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _place(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
