"""The people a question names, as recall matches them: every name a character sheet goes by.

A message's ``speaker`` is written as the chat names its author ("Melanie"), while the sheet
the extractor keeps may be titled by another of that person's names ("Mel", with "Melanie" an
alias). The speaker boost of `fusion.fuse` compares lower-cased names, so a question naming a
person by any of their names favours that person's own messages.
"""

from __future__ import annotations

from typing import Any

from memgraph_plugin.engine.index.name_index import split_aliases

__all__ = ["known_names"]


def known_names(node: Any) -> frozenset[str]:
    """Every name a character sheet goes by, lower-cased: its title and its aliases."""
    names = set(split_aliases(node.title))
    names.update(split_aliases(node.fields.get("aliases")))
    return frozenset(n for n in names if n)
