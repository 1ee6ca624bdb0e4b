"""The GIL is released while anydev computes: Python threads keep running
during a long kernel. (Timing two threads against one would not show it
here: the CPU backend already spreads one large op over every core.)"""

import threading
import time

import anydev as xp

CPU = xp.Device("cpu:0")


def long_op(x):
    return xp.sum(xp.exp(xp.sin(x)))


def test_python_threads_run_while_a_kernel_runs():
    n = 1 << 20
    while True:
        x = xp.linspace(0.0, 1.0, n, device=CPU)
        start = time.perf_counter()
        float(long_op(x))
        duration = time.perf_counter() - start
        if duration > 0.2 or n >= 1 << 26:
            break
        n *= 4
    assert duration > 0.05, "could not make a long enough op to measure"

    done = threading.Event()
    spent = []

    def worker():
        start = time.perf_counter()
        float(long_op(x))
        spent.append(time.perf_counter() - start)
        done.set()

    ticks = []
    t = threading.Thread(target=worker)
    t.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    # With the GIL held through the kernel this thread would stall for
    # (nearly) the whole op; released, only for the short Python parts and
    # the scheduler's slices.
    assert len(ticks) > 10 and max(gaps) < spent[0] / 2, (spent[0], max(gaps), len(ticks))


def test_concurrent_ops_from_many_threads_agree():
    x = xp.linspace(-1.0, 1.0, 10_000, device=CPU)
    expected = float(long_op(x))
    results = []

    def worker():
        for _ in range(20):
            results.append(float(long_op(x)))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 80
