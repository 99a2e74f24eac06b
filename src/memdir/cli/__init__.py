"""The ``memdir`` command line (L5): the only code that prints."""
