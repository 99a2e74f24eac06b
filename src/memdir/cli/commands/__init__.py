"""CLI commands, one module per area; each lists its commands in ``COMMANDS``."""
