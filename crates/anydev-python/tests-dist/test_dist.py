"""anydev.dist under mpirun: each test launches a small program (in
``programs/``) on several ranks and checks every rank's report. Run by
scripts/test-dist.sh, which builds the package with the ``dist`` feature
and the simulator plugin, and installs mpi4py beside it."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "RAYON_NUM_THREADS=1"]


def sim_ranks(n):
    """n ranks on sim:0..n-1 (the simulator's own collectives)."""
    plugins = os.environ.get("ANYDEV_PLUGINS")
    assert plugins and "sim:" in plugins, "ANYDEV_PLUGINS must name the simulator (scripts/test-dist.sh sets it)"
    return ["-n", str(n), "-x", f"ANYDEV_PLUGINS={plugins}", "-x", f"ANYDEV_SIM_DEVICES={n}", "-x", "ANYDEV_DIST_KIND=sim"]


def cpu_ranks(n):
    return ["-n", str(n), "-x", "ANYDEV_DIST_KIND=cpu"]


def launch(ranks, program, *args, timeout_s=60, limit=240):
    cmd = [*MPIRUN, *ranks, "-x", f"ANYDEV_DIST_TIMEOUT={timeout_s}", sys.executable, str(PROGRAMS / program), *args]
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    return out, time.monotonic() - start


def every_rank_says(out, n, pattern):
    text = out.stdout + out.stderr
    for r in range(n):
        # No anchors: mpirun interleaves the ranks' lines.
        assert re.search(rf"rank {r}: {pattern}", text), f"rank {r} did not report {pattern!r}:\n{text}"


@pytest.mark.parametrize(
    "ranks,n",
    [pytest.param(lambda: sim_ranks(4), 4, id="sim4"), pytest.param(lambda: cpu_ranks(2), 2, id="cpu2")],
)
def test_every_collective_matches_numpy(ranks, n):
    """4 ranks on sim (the simulator's collectives) and 2 on cpu (MPI)."""
    out, _ = launch(ranks(), "collectives.py")
    every_rank_says(out, n, r"\d+ passed, 0 failed")
    assert out.returncode == 0, out.stdout + out.stderr


def test_sim_arrays_through_mpi_with_host_staging():
    out, _ = launch([*sim_ranks(4), "-x", "ANYDEV_DIST_BACKEND=sim:mpi"], "collectives.py")
    every_rank_says(out, 4, r"\d+ passed, 0 failed")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("order", ["mpi4py-first", "anydev-first"])
def test_beside_mpi4py(order):
    out, _ = launch(cpu_ranks(2), "beside_mpi4py.py", order)
    every_rank_says(out, 2, "ok")
    # MPI ends with the library that started it: anydev at its exit
    # handler, mpi4py after every exit handler.
    finalized = order == "anydev-first"
    every_rank_says(out, 2, f"at exit, communicators freed: True, MPI finalized: {finalized}")
    # A library that ends MPI early, or not at all, makes mpirun fail.
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_stalled_rank_makes_the_others_raise_timeout_error():
    out, took = launch(cpu_ranks(3), "stall.py", timeout_s=2)
    text = out.stdout + out.stderr
    for r in (0, 2):
        # No anchor at the start: mpirun may put one rank's line right
        # after another's, before that one's newline.
        m = re.search(rf"rank {r}: TimeoutError after ([0-9.]+) s: (.*)$", text, re.M)
        assert m, f"rank {r} did not time out:\n{text}"
        assert 1.5 < float(m.group(1)) < 20, m.group(0)
        assert "no progress for 2s" in m.group(2), m.group(2)
    assert took < 120, took
