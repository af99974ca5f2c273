"""Which embedding profiles exist: the built-in ones plus those plugins give through a hook.

Built in: `wordllama` (the default: semantic, offline, weights from its wheel) and `hashing`
(feature hashing: no model at all, wording only). A plugin implements
`memgraph_embedding_profiles()` and returns a profile, a list of them, or a mapping name ->
profile. The host setting `embedding_profile` picks one by name; `"none"` turns vectors off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.embedding.profile import EmbeddingProfile
from memgraph_plugin.embedding.wordllama import WordLlamaProfile

log = logging.getLogger(__name__)

HOOK_NAME = "memgraph_embedding_profiles"

#: the profile a host uses when its settings name none (``embedding_profile = "none"``: no vectors)
DEFAULT_PROFILE = "wordllama"

BUILTIN_PROFILES: dict[str, Callable[[], EmbeddingProfile]] = {
    "wordllama": WordLlamaProfile,
    "hashing": HashingProfile,
}


class UnknownProfileError(LookupError):
    """The settings name a profile that no built-in and no loaded plugin provides."""


def _as_profiles(result: Any) -> Iterable[EmbeddingProfile]:
    if result is None:
        return ()
    if isinstance(result, Mapping):
        return tuple(result.values())
    if isinstance(result, EmbeddingProfile):
        return (result,)
    return tuple(result)


def plugin_profiles(pm: Any) -> dict[str, EmbeddingProfile]:
    """Profiles offered by plugins; a plugin that raises is logged by name and skipped."""
    out: dict[str, EmbeddingProfile] = {}
    hook = getattr(getattr(pm, "hook", None), HOOK_NAME, None)
    if hook is None:
        return out
    for impl in hook.get_hookimpls():
        try:
            profiles = _as_profiles(impl.function())
            for profile in profiles:
                if not isinstance(profile, EmbeddingProfile):
                    raise TypeError(f"{profile!r} is not an EmbeddingProfile (name, dim, embed)")
                out.setdefault(str(profile.name), profile)
        except Exception:
            log.exception("plugin %r failed in %s", impl.plugin_name, HOOK_NAME)
    return out


def available_profiles(pm: Any = None) -> dict[str, EmbeddingProfile | Callable[[], Any]]:
    """name -> profile (plugins) or factory (built-ins); plugin names win over built-ins."""
    out: dict[str, Any] = dict(BUILTIN_PROFILES)
    if pm is not None:
        out.update(plugin_profiles(pm))
    return out


def profile_name(settings: Mapping[str, Any]) -> str | None:
    """The profile name `settings` configure (the default when unset); None: vectors off."""
    name = settings.get("embedding_profile", DEFAULT_PROFILE)
    if name is None or (isinstance(name, str) and name.strip().lower() in ("", "none")):
        return None
    return str(name)


def resolve_profile(name: str | None, pm: Any = None) -> EmbeddingProfile | None:
    """The profile called `name`; `None` for no name, ``""`` or ``"none"`` (vectors off)."""
    if name is None or name == "" or (isinstance(name, str) and name.lower() == "none"):
        return None
    if not isinstance(name, str):
        raise UnknownProfileError(f"embedding_profile must be a name, got {name!r}")
    found = available_profiles(pm).get(name)
    if found is None:
        known = ", ".join(sorted(available_profiles(pm))) or "none"
        raise UnknownProfileError(f"unknown embedding profile {name!r} (available: {known})")
    if isinstance(found, EmbeddingProfile):
        return found
    return found()
