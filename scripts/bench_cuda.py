#!/usr/bin/env python3
"""Time anydev's CUDA backend against CuPy and PyTorch on the same GPU.

Run on a machine with an NVIDIA GPU, CuPy and PyTorch (no network needed):

    python3 scripts/bench_cuda.py target/release/anydev [--device 0] [--quick] [--json out.json]

It times, with CuPy and with PyTorch in the same process:

- add, divide and divmod of two float32 matrices from 100x100 to 1000x1000
  (the sizes of cupy-performance's time_add / time_divide / time_divmod),
  as time per call including the host-side launch overhead;
- large elementwise ops (add, multiply, exp) as a fraction of the device's
  measured copy bandwidth (read + written bytes / time, like `anydev bench`);
- sum and logsumexp of a large float32 vector;
- float32 and bfloat16 square matmuls (TFLOP/s);
- host-to-device and device-to-host bandwidth, pageable and pinned;

then runs `ANYDEV bench --devices cuda:N --json` and prints anydev's numbers
beside them where `anydev bench` measures the same op at the same size, with
the ratio anydev time / other time (below 1: anydev is faster).

Every timing is the median of several repeats of a loop of calls ended by a
device synchronisation, so it is throughput time: host overhead for small
ops, device time for large ones.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time


def median_time(fn, sync, target=0.2, repeats=7, max_calls=100000):
    """Seconds per call of fn(): warm up, size a loop to about `target`
    seconds, and return the median over `repeats` loops."""
    fn()
    sync()
    calls = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        elapsed = time.perf_counter() - t0
        if elapsed >= target / 4 or calls >= max_calls:
            break
        calls *= 4
    calls = max(1, min(max_calls, int(calls * target / max(elapsed, 1e-9))))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


class Lib:
    """One array library (CuPy or PyTorch) seen through the same few calls."""

    def __init__(self, name, device):
        self.name = name
        if name == "cupy":
            import cupy

            self.xp = cupy
            cupy.cuda.Device(device).use()
            self.sync = lambda: cupy.cuda.Device(device).synchronize()
        else:
            import torch

            self.xp = torch
            self.dev = torch.device(f"cuda:{device}")
            torch.backends.cuda.matmul.allow_tf32 = False
            self.sync = lambda: torch.cuda.synchronize(self.dev)

    def rand(self, shape, dtype="float32"):
        if self.name == "cupy":
            a = self.xp.random.uniform(0.5, 1.5, size=shape).astype(self.xp.float32)
            if dtype == "bfloat16":
                return None  # CuPy has no bfloat16 matmul
            return a
        t = self.xp.rand(shape, device=self.dev, dtype=self.xp.float32) + 0.5
        return t.to(getattr(self.xp, dtype))

    def host(self, n, pinned):
        if self.name == "cupy":
            import numpy

            if pinned:
                mem = self.xp.cuda.alloc_pinned_memory(n * 4)
                return numpy.frombuffer(mem, numpy.float32, n)
            return numpy.ones(n, numpy.float32)
        t = self.xp.ones(n, dtype=self.xp.float32)
        return t.pin_memory() if pinned else t

    def to_device(self, h):
        return self.xp.asarray(h) if self.name == "cupy" else h.to(self.dev, non_blocking=True)

    def to_host(self, d, out):
        if self.name == "cupy":
            d.get(out=out)
        else:
            out.copy_(d, non_blocking=False)

    def copy(self, x):
        return x.copy() if self.name == "cupy" else x.clone()

    def divmod(self, x, y):
        if self.name == "cupy":
            return self.xp.divmod(x, y)
        return (self.xp.floor_divide(x, y), self.xp.remainder(x, y))

    def logsumexp(self, x):
        if self.name == "cupy":
            m = x.max()
            return m + self.xp.log(self.xp.exp(x - m).sum())
        return self.xp.logsumexp(x, 0)


def run_library(lib, quick):
    """Rows (op, size label, elements, seconds, extra) for one library."""
    rows = []
    xp = lib.xp
    target = 0.05 if quick else 0.2

    def t(fn):
        return median_time(fn, lib.sync, target=target)

    for n in [100, 200, 500, 1000]:
        x, y = lib.rand((n, n)), lib.rand((n, n))
        rows.append(("add", f"{n}x{n}", n * n, t(lambda: x + y), None))
        rows.append(("divide", f"{n}x{n}", n * n, t(lambda: x / y), None))
        rows.append(("divmod", f"{n}x{n}", n * n, t(lambda: lib.divmod(x, y)), None))
    # 10M elements is also `anydev bench`'s largest size (so its numbers
    # line up); 100M is far beyond any cache.
    for big in [10_000_000] if quick else [10_000_000, 100_000_000]:
        x, y = lib.rand((big,)), lib.rand((big,))
        copy_s = t(lambda: lib.copy(x))
        copy_gbs = 2 * big * 4 / copy_s / 1e9
        rows.append(("memcpy", "", big, copy_s, f"{copy_gbs:.0f} GB/s"))
        for name, fn, arrays in [
            ("add", lambda: x + y, 3),
            ("multiply", lambda: x * y, 3),
            ("exp", lambda: xp.exp(x), 2),
            ("sum", lambda: x.sum(), 1),
        ]:
            s = t(fn)
            gbs = arrays * big * 4 / s / 1e9
            rows.append((name, "", big, s, f"{gbs:.0f} GB/s = {gbs / copy_gbs:.2f} x copy"))
        rows.append(("logsumexp", "", big, t(lambda: lib.logsumexp(x)), None))
        del x, y
    for dtype in ["float32", "bfloat16"]:
        for n in [1024, 4096] if quick else [1024, 4096, 8192]:
            a, b = lib.rand((n, n), dtype), lib.rand((n, n), dtype)
            if a is None:
                continue
            s = t(lambda: a @ b)
            rows.append((f"matmul_{dtype}", f"{n}^3", n, s, f"{2 * n**3 / s / 1e12:.1f} TFLOP/s"))
    n = 16_000_000 if quick else 64_000_000
    for pinned in [False, True]:
        h = lib.host(n, pinned)
        d = lib.to_device(h)
        kind = "pinned" if pinned else "pageable"
        s = t(lambda: lib.to_device(h))
        rows.append((f"h2d_{kind}", "", n, s, f"{n * 4 / s / 1e9:.1f} GB/s"))
        s = t(lambda: lib.to_host(d, h))
        rows.append((f"d2h_{kind}", "", n, s, f"{n * 4 / s / 1e9:.1f} GB/s"))
    return rows


# anydev bench op name for each row of ours (same f32 work, same elements).
ANYDEV_OP = {
    "add": "add",
    "divide": "divide",
    "multiply": "multiply",
    "exp": "exp",
    "sum": "sum",
    "memcpy": "memcpy",
    "matmul_float32": "matmul",
    "h2d_pageable": "to_device_from_cpu",
    "d2h_pageable": "to_device_to_cpu",
}


def run_anydev(binary, device, quick):
    cmd = [binary, "bench", "--devices", f"cuda:{device}", "--json"] + (["--quick"] if quick else [])
    print("running:", " ".join(cmd), file=sys.stderr)
    try:
        out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    except OSError as e:
        print(f"could not run {binary}: {e}", file=sys.stderr)
        return None
    if out.returncode != 0:
        print(f"anydev bench exited with {out.returncode}:\n{out.stderr}", file=sys.stderr)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        print(f"anydev bench printed no JSON:\n{out.stdout[:2000]}\n{out.stderr[:2000]}", file=sys.stderr)
        return None


def anydev_seconds(report, device, op, size):
    if report is None or op not in ANYDEV_OP:
        return None
    want = ANYDEV_OP[op]
    for row in report.get("rows", []):
        if row.get("device") == f"cuda:{device}" and row.get("op") == want and row.get("size") == size:
            return row.get("seconds")
    return None


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("anydev", help="path to the anydev binary (cargo build --release -p anydev-cli)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smaller sizes and shorter timings")
    ap.add_argument("--json", help="also write every number to this file")
    args = ap.parse_args()

    results = {}
    for name in ["cupy", "torch"]:
        try:
            lib = Lib(name, args.device)
        except Exception as e:  # noqa: BLE001 - report and go on without it
            print(f"{name} unavailable: {e}", file=sys.stderr)
            continue
        print(f"timing {name} ...", file=sys.stderr)
        results[name] = run_library(lib, args.quick)

    gpu = driver = "?"
    try:
        import torch

        gpu = torch.cuda.get_device_name(args.device)
        driver = torch.version.cuda
    except Exception:  # noqa: BLE001
        pass
    report = run_anydev(args.anydev, args.device, args.quick)
    if report:
        for d in report.get("devices", []):
            if d.get("device") == f"cuda:{args.device}":
                gpu = d.get("name") or gpu

    keys = []
    for rows in results.values():
        for op, label, size, _, _ in rows:
            if (op, label, size) not in keys:
                keys.append((op, label, size))
    lookup = {name: {(op, label, size): (s, extra) for op, label, size, s, extra in rows} for name, rows in results.items()}

    print(f"\nGPU: {gpu} (CUDA {driver}); anydev {report.get('version') if report else '(not run)'}")
    header = f"{'op':<16} {'size':>11} {'cupy':>10} {'torch':>10} {'anydev':>10} {'any/cupy':>9} {'any/torch':>9}  notes"
    print(header)
    print("-" * len(header))
    table = []
    for op, label, size in keys:
        c = lookup.get("cupy", {}).get((op, label, size), (None, None))
        tt = lookup.get("torch", {}).get((op, label, size), (None, None))
        a = anydev_seconds(report, args.device, op, size)
        note = tt[1] or c[1] or ""
        shown = label or f"{size:,}"
        print(
            f"{op:<16} {shown:>11} {fmt_time(c[0]):>10} {fmt_time(tt[0]):>10} {fmt_time(a):>10}"
            f" {ratio(a, c[0]):>9} {ratio(a, tt[0]):>9}  {note}"
        )
        table.append({"op": op, "size": size, "label": label, "cupy": c[0], "torch": tt[0], "anydev": a, "note": note})
    if report:
        print("\nanydev bench rows for this device (all sizes):")
        for row in report.get("rows", []):
            if row.get("device") == f"cuda:{args.device}":
                frac = row.get("memcpy_fraction")
                print(
                    f"  {row['op']:<20} {row['size']:>10} {fmt_time(row.get('seconds')):>10}"
                    f"  {'' if frac is None else f'{frac:.2f} x memcpy'} {row.get('note') or ''}"
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "cuda": driver, "rows": table, "anydev": report}, f, indent=1)


if __name__ == "__main__":
    main()
