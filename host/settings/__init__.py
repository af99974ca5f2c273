"""Host settings: the schema every key is declared in, loading, and the settings reference."""

from host.settings.settings import (
    BLOCK_ENV,
    DEFAULTS,
    SETTINGS_FILE,
    STRICT_ENV,
    SettingsState,
    env_blocked,
    env_strict,
    load_settings,
    load_state,
    read_settings_file,
)

__all__ = [
    "BLOCK_ENV",
    "DEFAULTS",
    "SETTINGS_FILE",
    "STRICT_ENV",
    "SettingsState",
    "env_blocked",
    "env_strict",
    "load_settings",
    "load_state",
    "read_settings_file",
]
