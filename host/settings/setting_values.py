"""Reading one declared setting where it is used: `int_setting` and `float_setting` take the
`Setting` that `declare` returned (its key, default and bounds), so the code reading a key never
repeats its name, default or minimum.

The host checks the settings table against the schema when it loads it; these checks run again
on the mapping handed to the reading code (a recall request's settings, a test's dict), and raise
the reader's own error type (``error``, a `ValueError`) naming the key and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from host.settings.settings_schema import Setting

__all__ = ["float_setting", "int_setting"]


def _bounds(setting: Setting) -> str:
    """`` >= 1``, `` in [0, 1]``, `` <= 5`` or nothing: the declared bounds, as errors say them."""
    low, high = setting.minimum, setting.maximum
    if low is not None and high is not None:
        return f" in [{low:g}, {high:g}]"
    if low is not None:
        return f" >= {low:g}"
    return f" <= {high:g}" if high is not None else ""


def _in_bounds(setting: Setting, value: float) -> bool:
    low, high = setting.minimum, setting.maximum
    return (low is None or value >= low) and (high is None or value <= high)


def int_setting(
    settings: Mapping[str, Any], setting: Setting, *, error: type[ValueError] = ValueError
) -> int:
    """The integer value of ``setting`` (absent: its default), inside the declared bounds; else
    ``error`` saying ``setting KEY=VALUE must be an integer >= MIN``. A bool is no integer."""
    value = settings.get(setting.key, setting.default)
    if isinstance(value, bool) or not isinstance(value, int) or not _in_bounds(setting, value):
        raise error(f"setting {setting.key}={value!r} must be an integer{_bounds(setting)}")
    return value


def float_setting(
    settings: Mapping[str, Any],
    setting: Setting,
    *,
    bounded: bool = False,
    error: type[ValueError] = ValueError,
) -> float:
    """The numeric value of ``setting`` (absent: its default) as a float; else ``error`` saying
    ``setting KEY=VALUE must be a number``. ``bounded``: the value must also be finite and inside
    the declared bounds (``must be a number in [0, 1]``); without it any number passes, as the
    recall weights have always been read."""
    value = settings.get(setting.key, setting.default)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and bounded and not (math.isfinite(value) and _in_bounds(setting, value)):
        number = False
    if not number:
        where = _bounds(setting) if bounded else ""
        raise error(f"setting {setting.key}={value!r} must be a number{where}")
    return float(value)
