"""What reads compute over a store: visible-set projection and the kept edge summaries."""
