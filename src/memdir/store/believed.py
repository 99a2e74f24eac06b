"""What memdir believed at a past instant, read from the store's own git history (mark 3).

Record time is kept by git: every write is a commit (DESIGN §2). :func:`index_at` finds the
last commit made at or before the instant, reads every record file of that commit's tree, and
indexes them into a throw-away index in a temporary folder, so ``recall --believed-at DATE``
ranks exactly as ``recall`` does, over the beliefs memdir held then. The live index and the
working tree are not touched. A purge rewrites history: a purged belief is gone from every
past commit too, so it is never believed at any date.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path, PurePosixPath

from memdir.kernel.base.clock import format_instant
from memdir.kernel.base.errors import NotFoundError, RecordParseError
from memdir.kernel.index import FileStat, Index
from memdir.kernel.storage import gitio
from memdir.records import codec


def commit_at(store: Path, at: datetime) -> str:
    """Return the hash of the store's last commit made at or before ``at``.

    Raises:
        NotFoundError: the store has no commit that old.
        GitError: git failed.
    """
    done = gitio.run_git(
        store, "rev-list", "-1", f"--before={format_instant(at)}", "HEAD", check=False
    )
    found = done.stdout.decode("ascii", "replace").strip()
    if done.returncode != 0 or not found:
        raise NotFoundError(f"the store has no history at or before {format_instant(at)}")
    return found


def _record_blobs(store: Path, commit: str) -> dict[str, str]:
    out = gitio.run_git(store, "ls-tree", "-r", "-z", "--full-tree", commit, "--", "records")
    found: dict[str, str] = {}
    for item in out.stdout.decode("utf-8", "replace").split("\0"):
        meta, _, path = item.partition("\t")
        parts = meta.split()
        if path.endswith(".md") and len(parts) == 3 and parts[1] == "blob":
            found[path] = parts[2]
    return found


def _blobs(store: Path, hashes: list[str]) -> Iterator[bytes]:
    """Yield the contents of ``hashes`` in order (one ``git cat-file --batch``)."""
    if not hashes:
        return
    out = gitio.run_git(
        store, "cat-file", "--batch", input_bytes=("\n".join(hashes) + "\n").encode()
    ).stdout
    pos = 0
    for _ in hashes:
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        yield out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1


@contextmanager
def index_at(store: Path, at: datetime, scope: str) -> Iterator[tuple[Index, str]]:
    """Yield a temporary index of the records the store held at ``at``, and that commit's hash.

    Args:
        store: The store folder.
        at: The instant asked about.
        scope: The store's scope, for record files that do not say.

    Raises:
        NotFoundError: the store has no commit that old.
        GitError: git failed.
    """
    commit = commit_at(store, at)
    blobs = _record_blobs(store, commit)
    with tempfile.TemporaryDirectory(prefix="memdir-believed-") as tmp:
        index = Index(store, path=Path(tmp) / "index.sqlite")
        try:
            stat = FileStat(0, 0, 0)
            with index.write():
                for rel, data in zip(blobs, _blobs(store, list(blobs.values())), strict=True):
                    try:
                        parsed = codec.parse(
                            data.decode("utf-8", "replace"), PurePosixPath(rel), scope
                        )
                    except RecordParseError:
                        continue  # a file memdir could not read then is not a belief it held
                    index.upsert_record(parsed.record, rel, stat, [])
            yield index, commit
        finally:
            index.close()
