"""Values and primitives every other kernel layer stands on.

Errors, clock, ids, the record model, the caller, atomic files and append-only logs.
"""
