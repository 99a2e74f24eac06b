"""Opening a store in constant time (issue 16): folder times, answers checked, hand edits seen.

``memdir recall`` and ``remember`` (and MCP) open a store without statting every record file
when the record folders' times say nothing was added, removed or renamed since the last pass.
Every kind of hand edit must still reach the answers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memdir import service
from memdir.kernel.index import Index
from memdir.store import scan


def _texts(store: Path, query: str) -> list[str]:
    return [h.doc["text"] for h in service.recall(store, query, include_user=False).hits]


def _record(store: Path, record_id: str) -> Path:
    return next((store / "records").glob(f"*/{record_id}.md"))


def _seed(store: Path) -> list[str]:
    ids = [
        service.remember(store, f"Pelican {n} nests in the harbour crane").record.id
        for n in range(3)
    ]
    _texts(store, "pelican")  # a pass that finds the store in step
    return ids


def test_a_quick_open_reads_no_file_stat_when_nothing_changed(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(store)

    def no_full_pass(self: Index) -> None:
        raise AssertionError("a full stat pass on a quick open of an unchanged store")

    monkeypatch.setattr(Index, "file_stats", no_full_pass)
    assert len(_texts(store, "pelican")) == 3  # the answer is still there
    with pytest.raises(AssertionError, match="full stat pass"):  # a normal open still checks all
        scan.open_handle(store)


def test_a_record_added_by_hand_is_recalled(store: Path) -> None:
    ids = _seed(store)
    source = _record(store, ids[0])
    copy = source.read_text().replace(ids[0], "f-handmade0000001").replace("Pelican 0", "Cormorant")
    (source.parent / "f-handmade0000001.md").write_text(copy)
    assert _texts(store, "cormorant") == ["Cormorant nests in the harbour crane"]


def test_a_record_deleted_or_moved_by_hand_leaves_the_answers(store: Path) -> None:
    ids = _seed(store)
    _record(store, ids[0]).unlink()
    shutil.move(_record(store, ids[1]), store / "records" / f".{ids[1]}.md")  # hidden: no record
    assert _texts(store, "pelican") == ["Pelican 2 nests in the harbour crane"]


def test_a_record_rewritten_in_place_is_recalled_as_written(store: Path) -> None:
    ids = _seed(store)
    path = _record(store, ids[2])
    folder_time = path.parent.stat().st_mtime_ns
    path.write_text(path.read_text().replace("Pelican 2 nests", "Pelican 2 sleeps"))
    assert path.parent.stat().st_mtime_ns == folder_time  # the folder cannot tell
    assert "Pelican 2 sleeps in the harbour crane" in _texts(store, "pelican")
    assert "Pelican 2 nests in the harbour crane" not in _texts(store, "pelican")


def test_an_edit_in_place_that_makes_a_record_match_is_found_by_the_next_full_pass(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _seed(store)
    path = _record(store, ids[0])
    path.write_text(path.read_text().replace("harbour crane", "lighthouse"))
    monkeypatch.setattr(scan, "FULL_PASS_SECONDS", 0.0)  # the pass is due
    assert _texts(store, "lighthouse") == ["Pelican 0 nests in the lighthouse"]


def test_a_new_index_is_filled_whatever_the_stamp_says(store: Path) -> None:
    _seed(store)
    for suffix in ("", "-wal", "-shm"):
        (store / f"index.db{suffix}").unlink(missing_ok=True)
    assert len(_texts(store, "pelican")) == 3


def test_memdirs_own_writes_keep_the_store_in_step(store: Path) -> None:
    _seed(store)
    stamp = store / "state" / scan.STAMP_NAME
    before = stamp.stat().st_mtime_ns
    service.remember(store, "Herons fish at dawn")
    os.utime(stamp, ns=(before, before))
    assert scan._in_step(store)  # the folder changed, by memdir: no full pass needed
    assert _texts(store, "herons") == ["Herons fish at dawn"]


@pytest.mark.parametrize("how", ["deleted", "corrupt"])
def test_a_lost_index_is_rebuilt_whole_by_the_quick_open(store: Path, how: str) -> None:
    service.remember(store, "Survives a lost index")
    assert _texts(store, "survives lost index") == ["Survives a lost index"]  # stamp written
    index_file = store / "index.sqlite"
    if how == "deleted":
        for suffix in ("", "-wal", "-shm"):
            (store / f"index.sqlite{suffix}").unlink(missing_ok=True)
    else:
        index_file.write_bytes(b"this is not a database" * 100)  # same inode, new content
    assert _texts(store, "survives lost index") == ["Survives a lost index"]
    assert _texts(store, "nothing like it") == []


def test_after_a_write_the_folder_is_counted_until_its_time_settles_then_never(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder written within a tick of the stamp is counted (git's racy rule), not forever.

    Once its time is more than a tick old, one open counts it and stamps afresh; the opens
    after that trust the time alone. Paired: a record added by hand after that is still seen.
    """
    import time

    _seed(store)
    counted: list[str] = []
    real = scan._entries

    def counting(folder: Path) -> int:
        counted.append(folder.name)
        return real(folder)

    monkeypatch.setattr(scan, "_entries", counting)
    assert len(_texts(store, "pelican")) == 3
    assert "fact" in counted  # just written: within a tick of the stamp
    time.sleep(scan.RACY_NS / 1e9 + 0.1)
    counted.clear()
    assert len(_texts(store, "pelican")) == 3
    assert "fact" in counted  # counted once more, now that its time has settled: stamped afresh
    counted.clear()
    assert len(_texts(store, "pelican")) == 3
    assert counted == []  # trusted by its time alone
    source = next((store / "records" / "fact").glob("*.md"))
    copy = source.read_text().replace(source.stem, "f-handmade0000002")
    (source.parent / "f-handmade0000002.md").write_text(copy.replace("Pelican", "Heron", 1))
    assert "Heron" in " ".join(_texts(store, "heron"))
