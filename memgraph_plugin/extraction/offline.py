"""The offline extractor's one pure step: a message's text -> batch ops (no network, no model).

`extract_message_ops` makes, for one message:

- an ``event`` that keeps the whole text (``summary``), with ``speaker``, ``role``, ``time`` (as
  written), ``time_iso`` (the same time in ISO 8601, when `times.iso_time` can read it) and
  ``message`` (the message's index in the chat); a text over ``max_field_bytes`` is kept whole
  as consecutive events, one per part (``part``, ``parts``);
- a ``character_sheet`` for the speaker (when it has a name) linked ``involved_in`` the event;
- a ``character_sheet`` or ``location_state`` per name the text mentions (`names.find_mentions`),
  resolved to the node it already is (`resolve.NameResolver`), linked from the event by
  ``mentions`` (people) or ``occurred_at`` (places);
- a ``follows`` link from the event to the previous event of the same scene.

Names that resolve to the same node, or that are short forms of each other within the message
("Mel" and "Melanie"), become one op whose aliases gather every spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from memgraph_plugin.engine.index.name_index import name_items, numbered, short_forms

from .facts import facts_fields, person_facts
from .naming.cues import ENTITY, PERSON
from .naming.cues import PLACE as PLACE_KIND
from .naming.names import clean_name, find_mentions
from .naming.resolve import CHARACTER, PLACE, KnownEntity, NameResolver
from .naming.vocative import only_addressed
from .text.long_text import split_text
from .text.times import iso_time
from .titles import event_title

__all__ = ["EVENT", "FOLLOWS", "TIME_ISO", "extract_message_ops", "event_title"]

EVENT = "event"
FOLLOWS = "follows"
TIME_ISO = "time_iso"  # the event field with `time` in ISO 8601 (when it can be placed)
EVIDENCE = "evidence"  # sheet -> the message a fact of it was read from
ENTITIES = "entities"  # the event field naming what the cues could not type (no node made)


class _Entity:
    """One node the message names: every spelling met, its type, and the node it resolved to."""

    __slots__ = ("names", "type", "known", "ref", "titled", "facts", "stated")

    def __init__(self, name: str, type_id: str, known: KnownEntity | None, ref: str) -> None:
        self.names = [name]
        self.type = type_id
        self.known = known
        self.ref = ref
        self.titled: set[str] = set()  # forms written with a title ("Captain Rourke")
        self.facts: dict[str, Any] = {}  # fact fields this message states (`facts_fields`)
        self.stated = False  # the message states a fact about it, new to the sheet or not

    @property
    def title(self) -> str:
        if self.known is not None:
            return self.known.title
        plain = [n for n in self.names if n not in self.titled] or self.names
        return max(plain, key=len)  # "Melanie" over "Mel", "Rourke" over "Captain Rourke"

    @property
    def endpoint(self) -> dict[str, str]:
        """How a link names this entity: the existing node's id, else the create's ref."""
        if self.known is not None and not self.new_names() and not self.facts:
            return {"node_id": self.known.id}
        return {"ref": self.ref}

    def new_names(self) -> list[str]:
        """Spellings the node does not have yet (all of them for a new node)."""
        if self.known is None:
            return list(self.names)
        return [n for n in self.names if n.lower() != self.known.title.lower()]

    def op(self) -> dict[str, Any] | None:
        """The create (a merge for a known node gaining an alias); None for a known node with
        nothing new: it is linked by id and keeps its seq (a mention is not an update)."""
        if self.known is not None and not self.new_names() and not self.facts:
            return None
        title = self.title
        aliases = [n for n in self.names if n.lower() != title.lower()]
        fields: dict[str, Any] = {"title": title, **self.facts}
        if aliases:
            fields["aliases"] = aliases
        return {"op": "create", "type": self.type, "title": title, "fields": fields,
                "ref": self.ref}

    def answers_to(self, name: str) -> bool:
        """Whether `name` is a spelling or short form of one of this entity's names."""
        key = name.lower()
        for known in self.names:
            other = known.lower()
            if key == other:
                return True
            short, long = sorted((key, other), key=len)
            if numbered(long):  # "Guard" is neither "Guard 1" nor "Guard 2"
                continue
            if len(short) >= 3 and (
                long.startswith(short) and " " not in short
                or short in long.split()
            ):
                return True
        return False


