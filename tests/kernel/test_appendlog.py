"""Rewrites of append-only logs never lose an append made by another process meanwhile.

Each test makes a real second process append at a chosen step of a real rewrite: the ``keep``
callback runs inside :func:`rewrite`, so it can start an appender while the bulk is being
filtered (no lock held) or while the rewriter holds the file exclusively.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdir.kernel.base.appendlog import append, drop_head, rewrite

APPEND = (
    "import sys; from pathlib import Path; from memdir.kernel.base.jsonl import append_line\n"
    "append_line(Path(sys.argv[1]), {'n': sys.argv[2]}, wait=float(sys.argv[3]))\n"
)


def _append_in_another_process(path: Path, marker: str, wait: float) -> None:
    subprocess.run([sys.executable, "-c", APPEND, str(path), marker, str(wait)], check=True)


def _markers(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line]


def test_a_line_appended_while_the_bulk_is_filtered_survives_the_rewrite(tmp_path: Path) -> None:
    log = tmp_path / "2026-11-30.jsonl"
    log.write_text("".join(f'{{"n": "old{i}"}}\n' for i in range(5)) + '{"n": "secret"}\n')
    started: list[bytes] = []

    def keep(line: bytes) -> bool:
        if not started:  # first line of the bulk: another process appends now
            started.append(line)
            _append_in_another_process(log, "during", wait=5)
        return b"secret" not in line

    done = rewrite(log, keep)

    assert (done.dropped, done.replaced) == (1, True)
    assert _markers(log) == [*(f'{{"n": "old{i}"}}' for i in range(5)), '{"n":"during"}']


def test_an_appender_that_gives_up_waiting_still_lands_in_the_new_file(tmp_path: Path) -> None:
    log = tmp_path / "actions.jsonl"
    log.write_text('{"n": "secret"}\n{"n": "kept"}\n')
    seen: list[bytes] = []

    def keep(line: bytes) -> bool:
        seen.append(line)
        if b"during" in line:
            # Now in the exclusive step (the tail): an appender that waits 0 s appends anyway,
            # to the file about to be replaced.
            _append_in_another_process(log, "gave-up", wait=0)
        return b"secret" not in line

    def first(line: bytes) -> bool:
        if not seen:
            _append_in_another_process(log, "during", wait=5)
        return keep(line)

    rewrite(log, first)

    assert _markers(log) == ['{"n": "kept"}', '{"n":"during"}', '{"n":"gave-up"}']


def _until_it_has_open(process: subprocess.Popen[bytes], path: Path) -> None:
    """Return once ``process`` holds ``path`` open (Linux ``/proc``), or has ended."""
    folder = Path(f"/proc/{process.pid}/fd")
    while process.poll() is None:
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) == str(path) for fd in folder.iterdir()):
                return
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_an_appender_blocked_by_the_rewrite_appends_to_the_new_file(tmp_path: Path) -> None:
    log = tmp_path / "journal.jsonl"
    log.write_text('{"n": "secret"}\n')
    waiting: list[subprocess.Popen[bytes]] = []

    def keep(line: bytes) -> bool:
        if b"during" in line:  # the exclusive step: this appender opens the file, then waits
            waiting.append(
                subprocess.Popen([sys.executable, "-c", APPEND, str(log), "blocked", "30"])
            )
            _until_it_has_open(waiting[0], log)
        elif not waiting and b"secret" in line:
            _append_in_another_process(log, "during", wait=5)
        return b"secret" not in line

    rewrite(log, keep)
    assert waiting[0].wait() == 0

    assert _markers(log) == ['{"n":"during"}', '{"n":"blocked"}']


def test_a_rewrite_that_drops_nothing_leaves_the_file_untouched(tmp_path: Path) -> None:
    log = tmp_path / "j.jsonl"
    log.write_text('{"n": 1}\n{"n": 2')  # a torn last line too
    before = os.stat(log).st_ino

    done = rewrite(log, lambda line: True)

    assert (done.kept, done.dropped, done.replaced) == (2, 0, False)
    assert os.stat(log).st_ino == before
    assert log.read_text() == '{"n": 1}\n{"n": 2'


def test_drop_head_keeps_what_was_appended_after_the_consumed_part(tmp_path: Path) -> None:
    spool = tmp_path / "anatomy-spool.jsonl"
    append(spool, b'{"path": "a.py"}\n')
    consumed = spool.stat().st_size
    append(spool, b'{"path": "b.py"}\n')  # spooled after the consumer read

    drop_head(spool, consumed)

    assert _markers(spool) == ['{"path": "b.py"}']


def test_append_reports_where_its_line_starts_after_closing_a_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "j.jsonl"
    log.write_bytes(b'{"torn": ')
    offset = append(log, b'{"n": 1}\n')
    assert log.read_bytes()[offset:] == b'{"n": 1}\n'
    assert log.read_bytes() == b'{"torn": \n{"n": 1}\n'
