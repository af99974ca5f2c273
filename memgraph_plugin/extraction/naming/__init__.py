"""Names in messages: finding them, typing them by cues (person, place, vehicle), spelling
variants, and resolving them against the chat's graph."""
