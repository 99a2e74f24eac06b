"""Text handling.

Tokenising and stemming for recall, secret redaction, and the fence around injected text.
"""
