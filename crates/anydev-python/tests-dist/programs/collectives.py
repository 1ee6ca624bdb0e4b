"""Every collective of anydev.dist on this rank's device, checked against
NumPy on values every rank can compute. Run under mpirun; each rank prints
``rank R: N passed, M failed`` and exits non-zero on a failure."""

import sys
import traceback

import numpy as np

import anydev as xp
import anydev.dist

comm = anydev.dist.init()
rank, size, device = comm.rank, comm.size, comm.device
failures = []
passed = 0


def case(name):
    def run(fn):
        global passed
        try:
            fn()
            passed += 1
        except Exception:
            failures.append(name)
            print(f"rank {rank}: FAIL {name}\n{traceback.format_exc()}", flush=True)

    return run


def values(r, n=12):
    """Rank r's contribution: small integers, exact in every dtype used."""
    return (np.arange(n) % 5 + r + 1).astype(np.float64).reshape(3, n // 3)


def mine(dtype):
    return xp.asarray(values(rank), dtype=dtype, device=device)


def host(a):
    return np.asarray(a.to_device("cpu:0")) if a.device != xp.Device("cpu:0") else np.asarray(a)


everyone = np.stack([values(r) for r in range(size)])


@case("init made this rank's device the default device")
def _():
    assert xp.ones(2).device == device, (xp.ones(2).device, device)
    assert anydev.dist.is_initialized()
    assert anydev.dist.world().rank == rank


@case("all_reduce with every op, against NumPy, on the input's device")
def _():
    want = {
        "sum": everyone.sum(0),
        "prod": everyone.prod(0),
        "min": everyone.min(0),
        "max": everyone.max(0),
        "mean": everyone.mean(0),
    }
    for dtype in (xp.float32, xp.int32):
        for op, expected in want.items():
            if op == "mean" and dtype == xp.int32:
                continue
            got = comm.all_reduce(mine(dtype), op=op)
            assert got.device == device and got.dtype == dtype, (op, got.device, got.dtype)
            np.testing.assert_allclose(host(got), expected, rtol=1e-6, err_msg=op)


@case("mean of integers is refused on every rank as an UnsupportedError")
def _():
    try:
        comm.all_reduce(mine(xp.int32), op="mean")
    except anydev.UnsupportedError as e:
        assert "mean" in str(e), e
    else:
        raise AssertionError("mean of int32 was accepted")


@case("broadcast from the last rank")
def _():
    got = comm.broadcast(mine(xp.float32), root=size - 1)
    np.testing.assert_array_equal(host(got), values(size - 1))


@case("all_gather stacks along a new first axis")
def _():
    got = comm.all_gather(mine(xp.float32))
    assert got.shape == (size, 3, 4), got.shape
    np.testing.assert_array_equal(host(got), everyone)


@case("reduce_scatter gives each rank its block of the first axis")
def _():
    x = xp.asarray(np.tile(values(rank)[0], (size, 1)), dtype=xp.float32, device=device)
    got = comm.reduce_scatter(x, op="sum")
    want = np.tile(np.stack([values(r)[0] for r in range(size)]).sum(0), (size, 1))[rank : rank + 1]
    np.testing.assert_array_equal(host(got), want)


@case("all_to_all sends block j to rank j")
def _():
    x = xp.asarray(np.arange(size, dtype=np.float32) + 10 * rank, device=device)
    got = comm.all_to_all(x)
    np.testing.assert_array_equal(host(got), np.array([10 * r + rank for r in range(size)], dtype=np.float32))


@case("send and recv around a ring, onto this rank's device")
def _():
    right, left = (rank + 1) % size, (rank - 1) % size
    if rank % 2 == 0:
        comm.send(mine(xp.float64 if "float64" in xp.__array_namespace_info__().dtypes(device=device) else xp.float32), right, tag=7)
        got = comm.recv(left, tag=7)
    else:
        got = comm.recv(left, tag=7)
        comm.send(mine(got.dtype), right, tag=7)
    assert got.device == device
    np.testing.assert_array_equal(host(got), values(left))


@case("split by parity, then all_reduce within each half")
def _():
    half = comm.split(rank % 2, key=-rank)
    members = [r for r in range(size) if r % 2 == rank % 2]
    assert half.size == len(members)
    assert half.rank == sorted(members, reverse=True).index(rank), half.rank
    got = half.all_reduce(mine(xp.float32))
    np.testing.assert_array_equal(host(got), sum(values(r) for r in members))
    del half


@case("a shape that differs on one rank is a ValueError naming it, on every rank")
def _():
    odd = size - 1
    x = xp.ones(5 if rank == odd else 4, device=device)
    try:
        comm.all_reduce(x)
    except ValueError as e:
        assert f"rank {odd}" in str(e), e
    else:
        raise AssertionError("mismatched shapes were accepted")


@case("bad arguments are ValueErrors and the communicator still works")
def _():
    for call in (lambda: comm.all_reduce(mine(xp.float32), op="average"),
                 lambda: comm.set_engine("cpu", "carrier-pigeon")):
        try:
            call()
        except ValueError:
            pass
        else:
            raise AssertionError("accepted")
    try:
        comm.broadcast(mine(xp.float32), root=size + 3)
    except (ValueError, RuntimeError) as e:
        assert str(size + 3) in str(e) or "rank" in str(e), e
    else:
        raise AssertionError("a root past the last rank was accepted")
    # A negative root is refused inside the collective, on every rank, not
    # by a conversion on one rank while the others wait.
    # The error names the value passed, not the stand-in sent for it.
    refused = [
        (lambda: comm.broadcast(mine(xp.float32), root=-1), "root -1 is not a rank"),
        (lambda: comm.split(-1), "colour -1 is outside"),
        (lambda: comm.split(2**40), f"colour {2**40} is outside"),
        (lambda: comm.send(mine(xp.float32), -2), "-2 is not a rank"),
        (lambda: comm.recv(-3), "-3 is not a rank"),
    ]
    if size > 1:
        refused.append((lambda: comm.send(mine(xp.float32), (rank + 1) % size, tag=-4), "tag -4 is outside"))
    for call, words in refused:
        try:
            call()
        except ValueError as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"accepted: {words}")
    got = comm.all_reduce(xp.ones(1, device=device))
    assert float(got[0]) == size


@case("timeout, engines and describe")
def _():
    comm.timeout = 42.5
    assert comm.timeout == 42.5
    for bad in (0.0, -1.0, float("nan")):
        try:
            comm.timeout = bad
        except ValueError:
            pass
        else:
            raise AssertionError(f"timeout {bad} accepted")
    engines = comm.engines()
    assert "*" in engines and set(engines.values()) <= {"mpi", "nccl", "plugin"}, engines
    text = comm.describe()
    assert f"rank {rank} of {size}" in text and str(device) in text, text
    assert repr(comm).startswith("anydev.dist.Communicator(rank"), repr(comm)


@case("a second init is a RuntimeError")
def _():
    try:
        anydev.dist.init()
    except RuntimeError as e:
        assert "already" in str(e), e
    else:
        raise AssertionError("init ran twice")


@case("another thread gets a RuntimeError, not a crash")
def _():
    import threading

    caught = []

    def other():
        try:
            comm.barrier()
        except RuntimeError as e:
            caught.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert caught and "thread" in caught[0], caught


comm.barrier()
print(f"rank {rank}: {passed} passed, {len(failures)} failed", flush=True)
sys.exit(1 if failures else 0)