def extract_message_ops(
    text: str,
    *,
    speaker: str = "",
    role: str = "",
    index: int | None = None,
    time: str = "",
    previous_event_id: str | None = None,
    names: NameResolver | None = None,
    types: Collection[str] | None = None,
    ordinary: Callable[[str], bool] | None = None,
    max_field_bytes: int | None = None,
) -> list[dict[str, Any]]:
    """The batch ops for one message (see the module docstring); deterministic and offline.

    `names` resolves names against the chat's graph (default: knows nothing); `types` limits the
    ops to the node types the chat's schema has (default: the four default types); `ordinary`
    tells the words the chat mostly writes in lower case (`find_mentions`; default: none).
    `max_field_bytes`: a text larger than one field value may be is kept whole as consecutive
    events, one per part (`long_text.split_text`; fields ``part`` and ``parts``), each part
    ``follows`` the one before.
    """
    resolver = names or NameResolver.empty()
    allowed = set(types) if types is not None else {EVENT, CHARACTER, PLACE}
    if EVENT not in allowed or not (text or "").strip():
        return []
    speaker = clean_name(speaker) if speaker else ""
    parts = split_text(text, max_field_bytes) if max_field_bytes else [text]
    fields: dict[str, Any] = {"summary": parts[0]}
    if speaker:
        fields["speaker"] = speaker
    if role:
        fields["role"] = role
    if time:
        fields["time"] = time  # as the transcript wrote it
        iso = iso_time(time)
        if iso is not None:
            fields[TIME_ISO] = iso  # the same time in ISO 8601, for time cues and sorting
    if index is not None:
        fields["message"] = index
    # a text too long for one field: the later parts as events of their own, after the first
    more = [
        {"op": "create", "type": EVENT, "title": "", "ref": f"ev{number}",
         "fields": dict(fields, summary=part, part=number, parts=len(parts))}
        for number, part in enumerate(parts[1:], 2)
    ]
    if more:
        fields.update(part=1, parts=len(parts))
    event: dict[str, Any] = {"op": "create", "type": EVENT, "title": "", "fields": fields,
                             "ref": "ev"}
    ops: list[dict[str, Any]] = [event, *more]
    entities: list[_Entity] = []

    def entity_for(name: str, what: str) -> _Entity | None:
        for entity in entities:
            if entity.answers_to(name):
                if name not in entity.names:
                    entity.names.append(name)
                return entity
        known = resolver.resolve(name)
        if known is not None:
            for entity in entities:
                if entity.known is not None and entity.known.id == known.id:
                    entity.names.append(name)
                    return entity
        if known is not None:
            type_id = known.type
        elif what == ENTITY:  # the cues disagree: an `entity` node if the schema has one
            type_id = ENTITY
        else:
            type_id = PLACE if what == PLACE_KIND else CHARACTER
        if type_id not in allowed:
            return None
        entity = _Entity(name, type_id, known, f"e{len(entities)}")
        entities.append(entity)
        return entity

    speaker_entity = entity_for(speaker, PERSON) if speaker and CHARACTER in allowed else None
    mentioned: list[_Entity] = []
    speaker_names = {speaker.lower(), *short_forms(speaker.lower())}
    if not numbered(speaker):
        speaker_names.update(speaker.lower().split())

    def known(word: str) -> bool:
        return word in speaker_names or resolver.known(word)

    unsure: list[str] = []
    for mention in find_mentions(text, known=known, ordinary=ordinary):
        entity = entity_for(mention.name, mention.kind)
        if entity is None:
            if mention.kind == ENTITY:
                unsure.append(mention.name)
            continue
        for alias in mention.aliases:  # "Captain Rourke": the titled form is a name too
            entity.titled.add(alias)
            if alias not in entity.names:
                entity.names.append(alias)
        if entity is not speaker_entity and entity not in mentioned:
            mentioned.append(entity)
    if unsure:  # names whose kind the cues leave open: kept on the event, no node guessed
        fields[ENTITIES] = unsure
    people = [e for e in (speaker_entity, *mentioned) if e is not None and e.type == CHARACTER]
    if people:  # statements about people: fact fields of their sheets, evidence links
        _gather_facts(text, speaker_entity, people, resolver)
    # what the message is about: not the people it only speaks to ("Thanks, Mel!")
    spoken_to = [e for e in mentioned if only_addressed(text, e.names)]
    named = [e.title for e in mentioned if e not in spoken_to]
    addressed = [name for e in spoken_to for name in e.names]
    event["title"] = event_title(text, speaker or role, fields.get(TIME_ISO), named, addressed)
    for number, part_event in enumerate([event, *more], 1):
        if more:
            part_event["title"] = f"{event['title']} (part {number}/{len(parts)})"
        if number > 1:
            previous = "ev" if number == 2 else f"ev{number - 1}"
            ops.append(
                {"op": "link_upsert", "source_ref": f"ev{number}",
                 "links": [{"target_ref": previous, "relation": FOLLOWS, "direction": "outgoing"}]}
            )
    ops.extend(op for op in (entity.op() for entity in entities) if op is not None)
    if speaker_entity is not None:
        ops.extend(_speaker_title(speaker_entity, speaker, resolver))
    if speaker_entity is not None:
        ops.append(_link(speaker_entity.endpoint, {"ref": "ev"}, "involved_in"))
    for entity in mentioned:
        if entity in spoken_to:  # said to them, not about them
            continue
        relation = "occurred_at" if entity.type == PLACE else "mentions"
        ops.append(_link({"ref": "ev"}, entity.endpoint, relation))
    for entity in entities:
        if entity.stated:  # the message is evidence of a fact, even one the sheet held
            ops.append(_link(entity.endpoint, {"ref": "ev"}, EVIDENCE))
    if previous_event_id:
        ops.append(
            {"op": "link_upsert", "source_ref": "ev",
             "links": [{"target_node_id": previous_event_id, "relation": FOLLOWS,
                        "direction": "outgoing"}]}
        )
    return ops


