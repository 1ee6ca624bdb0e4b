"""anydev.dist and mpi4py in one process. ``mpi4py-first`` imports mpi4py
(which starts MPI) before anydev.dist.init(), which then joins it;
``anydev-first`` starts MPI through anydev.dist and imports mpi4py after.
Both interleave their collectives, and the job must end cleanly: each
library finalizes the MPI it started, after anydev's communicators are
freed. Prints ``rank R: ok`` on success."""

import atexit
import sys

import numpy as np

order = sys.argv[1]


def at_exit():
    """Registered before anything else, so it runs after anydev's own exit
    handler: anydev's communicators are gone, and MPI is finalized exactly
    when anydev started it (mpi4py finalizes its own later still)."""
    freed = not anydev.dist.is_initialized()
    print(f"rank {RANK}: at exit, communicators freed: {freed}, MPI finalized: {MPI.Is_finalized()}", flush=True)


atexit.register(at_exit)
if order == "mpi4py-first":
    from mpi4py import MPI

    assert MPI.Is_initialized()
    import anydev.dist

    comm = anydev.dist.init()
elif order == "anydev-first":
    import anydev.dist

    comm = anydev.dist.init()
    from mpi4py import MPI
else:
    raise SystemExit(f"unknown order {order!r}")

import anydev as xp

world = MPI.COMM_WORLD
assert (comm.rank, comm.size) == (world.Get_rank(), world.Get_size()), (comm.rank, world.Get_rank())

for step in range(3):
    x = xp.full((4,), float(comm.rank + step), dtype=xp.float32, device=comm.device)
    total = comm.all_reduce(x)
    mpi_total = world.allreduce(comm.rank + step)
    assert float(total[0]) == mpi_total, (float(total[0]), mpi_total)
    # An anydev array through mpi4py's buffer protocol path, by way of NumPy.
    gathered = np.empty((comm.size, 4), dtype=np.float32)
    world.Allgather(np.asarray(x.to_device("cpu:0")), gathered)
    assert gathered[:, 0].tolist() == [float(r + step) for r in range(comm.size)], gathered

half = comm.split(comm.rank % 2)
mpi_half = world.Split(comm.rank % 2)
assert half.size == mpi_half.Get_size()
assert float(half.all_reduce(xp.ones(1, device=comm.device))[0]) == half.size
mpi_half.Free()

RANK = comm.rank
print(f"rank {comm.rank}: ok", flush=True)
