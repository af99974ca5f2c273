"""Matching a request without a chat id to a stored chat (`proxy/ledger/chat_matching.py`,
`ChatMemory.resolve`): which messages fit a chat, the pair index, and what a request costs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from host import Host
from memgraph_plugin.proxy.ledger.chat_identity import OPENING_SOURCE, ChatIdentity, digest
from memgraph_plugin.proxy.ledger.chat_matching import (
    CONTINUED,
    EDITED,
    INDEX_TAIL,
    MAX_CANDIDATES,
    NEW,
    MessageIndex,
    fit,
    read_tail,
)
from memgraph_plugin.proxy.ledger.chat_memory import ChatMemory
from memgraph_plugin.proxy.ledger.reconcile import Ledger
from memgraph_plugin.proxy.request.conversation import read_conversation

SYSTEM = "You are Quill."


def _chat(n: int, tag: str = "") -> list[tuple[str, str]]:
    """n messages, user first, every text its own."""
    return [("user" if i % 2 == 0 else "assistant", f"{tag}message {i}") for i in range(n)]


def _ledger(messages: list[tuple[str, str]]) -> Ledger:
    return Ledger([SimpleNamespace(role=r, text=t, index=i) for i, (r, t) in enumerate(messages)])


def _fit(sent: list[tuple[str, str]], stored: list[tuple[str, str]]):  # noqa: ANN202
    return fit([r for r, _ in sent], [t for _, t in sent], _ledger(stored))


STORED = _chat(60)


@pytest.mark.parametrize(
    ("name", "sent", "expected"),
    [
        ("the whole chat and a new question", [*STORED, ("user", "next")], (CONTINUED, 60)),
        ("a trimmed window and a new question", [*STORED[-4:], ("user", "next")], (CONTINUED, 4)),
        ("a run inside the chat ending at its end", STORED[30:], (CONTINUED, 30)),
        ("a regenerate in a trimmed window", STORED[-5:-1], (EDITED, 4)),
        ("an edited last question", [*STORED[-5:-2], ("user", "edited")], (EDITED, 3)),
        ("an edited last answer and a new question",
         [*STORED[-4:-1], ("assistant", "mine"), ("user", "next")], (EDITED, 3)),
        ("an edit inside the window", [*STORED[-8:-4], ("user", "changed"), *STORED[-3:]],
         (EDITED, 7)),
        ("a deletion inside the window", [*STORED[-8:-4], *STORED[-3:]], (EDITED, 7)),
    ],
)  # fmt: skip
def test_what_fits_a_stored_chat(name: str, sent: list, expected: tuple[str, int]) -> None:
    found = _fit(sent, STORED)
    assert found is not None, name
    assert (found.kind, found.shared) == expected, name


def test_a_chat_that_only_shares_the_opening_does_not_fit() -> None:
    opening = [("assistant", "Welcome to Veyl."), ("user", "Hello.")]
    first = [*opening, ("assistant", "Hi #1"), ("user", "Oriel moved."), ("assistant", "Ok #2")]
    assert _fit(opening, first) is None  # the first request of a second chat
    second = [*opening, ("assistant", "Hi #3"), ("user", "Tamsin sailed.")]
    assert _fit(second, first) is None  # the second chat goes on: still not the first one
    assert _fit(_chat(4, "other "), STORED) is None  # nothing shared at all
    # within the last two messages it is the regenerate it looks like
    assert _fit(opening, first[:3]) is not None


def test_the_index_finds_chats_by_their_newest_pairs_and_forgets_old_ones() -> None:
    index = MessageIndex(tail=8)
    long = _chat(100, "a ")
    index.put("a", [r for r, _ in long], [t for _, t in long])
    index.put("b", *zip(*_chat(6, "b "), strict=True))
    window = long[-5:]
    assert index.candidates([r for r, _ in window], [t for _, t in window]) == ["a"]
    early = long[10:15]  # pairs older than the indexed tail
    assert index.candidates([r for r, _ in early], [t for _, t in early]) == []
    index.drop("a")
    assert index.candidates([r for r, _ in window], [t for _, t in window]) == []
    assert len(index) == 1 and "b" in index


def test_a_pair_many_chats_share_is_not_looked_up_and_candidates_are_bounded() -> None:
    index = MessageIndex()
    common = [("assistant", "Hi."), ("user", "Hello!")]
    for i in range(200):
        own = [*common, ("assistant", f"own {i}"), ("user", f"also own {i}")]
        index.put(f"c{i}", [r for r, _ in own], [t for _, t in own])
    assert index.candidates(["assistant", "user"], ["Hi.", "Hello!"]) == []
    sent = [*common, ("assistant", "own 7"), ("user", "also own 7"), ("assistant", "new")]
    assert index.candidates([r for r, _ in sent], [t for _, t in sent])[0] == "c7"
    shared = [("assistant", "x"), ("user", "y")]
    crowd = MessageIndex()
    for i in range(20):
        crowd.put(f"d{i}", ["assistant", "user"], ["x", "y"])
    assert len(crowd.candidates(*zip(*shared, strict=True))) == MAX_CANDIDATES


def test_a_chat_file_is_indexed_from_its_end(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", settings={}, entry_points=False)
    chat = host.chat("long")
    with chat.batched_writes():
        for role, text in _chat(3000):
            chat.add_message(role, f"  {text} {'x' * 200}  ")  # type: ignore[arg-type]
    roles, texts = read_tail(chat.path, limit=16 * 1024)
    assert 0 < len(texts) < 100 and texts[-1] == f"message 2999 {'x' * 200}"
    assert roles[-1] == "assistant" and texts[0].startswith("message ")


def _memory(tmp_path: Path) -> tuple[Host, ChatMemory]:
    host = Host(data_dir=tmp_path / "data", settings={}, entry_points=False)
    return host, ChatMemory(host)


def _store(host: Host, memory: ChatMemory, chat_id: str, messages: list) -> None:
    chat = host.chat(chat_id)
    with chat.batched_writes():
        for role, text in messages:
            chat.add_message(role, text)
    memory.note(ChatIdentity(chat_id, OPENING_SOURCE, digest(SYSTEM)[:24]))


def _request(messages: list[tuple[str, str]]) -> tuple[ChatIdentity, object]:
    body = {"messages": [{"role": "system", "content": SYSTEM},
                         *({"role": r, "content": t} for r, t in messages)]}  # fmt: skip
    conv = read_conversation(body)
    system, first = conv.opening()
    return ChatIdentity("auto-" + digest(system, first)[:24], OPENING_SOURCE, ""), conv


def test_resolving_a_request_reads_only_its_candidate_chats(tmp_path: Path) -> None:
    """50 stored derived chats, each read back by a fresh process (its index from the files'
    ends): a trimmed regenerate of one is given that chat, and only the chats sharing its pairs
    are read whole; a tail nobody holds is a new chat and creates nothing."""
    host, memory = _memory(tmp_path)
    for i in range(50):
        _store(host, memory, f"auto-{i}", _chat(200, f"c{i} "))
    host, memory = _memory(tmp_path)  # a new process: nothing loaded
    target = _chat(200, "c17 ")
    identity, conv = _request(target[-5:-1])
    found = memory.resolve(identity, conv)
    assert (found.chat_id, found.match) == ("auto-17", EDITED)
    read = [c for c in host.chat_ids() if host.chat(c).read_yet]
    assert read == ["auto-17"]
    identity, conv = _request([("assistant", "unheard of"), ("user", "nobody said this")])
    found = memory.resolve(identity, conv)
    assert found.match == NEW and found.chat_id == identity.chat_id
    assert not host.has_chat(found.chat_id) and found.chat_id not in host.chat_ids()


def test_a_new_chat_sharing_an_opening_gets_its_own_id(tmp_path: Path) -> None:
    host, memory = _memory(tmp_path)
    opening = [("assistant", "Welcome to Veyl."), ("user", "Hello.")]
    identity, conv = _request(opening)
    _store(host, memory, identity.chat_id, [*opening, *_chat(6, "first ")])
    again = memory.resolve(identity, conv)
    assert again.match == NEW and again.chat_id == identity.chat_id + "-2"
    # the first chat goes on: found, whatever its window
    identity, conv = _request([*opening, *_chat(6, "first "), ("user", "more")])
    assert memory.resolve(identity, conv).chat_id == identity.chat_id
    assert memory.resolve(identity, conv).match == CONTINUED


def test_the_index_follows_the_changes_this_process_makes(tmp_path: Path) -> None:
    host, memory = _memory(tmp_path)
    _store(host, memory, "auto-a", _chat(10, "a "))
    identity, conv = _request(_chat(10, "a ")[-3:])
    assert memory.resolve(identity, conv).chat_id == "auto-a"
    for i in range(INDEX_TAIL + 10):  # the chat grows past the indexed tail
        memory.add_answer("auto-a", f"later {i}")
    late = [("assistant", f"later {i}") for i in range(INDEX_TAIL + 7, INDEX_TAIL + 10)]
    identity, conv = _request(late)
    assert memory.resolve(identity, conv).chat_id == "auto-a"
