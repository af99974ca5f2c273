"""Capitalised non-names do not become characters: weekday and month abbreviations, quoted work
titles, and lone words the chat itself writes in lower case; real names stay."""

from __future__ import annotations

from host import Host
from host.chats.context import Message
from memgraph_plugin.extraction import find_mentions
from memgraph_plugin.extraction.vocabulary import ChatWords
from memgraph_plugin.turn import pipeline_for

CHAT = "false-names"


def names(text: str, **kwargs) -> list[str]:
    return [m.name for m in find_mentions(text, **kwargs)]


def test_calendar_abbreviations_and_quoted_titles_are_no_names() -> None:
    assert names("See you Tues at the Lantern Market, or Fri. Sept is busy for Mara.") == [
        "Lantern Market", "Mara"
    ]
    assert names('I loved "Charlotte\'s Web" and “The Name of the Wind” with Jon.') == ["Jon"]
    assert names('Then Jon said "we go now" to Mara.') == ["Jon", "Mara"]  # speech: no title


def test_a_word_the_chat_writes_in_lower_case_is_no_new_name() -> None:
    said = ["I build web pages.", "The web is slow, Rose.", "Rose fixed the web again."]
    messages = [Message(1, "user", t, i) for i, t in enumerate(said)]
    words = ChatWords().feed_until(messages, 3)
    assert words.ordinary("web") and not words.ordinary("rose") and not words.ordinary("mara")
    text = "We met on the Web, Rose and Mara."
    assert names(text) == ["Web", "Rose", "Mara"]  # no chat history: every capitalised word
    assert names(text, ordinary=words.ordinary) == ["Rose", "Mara"]
    assert names(text, ordinary=words.ordinary, known=lambda w: w == "web") == [
        "Web", "Rose", "Mara"
    ]  # a name the graph already knows is never questioned
    cut = ChatWords().feed_until(messages, 3).feed_until(messages[:1], 1)  # the chat was cut
    assert cut.fed == 1 and cut.lower["web"] == 1


async def test_the_offline_extractor_makes_no_character_of_them(host: Host) -> None:
    pipeline = pipeline_for(host)
    lines = [
        "I spent the day on the web looking for a chess club.",
        "The web says the chess club meets on Tues. Ask Melanie.",
        "Melanie loved Chess at school and read about it on the Web, Tues or Fri.",
    ]
    for i, text in enumerate(lines):
        add = pipeline.add_user_message if i % 2 == 0 else pipeline.add_assistant_message
        await add(CHAT, text, name="Caroline" if i % 2 == 0 else "Gina")
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    people = sorted(n.title for n in session.store.iter_nodes() if n.type == "character_sheet")
    assert people == ["Caroline", "Gina", "Melanie"]
