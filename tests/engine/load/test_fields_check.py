"""The quick field check of an import (`store_import._fields_ok`) against the full
one (`store_file.store_problems`): it passes a node only when the full check finds nothing,
and for titles, texts (ASCII or not), numbers, flags and lists of texts it decides exactly,
sizes at the limits included (so a 100k-node import never asks `node_size_problem`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.engine.load.import_pass import _has_float
from memgraph_plugin.engine.load.store_file import store_problems
from memgraph_plugin.engine.load.store_import import _fields_ok, _json_native
from memgraph_plugin.engine.model.values import Limits

_TEXT = st.text(
    st.one_of(
        st.sampled_from([*'ab Z9"\\\x01\x7f', "é", "艾", "\ud800", "\U00020000"]),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)
_VALUE = st.one_of(
    _TEXT,
    st.integers(min_value=-(2**64), max_value=2**64),
    st.booleans(),
    st.none(),
    st.lists(_TEXT, max_size=4),
    st.lists(st.one_of(_TEXT, st.integers(0, 9)), max_size=3),
)
_LIMITS = st.builds(
    Limits,
    max_title_chars=st.integers(1, 14),
    max_field_bytes=st.integers(1, 60),
    max_field_name_chars=st.integers(1, 6),
    max_node_bytes=st.integers(1, 160),
)


def _problems(title: str, fields: dict[str, Any], limits: Limits) -> list[str]:
    node = {"id": "n_1", "type": "event", "title": title, "fields": fields}
    return store_problems({"nodes": {"n_1": node}, "edges": []}, limits)


@settings(max_examples=1500, deadline=None)
@given(_TEXT, st.dictionaries(st.text("abé", max_size=7), _VALUE, max_size=4), _LIMITS)
def test_the_quick_field_check_is_the_full_one(title, fields, limits):
    quick = _fields_ok(fields, title, limits)
    problems = _problems(title, fields, limits)
    if quick:
        assert problems == [], quick
    elif all(k.isascii() for k in fields):  # (a non-ASCII field name: left to the full check)
        assert problems, "the quick check refused a node the full check passes"
    if quick == 2:  # JSON-native, no float: the normal form's test is skipped
        assert _json_native(fields) and not _has_float(fields)


def test_a_list_of_texts_is_measured_as_json_writes_it():
    limits = Limits(max_field_bytes=14, max_node_bytes=10**6)
    assert _fields_ok({"a": ["ab", "cd"]}, "", limits) == 2  # ["ab", "cd"]: 12 bytes
    assert _fields_ok({"a": ["abc", "def"]}, "", limits) == 2  # 14 bytes: at the limit
    assert _fields_ok({"a": ["abcd", "def"]}, "", limits) == 0  # 15: over
    assert _fields_ok({"a": ['a"', "d"]}, "", limits) == 1  # escaped: measured by value_problem
    node = Limits(max_node_bytes=14)  # "t": 3, then "a": 5 and ["ab"]: 6 (as node_size_problem)
    assert _fields_ok({"a": ["ab"]}, "t", node) == 2
    assert _fields_ok({"a": ["abc"]}, "t", node) == 0


def test_a_non_ascii_title_counts_its_utf8_bytes():
    # 6 bytes and the quotes, then "a": 5 and 1: 1
    assert _fields_ok({"a": 1}, "艾艾", Limits(max_node_bytes=14)) == 2
    assert _fields_ok({"a": 1}, "艾艾", Limits(max_node_bytes=13)) == 0
    assert _problems("艾艾", {"a": 1}, Limits(max_node_bytes=13))


def test_a_short_text_with_an_escape_is_measured_as_json_when_the_node_limit_is_smaller() -> None:
    """Under a `max_node_bytes` below `max_field_bytes`, a short text is measured by
    `node_size_problem` as JSON writes it (a control character: six bytes), so the quick
    check does not pass a node the full check finds too big (hypothesis found it)."""
    limits = Limits(
        max_title_chars=1, max_field_bytes=14, max_field_name_chars=1, max_node_bytes=10
    )
    fields = {"": "0\x1f"}
    assert _problems("", fields, limits)
    assert _fields_ok(fields, "", limits) == 0
    roomy = Limits(max_title_chars=1, max_field_bytes=14, max_field_name_chars=1, max_node_bytes=16)
    assert _problems("", fields, roomy) == [] and _fields_ok(fields, "", roomy)
