"""The store on disk.

Paths and layout, the lock, record files, git, transactions, the audit log, lifecycle and
authority, the journal and session state.
"""
