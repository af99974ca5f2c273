"""The turn pipeline: messages in, extraction + batch + compaction, recall before each answer."""