def _gather_facts(
    text: str, speaker: _Entity | None, people: list[_Entity], resolver: NameResolver
) -> None:
    """Each person's `facts_fields` for what `text` states about them (the speaker's first
    person statements, third person ones about a person it names), on the entity."""
    written: dict[str, _Entity] = {}
    for entity in people:
        for name in entity.names:
            written.setdefault(name, entity)
    found = person_facts(text, speaker.names[0] if speaker is not None else "", list(written))
    for name, columns in found.items():
        entity = written.get(name)
        if entity is None:
            continue
        entity.stated = entity.stated or any(columns.values())
        node = resolver.node(entity.known.id) if entity.known is not None else None
        have = node.fields if node is not None else {}
        for key, values in facts_fields(columns, have).items():
            entity.facts[key] = [*entity.facts.get(key, ()), *values]


def _speaker_title(entity: _Entity, speaker: str, resolver: NameResolver) -> list[dict[str, Any]]:
    """An edit titling a person's sheet by the name they speak under, when the sheet was titled
    by a short form of it ("Mel", from "Hey Mel!" before Melanie spoke): the short form stays an
    alias. No op when the sheet already has that title or it is no short form of the name."""
    known = entity.known
    if known is None or known.type != CHARACTER:
        return []
    old, new = known.title.lower(), speaker.lower()
    if old == new or old not in short_forms(new):
        return []
    node = resolver.node(known.id)
    aliases = node.fields.get("aliases") if node is not None else None
    names = [known.title, *name_items(aliases), *entity.names]
    kept = list(dict.fromkeys(n for n in names if n.lower() != new))
    return [{"op": "edit", "node_id": known.id, "title": speaker,
             "set_fields": {"title": speaker, "aliases": kept}}]


def _link(source: dict[str, str], target: dict[str, str], relation: str) -> dict[str, Any]:
    """A link_upsert between two endpoints given as ``{"ref": r}`` or ``{"node_id": id}``."""
    op: dict[str, Any] = {"op": "link_upsert"}
    for key, value in source.items():
        op[f"source_{key}"] = value
    link = {f"target_{key}": value for key, value in target.items()}
    op["links"] = [{**link, "relation": relation, "direction": "outgoing"}]
    return op
