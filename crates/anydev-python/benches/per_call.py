#!/usr/bin/env python3
"""Per-call time from Python of ``x + y``, ``xp.exp(x)`` and ``xp.sum(x)``
on cpu:0 against NumPy, in one run, float32, at 100, 1e4 and 1e6 elements.

Each time is the median over batches of back-to-back calls (output
allocation included, a warm-up call first); the ratio is NumPy's time over
anydev's (above 1: anydev is faster). Measure a release build:

    python -m venv .venv-bench && .venv-bench/bin/pip install numpy crates/anydev-python
    .venv-bench/bin/python crates/anydev-python/benches/per_call.py
"""

import statistics
import time

import numpy as np

import anydev as xp

SIZES = [100, 10_000, 1_000_000]
TARGET = 0.1  # seconds per batch
BATCHES = 7


def per_call(fn):
    """Median seconds per call of ``fn``."""
    fn()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start > TARGET / 10:
            break
        calls *= 4
    calls = max(1, int(calls * TARGET / (time.perf_counter() - start)))
    times = []
    for _ in range(BATCHES):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main():
    cpu = xp.Device("cpu:0")
    print("| op | elements | anydev | NumPy | NumPy / anydev |")
    print("|---|---|---|---|---|")
    for n in SIZES:
        a = np.linspace(0.0, 1.0, n, dtype=np.float32)
        b = a[::-1].copy()
        x, y = xp.asarray(a, device=cpu), xp.asarray(b, device=cpu)
        cases = [
            ("x + y", lambda: x + y, lambda: a + b),
            ("exp(x)", lambda: xp.exp(x), lambda: np.exp(a)),
            # float() reads the result back, as code using a sum would.
            ("sum(x)", lambda: float(xp.sum(x)), lambda: float(np.sum(a))),
        ]
        for name, ours, theirs in cases:
            t_ours, t_theirs = per_call(ours), per_call(theirs)
            print(f"| `{name}` | {n:.0e} | {t_ours * 1e6:.2f} µs | {t_theirs * 1e6:.2f} µs | {t_theirs / t_ours:.2f} |")


if __name__ == "__main__":
    main()
