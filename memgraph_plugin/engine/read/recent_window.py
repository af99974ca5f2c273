"""The recent window: the nodes the chat's newest turns wrote, which the prompt carries as
messages already, so recall leaves them out (``recall_recent_window``).

Messages count from seq 1; seq 0 is the state before the chat's first message, where an
imported or forked graph is anchored (`store_file.anchor_store`). No turn of the chat wrote
those nodes and no prompt carries them, so they are never recent, however few messages the
chat holds yet.
"""

from __future__ import annotations

__all__ = ["FIRST_MESSAGE_SEQ", "recent_from"]

#: The seq of a chat's first message (seq 0: nothing said yet).
FIRST_MESSAGE_SEQ = 1


def recent_from(seq_counter: int, recent: int) -> int | None:
    """The lowest ``seq_to`` counted as recent when the store is at `seq_counter` and the
    window spans `recent` turns (None: no window). Never below the first message's seq."""
    if not recent:
        return None
    return max(FIRST_MESSAGE_SEQ, int(seq_counter) - recent + 1)
