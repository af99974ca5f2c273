"""Tests of the bench scripts: each runs end to end on a small input."""
