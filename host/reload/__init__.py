"""Hot reload of a plugins folder, and the `dev` command that runs it."""

from host.reload.reload import (
    MAX_GROUP_MS,
    ReloadAction,
    Reloader,
    ReloadReport,
)

__all__ = [
    "MAX_GROUP_MS",
    "ReloadAction",
    "ReloadReport",
    "Reloader",
]
