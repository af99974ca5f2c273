"""Undoing the hook specs a failed registration added (pluggy cannot remove a spec).

A plugin's ``host_addhooks`` runs inside ``pm.register``; when the registration then fails, the
specs it added would stay behind, so the plugin could never be registered again ("already
registered within namespace") and plugins would be checked against a spec nobody provides.
"""

from __future__ import annotations

import attrs
import pluggy


def hook_callers(pm: pluggy.PluginManager) -> dict[str, pluggy.HookCaller]:
    """Every hook caller of ``pm`` by hook name."""
    return {
        name: caller
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
    }


@attrs.frozen
class SpecSnapshot:
    """Which hooks existed and which had a spec, taken before a registration."""

    existing: frozenset[str]
    with_spec: frozenset[str]

    @classmethod
    def take(cls, pm: pluggy.PluginManager) -> SpecSnapshot:
        callers = hook_callers(pm)
        return cls(
            frozenset(callers), frozenset(n for n, c in callers.items() if c.spec is not None)
        )

    def added_since(self, pm: pluggy.PluginManager) -> tuple[str, ...]:
        """The hooks that got a spec after the snapshot, sorted."""
        return tuple(
            sorted(
                name
                for name, caller in hook_callers(pm).items()
                if caller.spec is not None and name not in self.with_spec
            )
        )

    def restore(self, pm: pluggy.PluginManager) -> tuple[str, ...]:
        """Forget the specs added since the snapshot; returns their hook names.

        A hook that did not exist before and has no implementation left goes away entirely;
        one that other plugins implement stays, without a spec, as it was.
        """
        added = self.added_since(pm)
        for name in added:
            caller = getattr(pm.hook, name)
            if name not in self.existing and not caller.get_hookimpls():
                delattr(pm.hook, name)
                continue
            caller.spec = None
            caller._call_history = None  # only a hook with a spec keeps a (historic) history
        return added
