"""The store as a whole: scanning records into the index, history, health, purge (L2)."""
