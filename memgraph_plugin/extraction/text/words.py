"""Word lists the offline extractor reads text with: common words that start sentences (never
names on their own), honorifics, place nouns, place prepositions and CJK place suffixes."""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The white-space separated words of `text` (lists below are written as plain text)."""
    return frozenset(text.split())


# Capitalised at a sentence start, but not names: function words, interjections, frequent verbs,
# adverbs and adjectives, days and months. Compared lower-case.
_COMMON = """
a about above after again against ago all almost also although always am an and another any
anyway anybody anyone anything apparently are aren't around as at aw awesome away aww
back bad basically be because been before being best better between both but by bye
can can't cause certainly cheers come coming congrats congratulations cool could couldn't cute
dad damn dear definitely did didn't do does doesn't doing don't done during
each either else enjoy especially even eventually ever every everybody everyone everything
exactly excellent exciting
fantastic feel feeling few finally fine first for from fun funny
get getting give glad go going gonna good got gotta great guess
had hadn't haha hahaha happy has hasn't have haven't having he he'd he'll he's hello her here
here's hers hey hi him his hm hmm honestly hope hopefully how how's however huh
i i'd i'll i'm i've if in indeed instead interesting into is isn't it it'd it'll it's its
just
keep kind know
last later let let's like listen look looking lol lots love lovely
made make many maybe me mean meanwhile mine mom more moreover most much must my myself
nah need never nevertheless new next nice no nobody none nope nor not nothing now
of off often oh ok okay omg on once one only or other otherwise our ours out over
perhaps please plus pretty probably
quite
rather really remember right
said same say see seems seriously she she'd she'll she's should shouldn't since so some
somebody someone something sometimes soon sorry sounds speaking still such super sure
take tell thank thanks that that's the their theirs them then there there's therefore these
they they'd they'll they're they've thing things think this those though through thus to
today together tomorrow tonight too totally true truly try trying
ugh um uh unless until up us usually
very
wait want was wasn't watch way we we'd we'll we're we've well went were weren't what what's
whatever when where where's whether which while who who's whoa why will with without won't
wonderful wow would wouldn't
yay yeah yep yes yesterday yet you you'd you'll you're you've your yours yourself
ask asked bring call called check find follow found gave help invite meet met send show
showed stop talk talked tell told thought visited went
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
mr mrs ms miss dr sir madam lady lord
above across along below behind beneath beside beyond inside near outside over past toward
towards under upon within
"""
COMMON_WORDS: frozenset[str] = words(_COMMON)

# Sentence-internal words that are capitalised for other reasons than being a name.
NEVER_NAMES: frozenset[str] = words(
    """
    i i'm i've i'd i'll ok okay god oh omg lol tv dm pm am ai usa uk eu
    """
)

#: Weekday and month abbreviations: capitalised anywhere, never a name on their own ("Tues",
#: "Sept"; "Jan", "Jun" and "May" stay out: they are names too, and "May" is a common word).
CALENDAR_SHORT: frozenset[str] = words(
    """
    mon tue tues wed weds thu thur thurs fri sat sun
    feb mar apr jul aug sep sept oct nov dec
    """
)

#: Titles that may open a name ("Dr Lee"); the name is kept without them as an alias too.
HONORIFICS: frozenset[str] = words(
    """
    mr mrs ms miss dr sir madam lady lord captain professor prof aunt uncle grandma grandpa
    """
)

#: Lower-case words that may join two capitalised words inside one name ("Bank of Qel").
CONNECTORS: frozenset[str] = frozenset({"of", "de", "da", "van", "von", "del", "la", "le"})

#: A name ending in one of these nouns is a place ("Lantern Market", "Salt Road").
PLACE_NOUNS: frozenset[str] = words(
    """
    street st road rd avenue ave lane boulevard market bazaar city town village harbor
    harbour port docks dock pier park lake river mountain mountains mount mt beach island
    islands bay bridge tower castle palace temple church cathedral school university college
    academy library museum hospital clinic station airport cafe café restaurant bar pub inn
    tavern hotel mall square plaza hall forest woods wood valley desert coast county kingdom
    empire district quarter gate gates garden gardens center centre club gym studio office
    shop store canyon falls hill hills sea ocean keep fortress citadel manor estate farm
    ranch camp base arena stadium theater theatre cinema zoo aquarium springs shore cliffs
    isle peninsula province region republic state states country
    """
)

#: Words after which a capitalised name is a place ("in Qel", "at Skyharbor").
PLACE_PREPOSITIONS: frozenset[str] = words(
    """
    in at near inside outside from into toward towards across around visited visiting visit
    reached entered leaving left
    """
)

#: Verbs after which "to <Name>" is a journey to a place ("went to Paris").
TRAVEL_VERBS: frozenset[str] = words(
    """
    went go goes going gone moved move moving travel traveled travelled traveling travelling
    flew fly flying drove drive driving returned return returning headed heading sailed sail
    trip trips back came come coming road left leave leaving bound departed depart set
    """
)

#: CJK endings that make a quoted or spoken name a place (城 city, 港 harbour, 市 market...).
CJK_PLACE_SUFFIXES: frozenset[str] = frozenset("市城镇村港山河湖街路店馆国省县岛宫寺庙坊楼府园")
