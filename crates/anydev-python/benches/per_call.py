#!/usr/bin/env python3
"""Per-call time from Python of ``x + y``, ``xp.exp(x)`` and ``xp.sum(x)``
against the libraries a user would otherwise pick, in one run, float32, at
100, 1e4 and 1e6 elements.

On ``cpu:0`` (the default) the peers are NumPy and, where it is installed,
PyTorch's CPU tensors. On a CUDA device (``--device cuda:0``) they are
CuPy and PyTorch on the same GPU, where installed, and every batch of calls
ends with each library's device synchronisation.

Each time is the median over batches of back-to-back calls (output
allocation included, a warm-up call first); a ratio is the peer's time
over anydev's (above 1: anydev is faster). Measure a release build:

    python -m venv .venv-bench && .venv-bench/bin/pip install numpy torch
    MATURIN_PEP517_ARGS="--profile release" .venv-bench/bin/pip install crates/anydev-python
    .venv-bench/bin/python crates/anydev-python/benches/per_call.py [--device cuda:0]
"""

import argparse
import statistics
import time

import numpy as np

import anydev as xp

SIZES = [100, 10_000, 1_000_000]
TARGET = 0.1  # seconds per batch
BATCHES = 7


def per_call(fn, sync):
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


class Peer:
    """A library compared with anydev: how it takes a NumPy array, the
    three calls, and how to wait for its device."""

    def __init__(self, name, take, exp, total, sync=lambda: None):
        self.name, self.take, self.exp, self.total, self.sync = name, take, exp, total, sync


def peers(device):
    """The peers installed for `device`, in the order of the table."""
    found = []
    if device.startswith("cpu"):
        found.append(Peer("NumPy", lambda a: a, np.exp, np.sum))
    if device.startswith("cuda"):
        try:
            import cupy

            gpu = cupy.cuda.Device(int(device.split(":")[1]))
            gpu.use()
            found.append(Peer("CuPy", cupy.asarray, cupy.exp, cupy.sum, gpu.synchronize))
        except ImportError:
            pass
    try:
        import torch
    except ImportError:
        return found
    if device.startswith("cpu"):
        found.append(Peer("PyTorch", torch.from_numpy, torch.exp, torch.sum))
    elif device.startswith("cuda"):
        found.append(
            Peer("PyTorch", lambda a: torch.from_numpy(a).to(device), torch.exp, torch.sum, torch.cuda.synchronize)
        )
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu:0", help="the anydev device (default cpu:0)")
    device = xp.Device(parser.parse_args().device)
    others = peers(str(device))
    sync = lambda: xp.accelerator.synchronize(device)  # noqa: E731
    names = " | ".join(p.name for p in others)
    ratios = " | ".join(f"{p.name} / anydev" for p in others)
    print(f"{device}\n")
    print(f"| op | elements | anydev | {names} | {ratios} |")
    print("|---|---|---|" + "---|" * (2 * len(others)))
    for n in SIZES:
        a = np.linspace(0.0, 1.0, n, dtype=np.float32)
        b = a[::-1].copy()
        x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
        theirs = [(p, p.take(a), p.take(b)) for p in others]
        cases = [
            ("x + y", lambda: x + y, lambda p, u, v: lambda: u + v),
            ("exp(x)", lambda: xp.exp(x), lambda p, u, v: lambda: p.exp(u)),
            # float() reads the result back, as code using a sum would.
            ("sum(x)", lambda: float(xp.sum(x)), lambda p, u, v: lambda: float(p.total(u))),
        ]
        for name, ours, call in cases:
            t_ours = per_call(ours, sync)
            times = [per_call(call(p, u, v), p.sync) for p, u, v in theirs]
            peer_cells = " | ".join(f"{t * 1e6:.2f} µs" for t in times)
            ratio_cells = " | ".join(f"{t / t_ours:.2f}" for t in times)
            print(f"| `{name}` | {n:.0e} | {t_ours * 1e6:.2f} µs | {peer_cells} | {ratio_cells} |")


if __name__ == "__main__":
    main()
