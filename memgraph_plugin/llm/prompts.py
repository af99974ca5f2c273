"""The prompt files beside this module (``prompts/*.md``), filled with `string.Template`.

Each task has a system and a user prompt (``extract_*``, ``route_*``, ``summarise_*``) and
``retry`` asks again after an answer failed validation. Edit the files to change what the model
is asked; ``$name`` placeholders are filled by the code that uses them.
"""

from __future__ import annotations

import functools
import importlib.resources
from string import Template
from typing import Any

PROMPT_NAMES = (
    "extract_system",
    "extract_user",
    "route_system",
    "route_user",
    "summarise_system",
    "summarise_user",
    "retry",
)


@functools.cache
def prompt_template(name: str) -> Template:
    """The template of ``prompts/<name>.md`` (read once)."""
    if name not in PROMPT_NAMES:
        raise KeyError(f"no prompt {name!r} (known: {', '.join(PROMPT_NAMES)})")
    path = importlib.resources.files(__package__) / "prompts" / f"{name}.md"
    return Template(path.read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    """The prompt ``name`` with its placeholders filled (a missing one is a `KeyError`)."""
    return prompt_template(name).substitute({k: str(v) for k, v in values.items()}).strip()


CLIP = 400  # characters of each node or earlier message shown to the model


def clip(text: str, limit: int = CLIP) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks the cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_text(node: Any) -> str:
    """A node's non-empty fields as ``key: value; ...`` (lists joined), clipped."""
    fields = getattr(node, "fields", None) or {}
    parts = []
    for key, value in fields.items():
        if key == "title" or value in (None, "", (), []):
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else value
        parts.append(f"{key}: {shown}")
    return clip("; ".join(parts))


def node_line(node: Any) -> str:
    """``id | type | title | fields``: how prompts list a node."""
    return f"{node.id} | {node.type} | {clip(node.title, 80)} | {node_text(node)}"
