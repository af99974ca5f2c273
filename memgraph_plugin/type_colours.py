"""The one colour scheme of node types, shared by the static picture (`graph_picture`, the demo's
``graph.html``) and the explorer page (its graph JSON carries the colours of the types it draws).

The default schema's types have fixed colours; any other type gets a palette colour chosen by a
hash of its name, so a type has the same colour in every chat, every picture and every page.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

#: The default schema's types (`engine.model.schema.DEFAULT_SCHEMA`).
TYPE_COLOURS: dict[str, str] = {
    "event": "#4e79a7",
    "character_sheet": "#f28e2b",
    "location_state": "#59a14f",
    "thread": "#b07aa1",
}
#: Colours for other types (Tableau 10 without the four above).
PALETTE: tuple[str, ...] = (
    "#e15759", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac",
)  # fmt: skip


def colour_of(type_name: str) -> str:
    """The colour of a node type: its fixed one, else a palette colour by a hash of its name."""
    fixed = TYPE_COLOURS.get(type_name)
    if fixed is not None:
        return fixed
    return PALETTE[zlib.crc32(type_name.encode("utf-8")) % len(PALETTE)]


def colours_of(types: Iterable[str]) -> dict[str, str]:
    """type -> colour for each of ``types``."""
    return {t: colour_of(t) for t in types}
