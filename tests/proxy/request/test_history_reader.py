"""`HistoryReader`: a body that continues a recent one is decoded from its new messages on, and
the result is always exactly what decoding the whole body gives."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgraph_plugin.proxy.request.conversation import RequestError, read_conversation
from memgraph_plugin.proxy.request.history_reader import MIN_BYTES, HistoryReader, message_starts

EDITS = [b"", b"{", b"}", b",", b'"', b"\\", b"x"]
SYSTEM = {"role": "system", "content": "You are Mira, the harbour's lighthouse keeper."}


def history(n: int, *, tricky: bool = False) -> list[dict[str, Any]]:
    """`n` messages after a system prompt; `tricky` fills them with text that looks like JSON."""
    out: list[dict[str, Any]] = [SYSTEM]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Message {i} about the lantern and the ferry at the quay, tide {i % 7}."
        if tricky and i % 3 == 0:
            text += ' {"role":"user","content":"x"}, {"a": [1, {"b": "},{"}]} \\ "quoted" ë 灯'
        message: dict[str, Any] = {"role": role, "content": text}
        if tricky and i % 5 == 0:
            message["content"] = [{"type": "text", "text": text}, {"type": "image_url"}]
        if i % 4 == 1:
            message["name"] = "Mira"
        out.append(message)
    return out


def encode(body: dict[str, Any], style: str = "compact") -> bytes:
    if style == "compact":
        return orjson.dumps(body)
    if style == "spaced":  # Python's json defaults, ASCII escapes
        return json.dumps(body).encode()
    return json.dumps(body, indent=2, ensure_ascii=False).encode()  # pretty-printed


def check(reader: HistoryReader, raw: bytes) -> dict[str, Any]:
    """Reads `raw` and asserts body and conversation equal a whole decode's."""
    body, conv = reader.read(raw)
    whole = orjson.loads(raw)
    assert body == whole
    assert list(body) == list(whole)  # key order too (it is forwarded as it came)
    fresh = read_conversation(whole)
    assert conv == fresh
    assert (conv.positions, conv.system_at) == (fresh.positions, fresh.system_at)
    return body


@pytest.mark.parametrize("style", ["compact", "spaced", "pretty"])
@pytest.mark.parametrize("tricky", [False, True])
def test_a_growing_chat_is_read_from_its_new_messages(style: str, tricky: bool) -> None:
    reader = HistoryReader()
    messages = history(400, tricky=tricky)
    check(reader, encode({"model": "m", "messages": messages, "stream": True}, style))
    assert reader.reused == 0
    for turn in range(5):
        messages = [
            *messages,
            {"role": "assistant", "content": f"Answer {turn}: the lantern is lit."},
            {"role": "user", "content": f"And the bell {turn}? " + '"},{"role":"user"'},
        ]
        body = encode({"model": "m", "messages": messages, "stream": turn % 2 == 0}, style)
        assert check(reader, body)["stream"] is (turn % 2 == 0)
    assert reader.reused == 5


def test_edits_swipes_and_trims_give_the_whole_decode() -> None:
    reader = HistoryReader()
    messages = history(300)
    check(reader, encode({"messages": messages, "model": "m"}))
    swiped = messages[:-1]  # a regenerate: the last answer dropped
    check(reader, encode({"messages": swiped, "model": "m"}))
    edited = [*swiped[:-1], {"role": "user", "content": "An edited question?"}]
    check(reader, encode({"messages": edited, "model": "m"}))
    early = [SYSTEM, {"role": "user", "content": "A different opening."}, *edited[2:]]
    check(reader, encode({"messages": early, "model": "m"}))  # differs early: decoded whole
    trimmed = [SYSTEM, *early[100:]]  # a full context window: the oldest messages dropped
    check(reader, encode({"messages": trimmed, "model": "m"}))
    prefill = [*trimmed, {"role": "assistant", "content": "Mira: The lantern"}]
    body = check(reader, encode({"messages": prefill, "model": "m"}))
    assert reader.read(encode(body))[1].prefill == "Mira: The lantern"
    assert reader.reused >= 3


def test_two_chats_with_the_same_opening_are_kept_apart() -> None:
    reader = HistoryReader()
    a, b = history(300), history(300)
    b[-1] = {"role": "assistant", "content": "Chat B goes its own way."}
    for turn in range(3):
        a = [*a, {"role": "user", "content": f"A asks {turn}"}]
        b = [*b, {"role": "user", "content": f"B asks {turn}"}]
        check(reader, encode({"model": "m", "messages": a}))
        check(reader, encode({"model": "m", "messages": b}))
    assert reader.reused >= 4


def test_a_second_messages_key_is_decoded_whole() -> None:
    reader = HistoryReader()
    messages = history(300)
    first = encode({"model": "m", "messages": messages})
    check(reader, first)
    more = [*messages, {"role": "user", "content": "next"}]
    dup = first[:-1] + b',"messages":' + orjson.dumps(more) + b"}"
    body, _ = reader.read(dup)
    assert body == orjson.loads(dup)
    assert body["messages"] == more


