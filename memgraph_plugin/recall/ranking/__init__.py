"""Recall's ranking: the signals (keyword, vector, graph walk, facts, places, topics), the people a
question names, and their fusion."""
