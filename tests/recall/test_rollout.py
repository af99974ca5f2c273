"""Rollout modes and the fallback reasons they imply."""

import pytest

from memgraph_plugin.recall.rollout import (
    FallbackReason,
    RolloutMode,
    RolloutSettingError,
    decide,
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
