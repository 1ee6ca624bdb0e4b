#!/usr/bin/env python3
"""Per-call time from Python of ``x + y``, ``xp.exp(x)`` and ``xp.sum(x)``
on cpu:0 against NumPy and, where it is installed, PyTorch's CPU tensors,
in one run, float32, at 100, 1e4 and 1e6 elements.

Each time is the median over batches of back-to-back calls (output
allocation included, a warm-up call first); a ratio is the peer's time
over anydev's (above 1: anydev is faster). Measure a release build:

    python -m venv .venv-bench && .venv-bench/bin/pip install numpy torch
    MATURIN_PEP517_ARGS="--profile release" .venv-bench/bin/pip install crates/anydev-python
    .venv-bench/bin/python crates/anydev-python/benches/per_call.py
"""

import statistics
import time

import numpy as np

import anydev as xp

try:
    import torch
except ImportError:
    torch = None

SIZES = [100, 10_000, 1_000_000]
TARGET = 0.1  # seconds per batch
BATCHES = 7


def per_call(fn, sync=lambda: None):
    """Median seconds per call of ``fn``, each batch ended by ``sync`` (a
    device synchronisation, for work a call only enqueues)."""
    fn()
    sync()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        if time.perf_counter() - start > TARGET / 10:
            break
        calls *= 4
    calls = max(1, int(calls * TARGET / (time.perf_counter() - start)))
    times = []
    for _ in range(BATCHES):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main():
    cpu = xp.Device("cpu:0")
    peers = "NumPy" if torch is None else "NumPy | PyTorch"
    ratios = "NumPy / anydev" if torch is None else "NumPy / anydev | PyTorch / anydev"
    print(f"| op | elements | anydev | {peers} | {ratios} |")
    print("|---|---|---|---|---|" + ("---|---|" if torch is not None else ""))
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
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            theirs = [lambda: ta + tb, lambda: torch.exp(ta), lambda: float(torch.sum(ta))]
        for i, (name, ours, numpy_call) in enumerate(cases):
            t_ours = per_call(ours)
            times = [per_call(numpy_call)] + ([per_call(theirs[i])] if torch is not None else [])
            peer_cells = " | ".join(f"{t * 1e6:.2f} µs" for t in times)
            ratio_cells = " | ".join(f"{t / t_ours:.2f}" for t in times)
            print(f"| `{name}` | {n:.0e} | {t_ours * 1e6:.2f} µs | {peer_cells} | {ratio_cells} |")


if __name__ == "__main__":
    main()
