"""Benchmarks that run memdir's main job on public data."""
