"""Reading one declared key where it is used: `int_setting` and `float_setting` take the key's
attrs field (``attrs.fields(RecallKeys).recall_top_k``: its name, default and bounds), so the code
reading a key never repeats its name, default or minimum.

The host checks the settings table against the schema when it loads it; these checks run again
on the mapping handed to the reading code (a recall request's settings, a test's dict), and raise
the reader's own error type (``error``, a `ValueError`) naming the key and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from host.settings.settings_schema import bounds_text

__all__ = ["float_setting", "int_setting"]

Field = attrs.Attribute  # type: ignore[type-arg]


def _in_bounds(field: Field, value: float) -> bool:
    low, high = field.metadata.get("minimum"), field.metadata.get("maximum")
    return (low is None or value >= low) and (high is None or value <= high)


def int_setting(
    settings: Mapping[str, Any], field: Field, *, error: type[ValueError] = ValueError
) -> int:
    """The integer value of ``field`` (absent: its default), inside the declared bounds; else
    ``error`` saying ``setting KEY=VALUE must be an integer >= MIN``. A bool is no integer."""
    value = settings.get(field.name, field.default)
    if isinstance(value, bool) or not isinstance(value, int) or not _in_bounds(field, value):
        raise error(f"setting {field.name}={value!r} must be an integer{bounds_text(field)}")
    return value


def float_setting(
    settings: Mapping[str, Any],
    field: Field,
    *,
    bounded: bool = False,
    error: type[ValueError] = ValueError,
) -> float:
    """The numeric value of ``field`` (absent: its default) as a float; else ``error`` saying
    ``setting KEY=VALUE must be a number``. ``bounded``: the value must also be finite and inside
    the declared bounds (``must be a number in [0, 1]``); without it any number passes, as the
    recall weights are read."""
    value = settings.get(field.name, field.default)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and bounded and not (math.isfinite(value) and _in_bounds(field, value)):
        number = False
    if not number:
        where = bounds_text(field) if bounded else ""
        raise error(f"setting {field.name}={value!r} must be a number{where}")
    return float(value)
