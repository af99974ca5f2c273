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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from .conversation import content_text
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
    and a block of `recall_chars` fit already. Only the messages the budget reaches are counted
    (from the newest back); the dropped ones' tokens are estimated from their length."""
    costs: dict[int, int] = {}

    def cost(at: int) -> int:
        found = costs.get(at)
        if found is None:
            message = messages[at]
            found = costs[at] = counter.message(message) if _role(message) is not None else 0
        return found

    fits = budget_tokens - block_tokens(recall_chars)
    total = 0
    for at in range(len(messages) - 1, -1, -1):
        total += cost(at)
        if total > fits:
            break
    else:
        return None
    keep = [False] * len(messages)
    fixed = 0  # what goes whatever the budget: system messages, a prefill, the question's turn
    for at, message in enumerate(messages):
        if _role(message) in SYSTEM_ROLES:
            keep[at] = True
            fixed += cost(at)
    end = len(messages)
    if end and _role(messages[-1]) == "assistant":  # a prefill: the answer continues it
        keep[-1] = True
        fixed += cost(end - 1)
        end -= 1
    last_user = next((i for i in range(end - 1, -1, -1) if _role(messages[i]) == "user"), -1)
    turns = _turns_back(messages, end)
    first_kept = len(messages)
    older: tuple[int, int] | None = None
    for start, stop in turns:  # the question's turn and later ones stay
        if stop <= last_user:
            older = (start, stop)
            break
        fixed += sum(cost(at) for at in range(start, stop))
        first_kept = start
        keep[start:stop] = [True] * (stop - start)
    room = budget_tokens - fixed - MESSAGE_OVERHEAD  # what the block and older turns share
    chars = min(
        block_budget(budget_tokens, recall_chars, memory_share),
        max(0, int(room * BYTES_PER_TOKEN)),
    )
    left = room - math.ceil(chars / BYTES_PER_TOKEN)
    while older is not None:
        start, stop = older
        turn_cost = sum(cost(at) for at in range(start, stop))
        if turn_cost > left:
            break  # older turns are dropped whole, never one out of the middle
        left -= turn_cost
        first_kept = start
        keep[start:stop] = [True] * (stop - start)
        older = next(turns, None)
    kept = [m for m, k in zip(messages, keep, strict=True) if k]
    tokens_kept = sum(cost(at) for at, k in enumerate(keep) if k)
    dropped = [m for at, m in enumerate(messages) if not keep[at] and at not in costs]
    counted_dropped = sum(c for at, c in costs.items() if not keep[at])
    return Trimmed(
        messages=kept,
        first_kept=first_kept,
        dropped=len(messages) - len(kept),
        tokens_full=tokens_kept + counted_dropped + _estimated(dropped),
        tokens_kept=tokens_kept,
        block_chars=chars,
        counter=counter.name,
    )


def _estimated(messages: Sequence[Any]) -> int:
    """The tokens of messages nobody counted (dropped, past where the budget reached): their
    text's length at 3.5 characters a token, plus the per-message overhead."""
    chars = sum(len(content_text(m.get("content"))) for m in messages if _role(m) is not None)
    return math.ceil(chars / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD * len(messages)


def _role(message: Any) -> Any:
    if type(message) is dict:  # what a decoded body holds: no abstract-class check
        return message.get("role")
    return message.get("role") if isinstance(message, Mapping) else None


def _turns_back(messages: Sequence[Any], end: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of each turn before `end`, newest first: a non-system message and the
    tool results right after it (system messages are not part of any turn; a tool result
    after one starts a turn of its own)."""
    at = end - 1
    while at >= 0:
        role = _role(messages[at])
        if role in SYSTEM_ROLES:
            at -= 1
            continue
        stop = at + 1
        while role in FOLLOWING_ROLES and at > 0 and _role(messages[at - 1]) not in SYSTEM_ROLES:
            at -= 1
            role = _role(messages[at])
        yield at, stop
        at -= 1


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
