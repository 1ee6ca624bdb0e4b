"""Rank 1 stays away from a collective; the others must raise TimeoutError
after the communicator's timeout (2 s in the test). They then leave
without finalizing MPI (a peer may be gone), and the launcher ends the
job."""

import time

import anydev as xp
import anydev.dist

comm = anydev.dist.init()
x = xp.ones(8, device=comm.device)
comm.barrier()
if comm.rank == 1:
    time.sleep(3 * comm.timeout + 2)
    print("rank 1: woke up", flush=True)
    raise SystemExit(0)
start = time.monotonic()
try:
    comm.all_reduce(x)
    print(f"rank {comm.rank}: the call succeeded", flush=True)
except TimeoutError as e:
    print(f"rank {comm.rank}: TimeoutError after {time.monotonic() - start:.2f} s: {e}", flush=True)
