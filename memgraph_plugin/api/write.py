"""The write API: coroutines that change a store, every one through the batch pipeline.

`apply_extraction_batch` is the one entry; the primitives (`create_node`, `edit_node`, ...) build a
one-op batch. `compact_nodes` runs the rollup builder in the same transaction / commit path.
`on_commit(store, result, kind)` (`CommitCallback`) runs, awaited when it returns an awaitable,
only after a write that changed the store; the session passes one that persists
``store.take_changeset()``. `get_write_api` also takes the contract's ``on_commit(store)``.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

import attrs

from ..engine.graph.store import Store
from ..engine.model.results import (
    BatchResult,
    CompactResult,
    CreateResult,
    DeleteLinksResult,
    DeleteResult,
    EditResult,
    UpsertLinksResult,
)
from ..engine.model.schema import Schema, resolve_schema
from ..engine.model.values import Limits
from ..engine.write.batch import apply_batch
from ..engine.write.curation import merge_nodes, restore_node, set_pinned
from ..engine.write.ops import DIRECTIONS
from ..engine.write.rollups import apply_rollup
from ..errors import MemoryGraphError, bad_args
from .checked_calls import checked_call

__all__ = ["CURATION_KINDS", "CommitCallback", "WriteApi", "get_write_api"]

#: the write methods that are a person's corrections: their commits are ``edit`` commits
CURATION_KINDS = frozenset({"pin_node", "unpin_node", "restore_node", "merge_nodes"})

#: ``on_commit(store, result, kind)``, the one way a `WriteApi` reports a commit: called after
#: a write that changed the store, with the store, the write's `BatchResult` and the name of the
#: method (``"create_node"``, ``"batch"``, ...); awaited when it returns an awaitable. An ``int``
#: ``version`` on what it returns (a `CommitInfo`) becomes the version of the write's result.
CommitCallback = Callable[[Any, BatchResult, str], Any]


def _endpoint(argument: str, value: Any, *, allow_ref: bool = True) -> dict[str, str]:
    """``{"id": ...}`` / ``{"ref": ...}`` (a bare id string is accepted too)."""
    if isinstance(value, str) and value:
        return {"id": value}
    if not isinstance(value, Mapping):
        raise bad_args(argument, f"expected {{'id': ...}} or {{'ref': ...}}, got {value!r}")
    node_id, ref = value.get("id"), value.get("ref")
    if node_id is not None and isinstance(node_id, str) and node_id:
        return {"id": node_id}
    if allow_ref and ref is not None and isinstance(ref, str) and ref:
        return {"ref": ref}
    wanted = "an id or a ref" if allow_ref else "an id"
    raise bad_args(argument, f"needs {wanted} (a non-empty string), got {value!r}")


def _required_str(argument: str, value: Any) -> str:
    if value is None:
        raise bad_args(argument, "is required")
    if not isinstance(value, str) or not value.strip():
        raise bad_args(argument, f"expected a non-empty string, got {value!r}")
    return value


def _given(**arguments: Any) -> None:
    """``BAD_ARGS`` naming the first of `arguments` that is None (a required one left empty)."""
    for argument, value in arguments.items():
        if value is None:
            raise bad_args(argument, "is required")


def _optional(argument: str, value: Any, kind: type, wanted: str) -> None:
    """``BAD_ARGS`` naming `argument` when `value` is given and is not a `kind`."""
    if value is not None and not isinstance(value, kind):
        raise bad_args(argument, f"expected {wanted}, got {type_name(value)}")


def _link_op_target(target: dict[str, str]) -> dict[str, str]:
    return {"target_node_id": target["id"]} if "id" in target else {"target_ref": target["ref"]}


def _source_keys(source: dict[str, str]) -> dict[str, str]:
    return {"source_node_id": source["id"]} if "id" in source else {"source_ref": source["ref"]}


class WriteApi:
    """Write coroutines bound to one store (and an optional `on_commit`)."""

    def __init__(
        self,
        store: Any,
        ctx: Any = None,
        *,
        schema: Schema | None = None,
        on_commit: CommitCallback | None = None,
        version: Callable[[], int] | None = None,
    ) -> None:
        self._store = store
        self._ctx = ctx
        self._schema = schema
        self._on_commit = on_commit
        self._version = version  # the journal version when nothing was committed
        self._limits: Limits | None = None

    @property
    def limits(self) -> Limits:
        """The size limits of this chat's writes (settings ``max_title_chars``,
        ``max_field_bytes``; see `memgraph_plugin.engine.model.values`)."""
        if self._limits is None:
            try:
                self._limits = Limits.from_settings(getattr(self._ctx, "settings", None))
            except ValueError as exc:
                raise MemoryGraphError("BAD_ARGS", str(exc)) from exc
        return self._limits

    @property
    def store(self) -> Any:
        return self._store

    def _require_store(self) -> Any:
        if self._store is None:
            raise MemoryGraphError("MEMORY_STORE_MISSING", "store: no memory store (None)")
        return self._store

    async def _commit(self, result: BatchResult, kind: str) -> BatchResult:
        """Run `on_commit` after a write that changed the store; the result then carries the
        version the commit reports (the journal version: the one `rollback --to` takes)."""
        if not result.changed or self._on_commit is None:
            if self._version is not None:
                return attrs.evolve(result, version=self._version())
            return result
        outcome = self._on_commit(self._store, result, kind)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        version = getattr(outcome, "version", None)
        if isinstance(version, int) and not isinstance(version, bool):
            return attrs.evolve(result, version=version)
        return result

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        """Around each change of the store and its commit: nothing here (a `Session` takes its
        chat's write lock, and announces the commits once it has let go of it)."""
        yield

    async def _run(self, ops: list[Any], max_seq: int | None, kind: str) -> BatchResult:
        store = self._require_store()
        limits = self.limits
        async with self._writing():
            result = apply_batch(store, ops, max_seq=max_seq, schema=self._schema, limits=limits)
            return await self._commit(result, kind)

    # ---- the batch

    @checked_call
    async def apply_extraction_batch(
        self, *, ops: Iterable[Any], max_seq: int | None = None
    ) -> BatchResult:
        """Apply ops as one batch (refs resolve inside it; failures land in `rejected`)."""
        self._require_store()
        _given(ops=ops)
        if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
            raise bad_args("ops", f"expected a list of ops, got {type(ops).__name__}")
        return await self._run(list(ops), max_seq, "batch")

    # ---- primitives

    @checked_call
    async def create_node(
        self,
        *,
        type: str,
        title: str | None = None,
        fields: Mapping[str, Any] | None = None,
        links: Iterable[Mapping[str, Any]] | None = None,
        ref: str | None = None,
    ) -> CreateResult:
        """Create a node (or merge into the latest-only node of that name); raises OP_FAILED."""
        self._require_store()
        _required_str("type", type)
        _optional("title", title, str, "a string")
        _optional("fields", fields, Mapping, "a mapping")
        if ref is not None and (not isinstance(ref, str) or not ref):
            raise bad_args("ref", f"expected a non-empty string, got {ref!r}")
        op: dict[str, Any] = {"op": "create", "type": type, "fields": dict(fields or {})}
        if title is not None:
            op["title"] = title
        if ref is not None:
            op["ref"] = ref
        if links is not None:
            op["links"] = self._links("links", links)
        result = await self._run([op], None, "create_node")
        if result.rejected:
            first = result.rejected[0]
            if not result.applied:
                error = MemoryGraphError(
                    "OP_FAILED", f"create_node: {first.error.code}: {first.error.message}"
                )
                error.rejected = result.rejected  # type: ignore[attr-defined]
                raise error
        node_id = result.node_ids[0]
        return CreateResult(id=node_id, ref=ref)

    @checked_call
    async def edit_node(
        self,
        *,
        id: str,
        set_fields: Mapping[str, Any] | None = None,
        clear_fields: Iterable[str] | None = None,
        title: str | None = None,
    ) -> EditResult:
        """Patch a node; `ok` False (no throw) when it is missing, archived or the edit skipped."""
        self._require_store()
        _required_str("id", id)
        _optional("set_fields", set_fields, Mapping, "a mapping")
        if clear_fields is not None and (
            isinstance(clear_fields, (str, bytes)) or not isinstance(clear_fields, Iterable)
        ):
            raise bad_args("clear_fields", f"expected a list of names, got {clear_fields!r}")
        _optional("title", title, str, "a string")
        op: dict[str, Any] = {"op": "edit", "node_id": id}
        if set_fields is not None:
            op["set_fields"] = dict(set_fields)
        if clear_fields is not None:
            op["clear_fields"] = list(clear_fields)
        if title is not None:
            op["title"] = title
        result = await self._run([op], None, "edit_node")
        return EditResult(ok=bool(result.applied), changed=result.changed, rejected=result.rejected)

    @checked_call
    async def delete_node(self, *, id: str) -> DeleteResult:
        """Archive a node (soft delete: edges and children stay); `ok` False when not active."""
        self._require_store()
        _required_str("id", id)
        result = await self._run([{"op": "delete", "node_id": id}], None, "delete_node")
        return DeleteResult(ok=bool(result.applied), rejected=result.rejected)

    def _links(self, argument: str, links: Any) -> list[dict[str, Any]]:
        if isinstance(links, (str, bytes, Mapping)) or not isinstance(links, Iterable):
            raise bad_args(argument, f"expected a list of links, got {type_name(links)}")
        out = []
        for i, link in enumerate(links):
            where = f"{argument}[{i}]"
            if not isinstance(link, Mapping):
                raise bad_args(where, f"expected a mapping, got {type_name(link)}")
            if "target" in link:
                target = _endpoint(f"{where}.target", link["target"])
            elif link.get("target_node_id") or link.get("targetNodeId"):
                target = {"id": link.get("target_node_id") or link.get("targetNodeId")}
            elif link.get("target_ref") or link.get("targetRef"):
                target = {"ref": link.get("target_ref") or link.get("targetRef")}
            else:
                raise bad_args(f"{where}.target", "is required")
            relation = _required_str(f"{where}.relation", link.get("relation"))
            direction = link.get("direction") or "bidirectional"
            if direction not in DIRECTIONS:
                raise bad_args(
                    f"{where}.direction",
                    f"must be one of {', '.join(DIRECTIONS)}; got {direction!r}",
                )
            out.append({**_link_op_target(target), "relation": relation, "direction": direction})
        return out

    @checked_call
    async def upsert_links(
        self, *, source: Mapping[str, str], links: Iterable[Mapping[str, Any]]
    ) -> UpsertLinksResult:
        """Add relation edges from `source`; `applied` counts the edges actually added."""
        self._require_store()
        _given(source=source, links=links)
        src = _endpoint("source", source)
        op_links = self._links("links", links)
        if not op_links:
            return UpsertLinksResult(applied=0)
        op = {"op": "link_upsert", **_source_keys(src), "links": op_links}
        result = await self._run([op], None, "upsert_links")
        return UpsertLinksResult(applied=result.added, rejected=result.rejected)

    @checked_call
    async def delete_links(
        self,
        *,
        source: Mapping[str, str],
        target: Mapping[str, str],
        relation: str,
        direction: str = "bidirectional",
    ) -> DeleteLinksResult:
        """Remove the `relation` edges between source and target; `removed` counts them."""
        self._require_store()
        _given(source=source, target=target)
        src = _endpoint("source", source, allow_ref=False)
        dst = _endpoint("target", target, allow_ref=False)
        _required_str("relation", relation)
        if direction not in DIRECTIONS:
            raise bad_args(
                "direction", f"must be one of {', '.join(DIRECTIONS)}; got {direction!r}"
            )
        op = {
            "op": "link_delete",
            "source_node_id": src["id"],
            "target_node_id": dst["id"],
            "relation": relation,
            "direction": direction,
        }
        result = await self._run([op], None, "delete_links")
        return DeleteLinksResult(removed=result.removed, rejected=result.rejected)

    @checked_call
    async def compact_nodes(
        self,
        *,
        type: str,
        child_ids: Iterable[str],
        summary: str,
        fields: Mapping[str, Any] | None = None,
    ) -> CompactResult:
        """Roll `child_ids` up into a new rollup node of `type` (BAD_ARGS / CHILD_* errors)."""
        self._require_store()
        _given(type=type, child_ids=child_ids, summary=summary)
        (outcome,) = await self._roll_up(type, [(child_ids, summary, fields)])
        if isinstance(outcome, MemoryGraphError):
            raise outcome
        return outcome

    async def compact_groups(
        self, *, type: str, groups: Iterable[tuple[Any, ...]]
    ) -> tuple[CompactResult | MemoryGraphError, ...]:
        """Roll each `(child_ids, summary)` or `(child_ids, summary, fields)` group up as
        `compact_nodes` does (all or nothing per group), in one commit: a catch-up over
        thousands of groups (a large imported graph) is one journal row, not one per group. One
        outcome per group, in order: its result, or the error that left it out
        (CHILD_HAS_PARENT when someone compacted meanwhile, ...)."""
        self._require_store()
        _given(type=type)
        return await self._roll_up(
            type, [(g[0], g[1], g[2] if len(g) > 2 else None) for g in groups]
        )

    # ---- a person's corrections (engine/write/curation.py): each one commit, `EditResult`

    async def _curate(self, kind: str, change: Callable[[Any], BatchResult]) -> EditResult:
        store = self._require_store()
        async with self._writing():
            result = await self._commit(change(store), kind)
        return EditResult(ok=bool(result.applied), changed=result.changed, rejected=result.rejected)

    @checked_call
    async def pin_node(self, *, id: str) -> EditResult:
        """Pin an active node: recall injects it every turn (within the budget, first)."""
        _required_str("id", id)
        return await self._curate("pin_node", lambda store: set_pinned(store, id, True))

    @checked_call
    async def unpin_node(self, *, id: str) -> EditResult:
        """Unpin a node: recall picks it only when it is relevant again."""
        _required_str("id", id)
        return await self._curate("unpin_node", lambda store: set_pinned(store, id, False))

    @checked_call
    async def restore_node(self, *, id: str) -> EditResult:
        """Restore an archived node (its edges and children stayed); `ok` False when active."""
        _required_str("id", id)
        return await self._curate("restore_node", lambda store: restore_node(store, id))

    @checked_call
    async def merge_nodes(self, *, keep: str, absorb: str) -> EditResult:
        """Merge `absorb` into `keep` (same type): edges move, names become aliases, `absorb`
        is archived (superseded by `keep`); `ok` False with the rejection otherwise."""
        _required_str("keep", keep)
        _required_str("absorb", absorb)
        limits = self.limits
        return await self._curate(
            "merge_nodes", lambda store: merge_nodes(store, keep, absorb, limits=limits)
        )

    async def _roll_up(
        self, type: str, groups: Iterable[tuple[Any, Any, Mapping[str, Any] | None]]
    ) -> tuple[CompactResult | MemoryGraphError, ...]:
        """`apply_rollup` per `(child_ids, summary, fields)` group, then one commit of those
        that applied (none: no commit)."""
        store = self._require_store()
        limits = self.limits
        async with self._writing():
            outcomes: list[CompactResult | MemoryGraphError] = []
            applied: list[dict[str, Any]] = []
            changed = False
            for child_ids, summary, fields in groups:
                if not isinstance(child_ids, (str, bytes)) and isinstance(child_ids, Iterable):
                    child_ids = list(child_ids)
                try:
                    rollup_id, did = apply_rollup(
                        store, type, child_ids, summary, fields, schema=self._schema, limits=limits
                    )
                except MemoryGraphError as exc:
                    outcomes.append(exc)
                    continue
                changed = changed or did
                applied.append({"op": "compact", "type": type, "child_ids": list(child_ids)})
                outcomes.append(CompactResult(rollup_node_id=rollup_id))
            if applied:
                made = (o.rollup_node_id for o in outcomes if isinstance(o, CompactResult))
                result = BatchResult(
                    applied=tuple(applied),
                    node_ids=tuple(made),
                    changed=changed,
                    version=store.version,
                    seq=store.seq_counter,
                )
                await self._commit(result, "compact_nodes")
        return tuple(outcomes)


def type_name(value: Any) -> str:
    return type(value).__name__


def _signature_arity(callback: Callable[..., Any]) -> int:
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):
        return 1
    count = 0
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return 3
        if param.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            count += 1
    return count


def get_write_api(
    store: Any,
    ctx: Any = None,
    *,
    schema: Any = None,
    on_commit: CommitCallback | None = None,
) -> WriteApi:
    """The write API over `store`; `schema` None uses the store's schema."""
    if store is not None and not isinstance(store, Store):
        raise bad_args("store", f"expected a Store or None, got {type_name(store)}")
    if on_commit is not None and not callable(on_commit):
        raise bad_args("on_commit", f"expected a callable, got {type_name(on_commit)}")
    return WriteApi(
        store,
        ctx,
        schema=None if schema is None else resolve_schema(schema),
        on_commit=None if on_commit is None else _commit_callback(on_commit),
    )


def _commit_callback(on_commit: Callable[..., Any]) -> CommitCallback:
    """The `CommitCallback` for a callback given to `get_write_api`, decided once: the contract's
    ``on_commit(store)``, or one that takes two or three positional arguments (the store, the
    `BatchResult`, the method's name) and gets as many."""
    arity = _signature_arity(on_commit)
    if arity >= 3:
        return on_commit
    if arity == 2:
        return lambda store, result, kind: on_commit(store, result)
    return lambda store, result, kind: on_commit(store)
