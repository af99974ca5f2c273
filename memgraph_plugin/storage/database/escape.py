"""Safe construction of LanceDB (DataFusion SQL) filter strings: the one place values enter them."""

from __future__ import annotations

from collections.abc import Iterable


def sql_literal(value: str | int) -> str:
    """Quote `value` as a SQL literal: strings single-quoted with quotes doubled, ints checked."""
    if isinstance(value, bool):
        raise TypeError("booleans are not filter values")
    if isinstance(value, int):
        return str(int(value))
    if not isinstance(value, str):
        raise TypeError(f"filter value must be str or int, got {type(value).__name__}")
    if "\x00" in value:
        raise ValueError("filter value contains a NUL character")
    return "'" + value.replace("'", "''") + "'"


def where_eq(**columns: str | int) -> str:
    """`col = literal AND ...` for the given columns (names are ours, never user input)."""
    for name in columns:
        if not name.isidentifier():
            raise ValueError(f"bad column name {name!r}")
    return " AND ".join(f"{name} = {sql_literal(value)}" for name, value in columns.items())


def where_in(column: str, values: Iterable[str | int]) -> str:
    """`col IN (literal, ...)`; an empty list matches nothing."""
    if not column.isidentifier():
        raise ValueError(f"bad column name {column!r}")
    items = [sql_literal(v) for v in values]
    if not items:
        return "false"
    return f"{column} IN ({', '.join(items)})"
