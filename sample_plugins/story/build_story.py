# ruff: noqa: E501  (long lines of story prose)
"""Build ``story.json`` (the sample story) from the content below, and check it on the real engine.

The content is written as turns of prose plus a compact description of what the extractor would
record; :func:`turn_ops` expands each into batch ops in the documented shapes. Run as a script to
rewrite ``story.json`` next to this file; it replays every turn through a real store and exits with
an error when any op is rejected.

Why ~850 lines: most of it is the story itself (prose and what each turn records), data kept
beside the few functions that expand and check it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

STORY_PATH = Path(__file__).with_name("story.json")
TITLE = "The Lantern Ledger"

# key -> (title, fields given when the entity first appears)
CHARACTERS: dict[str, tuple[str, dict[str, Any]]] = {
    "ilya": (
        "Ilya Renn",
        {
            "aliases": ["伊利亚", "the courier"],
            "identity": "courier from the lowlands",
            "goal": "deliver the sealed satchel and get paid",
        },
    ),
    "juno": (
        "Juno Kade",
        {"aliases": ["the Knife of the Court"], "identity": "customs captain in Drake's service"},
    ),
    "mara_s": ("Mara", {"aliases": ["玛拉"], "identity": "a smuggler who asks no questions"}),
    "quill_s": ("Quill", {"aliases": ["the Fence"], "identity": "fence at the Lantern Market"}),
    "drake": (
        "Magistrate Hollen Drake",
        {"aliases": ["Drake", "the Magistrate"], "identity": "magistrate of Qel"},
    ),
    "pim": ("Pim", {"aliases": ["the runner"], "identity": "a street runner, about twelve"}),
    "mara": (
        "Captain Mara Voss",
        {
            "aliases": ["Voss", "the Captain of the Heron"],
            "identity": "captain of the airship Grey Heron",
        },
    ),
    "oriel": (
        "Sister Oriel",
        {"aliases": ["the Archivist", "奥瑞尔"], "identity": "archivist of the Salt Archive"},
    ),
    "quill": ("Teodor Quill", {"aliases": ["Teo", "泰奥"], "identity": "fence and forger"}),
    "sefa": ("Sefa Anwar", {"aliases": ["Lady Anwar"], "identity": "spice merchant"}),
}

LOCATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "qel": (
        "Qel",
        {
            "aliases": ["岐尔", "the Floating City"],
            "controller": "Magistrate Drake",
            "state": "a city of islands tethered above the salt flats",
        },
    ),
    "harbor": (
        "Skyharbor",
        {"aliases": ["天港", "the docks"], "controller": "customs", "danger": "inspections"},
    ),
    "market_s": ("Lantern Market", {"aliases": ["灯市"], "state": "crowded every evening"}),
    "heron": (
        "Grey Heron",
        {
            "aliases": ["the Heron"],
            "controller": "Captain Mara Voss",
            "state": "an old cargo airship",
        },
    ),
    "vault": (
        "Gilded Vault",
        {
            "aliases": ["Drake's vault"],
            "controller": "Magistrate Drake",
            "danger": "guards and bells",
        },
    ),
    "archive": (
        "Salt Archive",
        {
            "aliases": ["盐库"],
            "controller": "Sister Oriel",
            "state": "quiet stacks of salt-cured paper",
        },
    ),
    "undercroft": ("Undercroft", {"aliases": ["the low tunnels"], "danger": "collapses"}),
    "market": (
        "Night Bazaar of Qel",
        {"aliases": ["灯市集", "the Lanterns"], "state": "lit by a thousand paper lanterns"},
    ),
}

THREADS: dict[str, str] = {
    "satchel": "The Sealed Satchel",
    "ledger": "Drake's Ledger",
    "debt": "Mara's Debt",
    "job": "The Vault Job",
    "sefa": "Sefa's Escape",
}


def T(
    user: str,
    assistant: str,
    event: tuple[str, str],
    who: Sequence[str],
    where: Sequence[str],
    *,
    chars: Mapping[str, Mapping[str, Any]] | None = None,
    locs: Mapping[str, Mapping[str, Any]] | None = None,
    threads: Mapping[str, tuple[str, str]] | None = None,
    rel: Sequence[tuple[str, str, str]] = (),
) -> dict[str, Any]:
    """One turn: prose, its event (title, summary), who took part, where, updates and relations."""
    return {
        "user": user,
        "assistant": assistant,
        "event": event,
        "who": list(who),
        "where": list(where),
        "chars": dict(chars or {}),
        "locs": dict(locs or {}),
        "threads": dict(threads or {}),
        "rel": list(rel),
    }


TURNS: list[dict[str, Any]] = [
    T(
        "I step off the mail skiff at the docks of Qel, the satchel strapped under my coat.",
        "Salt wind and gull cries greet you at Skyharbor. A customs captain in a lacquered coat, "
        "Juno Kade, weighs the sealed satchel in her hand, notes the wax seal, and waves you "
        "through with a smile that does not reach her eyes.",
        (
            "Ilya lands at Skyharbor",
            "Ilya Renn arrives in Qel with a sealed satchel; customs captain "
            "Juno Kade inspects it and lets her pass. Juno notes the seal.",
        ),
        ["ilya", "juno"],
        ["harbor", "qel"],
        threads={
            "satchel": ("open", "Deliver the sealed satchel to a contact in the Lantern Market.")
        },
    ),
    T(
        "Where do couriers find work here? I ask around the market.",
        "At the Lantern Market the stall-keepers talk of Mara, a smuggler who moves anything for the "
        "right price and never opens a crate. 玛拉, the tea seller calls her, and spits for luck.",
        (
            "Rumour of Mara",
            "In the Lantern Market Ilya hears of Mara, a smuggler who never opens "
            "what she carries.",
        ),
        ["ilya", "mara_s"],
        ["market_s"],
    ),
    T(
        "I look for the contact named on my papers: someone called Quill.",
        "Quill keeps a stall of broken clocks behind the noodle carts. The Fence squints at your "
        "seal, says the contact you were sent to is dead since Tuesday, and offers to appraise the "
        "satchel for a tenth of whatever is inside.",
        (
            "Ilya meets Quill",
            "Ilya finds Quill, a fence in the Lantern Market; her contact is dead "
            "and Quill offers to appraise the satchel.",
        ),
        ["ilya", "quill_s"],
        ["market_s"],
        rel=[("quill_s", "related", "mara_s")],
    ),
    T(
        "I let Quill look, but I keep one hand on my knife.",
        "Quill slits the seal with a jeweller's blade. Inside: one page torn from a ledger, columns "
        "of bribes in a cramped hand, and the stamp of Magistrate Hollen Drake at the foot.",
        (
            "The ledger page",
            "The satchel holds a page torn from Magistrate Hollen Drake's ledger of "
            "bribes. Quill recognises Drake's stamp.",
        ),
        ["ilya", "quill_s", "drake"],
        ["market_s"],
        threads={"ledger": ("open", "A page of Drake's bribe ledger is in Ilya's hands.")},
    ),
    T(
        "Boots on the boardwalk. Who is coming?",
        "Juno Kade's customs men sweep into the market, overturning stalls. A thin kid named Pim "
        "grabs your sleeve, hisses 'this way', and pulls you under the noodle carts and out through "
        "a drain.",
        (
            "Raid on the Lantern Market",
            "Juno Kade raids the Lantern Market looking for the satchel; "
            "Pim, a street runner, helps Ilya escape through a drain.",
        ),
        ["ilya", "pim", "juno"],
        ["market_s"],
        rel=[("ilya", "hostile_to", "juno"), ("pim", "allied_with", "ilya")],
    ),
    T(
        "I follow Pim wherever he leads.",
        "Pim leads you along the mooring cables to a patched airship, the Grey Heron. Her captain "
        "leans on the rail: Captain Mara Voss, scar across her chin, who tells you that in this city "
        "nobody says her first name out loud.",
        (
            "Ilya meets Captain Mara Voss",
            "Pim brings Ilya to the airship Grey Heron at Skyharbor, "
            "where Captain Mara Voss receives them.",
        ),
        ["ilya", "pim", "mara"],
        ["heron", "harbor"],
        rel=[("mara", "mentor_of", "pim")],
    ),
    T(
        "I ask the captain to hide me until the raid is over.",
        "Voss agrees, for a third of whatever the page is worth. Over bitter coffee she admits why "
        "she is interested: she owes Magistrate Drake four thousand crowns, and he holds the marker.",
        (
            "Mara's bargain",
            "Captain Mara Voss hides Ilya for a third of the profit and admits she "
            "owes Drake four thousand crowns.",
        ),
        ["ilya", "mara", "drake"],
        ["heron"],
        threads={"debt": ("open", "Mara owes Drake four thousand crowns; he holds her marker.")},
        rel=[("mara", "debt_owed_to", "drake"), ("mara", "allied_with", "ilya")],
    ),
    T(
        "What does Drake keep, and where?",
        "Mara spreads a chart of the upper islands on the galley table. Drake keeps his papers in "
        "the Gilded Vault beneath the court, she says, behind bells that ring if a mouse breathes.",
        (
            "Talk of the Gilded Vault",
            "Mara tells Ilya that Drake keeps his papers in the Gilded "
            "Vault beneath the court, guarded by alarm bells.",
        ),
        ["ilya", "mara"],
        ["heron", "vault"],
        threads={"job": ("idea", "Break into the Gilded Vault for the rest of Drake's ledger.")},
    ),
    T(
        "The page is written in some cipher. Who can read it?",
        "Pim knows a nun who reads anything: Sister Oriel of the Salt Archive. The Archivist "
        "receives you among salt-cured stacks and turns the page under a green lamp for a long time.",
        (
            "Visit to the Salt Archive",
            "Ilya brings the ledger page to Sister Oriel at the Salt Archive to read its cipher.",
        ),
        ["ilya", "oriel", "pim"],
        ["archive"],
    ),
    T(
        "What does it say?",
        "Oriel reads aloud: payments from the harbour guilds, the customs office, even the temple. "
        "This page is one of ninety. The whole ledger, she says, would hang Drake three times over, "
        "and it lies in the Gilded Vault.",
        (
            "The cipher broken",
            "Sister Oriel decodes the page: a list of Drake's bribes, one of "
            "ninety pages kept in the Gilded Vault.",
        ),
        ["oriel", "ilya", "drake"],
        ["archive"],
        chars={"oriel": {"goal": "see the ledger made public"}},
        threads={"ledger": ("open", "The full ledger of ninety pages lies in the Gilded Vault.")},
        rel=[("oriel", "allied_with", "ilya"), ("oriel", "hostile_to", "drake")],
    ),
    T(
        "A messenger in court livery finds me at the archive door.",
        "The messenger bows: the Magistrate invites the courier to dine. At the court Drake is all "
        "warmth, pours you amber wine, and offers ten thousand crowns for the satchel, 'to save a "
        "young woman from people who would misuse it'.",
        (
            "Dinner with the Magistrate",
            "Magistrate Drake invites Ilya to dine at his court and "
            "offers ten thousand crowns for the satchel, posing as her protector.",
        ),
        ["ilya", "drake"],
        ["qel"],
        rel=[("drake", "deceiving", "ilya")],
    ),
    T(
        "I thank him for the wine and refuse.",
        "Drake's smile stays exactly where it was. When you leave, a shadow peels away from the "
        "court colonnade: Juno Kade, following at a patient distance.",
        (
            "Ilya refuses Drake",
            "Ilya refuses Drake's offer; Juno Kade follows her out of the court.",
        ),
        ["ilya", "drake", "juno"],
        ["qel"],
        rel=[("drake", "hostile_to", "ilya")],
    ),
    T(
        "I whistle for Pim and try to lose her.",
        "Pim appears out of a gutter and drags you down a ladder into the Undercroft, where the "
        "old salt tunnels run under half the city. Juno's lantern bobs behind you, then is lost in "
        "the dark.",
        (
            "Losing Juno in the Undercroft",
            "Pim leads Ilya into the Undercroft tunnels and they lose Juno Kade in the dark.",
        ),
        ["ilya", "pim", "juno"],
        ["undercroft"],
    ),
    T(
        "Where do these tunnels go?",
        "Following the salt seams, Pim shows you a bricked arch stamped with the court's crest. "
        "Beyond it, he swears, is the bottom of the Gilded Vault. Nobody has used the passage in "
        "fifty years.",
        (
            "The old passage",
            "In the Undercroft Pim shows Ilya a bricked passage that leads under the Gilded Vault.",
        ),
        ["ilya", "pim"],
        ["undercroft", "vault"],
        locs={"undercroft": {"state": "a forgotten passage runs under the vault"}},
        threads={"job": ("planning", "A bricked passage from the Undercroft reaches the vault.")},
    ),
    T(
        "We need someone who can fake a satchel and a seal. I go back to the market.",
        "At his clock stall the fence introduces himself properly at last: Teodor Quill, 'Teo to "
        "friends, Quill to customers'. For a share he will build a perfect twin of your satchel, "
        "down to the wax.",
        (
            "Teodor Quill's offer",
            "Teodor Quill, the market fence, agrees to forge a twin of the "
            "satchel for a share of the job.",
        ),
        ["ilya", "quill"],
        ["market_s"],
        chars={"quill": {"traits": "patient, greedy, precise with his hands"}},
        rel=[("quill", "allied_with", "ilya")],
    ),
    T(
        "I bring Teo to the Heron to meet the captain.",
        "Voss and Quill recognise each other at once and start shouting about a cargo of clocks "
        "from six years ago. It takes Pim standing between them with a frying pan to get them to "
        "talk about the split.",
        (
            "Quarrel on the Heron",
            "Captain Mara Voss and Teodor Quill quarrel over an old debt "
            "before agreeing on shares for the job.",
        ),
        ["mara", "quill", "pim", "ilya"],
        ["heron"],
        rel=[("mara", "allied_with", "quill")],
    ),
    T(
        "Someone has to pay for all this. Who has money?",
        "Mara knows a spice merchant, Sefa Anwar, who hates Drake's tariffs. Lady Anwar receives you "
        "in a room that smells of cardamom and offers to fund everything, on one condition: the "
        "ledger goes to her first.",
        (
            "Sefa Anwar's offer",
            "Sefa Anwar, a spice merchant, offers to fund the vault job if she "
            "gets the ledger first.",
        ),
        ["ilya", "mara", "sefa"],
        ["qel"],
        rel=[("sefa", "allied_with", "mara")],
    ),
    T(
        "We gather the whole crew on the Heron to make a plan.",
        "The plan takes shape over the chart: Quill's twin satchel as bait at the Night Bazaar to "
        "draw Juno away, the Heron flying low over the court to pull the guards, and you and Pim in "
        "through the Undercroft. Oriel will forge the seal on the vault's inner door.",
        (
            "The plan",
            "The crew plans the vault job on the Heron: a decoy satchel, an airship "
            "distraction, and an entry through the Undercroft.",
        ),
        ["ilya", "mara", "quill", "pim", "oriel"],
        ["heron"],
        threads={
            "job": (
                "planned",
                "Decoy at the bazaar, the Heron as distraction, entry from the Undercroft.",
            )
        },
    ),
    T(
        "Can Oriel really forge a magistrate's seal?",
        "Oriel melts down an old temple seal and carves the Magistrate's crest by lamplight. 'The "
        "archive has kept copies of every seal in Qel for three hundred years,' she says. 'It was "
        "only a matter of time before one was useful.'",
        (
            "Oriel forges the seal",
            "Sister Oriel carves a copy of the Magistrate's seal from the archive's records.",
        ),
        ["oriel"],
        ["archive"],
    ),
    T(
        "Pim, go and watch the vault guards for me.",
        "Pim spends two nights on the court roof. The guards change at the second bell and the "
        "fourth; the bell-warden drinks; the inner door is only opened at dawn.",
        (
            "Pim scouts the vault",
            "Pim watches the Gilded Vault for two nights and learns the guard "
            "changes at the second and fourth bells.",
        ),
        ["pim"],
        ["vault"],
        locs={"vault": {"state": "guard changes at the second and fourth bells"}},
    ),
    T(
        "Time for the bait. I walk into the Night Bazaar with the fake satchel.",
        "The Night Bazaar of Qel glows with paper lanterns. You let the twin satchel show under "
        "your coat by the fish stalls, and soon Juno Kade's lacquered coat is moving through the "
        "crowd towards you.",
        (
            "Bait at the Night Bazaar",
            "Ilya shows the decoy satchel at the Night Bazaar of Qel to "
            "draw Juno Kade's attention.",
        ),
        ["ilya", "juno"],
        ["market"],
    ),
    T(
        "I let her take it, and make it look real.",
        "Juno catches your wrist, twists, and the decoy is hers. Within the hour the Magistrate is "
        "toasting his luck at court while Juno puts the twin satchel in his hands.",
        (
            "Drake takes the decoy",
            "Juno seizes the decoy satchel and delivers it to Drake, who believes he has won.",
        ),
        ["juno", "drake", "ilya"],
        ["market", "qel"],
    ),
    T(
        "Signal the Heron.",
        "The Grey Heron drops out of the clouds and skims the court roofs, engines howling, cargo "
        "nets trailing. Every guard in the court runs to the windows.",
        (
            "The Heron's distraction",
            "Captain Mara Voss flies the Grey Heron low over the court to "
            "draw the vault guards away.",
        ),
        ["mara"],
        ["heron", "vault"],
    ),
    T(
        "Pim and I go into the tunnels.",
        "You knock out the bricks of the old arch one by one. The passage is tight and smells of "
        "salt and rot, and it climbs, and climbs.",
        (
            "Into the tunnels",
            "Ilya and Pim break through the bricked arch and climb the old "
            "passage towards the vault.",
        ),
        ["ilya", "pim"],
        ["undercroft"],
    ),
    T(
        "Something shifts above us. Pim!",
        "The roof of the passage gives way in a rush of salt. Pim is pinned to the waist. You dig "
        "with your hands until your nails bleed and haul him out, coughing, unhurt.",
        (
            "Collapse in the passage",
            "Part of the Undercroft passage collapses on Pim; Ilya digs him out.",
        ),
        ["ilya", "pim"],
        ["undercroft"],
        rel=[("pim", "sworn_to", "ilya")],
    ),
    T(
        "We reach the vault floor. What is there?",
        "Iron shelves, ledgers bound in green leather, ninety pages of bribes in that cramped hand. "
        "And in a drawer of markers, one in Mara Voss's name for four thousand crowns.",
        (
            "The vault opened",
            "Inside the Gilded Vault Ilya finds Drake's full ledger and Mara's debt marker.",
        ),
        ["ilya", "pim"],
        ["vault"],
        threads={
            "debt": ("marker found", "Ilya holds Mara's marker from the vault."),
            "ledger": ("taken", "The full ledger is in Ilya's hands."),
        },
    ),
    T(
        "Bells. Why are the bells ringing?",
        "At court Drake has cut open the twin satchel and found Quill's joke inside: a page of "
        "nursery rhymes in a perfect imitation of his own hand. Every bell in the court is ringing.",
        (
            "The decoy discovered",
            "Drake opens the decoy and finds Teodor Quill's forgery; the court "
            "bells ring the alarm.",
        ),
        ["drake", "quill"],
        ["qel", "vault"],
        rel=[("drake", "hostile_to", "quill")],
    ),
    T(
        "We run for the stairs and someone is waiting.",
        "Juno Kade stands at the top of the vault stair, blade drawn. The fight is short and ugly. "
        "She is faster, but you know about her bad knee from the way she walked at the bazaar.",
        (
            "Fight in the vault",
            "Juno Kade confronts Ilya on the vault stair; they fight and Ilya gets the upper hand.",
        ),
        ["ilya", "juno"],
        ["vault"],
    ),
    T(
        "I hold the knife at her throat and ask her why she serves him.",
        "Juno laughs, bleeding. 'Serve him? He is selling the Skyharbor to a foreign guild next "
        "month. Every dock worker in Qel will be out on the street. I wanted the ledger for "
        "myself.'",
        (
            "Juno's confession",
            "Juno Kade reveals Drake plans to sell the Skyharbor to a foreign "
            "guild; she wanted the ledger herself.",
        ),
        ["juno", "ilya", "drake"],
        ["vault"],
        chars={"juno": {"goal": "stop the sale of the Skyharbor"}},
        locs={"harbor": {"state": "Drake plans to sell it to a foreign guild"}},
    ),
    T(
        "I let her live. We climb out to the roof.",
        "A rope ladder slaps the tiles: the Heron, circling back. You, Pim and the ledger go up "
        "hand over hand while Voss swears at the wind. Juno limps away into the smoke.",
        (
            "Escape on the Heron",
            "Ilya and Pim escape from the court roof on the Grey Heron's rope "
            "ladder with the ledger.",
        ),
        ["ilya", "pim", "mara"],
        ["heron", "qel"],
    ),
    T(
        "What is Drake doing now?",
        "By morning the town criers announce that the courier Ilya Renn is an outlaw, with a price "
        "of five thousand crowns on her head. 伊利亚, the posters say, in both scripts.",
        ("Ilya outlawed", "Drake declares Ilya Renn an outlaw with a price on her head."),
        ["drake", "ilya"],
        ["qel"],
        chars={"ilya": {"identity": "courier, outlawed in Qel"}},
    ),
    T(
        "Sefa wants the ledger. I go to see her.",
        "Lady Anwar is all sympathy and cardamom tea. She asks for the ledger 'for safekeeping', "
        "and her hand does not quite stop moving towards it when you say no.",
        (
            "Sefa asks for the ledger",
            "Sefa Anwar asks for the ledger 'for safekeeping'; Ilya hesitates and keeps it.",
        ),
        ["sefa", "ilya"],
        ["qel"],
    ),
    T(
        "Something about her is wrong. I ask Oriel to look into Sefa.",
        "Oriel comes back with a deed of sale from the archive: the foreign guild buying the "
        "Skyharbor is Sefa Anwar's own company. She has been Drake's partner from the start.",
        (
            "Sefa unmasked",
            "Sister Oriel finds that Sefa Anwar's company is the buyer of the "
            "Skyharbor; Sefa is Drake's partner.",
        ),
        ["oriel", "sefa", "drake"],
        ["archive"],
        rel=[("sefa", "allied_with", "drake"), ("sefa", "deceiving", "ilya")],
    ),
    T(
        "I give Mara her marker.",
        "Voss turns the marker over, then feeds it to the galley stove and watches it curl. 'Four "
        "thousand crowns,' she says. 'Cheapest fire I ever lit.'",
        (
            "Mara burns the marker",
            "Ilya gives Captain Mara Voss her debt marker and she burns it; "
            "her debt to Drake is gone.",
        ),
        ["mara", "ilya"],
        ["heron"],
        threads={"debt": ("closed", "Mara burned her marker; she owes Drake nothing.")},
    ),
    T(
        "We need somewhere safe to hide for a few days.",
        "Oriel opens the deep stacks of the Salt Archive, where the paper is older than the city. "
        "You sleep among crates of land deeds while the criers shout your name overhead.",
        ("Hiding in the archive", "The crew hides in the deep stacks of the Salt Archive."),
        ["ilya", "pim", "oriel", "quill"],
        ["archive"],
    ),
    T(
        "Someone knocks on the archive door at midnight.",
        "It is Juno Kade, out of uniform, her knee bound. She offers her sword and the names of "
        "every dock boss who will stand with you if the ledger is read in public.",
        ("Juno defects", "Juno Kade comes to the archive and joins the crew against Drake."),
        ["juno", "ilya", "oriel"],
        ["archive"],
        rel=[("juno", "allied_with", "ilya")],
    ),
    T(
        "One ledger can be burned. Can Teo copy it?",
        "Teodor Quill works for three days without sleeping, and produces ten copies of the ledger "
        "so perfect that Oriel has to check the bindings to find the original.",
        ("Ten copies", "Teodor Quill forges ten perfect copies of Drake's ledger."),
        ["quill", "oriel"],
        ["archive"],
    ),
    T(
        "Pim, can your runners carry them?",
        "Before dawn, Pim's runners slip copies into the Night Bazaar of Qel: under tea bowls, "
        "inside lantern frames, into the hands of every guild clerk who can read.",
        (
            "Copies in the bazaar",
            "Pim's runners spread copies of the ledger through the Night Bazaar of Qel.",
        ),
        ["pim"],
        ["market"],
        threads={"ledger": ("spreading", "Copies of the ledger are all over the bazaar.")},
    ),
    T(
        "What happens when the city reads it?",
        "By noon the city council of Qel has convened on the court steps. A guild clerk reads the "
        "ledger aloud, page after page, and the crowd grows silent and then very loud.",
        (
            "The ledger read aloud",
            "The city council of Qel hears Drake's ledger read aloud in public.",
        ),
        ["juno", "oriel"],
        ["qel"],
        locs={"qel": {"state": "in uproar over the ledger"}},
    ),
    T(
        "Drake will run. Where to?",
        "Drake's private barge casts off from the court island with the treasury chests aboard. "
        "Captain Mara Voss is already at the Heron's wheel, grinning into the wind.",
        (
            "Drake flees",
            "Drake flees on his barge with the treasury; Mara Voss gives chase in the Grey Heron.",
        ),
        ["drake", "mara", "ilya"],
        ["heron", "qel"],
    ),
    T(
        "We chase him across the sky.",
        "The chase winds between the tethered islands until Drake's barge, heavy with gold, cannot "
        "climb. It grounds at the Skyharbor, where Juno Kade and the dock workers are waiting.",
        (
            "Drake arrested",
            "The Heron drives Drake's barge down at the Skyharbor, where Juno Kade arrests him.",
        ),
        ["drake", "juno", "mara", "ilya"],
        ["harbor"],
        chars={"drake": {"identity": "former magistrate of Qel, in chains"}},
        locs={"harbor": {"controller": "the dock workers", "state": "saved from the sale"}},
    ),
    T(
        "And Sefa?",
        "Sefa Anwar's house is empty when the council's men arrive. Her ship left at first light "
        "with half the treasury chests that never made it onto Drake's barge.",
        ("Sefa escapes", "Sefa Anwar escapes Qel by ship with part of the treasury."),
        ["sefa"],
        ["harbor"],
        threads={"sefa": ("open", "Sefa Anwar fled with half the treasury.")},
    ),
    T(
        "The original satchel: who was it really meant for?",
        "Oriel unfolds the courier papers you carried from the lowlands. The true addressee, it "
        "turns out, was the Salt Archive itself: the dead contact was the archive's agent. You put "
        "the satchel in Oriel's hands.",
        (
            "The satchel delivered",
            "Ilya delivers the original satchel to Sister Oriel, its true recipient.",
        ),
        ["ilya", "oriel"],
        ["archive"],
        threads={"satchel": ("closed", "Delivered to the Salt Archive.")},
    ),
    T(
        "So what now for me?",
        "Voss offers you a berth on the Grey Heron and a share of the next job. Pim has already "
        "claimed the hammock by the stove. Somewhere across the salt flats, Sefa Anwar is counting "
        "gold, and the Heron has fuel enough to follow.",
        (
            "Ilya joins the Heron",
            "Ilya Renn signs on to the Grey Heron with Mara and Pim; the "
            "crew looks towards Sefa's trail.",
        ),
        ["ilya", "mara", "pim"],
        ["heron"],
        chars={"ilya": {"goal": "follow Sefa Anwar's trail with the Heron's crew"}},
        threads={
            "job": ("closed", "The vault job succeeded; Drake is in chains."),
            "ledger": ("closed", "The ledger was read in public."),
        },
        rel=[("ilya", "allied_with", "mara")],
    ),
]


def turn_ops(turn: Mapping[str, Any], seen: set[str]) -> list[dict[str, Any]]:
    """Expand one turn into batch ops; ``seen`` holds the entity keys already introduced."""
    ops: list[dict[str, Any]] = []
    title, summary = turn["event"]
    ops.append(
        {
            "op": "create",
            "type": "event",
            "title": title,
            "fields": {"summary": summary},
            "ref": "ev",
        }
    )
    people = list(
        dict.fromkeys(
            [*turn["who"], *turn["chars"], *(k for a, _, b in turn["rel"] for k in (a, b))]
        )
    )
    for key in people:
        name, first = CHARACTERS[key]
        fields: dict[str, Any] = {"title": name}
        if key not in seen:
            fields.update(first)
        fields.update(turn["chars"].get(key, {}))
        ops.append(
            {
                "op": "create",
                "type": "character_sheet",
                "title": name,
                "fields": fields,
                "ref": f"c_{key}",
            }
        )
    for key in dict.fromkeys([*turn["where"], *turn["locs"]]):
        name, first = LOCATIONS[key]
        fields = {"title": name}
        if key not in seen:
            fields.update(first)
        fields.update(turn["locs"].get(key, {}))
        ops.append(
            {
                "op": "create",
                "type": "location_state",
                "title": name,
                "fields": fields,
                "ref": f"l_{key}",
            }
        )
    for key, (status, note) in turn["threads"].items():
        name = THREADS[key]
        ops.append(
            {
                "op": "create",
                "type": "thread",
                "title": name,
                "fields": {"title": name, "status": status, "note": note},
                "ref": f"t_{key}",
            }
        )
    seen.update(people)
    seen.update(turn["where"])
    seen.update(turn["locs"])
    for key in turn["who"]:
        ops.append(
            {
                "op": "link_upsert",
                "source_ref": f"c_{key}",
                "links": [{"target_ref": "ev", "relation": "involved_in", "direction": "outgoing"}],
            }
        )
    ops.append(
        {
            "op": "link_upsert",
            "source_ref": "ev",
            "links": [
                {"target_ref": f"l_{key}", "relation": "occurred_at", "direction": "outgoing"}
                for key in turn["where"]
            ],
        }
    )
    if turn["threads"]:
        ops.append(
            {
                "op": "link_upsert",
                "source_ref": "ev",
                "links": [
                    {"target_ref": f"t_{key}", "relation": "advances", "direction": "outgoing"}
                    for key in turn["threads"]
                ],
            }
        )
    for a, relation, b in turn["rel"]:
        ops.append(
            {
                "op": "link_upsert",
                "source_ref": f"c_{a}",
                "links": [{"target_ref": f"c_{b}", "relation": relation, "direction": "outgoing"}],
            }
        )
    return ops


def build_story() -> dict[str, Any]:
    """The story as the JSON-ready mapping written to ``story.json``."""
    seen: set[str] = set()
    turns = [
        {"user": t["user"], "assistant": t["assistant"], "ops": turn_ops(t, seen)} for t in TURNS
    ]
    return {"title": TITLE, "turns": turns}


def replay(story: Mapping[str, Any]) -> list[str]:
    """Apply every turn through the real engine from an empty store; the rejections, described."""
    import asyncio

    from memgraph_plugin import Store, get_write_api

    store = Store()
    write = get_write_api(store, None)
    problems: list[str] = []

    async def run() -> None:
        for seq, turn in enumerate(story["turns"], start=1):
            result = await write.apply_extraction_batch(ops=turn["ops"], max_seq=seq)
            for entry in result.rejected:
                problems.append(f"turn {seq}: {entry.error.code} {entry.error.message}: {entry.op}")

    asyncio.run(run())
    return problems


def main() -> int:
    story = build_story()
    STORY_PATH.write_text(json.dumps(story, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {STORY_PATH} ({len(story['turns'])} turns)")
    try:
        problems = replay(story)
    except ImportError as exc:  # the engine is not importable: the JSON is written unchecked
        print(f"not replayed: {exc}")
        return 0
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
