#!/usr/bin/env python3
"""Times NumPy on the work `anydev bench` does on cpu:0, runs `anydev bench`
in the same run, and prints anydev/NumPy throughput ratios per op and size.

A ratio above 1 means anydev is faster (ratio = NumPy's time / anydev's time).
Both sides time the same f32 calls the same way: output allocation included,
a warm-up call, batches long enough for the clock, the median of the batches.

NumPy comes from PyPI, in a virtual environment (nothing system-wide):

    python3 -m venv .venv-bench
    .venv-bench/bin/pip install numpy
    .venv-bench/bin/python scripts/bench_numpy.py            # about 2 minutes
    .venv-bench/bin/python scripts/bench_numpy.py --quick    # seconds

The anydev side is `scripts/anydev bench --json --devices cpu:0` (a release
build; set ANYDEV_BIN to use a binary you built yourself). `--json FILE`
also writes both sides' raw numbers.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("bench_numpy.py needs NumPy; see the instructions at the top of this script")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The plans of `anydev bench` (crates/anydev-cli/src/bench.rs), kept in step.
FULL = dict(sizes=[100, 10_000, 100_000, 1_000_000, 10_000_000], matmul=[64, 256, 512, 1024], target=0.2, samples=7)
QUICK = dict(sizes=[100, 10_000, 1_000_000], matmul=[64, 256], target=0.03, samples=3)
COPY_ELEMENTS = 10_000_000


def batch(n, call):
    """Seconds per call over `n` calls."""
    start = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - start) / n


def measure(call, target, samples):
    """Median seconds per call, with the batch sizing of anydev's `measure::time`."""
    once = batch(1, call)
    slice_s = target / samples
    per_batch, estimate = 1, once
    while estimate * per_batch < slice_s and per_batch < 1 << 24:
        per_batch = min(max(per_batch * 2, int(slice_s / max(estimate, 1e-9) / 2)), 1 << 24)
        estimate = batch(per_batch, call)
    count = max(1, min(samples, int(target / (estimate * per_batch))))
    return statistics.median(batch(per_batch, call) for _ in range(count))


def numpy_cases(plan):
    """(op, size, call) for every case NumPy can run, inputs in [0.5, 1.5) as anydev's."""
    rng = np.random.default_rng(0)
    src = np.ones(COPY_ELEMENTS, np.float32)
    dst = np.zeros(COPY_ELEMENTS, np.float32)
    yield "memcpy", COPY_ELEMENTS, lambda: np.copyto(dst, src)
    for n in plan["sizes"]:
        x = rng.uniform(0.5, 1.5, n).astype(np.float32)
        y = rng.uniform(0.5, 1.5, n).astype(np.float32)
        yield "add", n, lambda: np.add(x, y)
        yield "multiply", n, lambda: np.multiply(x, y)
        yield "divide", n, lambda: np.divide(x, y)
        yield "exp", n, lambda: np.exp(x)
        yield "sum", n, lambda: np.sum(x)
    for n in plan["matmul"]:
        a = rng.uniform(0.5, 1.5, (n, n)).astype(np.float32)
        b = rng.uniform(0.5, 1.5, (n, n)).astype(np.float32)
        yield "matmul", n, lambda: np.matmul(a, b)


def run_numpy(plan):
    times = {}
    for op, size, call in numpy_cases(plan):
        times[(op, size)] = measure(call, plan["target"], plan["samples"])
        print(f"  numpy {op:<9} {size:>9}  {times[(op, size)] * 1e6:12.2f} us", file=sys.stderr)
    return times


def run_anydev(quick):
    binary = os.environ.get("ANYDEV_BIN")
    command = [binary] if binary else [os.path.join(ROOT, "scripts", "anydev")]
    command += ["bench", "--json", "--devices", "cpu:0"] + (["--quick"] if quick else [])
    print("  running " + " ".join(command), file=sys.stderr)
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    times = {(r["op"], r["size"]): r["seconds"] for r in report["rows"] if r["seconds"] is not None}
    return times, report


def blas_name():
    try:
        return np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # older NumPy: no dict mode
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes, shorter timing")
    parser.add_argument("--json", metavar="FILE", help="also write both sides' numbers to FILE")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL

    ours, report = run_anydev(args.quick)
    theirs = run_numpy(plan)

    print(f"NumPy {np.__version__} ({blas_name()}), Python {platform.python_version()}, anydev {report['version']}")
    print("ratio = NumPy time / anydev time (above 1: anydev faster); memcpy: NumPy copyto vs the CPU backend's copy")
    print(f"{'op':<9} {'size':>9} {'numpy':>12} {'anydev':>12} {'ratio':>7}")
    rows = []
    for (op, size), t_np in theirs.items():
        t_ad = ours.get((op, size))
        ratio = t_np / t_ad if t_ad else None
        rows.append(dict(op=op, size=size, numpy_seconds=t_np, anydev_seconds=t_ad, ratio=ratio))
        shown = f"{ratio:7.2f}" if ratio else "      -"
        anydev = f"{t_ad * 1e6:9.2f} us" if t_ad else "           -"
        print(f"{op:<9} {size:>9} {t_np * 1e6:9.2f} us {anydev} {shown}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(numpy=np.__version__, blas=blas_name(), rows=rows, anydev=report), f, indent=1)


if __name__ == "__main__":
    main()
