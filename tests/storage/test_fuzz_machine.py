"""The property-based suite (`fuzz_machine.ChatMachine`) at a modest size for ``make test``;
``MEMGRAPH_FUZZ_EXAMPLES`` raises it (``bench/fuzz.py`` runs 10,000 steps, randomly).

Here the examples are derandomized (the same ones every run): ``make test`` checks the same
sequences each time instead of drawing new ones, so a run's outcome does not depend on chance.
The random exploration is ``bench/fuzz.py``'s job; what it finds is reported there."""

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
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
