import os
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.kernel.base.errors import JournalOffsetError, UsageError
from memdir.kernel.base.jsonl import MAX_LINE_BYTES, append_line, read_tail


def test_read_tail_leaves_a_partial_line_for_the_next_call(tmp_path: Path) -> None:
    journal = tmp_path / "2026-11-30.jsonl"
    journal.write_bytes(b'{"n": 1}\n{"n": 2}\n{"n": 3')
    first = read_tail(journal, 0)
    with journal.open("ab") as fh:
        fh.write(b"}\n")
    second = read_tail(journal, first.next_offset)
    assert [line.value["n"] for line in first.lines if line.value] == [1, 2]
    assert [line.value["n"] for line in second.lines if line.value] == [3]
    assert second.next_offset == journal.stat().st_size


def test_read_tail_counts_lines_that_are_not_objects(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b'{"ok": 1}\nnot json\n[1, 2]\n\n{"ok": 2}\n')
    tail = read_tail(journal, 0)
    assert tail.skipped == 2
    assert [line.value for line in tail.lines if line.value] == [{"ok": 1}, {"ok": 2}]


def test_an_offset_past_the_end_means_the_file_was_replaced(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b'{"a": 1}\n')
    with pytest.raises(JournalOffsetError):
        read_tail(journal, 100)
    assert read_tail(tmp_path / "missing.jsonl", 7).next_offset == 7


def test_append_closes_a_torn_last_line_before_writing(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b'{"torn": ')
    offset, length = append_line(journal, {"n": 1})
    data = journal.read_bytes()
    assert data == b'{"torn": \n{"n":1}\n'
    assert data[offset : offset + length] == b'{"n":1}\n'


def test_append_refuses_an_over_long_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        append_line(tmp_path / "j.jsonl", {"text": "x" * MAX_LINE_BYTES})


def test_concurrent_appenders_never_interleave_bytes(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    script = (
        "import sys; from pathlib import Path; from memdir.kernel.base.jsonl import append_line\n"
        "for i in range(200): append_line(Path(sys.argv[1]), {'w': sys.argv[2], 'i': i, 'pad': 'x' * 3000})\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(journal), str(w)]) for w in range(4)
    ]
    assert [p.wait() for p in procs] == [0] * 4
    tail = read_tail(journal, 0)
    assert tail.skipped == 0
    values = [line.value for line in tail.lines]
    assert len(values) == 800
    for worker in range(4):
        mine = [v["i"] for v in values if v and v["w"] == str(worker)]
        assert mine == list(range(200))
    assert os.path.getsize(journal) == tail.next_offset