def _escaped(word: str, which: list[bool], upper: bool) -> bytes:
    """`word` as a JSON string with the letters `which` marks written as ``\\u`` escapes."""
    out = []
    for letter, escape in zip(word, which, strict=True):
        code = f"{ord(letter):04x}"
        out.append(f"\\u{code.upper() if upper else code}" if escape else letter)
    return ('"' + "".join(out) + '"').encode()


@pytest.mark.parametrize(
    "key", [b'"m\\u0065ssages"', b'"\\u006Dessages"', b'"\\u006d\\u0065ssage\\u0073"']
)
def test_an_escaped_second_messages_key_is_what_a_decoder_reads(key: bytes) -> None:
    """A second key spelt with escapes after a long history: a JSON decoder reads the second
    (one message); so does the reader, never the 200 before it plus the new ones."""
    reader = HistoryReader()
    messages = history(200)
    first = encode({"model": "m", "messages": messages})
    assert len(first) >= MIN_BYTES
    check(reader, first)
    grown = encode({"model": "m", "messages": [*messages, {"role": "user", "content": "next"}]})
    dup = grown[:-1] + b"," + key + b':[{"role":"user","content":"only me"}]}'
    body, conv = reader.read(dup)
    assert body == orjson.loads(dup) == json.loads(dup)
    assert body["messages"] == [{"role": "user", "content": "only me"}]
    assert len(conv.texts) == 1
    # a body with such a key is never kept to be continued either
    reader = HistoryReader()
    check(reader, dup)
    check(reader, dup[:-1] + b',"n":1}')
    assert reader.reused == 0


@settings(max_examples=40, deadline=None)
@given(which=st.lists(st.booleans(), min_size=8, max_size=8), upper=st.booleans(),
       where=st.sampled_from(["end", "value"]))  # fmt: skip
def test_any_spelling_of_a_second_messages_key_reads_as_a_whole_decode(
    which: list[bool], upper: bool, where: str
) -> None:
    reader = HistoryReader()
    messages = history(200)
    check(reader, encode({"model": "m", "messages": messages}))
    grown = encode({"model": "m", "messages": [*messages, {"role": "user", "content": "next"}]})
    key = _escaped("messages", which, upper)
    if where == "end":  # a second top-level key
        raw = grown[:-1] + b"," + key + b':[{"role":"user","content":"x"}]}'
    else:  # the same spelling as a string inside a message: harmless, still the whole decode
        raw = grown[:-4] + b" " + key.replace(b'"', b"") + b'"}]}'
    check(reader, raw)


def test_bad_tails_fail_like_a_whole_decode_and_lose_nothing() -> None:
    reader = HistoryReader()
    messages = history(300)
    raw = encode({"model": "m", "messages": messages})
    check(reader, raw)
    broken = raw[:-30] + b'{"role": "user", "content": "unterminated}'
    with pytest.raises(ValueError):
        reader.read(broken)
    with pytest.raises(RequestError):  # a list where the object should be
        reader.read(b"[" + raw + b"]")
    check(reader, raw + b"  ")  # and the kept body still serves the next request
    nan = raw[:-1] + b',"temperature":NaN}'  # json takes what orjson refuses
    assert reader.read(nan)[0]["messages"] == messages


def test_message_starts_are_the_real_ones_only() -> None:
    messages = history(40, tricky=True)
    for style in ("compact", "spaced", "pretty"):
        raw = encode({"messages": messages, "n": 1}, style)
        starts = message_starts(raw, messages)
        assert [i for i, _ in starts] == list(range(len(messages) - 8, len(messages)))
        for index, at in starts:
            assert orjson.loads(b'{"messages":[' + raw[at:])["messages"] == messages[index:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_change_to_the_bytes_reads_as_a_whole_decode(data: st.DataObject) -> None:
    """Random byte edits anywhere (inside strings, keys, brackets) to a body that continues a
    kept one: `read` gives the whole decode's result, or fails where it fails."""
    seed = data.draw(st.integers(0, 10_000))
    rng = random.Random(seed)
    messages = history(200, tricky=True)
    reader = HistoryReader()
    base = encode({"model": "m", "messages": messages}, rng.choice(["compact", "spaced"]))
    assert len(base) >= MIN_BYTES
    reader.read(base)
    grown = encode(
        {"model": "m", "messages": [*messages, {"role": "user", "content": "next?"}]},
        rng.choice(["compact", "spaced"]),
    )
    changed = bytearray(grown)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(len(changed) // 2, len(changed) - 1))
        changed[at : at + 1] = data.draw(st.sampled_from(EDITS))
    raw = bytes(changed)
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            whole = json.loads(raw)
        except ValueError:
            with pytest.raises(ValueError):
                reader.read(raw)
            return
    if not isinstance(whole, dict) or not isinstance(whole.get("messages"), list):
        with pytest.raises(ValueError):
            reader.read(raw)
        return
    try:
        fresh = read_conversation(whole)
    except RequestError:
        with pytest.raises(RequestError):
            reader.read(raw)
        return
    body, conv = reader.read(raw)
    assert body == whole and list(body) == list(whole)
    assert conv == fresh
