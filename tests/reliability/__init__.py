"""Reliability suites: crashes, faults, upgrades, hostile input and load (docs/reliability.md)."""
