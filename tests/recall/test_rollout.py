"""Rollout modes and the fallback reasons they imply."""

import pytest

from memgraph_plugin.recall.rollout import (
    FallbackReason,
    QualityGate,
    RolloutMode,
    RolloutSettingError,
    decide,
    gate_settings,
    parse_mode,
)


def test_default_is_canary_and_applies_expansion():
    d = decide({})
    assert d.mode is RolloutMode.CANARY
    assert d.run_expansion and d.apply_expansion and d.reason is None


@pytest.mark.parametrize(
    ("settings", "run", "apply", "reason"),
    [
        ({"recall_rollout": "off"}, False, False, FallbackReason.ROLLOUT_OFF),
        ({"recall_rollout": "SHADOW"}, True, False, FallbackReason.SHADOW_MODE),
        ({"recall_rollout": "canary"}, True, True, None),
        ({"recall_graph_expansion": False}, False, False, FallbackReason.FEATURE_FLAG_DISABLED),
        (
            {"recall_rollout": "canary", "recall_graph_expansion": "off"},
            False,
            False,
            FallbackReason.FEATURE_FLAG_DISABLED,
        ),
    ],
)
def test_modes(settings, run, apply, reason):
    d = decide(settings)
    assert (d.run_expansion, d.apply_expansion, d.reason) == (run, apply, reason)


@pytest.mark.parametrize("bad", ["sometimes", 3, ["canary"]])
def test_bad_mode_names_the_setting(bad):
    with pytest.raises(RolloutSettingError, match="recall_rollout"):
        parse_mode(bad)


def test_bad_flag_names_the_setting():
    with pytest.raises(RolloutSettingError, match="recall_graph_expansion"):
        decide({"recall_graph_expansion": "maybe"})


def test_a_closed_quality_gate_measures_but_does_not_apply():
    d = decide({}, gate_blocked=True)
    assert (d.run_expansion, d.apply_expansion) == (True, False)
    assert d.reason is FallbackReason.QUALITY_GATE_BLOCKED
    # the gate only holds canary back: off and shadow keep their own reasons
    assert decide({"recall_rollout": "shadow"}, gate_blocked=True).reason.value == "shadow_mode"


def test_quality_gate_rolling_window():
    gate = QualityGate()
    for failed in (True, True, True):
        gate.record(failed, window=6)
    assert not gate.blocked(6, 0.5)  # too few outcomes to judge
    gate.record(True, window=6)
    assert gate.blocked(6, 0.5)
    for _ in range(4):
        gate.record(False, window=6)
    assert not gate.blocked(6, 0.5)  # the last 6: 2 failed, 4 fine
    assert gate.blocked(6, 0.25)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"recall_quality_window": 0}, "recall_quality_window"),
        ({"recall_quality_max_error_rate": 1.5}, "recall_quality_max_error_rate"),
        ({"recall_quality_max_error_rate": "half"}, "recall_quality_max_error_rate"),
    ],
)
def test_bad_gate_settings_are_named(settings, named):
    with pytest.raises(RolloutSettingError, match=named):
        gate_settings(settings)


def test_the_declared_rollout_choices_are_the_modes():
    import typing

    from memgraph_plugin.settings_keys import RECALL

    assert typing.get_args(RECALL.recall_rollout.type) == tuple(m.value for m in RolloutMode)
    assert parse_mode(None) is RolloutMode(RECALL.recall_rollout.default)
