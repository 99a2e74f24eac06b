"""The memdir exception tree: every failure a user can cause has a class, a code and an exit code.

Library code (kernel, records, store, service) raises these; only the CLI turns them
into exit codes and messages, in one place. Exit codes are DESIGN §9's::

    MemdirError                 exit 1   code "error"
    ├── UsageError              exit 2   code "usage"         bad arguments or input shape
    ├── RefusedError            exit 3   code "refused"       policy refusals
    │   ├── SecretError                  code "secret"
    │   ├── ProvenanceError              code "provenance"
    │   ├── RejectedBeliefError          code "rejected_belief"
    │   ├── TransitionError              code "invalid_transition"
    │   └── AuthorityError               code "owner_only"    the agent may not do this
    ├── NotFoundError           exit 4   code "not_found"
    │   └── StoreNotFoundError  exit 1   code "no_store"      (an error, not a lookup)
    ├── StoreLayoutError                 code "store_layout"  a store folder links outside it
    ├── ObsoleteProposalError            code "proposal_obsolete" its record changed since
    ├── RecordParseError                 code "parse_error"
    ├── LockTimeoutError                 code "lock_timeout"
    ├── GitError                         code "git_error"
    │   └── GitStateError                code "git_state"     the store's git is mid-merge…
    ├── IndexFormatError                 code "index_format"
    ├── ManifestError                    code "manifest"
    ├── JournalOffsetError               code "journal_offset"
    └── StorageError                     code "io_error"      disk full, read-only, I/O error

Imports: standard library only (kernel contract).
"""

from __future__ import annotations


class MemdirError(Exception):
    """Base of every error memdir raises on purpose. Exit code 1."""

    code = "error"
    exit_code = 1


class UsageError(MemdirError):
    """An argument or input has the wrong shape (exit 2)."""

    code = "usage"
    exit_code = 2


class RefusedError(MemdirError):
    """A policy refused the operation (exit 3): provenance, secrets, a rejected belief."""

    code = "refused"
    exit_code = 3


class SecretError(RefusedError):
    """The text contains something shaped like a secret; it was not written."""

    code = "secret"


class ProvenanceError(RefusedError):
    """The origin is not allowed on this channel (``untrusted``, ``system``, a claimed owner)."""

    code = "provenance"


class RejectedBeliefError(RefusedError):
    """The text repeats a belief the owner rejected; it is not re-learned."""

    code = "rejected_belief"


class TransitionError(RefusedError):
    """The record's status does not allow this operation (e.g. correcting a superseded record)."""

    code = "invalid_transition"


class AuthorityError(RefusedError):
    """Only the owner may do this: purge, rollback, deciding a proposal (DESIGN §4; exit 3)."""

    code = "owner_only"


class NotFoundError(MemdirError):
    """A record, commit or file named by the caller does not exist (exit 4).

    ``record_id`` is set when the missing thing is a record, so a caller can say whether it
    was purged.
    """

    code = "not_found"
    exit_code = 4

    def __init__(self, message: str, *, record_id: str | None = None) -> None:
        super().__init__(message)
        self.record_id = record_id


class StoreNotFoundError(MemdirError):
    """No store was found from the working directory, ``--store`` or ``MEMDIR_STORE`` (exit 1)."""

    code = "no_store"


class StoreLayoutError(MemdirError):
    """One of the store's own folders or files is a symlink leading out of the store."""

    code = "store_layout"


class ObsoleteProposalError(MemdirError):
    """A proposal's record changed since the agent proposed (exit 1: an error, not a refusal).

    Not a policy refusal: the change was never judged; it no longer applies to the record as it
    is (superseded, rejected, forgotten, purged or reworded). The owner dismisses it.
    """

    code = "proposal_obsolete"


class RecordParseError(MemdirError):
    """A record file cannot be read at all; it is quarantined, never dropped."""

    code = "parse_error"


class LockTimeoutError(MemdirError):
    """The store lock stayed held by another process past the timeout."""

    code = "lock_timeout"


class GitError(MemdirError):
    """A git command failed, or git is not installed."""

    code = "git_error"


class GitStateError(GitError):
    """The store's git is in a state memdir does not commit in (a merge, a detached HEAD…).

    ``state`` is a stable slug naming it (``merge_in_progress``, ``detached_head``…).
    """

    code = "git_state"

    def __init__(self, message: str, *, state: str) -> None:
        super().__init__(message)
        self.state = state


class IndexFormatError(MemdirError):
    """The index or store was written by a newer memdir format than this one reads."""

    code = "index_format"


class ManifestError(MemdirError):
    """``memdir.toml`` cannot be read or holds an invalid value."""

    code = "manifest"


class JournalOffsetError(MemdirError):
    """A saved journal offset lies past the end of its file (truncated or replaced)."""

    code = "journal_offset"


class StorageError(MemdirError):
    """A file or the index cannot be written or read: the disk is full, read-only or failing."""

    code = "io_error"
