"""Keyword search: the tokenizer, the BM25 index, its postings and its persisted columns."""
