"""The injected memory block: its text, the rows that repeat another, and its size budget."""
