#!/usr/bin/env python3
"""Per-call time of importing a PyTorch CUDA tensor with ``from_dlpack``,
against the same import by CuPy and by PyTorch itself, in one run, float32,
at 1e3, 1e6 and 1e8 elements.

anydev is timed twice: onto the tensor's own ``cuda`` device (in place,
the default) and onto ``cpu:0`` (through the host copy the producer
makes), to show what an import in place saves. The peers' rows are
``cupy.from_dlpack(t)`` and ``torch.from_dlpack(cupy_array)``, both in
place. Every call's result is dropped inside the timed loop, so a row
includes the release of the producer's tensor; each loop ends with a
device synchronisation (``per_call.py``'s timing). Needs a CUDA GPU,
PyTorch and CuPy:

    python3 crates/anydev-python/benches/dlpack_cuda.py [--device 0]
"""

import argparse

import cupy as cp
import torch

import anydev as xp

from per_call import per_call

SIZES = [1_000, 1_000_000, 100_000_000]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    device = xp.Device(f"cuda:{args.device}")
    sync = torch.cuda.synchronize

    print(f"GPU: {torch.cuda.get_device_name(args.device)}; anydev device {device}")
    print(f"{'elements':>12} {'anydev in place':>16} {'anydev to cpu:0':>16} {'cupy':>10} {'torch<-cupy':>12}")
    for n in SIZES:
        t = torch.ones(n, dtype=torch.float32, device=f"cuda:{args.device}")
        with cp.cuda.Device(args.device):
            c = cp.ones(n, dtype=cp.float32)
        rows = [
            per_call(lambda: xp.from_dlpack(t), sync),
            per_call(lambda: xp.from_dlpack(t, device="cpu:0"), sync),
            per_call(lambda: cp.from_dlpack(t), sync),
            per_call(lambda: torch.from_dlpack(c), sync),
        ]
        print(f"{n:>12} " + " ".join(f"{r * 1e6:>13.1f} us" for r in rows[:2])
              + f" {rows[2] * 1e6:>7.1f} us {rows[3] * 1e6:>9.1f} us")


if __name__ == "__main__":
    main()
