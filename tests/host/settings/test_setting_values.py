"""Reading a declared setting where it is used (`host.settings.setting_values`): the key, default
and bounds come from the key's attrs field; a bad value raises the reader's error naming key and
value."""

from __future__ import annotations

import math

import attrs
import pytest

from host.settings.setting_values import float_setting, int_setting
from host.settings.settings_schema import setting


@attrs.frozen
class DemoKeys:  # not a settings room: its keys stay out of the process-wide schema
    demo_count: int = setting(3, "doc", minimum=1)
    demo_any: int = setting(0, "doc")
    demo_rate: float = setting(0.5, "doc", minimum=0, maximum=1)
    demo_timeout: float = setting(60.0, "doc", minimum=0.001)


COUNT, ANY_INT, RATE, TIMEOUT = attrs.fields(DemoKeys)


class DemoError(ValueError):
    pass


def test_an_absent_key_reads_the_declared_default() -> None:
    assert int_setting({}, COUNT) == 3
    assert float_setting({}, RATE) == 0.5
    assert isinstance(float_setting({"demo_rate": 1}, RATE), float)


def test_int_setting_keeps_to_the_declared_bounds() -> None:
    assert int_setting({"demo_count": 7}, COUNT) == 7
    assert int_setting({"demo_any": -5}, ANY_INT) == -5
    for bad in (0, 2.5, True, "3", None):
        with pytest.raises(ValueError, match=r"setting demo_count=.* must be an integer >= 1$"):
            int_setting({"demo_count": bad}, COUNT)
    with pytest.raises(ValueError, match=r"must be an integer$"):
        int_setting({"demo_any": "x"}, ANY_INT)


def test_float_setting_checks_bounds_only_when_asked() -> None:
    assert float_setting({"demo_rate": 7}, RATE) == 7.0  # unbounded read: any number
    assert math.isnan(float_setting({"demo_rate": math.nan}, RATE))
    for bad in (True, "half", None):
        with pytest.raises(ValueError, match=r"setting demo_rate=.* must be a number$"):
            float_setting({"demo_rate": bad}, RATE)
    for bad in (1.5, -0.1, math.nan, math.inf, "half"):
        with pytest.raises(ValueError, match=r"must be a number in \[0, 1\]$"):
            float_setting({"demo_rate": bad}, RATE, bounded=True)
    with pytest.raises(ValueError, match=r"setting demo_timeout=0 must be a number >= 0.001$"):
        float_setting({"demo_timeout": 0}, TIMEOUT, bounded=True)


def test_the_reader_chooses_the_error_type() -> None:
    with pytest.raises(DemoError, match="demo_count"):
        int_setting({"demo_count": 0}, COUNT, error=DemoError)
    with pytest.raises(DemoError, match="demo_rate"):
        float_setting({"demo_rate": 2}, RATE, bounded=True, error=DemoError)
