"""What recall reads of a very long message: its opening and its end.

A message of megabytes (a pasted file or log) is stored whole in the chat and extracted whole,
but recall's work on the question grows with its text (names looked up, words weighed, the query
embedded: seconds per MB, on the event loop that serves every chat). Recall reads at most
`RECALL_CHARS` characters of the last user message: its first half and its last half, where a
question about a pasted text usually is.
"""

from __future__ import annotations

#: The most characters of the last user message that recall reads.
RECALL_CHARS = 20_000


def recall_text(text: str) -> str:
    """`text`, or its first and last `RECALL_CHARS` / 2 characters when it is longer."""
    if len(text) <= RECALL_CHARS:
        return text
    half = RECALL_CHARS // 2
    return f"{text[:half]}\n…\n{text[-half:]}"
