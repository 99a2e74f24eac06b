"""Record files as people and other tools write them (L1: PyYAML allowed)."""
