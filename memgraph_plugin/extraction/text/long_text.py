"""A message text too large for one field value (``max_field_bytes``, as UTF-8 JSON), cut into
parts that each fit, at whitespace where it can: the offline extractor keeps the whole text of
a long message as consecutive events instead of losing it to a refused write."""

from __future__ import annotations

import json

__all__ = ["json_bytes", "split_text"]

#: Bytes kept free under the limit (the JSON quotes, and room for a rounding of the estimate).
_MARGIN = 16


def json_bytes(text: str) -> int:
    """The UTF-8 size of `text` as a JSON string (what the field limit measures)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def split_text(text: str, max_bytes: int) -> list[str]:
    """`text` as one part when it fits in `max_bytes` as a JSON string, else consecutive parts
    that each fit (joined back they are `text`), cut after whitespace when a part has any."""
    if json_bytes(text) <= max_bytes:
        return [text]
    budget = max(1, max_bytes - _MARGIN)
    parts: list[str] = []
    start = 0
    while start < len(text):
        # every character is at most 6 JSON bytes (an escape): a first cut that certainly fits,
        # then grown while it still does
        size = max(1, budget // 6)
        while start + size < len(text):
            bigger = min(len(text) - start, size * 2)
            if json_bytes(text[start : start + bigger]) > budget:
                break
            size = bigger
        # shrink to fit, then back to the last whitespace in the part's second half
        while size > 1 and json_bytes(text[start : start + size]) > budget:
            size = max(1, size * 9 // 10)
        end = start + size
        if end < len(text):
            space = max(text.rfind(" ", start + size // 2, end), text.rfind("\n", start, end))
            if space > start + size // 2:
                end = space + 1
        parts.append(text[start:end])
        start = end
    return parts
