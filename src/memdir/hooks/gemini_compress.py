"""Gemini CLI's PreCompress fires before every model request: tell a real compression apart.

Gemini CLI 0.61.0 (``ChatCompressionService.compress``) fires ``PreCompress`` with trigger
``auto`` at the start of every turn, *before* it decides whether to compress; it compresses
only when the prompt of the last model response reached ``model.compressionThreshold``
(default 0.5) of the model's window (1,048,576 tokens; 256,000 for Gemma 4). ``/compress``
(trigger ``manual``) always compresses. The last response's prompt size is in the session's
transcript (``transcript_path``, JSON Lines: a ``gemini`` message's ``tokens.input``), which
Gemini writes before the next turn starts, so memdir reads the transcript's tail and applies
Gemini's own rule. Seen with the released binary by ``tests/hosts/conformance/test_gemini.py``.

Imports: standard library and the kernel only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memdir.kernel.hostio.hookio import text_field

TYPE_CHECKING = False  # the hook path never imports typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

DEFAULT_THRESHOLD = 0.5
"""Gemini CLI's default ``model.compressionThreshold`` (a fraction of the window)."""
DEFAULT_WINDOW = 1_048_576
SMALL_WINDOWS = {"gemma-4": 256_000}
"""Model name prefix → window, for the models whose window is not the default."""
TAIL_BYTES = 512 * 1024
"""How much of the transcript's end is read (a compressed history is rewritten in one line)."""
_INPUT = re.compile(rb'"tokens"\s*:\s*\{\s*"input"\s*:\s*(\d+)')
_MODEL = re.compile(rb'"model"\s*:\s*"([^"]{1,100})"')


def _tail(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            return handle.read(TAIL_BYTES)
    except OSError:
        return b""


def _threshold(project: Path) -> float:
    """``model.compressionThreshold`` from the project's, then the user's Gemini settings."""
    for path in (project / ".gemini" / "settings.json", Path.home() / ".gemini" / "settings.json"):
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # missing, or JSON with comments: Gemini's default then
        model = settings.get("model") if isinstance(settings, dict) else None
        value = model.get("compressionThreshold") if isinstance(model, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
            return float(value)
    return DEFAULT_THRESHOLD


def compressing(payload: dict[str, Any], project: Path) -> bool:
    """Whether this Gemini ``PreCompress`` will really compress the chat.

    Args:
        payload: The hook payload (``trigger``, ``transcript_path``).
        project: The session's project folder (for ``.gemini/settings.json``).

    Returns:
        ``True`` for a manual compression, or when the transcript's last prompt size reached
        the threshold; ``False`` otherwise, also when the transcript cannot be read.
    """
    if text_field(payload, "trigger") == "manual":
        return True
    tail = _tail(text_field(payload, "transcript_path"))
    sizes = _INPUT.findall(tail)
    if not sizes:
        return False
    models = _MODEL.findall(tail)
    model = models[-1].decode("utf-8", "replace") if models else ""
    window = next((w for p, w in SMALL_WINDOWS.items() if model.startswith(p)), DEFAULT_WINDOW)
    return int(sizes[-1]) >= _threshold(project) * window
