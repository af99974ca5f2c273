"""A thread-safe map from API name to the object a plugin published under it.

Each entry remembers its owner (the publishing plugin) and an optional version, so everything a
plugin published can leave with it, and a second plugin cannot silently take a name. Companion
plugins that start before their provider subscribe to a name and hear when it comes and goes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import attrs

log = logging.getLogger("extension_registry")

#: ``callback(name, api)``: ``api`` is the newly available object, or ``None`` when it went away.
Subscriber = Callable[[str, object | None], None]


class RegistryError(Exception):
    """A name is already taken by another owner."""

    def __init__(self, name: str, owner: str | None, taken_by: str | None) -> None:
        self.name = name
        self.owner = owner
        self.taken_by = taken_by
        super().__init__(
            f"extension API {name!r} is already registered by {_who(taken_by)}; "
            f"{_who(owner)} cannot register it (unregister it first, or pick another name)"
        )


def _who(owner: str | None) -> str:
    return f"owner {owner!r}" if owner is not None else "an anonymous owner"


@attrs.frozen
class ExtensionEntry:
    """One published API: what it is, who published it, and which version it is."""

    name: str
    api: object
    owner: str | None = None
    version: str | None = None


class _Subscription:
    """One callback. Its calls never overlap and never go back in time: a change that arrives
    while the callback runs (in any thread) is handed to the thread already delivering, and only
    the newest pending change is delivered, so the last call a subscriber saw is the current state.
    No lock is held while the callback runs.
    """

    def __init__(self, name: str, callback: Subscriber) -> None:
        self.name = name
        self.callback = callback
        self.active = True
        self._lock = threading.Lock()
        self._accepted = -1  # the newest registry change number handed to this subscription
        self._pending: tuple[object | None] | None = None
        self._draining = False

    def deliver(self, change: int, api: object | None) -> None:
        with self._lock:
            if not self.active or change <= self._accepted:
                return
            self._accepted = change
            self._pending = (api,)
            if self._draining:
                return  # the thread delivering now delivers this one next
            self._draining = True
        try:
            while True:
                with self._lock:
                    pending, self._pending = self._pending, None
                    if pending is None or not self.active:
                        self._draining = False
                        return
                try:
                    self.callback(self.name, pending[0])
                except Exception:  # noqa: BLE001 - one bad listener must not stop the others
                    log.exception("extension registry subscriber for %r raised", self.name)
        except BaseException:
            with self._lock:
                self._draining = False
            raise

    def cancel(self) -> None:
        with self._lock:
            self.active = False
            self._pending = None


class ExtensionRegistry:
    """Name -> API with owners, versions and availability subscriptions; safe from many threads.

    Callbacks run in the thread that made the change, after the registry's lock is released, so
    a callback may use the registry itself. One subscriber's calls never overlap and follow the
    order of the changes; a change made while that subscriber's callback runs is delivered by the
    thread already running it, right after. A callback that raises is logged and does not stop
    the others or the change.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._changes = 0  # numbers every change, so late deliveries can be recognised
        self._entries: dict[str, ExtensionEntry] = {}
        self._subscriptions: dict[str, list[_Subscription]] = {}

    # ------------------------------------------------------------------ publishing

    def register(
        self, name: str, api: object, *, owner: str | None = None, version: str | None = None
    ) -> ExtensionEntry:
        """Publish ``api`` as ``name``; the same owner registering again replaces its entry.

        Raises `RegistryError` when another owner holds ``name``, and `TypeError` / `ValueError`
        for a name that is not a non-empty string or an ``api`` of ``None``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"extension API name must be a non-empty string, got {name!r}")
        if api is None:
            raise ValueError(f"extension API {name!r}: api must not be None (use unregister)")
        if version is not None and not isinstance(version, str):
            raise TypeError(f"extension API {name!r}: version must be a str or None")
        entry = ExtensionEntry(name, api, owner, version)
        with self._lock:
            current = self._entries.get(name)
            if current is not None and current.owner != owner:
                raise RegistryError(name, owner, current.owner)
            self._entries[name] = entry
            change, listeners = self._change(name)
        self._fire(listeners, change, api)
        return entry

    def unregister(self, name: str) -> bool:
        """Remove ``name``; True when something was removed."""
        with self._lock:
            entry = self._entries.pop(name, None) if isinstance(name, str) else None
            if entry is None:
                return False
            change, listeners = self._change(name)
        self._fire(listeners, change, None)
        return True

    def unregister_owner(self, owner: str) -> tuple[str, ...]:
        """Remove everything ``owner`` published; returns the removed names (sorted)."""
        with self._lock:
            names = sorted(n for n, e in self._entries.items() if e.owner == owner)
            fired = []
            for name in names:
                del self._entries[name]
                fired.append(self._change(name))
        for change, listeners in fired:
            self._fire(listeners, change, None)
        return tuple(names)

    # ------------------------------------------------------------------ reading

    def get(self, name: str) -> object | None:
        """The API published as ``name``, or ``None``; never raises."""
        entry = self.entry(name)
        return entry.api if entry is not None else None

    def entry(self, name: str) -> ExtensionEntry | None:
        """The whole entry (api, owner, version) for ``name``, or ``None``; never raises."""
        if not isinstance(name, str):  # only str names can be registered
            return None
        try:
            with self._lock:
                return self._entries.get(name)
        except Exception:  # noqa: BLE001 - a str subclass with a broken __hash__ / __eq__
            return None

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        with self._lock:
            return sorted(self._entries)

    def owned_by(self, owner: str | None) -> tuple[str, ...]:
        """The names ``owner`` published, sorted."""
        with self._lock:
            return tuple(sorted(n for n, e in self._entries.items() if e.owner == owner))

    def entries(self) -> tuple[ExtensionEntry, ...]:
        """A snapshot of every entry, sorted by name."""
        with self._lock:
            return tuple(self._entries[n] for n in sorted(self._entries))

    def __contains__(self, name: object) -> bool:
        return self.entry(name) is not None  # type: ignore[arg-type]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    # ------------------------------------------------------------------ subscriptions

    def subscribe(
        self, name: str, callback: Subscriber, *, replay: bool = False
    ) -> Callable[[], None]:
        """Call ``callback(name, api)`` when ``name`` is registered or replaced, and
        ``callback(name, None)`` when it goes away. Returns an idempotent unsubscribe function.

        With ``replay=True`` the callback is also called at once when ``name`` is available now,
        which closes the gap between a ``get`` and a ``subscribe``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"subscribe: name must be a non-empty string, got {name!r}")
        if not callable(callback):
            raise TypeError(f"subscribe({name!r}): callback must be callable")
        subscription = _Subscription(name, callback)
        with self._lock:
            self._subscriptions.setdefault(name, []).append(subscription)
            current = self._entries.get(name) if replay else None
            change = self._changes
        if current is not None:
            subscription.deliver(change, current.api)

        def unsubscribe() -> None:
            with self._lock:
                subscription.cancel()  # nothing more is delivered, pending changes included
                subs = self._subscriptions.get(name)
                if subs and subscription in subs:
                    subs.remove(subscription)
                    if not subs:
                        del self._subscriptions[name]

        return unsubscribe

    def unsubscribe_where(self, predicate: Callable[[Subscriber], bool]) -> int:
        """Cancel every subscription whose callback ``predicate`` accepts; returns how many.

        Hot reload uses it to drop what a replaced plugin's code subscribed.
        """
        with self._lock:
            doomed = [
                (name, sub)
                for name, subs in self._subscriptions.items()
                for sub in subs
                if predicate(sub.callback)
            ]
            for name, subscription in doomed:
                subscription.cancel()
                subs = self._subscriptions[name]
                subs.remove(subscription)
                if not subs:
                    del self._subscriptions[name]
        return len(doomed)

    def _change(self, name: str) -> tuple[int, list[_Subscription]]:
        """Number a change of ``name`` and snapshot its subscribers (call with the lock held)."""
        self._changes += 1
        return self._changes, list(self._subscriptions.get(name, ()))

    @staticmethod
    def _fire(listeners: list[_Subscription], change: int, api: object | None) -> None:
        for subscription in listeners:
            subscription.deliver(change, api)
