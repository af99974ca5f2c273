"""Storage settings, read from the host settings (`storage_*` keys)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class StorageSettings:
    """How the LanceDB database is kept.

    - `uri`: any LanceDB URI (a folder, `s3://bucket/prefix`, `gs://...`, `az://...`).
    - `retention_seconds`: table versions older than this are deleted when compacting.
    - `optimize_every`: compact and clean up after this many commits by this process.
    - `checkpoint_every`: snapshot a chat after this many journal rows since the last snapshot.
    - `maintenance_seconds`: the background maintenance runs at least this often.
    - `snapshot_chain`: snapshots in a chain (one full, then deltas) before a full one again.
    - `keep_checkpoints`: snapshots kept per chat (older ones are deleted).
    - `history_seconds`: journal rows older than this and older than the oldest kept snapshot are
      deleted; `None` keeps the whole history.
    - `keyword_schema`: the node-type specs (JSON of `Schema.to_list()`) the keyword index reads
      nodes by; snapshots then carry the index's token lists (`keyword_rows.py`). None: they don't.
    - `single_writer`: each chat is written by one host at a time (``chat_lease_table`` set:
      hosts over one bucket hold a chat's lease while they write it), so a commit is not read
      back to find another writer's row, and a loaded chat is trusted until its lease says
      another host wrote it.
    """

    uri: str
    retention_seconds: float = 600.0
    optimize_every: int = 50
    checkpoint_every: int = 200
    keep_checkpoints: int = 3
    history_seconds: float | None = None
    maintenance_seconds: float = 30.0
    snapshot_chain: int = 8
    storage_options: Mapping[str, str] = attrs.field(factory=dict)
    keyword_schema: str | None = None
    single_writer: bool = False

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], *, data_dir: str | Path | None = None
    ) -> StorageSettings:
        uri = settings.get("storage_uri")
        if not uri:
            base = Path(data_dir) if data_dir is not None else Path(".memgraph")
            uri = str(base / "lancedb")
        history = settings.get("storage_history_seconds")
        options = settings.get("storage_options") or {}
        if not isinstance(options, Mapping):
            raise ValueError(
                f"setting storage_options: expected a table of strings, got {options!r}"
            )
        return cls(
            uri=str(uri),
            retention_seconds=number_setting(settings, "storage_retention_seconds", 600.0, 0),
            optimize_every=int(number_setting(settings, "storage_optimize_every", 50, 1)),
            checkpoint_every=int(number_setting(settings, "storage_checkpoint_every", 200, 1)),
            keep_checkpoints=int(number_setting(settings, "storage_keep_checkpoints", 3, 1)),
            history_seconds=(
                None
                if history is None
                else number_setting(settings, "storage_history_seconds", 0, 0)
            ),
            maintenance_seconds=number_setting(settings, "storage_maintenance_seconds", 30.0, 0.05),
            snapshot_chain=int(number_setting(settings, "storage_snapshot_chain", 8, 1)),
            storage_options={str(k): str(v) for k, v in options.items()},
            single_writer=bool(settings.get("chat_lease_table")),
        )


def number_setting(settings: Mapping[str, Any], key: str, default: float, minimum: float) -> float:
    """A numeric setting, or a `ValueError` naming the setting and what it holds."""
    value = settings.get(key, default)
    if value is None:
        return float(default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not number >= minimum or number == float("inf"):
        raise ValueError(f"setting {key}: expected a number >= {minimum:g}, got {value!r}")
    return number
