"""The proxy's context budget: what of a long history goes to the model.

With a budget of N tokens (``proxy_context_tokens``, or the request's
``X-Memgraph-Context-Tokens`` header) and a history over it, the proxy forwards:

- every system (and developer) message, where it stands;
- a trailing assistant prefill (the answer continues it);
- the memory block, whose character budget may grow to ``proxy_context_memory_share`` of the
  token budget when that is more than ``recall_budget_chars``;
- the newest turns that fit in what is left, whole: a turn is a user or assistant message with
  the tool results that follow it, so no tool call loses its answer. The last user message is
  always kept with what follows it, even over the budget (the question is never dropped).

Older turns are dropped; the recall then leaves out the events of the turns kept (they are in
the prompt) and spends the block on what was dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .token_count import BYTES_PER_TOKEN, MESSAGE_OVERHEAD, TokenCounter

#: Roles kept whatever the budget.
SYSTEM_ROLES = ("system", "developer")
#: Roles that belong to the turn before them (a tool call's results).
FOLLOWING_ROLES = ("tool", "function")


@attrs.frozen
class Trimmed:
    """A history cut to a budget: the messages to forward (the block not in yet), the body
    index of the oldest kept turn, and what was dropped and saved."""

    messages: list[Any]
    first_kept: int  # body index of the oldest kept non-system message (len(body): none)
    dropped: int  # messages left out
    tokens_full: int  # the history's tokens, as counted
    tokens_kept: int  # the forwarded messages' tokens (the block not included)
    block_chars: int  # the memory block's character budget
    counter: str  # which count: a tokenizer's name, or "estimate"

    @property
    def tokens_saved(self) -> int:
        return self.tokens_full - self.tokens_kept


def block_budget(budget_tokens: int, recall_chars: int, memory_share: float) -> int:
    """The block's character budget inside a window of `budget_tokens`."""
    share = int(memory_share * budget_tokens * BYTES_PER_TOKEN)
    return max(recall_chars, share)


def block_tokens(block_chars: int) -> int:
    """What a block of `block_chars` characters may cost (estimated high: ASCII bytes)."""
    return math.ceil(block_chars / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD


def trim(
    messages: Sequence[Any],
    budget_tokens: int,
    counter: TokenCounter,
    *,
    recall_chars: int,
    memory_share: float,
) -> Trimmed | None:
    """`messages` cut to `budget_tokens` (see the module note); None when the whole history
    and a block of `recall_chars` fit already."""
    costs = [counter.message(m) if isinstance(m, Mapping) else 0 for m in messages]
    full = sum(costs)
    if full + block_tokens(recall_chars) <= budget_tokens:
        return None
    keep = [False] * len(messages)
    fixed = 0  # what goes whatever the budget: system messages, a prefill, the question's turn
    for at, message in enumerate(messages):
        if _role(message) in SYSTEM_ROLES:
            keep[at] = True
            fixed += costs[at]
    end = len(messages)
    if end and _role(messages[-1]) == "assistant":  # a prefill: the answer continues it
        keep[-1] = True
        fixed += costs[-1]
        end -= 1
    last_user = next((i for i in range(end - 1, -1, -1) if _role(messages[i]) == "user"), -1)
    turns = _turns(messages, end)
    first_kept = len(messages)
    while turns and turns[-1][1] > last_user:  # the question's turn and later ones stay
        start, stop = turns.pop()
        fixed += sum(costs[start:stop])
        first_kept = start
        keep[start:stop] = [True] * (stop - start)
    room = budget_tokens - fixed - MESSAGE_OVERHEAD  # what the block and older turns share
    chars = min(
        block_budget(budget_tokens, recall_chars, memory_share),
        max(0, int(room * BYTES_PER_TOKEN)),
    )
    left = room - math.ceil(chars / BYTES_PER_TOKEN)
    for start, stop in reversed(turns):
        cost = sum(costs[start:stop])
        if cost > left:
            break  # older turns are dropped whole, never one out of the middle
        left -= cost
        first_kept = start
        keep[start:stop] = [True] * (stop - start)
    kept = [m for m, k in zip(messages, keep, strict=True) if k]
    return Trimmed(
        messages=kept,
        first_kept=first_kept,
        dropped=len(messages) - len(kept),
        tokens_full=full,
        tokens_kept=sum(c for c, k in zip(costs, keep, strict=True) if k),
        block_chars=chars,
        counter=counter.name,
    )


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _turns(messages: Sequence[Any], end: int) -> list[tuple[int, int]]:
    """(start, stop) of each turn before `end`: a non-system message and the tool results
    after it (system messages are not part of any turn)."""
    turns: list[tuple[int, int]] = []
    for at in range(end):
        role = _role(messages[at])
        if role in SYSTEM_ROLES:
            continue
        if role in FOLLOWING_ROLES and turns and turns[-1][1] == at:
            turns[-1] = (turns[-1][0], at + 1)
        else:
            turns.append((at, at + 1))
    return turns


#: The request header that sets the budget for one request (0: off).
BUDGET_HEADER = "x-memgraph-context-tokens"


def requested_budget(headers: Mapping[str, str], default: int) -> int:
    """The request's budget: its `BUDGET_HEADER`, else `default`; `ValueError` naming the
    header for a value that is not a whole number >= 0."""
    raw = headers.get(BUDGET_HEADER)
    if raw is None:
        return default
    text = raw.strip()
    if not text.isdigit() or len(text) > 9:
        raise ValueError(f"X-Memgraph-Context-Tokens must be a whole number >= 0, got {raw[:40]!r}")
    return int(text)


def context_header(trimmed: Trimmed) -> str:
    """The response header saying what the budget did."""
    return (
        f"kept={len(trimmed.messages)}; dropped={trimmed.dropped}; "
        f"tokens={trimmed.tokens_kept}; saved={trimmed.tokens_saved}; counted={trimmed.counter}"
    )
