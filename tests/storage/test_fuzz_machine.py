"""The property-based suite (`fuzz_machine.ChatMachine`) at a modest size for ``make test``;
``MEMGRAPH_FUZZ_EXAMPLES`` raises it (``bench/fuzz.py`` runs 10,000 steps)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from .fuzz_machine import ChatMachine

TestChatMachine = ChatMachine.TestCase
TestChatMachine.pytestmark = [pytest.mark.slow]
TestChatMachine.settings = settings(
    max_examples=int(os.environ.get("MEMGRAPH_FUZZ_EXAMPLES", "5")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
