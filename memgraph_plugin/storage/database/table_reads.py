"""A host's database with its reads through pylance and LanceDB connected on first write.

`import lancedb` costs about a second of a process's first open (its REST namespace client's
pydantic models), `import lance` a fifth of that; both read the same files (a LanceDB table is the
Lance dataset ``<db uri>/<name>.lance``). So a `Database` hands out `TableHandle`s whose scans
(``table.search()`` without a vector: the only reads an open makes), version, schema, appends
and deletes go through ``lance.dataset``, and everything else (compaction, indexes, vector
search, updates) through the LanceDB table, opened on first use. A handle reads the newest
version at every scan, as LanceDB's `read_consistency_interval` of 0 does. A missing table of a
database in a local folder is made empty by pylance too (`Database.open_or_make`, with the
options LanceDB makes it with), so a new host's first write does not import LanceDB either. A
table that pylance cannot open or make (an object store, one refusing) goes through LanceDB from
the start: it makes the table, or raises its error as before (`connect.connect_database`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pyarrow as pa

from memgraph_plugin.storage.database.connect import check_options, connect_database, local_folder
from memgraph_plugin.storage.settings import StorageSettings


def table_uri(uri: str, name: str) -> str:
    """Where LanceDB keeps table `name` of the database at `uri` (a folder or an object store
    prefix)."""
    folder = local_folder(uri)
    if folder is not None:
        return str(folder / f"{name}.lance")
    return f"{uri.rstrip('/')}/{name}.lance"


class Database:
    """The database of `settings`: tables read through pylance, the LanceDB connection made on
    first use (`connection`); `consistent` as in `connect.connect_database`."""

    def __init__(self, settings: StorageSettings, *, consistent: bool = True) -> None:
        self.settings = settings
        self.consistent = consistent
        self._options = {str(k): str(v) for k, v in dict(settings.storage_options).items()}
        if local_folder(settings.uri) is None:
            check_options(settings.uri, self._options)
        self._connection: Any = None
        self._lock = threading.Lock()

    def connection(self) -> Any:
        """The LanceDB connection (LanceDB imported and connected now, once)."""
        with self._lock:
            if self._connection is None:
                self._connection = connect_database(self.settings, consistent=self.consistent)
            return self._connection

    def open_table(self, name: str) -> Any:
        """Table `name`: a `TableHandle` reading through pylance when pylance opens it, else
        LanceDB's table (which raises for a missing one, as `tables.open_or_create` expects).
        Of a database that is not kept consistent, a handle that stays at the version it was
        last moved to (`TableHandle.checkout`)."""
        dataset = _open_dataset(table_uri(self.settings.uri, name), self._options)
        if dataset is None:
            return self.connection().open_table(name)
        opener = lambda: self.connection().open_table(name)  # noqa: E731
        return TableHandle(
            name, dataset, opener, pinned=not self.consistent, storage_options=self._options
        )

    def open_or_make(self, name: str, schema: pa.Schema, **options: Any) -> TableHandle | None:
        """Table `name` of a database in a local folder, made empty by pylance when missing
        (`options`: `lance.write_dataset`'s, those LanceDB makes its tables with); None for
        any other database, or when pylance cannot make it (then LanceDB makes it)."""
        if local_folder(self.settings.uri) is None:
            return None
        uri = table_uri(self.settings.uri, name)
        if _open_dataset(uri, self._options) is None:
            try:
                import lance

                lance.write_dataset(schema.empty_table(), uri, mode="create", **options)
            except Exception:  # noqa: BLE001 - made by another process meanwhile, or not makeable
                pass
        dataset = _open_dataset(uri, self._options)
        if dataset is None:
            return None
        opener = lambda: self.connection().open_table(name)  # noqa: E731
        return TableHandle(
            name, dataset, opener, pinned=not self.consistent, storage_options=self._options
        )

    def __getattr__(self, name: str) -> Any:
        """Anything else (`create_table`, `list_tables`, ...): the LanceDB connection's."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.connection(), name)


def _open_dataset(uri: str, options: dict[str, str]) -> Any:
    """The Lance dataset at `uri`, or None when pylance cannot open it (missing, unreachable:
    LanceDB then makes it or reports why)."""
    try:
        import lance

        return lance.dataset(uri, storage_options=options or None)
    except Exception:
        return None


class TableHandle:
    """One table: scans, version, schema, row counts, appends and deletes through pylance, the
    rest through LanceDB's table (opened by `opener` on first use). `pinned`: reads see the
    version the handle was last moved to (`checkout`), not the newest.

    Threads share a handle (storage work runs on `asyncio.to_thread`), and a pylance dataset
    object is not safe to change while another thread reads it: moving it to another version
    (`checkout_latest`) or deleting through it while a scan is set up on it fails with
    "Already borrowed". So the handle keeps two kinds of dataset object: `_writer`, which follows
    the newest version and makes the appends and deletes, used only under the handle's lock and
    never scanned; and a snapshot per version read (`latest`), opened at that version and never
    changed afterwards, which any number of threads scan at once. A snapshot shares the
    writer's session, so its manifest and index caches are the writer's."""

    def __init__(
        self,
        name: str,
        dataset: Any,
        opener: Callable[[], Any],
        *,
        pinned: bool = False,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self._writer = dataset
        self._snapshot: Any = dataset if pinned else None
        self._opener = opener
        self._pinned = pinned
        self._options = storage_options or None
        self._table: Any = None
        self._lock = threading.Lock()
        #: an append first moves the writer to the newest version (its schema is checked
        #: there); False: it appends on top of whatever version is newest when it commits
        #: (Lance rebases an append onto other appends), one listing of the versions less per
        #: append on an object store (a journal whose chats have one writer each)
        self.append_at_latest = True
        #: the local folder `table_head.NextVersionProbe` finds the manifests in
        self._dataset_path = dataset.uri

    def lancedb_table(self) -> Any:
        """LanceDB's table (opened now, once)."""
        table = self._table
        if table is None:
            with self._lock:
                if self._table is None:
                    self._table = self._opener()
                table = self._table
        return table

    def latest(self) -> Any:
        """A dataset object at the newest version (looked up now: a scan sees every commit),
        or, of a pinned handle, at the version it was moved to. Nobody changes the object it
        returns: scan it from any thread."""
        with self._lock:
            if self._pinned:
                return self._snapshot
            self._writer.checkout_latest()
            return self._snapshot_at(int(self._writer.version))

    def _snapshot_at(self, version: int) -> Any:
        """The snapshot of `version` (the lock held): the kept one, or a new object opened
        there (never the writer's: the writer changes)."""
        snapshot = self._snapshot
        if snapshot is None or int(snapshot.version) != version:
            import lance

            snapshot = self._snapshot = lance.dataset(
                self._dataset_path,
                version=version,
                storage_options=self._options,
                session=self._writer.session(),
            )
        return snapshot

    @property
    def version(self) -> int:
        return int(self.latest().version)

    @property
    def schema(self) -> pa.Schema:
        return self.latest().schema

    def count_rows(self, filter: str | None = None) -> int:
        return int(self.latest().count_rows(filter))

    def checkout(self, version: int) -> None:
        """Move a pinned handle to table version `version` (`Journal._classify` counts rows of
        old versions): a new snapshot object, the old one left as it is for its readers."""
        with self._lock:
            self._snapshot = self._snapshot.checkout_version(int(version))

    def add(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        """Append `data` (one commit) and answer as LanceDB's `add` does (the new table
        version): through pylance when `data` is a table (or a stream of record batches,
        written as they come) of the table's own schema (every append of this package), else
        LanceDB's `add` (which casts)."""
        plain = not (self._pinned or args or kwargs)
        if plain and isinstance(data, pa.Table | pa.RecordBatchReader):
            with self._lock:
                if self.append_at_latest:
                    self._writer.checkout_latest()
                if data.schema.equals(self._writer.schema, check_metadata=False):
                    self._writer.insert(data)
                    return _Added(int(self._writer.version))
        if isinstance(data, pa.RecordBatchReader):
            data = data.read_all()
        return self.lancedb_table().add(data, *args, **kwargs)

    def newest_fragment(self) -> tuple[int, int] | None:
        """(id, rows) of the newest fragment of the version the last append made (that
        append's: an append's fragments get ids after every other); None: no fragment."""
        with self._lock:
            fragments = self._writer.get_fragments()
        if not fragments:
            return None
        newest = max(fragments, key=lambda f: f.fragment_id)
        return int(newest.fragment_id), int(newest.physical_rows)

    def delete(self, where: str) -> Any:
        """Delete the rows `where` selects (one commit, retried on a conflict as LanceDB's
        `delete` is) through pylance; of a pinned handle, through LanceDB's table."""
        if self._pinned:
            return self.lancedb_table().delete(where)
        with self._lock:
            self._writer.checkout_latest()
            return self._writer.delete(where)

    def search(self, query: Any = None, *args: Any, **kwargs: Any) -> Any:
        """A scan (no `query`: read through pylance), or LanceDB's search of a vector."""
        if query is None and not args and not kwargs:
            return Scan(self)
        return self.lancedb_table().search(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        return getattr(self.lancedb_table(), name)


#: A handle's own attributes: never looked up on LanceDB's table (not set yet while it is made).
_OWN = frozenset(
    ("_table", "_writer", "_snapshot", "_opener", "_lock", "_options", "append_at_latest")
)


class _Added:
    """What an append made: LanceDB's `AddResult` has the same `version`."""

    __slots__ = ("version",)

    def __init__(self, version: int) -> None:
        self.version = version


class Scan:
    """The part of LanceDB's query builder a scan uses (`where`, `select`, `with_row_id`,
    `limit`, `to_arrow`, `to_batches`), run by pylance's scanner."""

    def __init__(self, handle: TableHandle) -> None:
        self._handle = handle
        self._filter: str | None = None
        self._columns: list[str] | None = None
        self._row_id = False
        self._limit: int | None = None

    def where(self, condition: str, prefilter: bool = True) -> Scan:
        self._filter = condition
        return self

    def select(self, columns: list[str]) -> Scan:
        self._columns = list(columns)
        return self

    def with_row_id(self, flag: bool = True) -> Scan:
        self._row_id = bool(flag)
        return self

    def limit(self, limit: int | None) -> Scan:
        self._limit = None if limit is None else int(limit)
        return self

    def _scanner(self, batch_size: int | None = None) -> Any:
        return self._handle.latest().scanner(
            columns=self._columns,
            filter=self._filter,
            limit=self._limit,
            with_row_id=self._row_id,
            batch_size=batch_size,
        )

    def to_arrow(self) -> pa.Table:
        return self._scanner().to_table()

    def to_batches(self, batch_size: int | None = None) -> pa.RecordBatchReader:
        return self._scanner(batch_size).to_reader()

    def to_list(self) -> list[dict[str, Any]]:
        return self.to_arrow().to_pylist()


def on_own_thread(fn: Callable[..., Any], *args: Any) -> Future[Any]:
    """`fn(*args)` on a new daemon thread (no pool: nothing to go stale in a forked child)."""
    done: Future[Any] = Future()

    def run() -> None:
        if not done.set_running_or_notify_cancel():
            return
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # handed to the caller by `result()`
            done.set_exception(exc)

    threading.Thread(target=run, name="vector-read", daemon=True).start()
    return done
