"""Hook specs that come and go with plugins (pluggy itself cannot remove a spec).

A plugin's ``host_addhooks`` runs inside ``pm.register``; the specs it adds belong to it. When the
registration then fails, or the plugin is unregistered later, they are forgotten here: otherwise
the plugin could never be registered again ("already registered within namespace") and other
plugins would be checked against a spec nobody provides.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

import attrs
import pluggy

from host.plugins.fresh_import import owns_module
from host.plugins.pluggy_internals import drop_hook, forget_spec, hook_callers

__all__ = [
    "SpecSnapshot",
    "forget_specs",
    "hook_callers",
    "namespace_module",
    "specs_declared_in",
]


def namespace_module(spec: Any) -> str:
    """The module a hook spec is declared in (its namespace module, or its class's module)."""
    namespace = spec.namespace
    if isinstance(namespace, ModuleType):
        return namespace.__name__
    return getattr(namespace, "__module__", "") or ""


def specs_declared_in(pm: pluggy.PluginManager, module_name: str) -> tuple[str, ...]:
    """The hooks whose spec is declared in module ``module_name`` or a submodule of it, sorted."""
    return tuple(
        sorted(
            name
            for name, caller in hook_callers(pm).items()
            if caller.spec is not None and owns_module(module_name, namespace_module(caller.spec))
        )
    )


def forget_specs(
    pm: pluggy.PluginManager, names: Iterable[str], *, keep: Iterable[str] = ()
) -> tuple[str, ...]:
    """Take the spec off each hook in ``names``; returns those that had one.

    A hook nobody implements any more goes away entirely (unless it is in ``keep``); one that other
    plugins implement stays, without a spec: pluggy keeps such implementations unverified and
    checks them again when a spec for the hook is added.
    """
    keep = frozenset(keep)
    forgotten = []
    for name in names:
        caller = getattr(pm.hook, name, None)
        if not isinstance(caller, pluggy.HookCaller) or caller.spec is None:
            continue
        forgotten.append(name)
        if name not in keep and not caller.get_hookimpls():
            drop_hook(pm, name)
            continue
        forget_spec(caller)
    return tuple(forgotten)


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
        return forget_specs(pm, self.added_since(pm), keep=self.existing)
