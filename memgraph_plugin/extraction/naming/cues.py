"""What kind of thing a name in a text is — a person, a place, or neither — read from cues around
it, without a model.

Each occurrence of a name leaves `Cues`; the occurrences of one message are joined and `kind`
decides. Place cues: a place prefix (``Mount Veyl``, ``Port Calder``), a place noun ending the
name or right after it (``Salt Archive``, ``the Gilded Stag inn``), a possessive place name
(``Miller's Ford``), a place preposition or a journey before it (``in Greywater``, ``ride for
Durnholt``). Person cues: a title (``Captain Rourke``, ``Duke of Ardent``, ``Old Hessa``), a
verb of speech or gesture next to it (``Rourke says``, ``asks Mara``). Neither: a vehicle noun
(``the airship Grey Heron``). A definite article (``the Fence``) says "not a person". Where the
cues disagree the kind is ``entity``: not guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..text.words import PLACE_NOUNS, PLACE_PREPOSITIONS, TRAVEL_VERBS, words

__all__ = [
    "ENTITY",
    "PERSON",
    "PLACE",
    "PERSON_TITLES",
    "POSSESSIVE_PLACE_HEADS",
    "Cues",
    "cues_at",
    "kind",
]

PERSON = "person"
PLACE = "place"
ENTITY = "entity"  # cues disagree, or a thing that is neither (a ship): no guess

#: Words opening a name that make it a person ("Captain Rourke", "Old Hessa"). The name is kept
#: without them, the titled form as an alias; "<title> of <Name>" is kept whole ("Duke of
#: Ardent": the title is the name).
PERSON_TITLES: frozenset[str] = words(
    """
    mr mrs ms miss dr sir madam lady lord dame captain professor prof aunt uncle grandma grandpa
    duke duchess king queen prince princess count countess baron baroness earl emperor empress
    old young master mistress magistrate sergeant general commander lieutenant admiral
    """
)

#: Place words before a name ("Mount Veyl", "Port Calder", "Lake Tahoe").
PLACE_PREFIXES: frozenset[str] = words("mount mt port lake fort cape isle glen loch saint")

#: Capitalised nouns after a possessive that make one place name of both ("Miller's Ford").
POSSESSIVE_PLACE_HEADS: frozenset[str] = PLACE_NOUNS | words(
    """
    ford crossing landing hollow rest reach point end well mill bridge field fields watch
    """
)

#: Place nouns beyond `PLACE_NOUNS` that end a place name ("Salt Archive", "Miller's Ford").
MORE_PLACE_NOUNS: frozenset[str] = words(
    """
    archive archives ford crossing landing hollow heights marsh moor fen vale dale pass
    stables barracks docks wharf quay lighthouse monastery abbey shrine sanctum observatory
    """
)

#: Verbs of speech and gesture: next to a name, it is a person ("Rourke says", "asks Mara").
SPEECH_VERBS: frozenset[str] = words(
    """
    says said asks asked replies replied answers answered whispers whispered shouts shouted
    mutters muttered nods nodded smiles smiled laughs laughed grins grinned sighs sighed
    frowns frowned shrugs shrugged waves waved squints squinted tells told calls cried cries
    """
)

#: Verbs before a name that address a person ("Ask Rourke", "tell Lady Wren").
ADDRESS_VERBS: frozenset[str] = words("ask asked tell told thank thanked meet met hug hugged")

#: Vehicles: a name next to one is a vessel, neither person nor place ("the airship Grey Heron").
VEHICLE_NOUNS: frozenset[str] = words(
    """
    airship ship boat vessel barge skiff galleon frigate schooner sloop yacht ferry train
    """
)

_SKIP_BEFORE = frozenset({"the", ",", "a", "an"})


@attrs.define
class Cues:
    """The cues met for one name in one message (each occurrence adds to them)."""

    person: bool = False  # a verb of speech or gesture, an addressing verb, the speaker
    title: bool = False  # a person's title opens the name
    place: bool = False  # a place preposition or journey before it (a weak cue)
    place_name: bool = False  # a place prefix, place noun or possessive place name (strong)
    article: bool = False  # "the" right before it: not a person
    vehicle: bool = False  # a vehicle noun next to it

    def add(self, other: Cues) -> None:
        for field in attrs.fields(Cues):
            if getattr(other, field.name):
                setattr(self, field.name, True)


def kind(cues: Cues) -> str:
    """``person``, ``place``, ``entity`` (cues disagree, or a vehicle) or ``""`` (no cue)."""
    if cues.vehicle:
        return ENTITY
    personal = cues.person or cues.title
    if cues.title and cues.place_name:
        return ENTITY
    if cues.title:
        return PERSON
    if cues.place_name:
        return ENTITY if cues.person else PLACE
    if cues.place:
        return ENTITY if cues.person else PLACE
    if cues.article:
        return ENTITY
    return PERSON if personal else ""


def _plain(token: str) -> str:
    return token.lower().removesuffix("'s").removesuffix("’s")


def cues_at(tokens: Sequence[str], start: int, end: int, name_words: Sequence[str]) -> Cues:
    """The cues of the name written as ``tokens[start:end]`` (`name_words`: the words kept as the
    name, lower-case, a title already dropped)."""
    cues = Cues()
    last = name_words[-1] if name_words else ""
    first = name_words[0] if name_words else ""
    if last in PLACE_NOUNS or last in MORE_PLACE_NOUNS or first in PLACE_PREFIXES:
        cues.place_name = True
    if len(name_words) > 1 and any("'" in w or "’" in w for w in name_words[:-1]):
        cues.place_name = True  # "Miller's Ford": a possessive inside a name
    after = tokens[end].lower() if end < len(tokens) else ""
    if (after in PLACE_NOUNS or after in MORE_PLACE_NOUNS) and tokens[end][:1].islower():
        cues.place_name = True  # "the Gilded Stag inn"
    if after in VEHICLE_NOUNS:
        cues.vehicle = True
    then = tokens[end + 1].lower() if after == "," and end + 1 < len(tokens) else ""
    if after in SPEECH_VERBS or then in SPEECH_VERBS:
        cues.person = True
    i = start - 1
    before = tokens[i].lower() if i >= 0 else ""
    if before in SPEECH_VERBS or before in ADDRESS_VERBS:
        cues.person = True
    if before == "the":
        cues.article = True
    j = i
    while j >= 0 and tokens[j].lower() in _SKIP_BEFORE and j > i - 3:
        j -= 1
    if j >= 0 and tokens[j].lower() in VEHICLE_NOUNS:
        cues.vehicle = True
    at = start - 1  # the word before the name, an article skipped ("in the Gilded Stag")
    if before == "the" and start >= 2:
        at = start - 2
        before = tokens[at].lower()
    if before in PLACE_PREPOSITIONS or before in _MORE_PREPOSITIONS:
        cues.place = True
    elif before == "of" and at >= 1:  # "the docks of Qel", "the smugglers of Qel"
        owner = tokens[at - 1].lower()
        if owner in PLACE_NOUNS or owner in MORE_PLACE_NOUNS or owner in _OF_PLACE:
            cues.place = True
    elif before in ("to", "for") and at >= 1:
        k = at - 1  # "a trip last week to Rome": when-words between the journey and "to"
        while k > 0 and k > at - 4 and tokens[k].lower() in _WHEN_WORDS:
            k -= 1
        travel = tokens[k].lower()
        if travel in TRAVEL_VERBS or travel in _MORE_TRAVEL:
            cues.place = True
    return cues


#: Words saying when or how a journey went, skipped between it and "to" ("a trip last week
#: to Rome", "went back to Durnholt").
_WHEN_WORDS = words("last next this week weekend month year yesterday recently back again finally")
#: Prepositions of place beyond `PLACE_PREPOSITIONS` ("smoke over Greywater").
_MORE_PREPOSITIONS = words("over beyond below above through past")
#: Journeys beyond `TRAVEL_VERBS` ("we ride for Durnholt").
_MORE_TRAVEL = words("ride rides rode riding march marched marching walk walked sailing across")
#: Nouns after which "of <Name>" names a place ("the smugglers of Qel", "the streets of Qel").
_OF_PLACE = words(
    """
    people folk smugglers merchants guards citizens lords streets roofs walls outskirts edge
    heart north south east west rest map maps
    """
)
