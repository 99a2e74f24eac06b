"""The secret scanner on hostile input: time per scan as the text grows (linear, not square).

Usage::

    python benchmarks/redact.py

For each repeated unit (a run of ``TOKEN``, ``key: `` …, the shapes that made earlier
patterns backtrack), prints the median scan time of a 6 KB, 24 KB and 96 KB text and the
ratio of the largest to the smallest: ~16 for a linear scan, ~256 for a quadratic one.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memdir.kernel.lang.redact import find_secrets

UNITS = ["TOKEN", "AUTH", "a=", "key: ", "-p ", "mysql ", "Bearer ", "x" * 5, "password ", "pw is "]
SIZES = [6_000, 24_000, 96_000]


def main() -> None:
    """Print one row per unit: median ms per size and the growth ratio."""
    print(f"{'unit':<10}" + "".join(f"{n // 1000:>6} KB" for n in SIZES) + "   ratio")
    for unit in UNITS:
        row = []
        for size in SIZES:
            text = unit * (size // len(unit))
            runs = []
            for _ in range(5):
                started = time.perf_counter()
                find_secrets(text)
                runs.append((time.perf_counter() - started) * 1000)
            row.append(statistics.median(runs))
        ratio = row[-1] / max(row[0], 1e-6)
        print(f"{unit!r:<10}" + "".join(f"{ms:>9.1f}" for ms in row) + f"   {ratio:5.1f}")


if __name__ == "__main__":
    main()
