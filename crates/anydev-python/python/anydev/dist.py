"""Collectives across processes on anydev arrays, one process per device
(the Rust ``anydev-dist`` crate; docs/distributed.md):

    import anydev as xp
    import anydev.dist

    comm = anydev.dist.init()          # under mpirun: MPI, this rank's device
    x = xp.ones(4) * comm.rank         # on comm.device, the default device now
    total = comm.all_reduce(x)         # on x's device; op="sum" (prod, min, max, mean)

``init`` starts MPI, or joins the MPI that mpi4py (or another library of the
process) already started, so both can be used side by side. It picks this
rank's device from the launcher's environment (``ANYDEV_DIST_KIND``, the
local rank) and makes it the process's default device. Every collective
checks that the ranks agree on the call, shape, dtype and device kind, and
raises ``ValueError`` naming the rank that differs; a rank that never
arrives makes the others raise ``TimeoutError`` after ``comm.timeout``
seconds (``ANYDEV_DIST_TIMEOUT``).

Communicators are used from the main thread, which must call ``init``; a
collective holds the GIL while it waits. MPI ends at exit if ``init``
started it.

Available when the package was built with the ``dist`` feature, which needs
MPI: ``MATURIN_PEP517_ARGS='--features dist' pip install crates/anydev-python``.
"""

import atexit as _atexit
import threading as _threading

from .accelerator import set_default_device as _set_default_device

try:
    from ._anydev import _dist as _native
except ImportError:
    raise ImportError(
        "anydev.dist is not in this build of anydev: build the package with the `dist` feature, which "
        "needs MPI (MATURIN_PEP517_ARGS='--features dist' pip install crates/anydev-python)"
    ) from None

Communicator = _native.Communicator
world = _native.world


def init():
    """Starts MPI (or joins the MPI already started in this process), picks
    this rank's device, makes it the default device and returns the world
    communicator. Call once, from the main thread, on every rank."""
    if _threading.current_thread() is not _threading.main_thread():
        raise RuntimeError("anydev.dist.init() must be called from the main thread")
    comm = _native.init()
    # Frees the communicators at exit, ending MPI if init started it. When
    # mpi4py started MPI, this runs before mpi4py finalizes it.
    _atexit.register(_native._finalize)
    _set_default_device(comm.device)
    return comm


def is_initialized():
    """Whether ``init`` has returned the world communicator."""
    try:
        world()
    except RuntimeError:
        return False
    return True


__all__ = ["Communicator", "init", "is_initialized", "world"]
