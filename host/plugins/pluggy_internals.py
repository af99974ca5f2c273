"""Every place the host reaches past pluggy's public API, in one module.

pluggy has no public way to list a manager's hooks, drop a hook, take a spec off a hook, keep a
historic hook's call history across a reload, or reorder a hook's implementations, and it does
not document the order ``get_hookimpls()`` returns (the host calls implementations one by one,
in pluggy's order). The host needs each (see `host.plugins.specs`, `host.plugins.notify`,
`host.reload.reload` and `Host._restore_call_order`). They touch ``HookRelay.__dict__``,
``HookCaller.spec`` (written), ``HookCaller._hookimpls`` (and its order) and
``HookCaller._call_history``, which are the same in every pluggy of the range pinned in
pyproject.toml (``>=1.5,<2``; 1.5.0, 1.6.0 and 1.7.0 read alike).
``tests/test_pluggy_internals.py`` exercises each function against the installed pluggy and
checks that it is in that range, so a pluggy that changes them fails there first, by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

__all__ = [
    "call_history",
    "call_order",
    "drop_hook",
    "forget_spec",
    "hook_callers",
    "restore_call_history",
    "sort_hookimpls",
]


def hook_callers(pm: pluggy.PluginManager) -> dict[str, pluggy.HookCaller]:
    """Every hook caller of ``pm`` by hook name (the relay's attributes: pluggy lists none)."""
    return {
        name: caller
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
    }


def drop_hook(pm: pluggy.PluginManager, name: str) -> None:
    """Remove the hook ``name`` from ``pm`` entirely (spec, history, caller)."""
    delattr(pm.hook, name)


def forget_spec(caller: pluggy.HookCaller) -> None:
    """Take the spec off ``caller``; its implementations stay, unverified, as pluggy keeps those
    of a hook without a spec (a spec added later checks them). Only a hook with a spec keeps a
    historic call history, so that goes too."""
    caller.spec = None
    caller._call_history = None


def call_history(caller: pluggy.HookCaller) -> list[Any] | None:
    """The calls a historic hook replays to each new implementation (``None``: not historic)."""
    return caller._call_history


def restore_call_history(caller: pluggy.HookCaller, history: list[Any]) -> bool:
    """Give a historic hook whose spec was added again the calls it had; ``False`` (nothing done)
    when the hook has no spec, is not historic, or has been called since."""
    current = caller._call_history
    if caller.spec is None or current is None or current:
        return False
    current.extend(history)
    return True


def call_order(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """``caller``'s implementations in the order pluggy calls them: wrappers first (outermost
    first), then the others. pluggy documents ``get_hookimpls()`` but not its order: it calls
    that list from its end."""
    return list(reversed(caller.get_hookimpls()))


def sort_hookimpls(caller: pluggy.HookCaller, key: Callable[[pluggy.HookImpl], Any]) -> None:
    """Reorder ``caller``'s implementations by ``key``, in place. pluggy calls them from the END
    of this list, so the implementation sorted last runs first."""
    impls = caller._hookimpls
    if len(impls) > 1:
        impls.sort(key=key)
