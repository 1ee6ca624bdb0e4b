"""Behaviour that needs a device configured a particular way, set up through
the simulator's options in a child process: a device without f64 (design
section 14: float32 defaults) and a device out of memory (MemoryError
naming it). Skipped where the simulator is not loaded."""

import os
import subprocess
import sys
import textwrap

import pytest

import anydev as xp

SIM = [d for d in xp.__array_namespace_info__().devices() if d.kind == "sim"]
pytestmark = pytest.mark.skipif(not SIM, reason="needs the simulator plugin (ANYDEV_PLUGINS)")


def run_child(code, **env):
    """Runs ``code`` in a fresh interpreter with ``env`` added; returns stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_device_without_f64_defaults_to_float32():
    out = run_child(
        """
        import anydev as xp
        info = xp.__array_namespace_info__()
        d = xp.Device("sim:0")
        assert "float64" not in info.dtypes(device=d)
        assert info.default_dtypes(device=d)["real floating"] == xp.float32
        assert xp.zeros(3, device=d).dtype == xp.float32
        assert xp.asarray([1.5, 2.0], device=d).dtype == xp.float32
        assert xp.linspace(0.0, 1.0, 3, device=d).dtype == xp.float32
        with xp.device(d):
            assert xp.ones(2).dtype == xp.float32
        try:
            xp.zeros(3, dtype=xp.float64, device=d)
        except xp.UnsupportedError as e:
            assert "sim:0" in str(e)
        else:
            raise AssertionError("float64 on a device without it")
        print("ok")
        """,
        ANYDEV_SIM_REFUSE_DTYPES="f64",
    )
    assert out.strip() == "ok"


def test_out_of_memory_is_a_memory_error_naming_the_device():
    out = run_child(
        """
        import anydev as xp
        try:
            xp.zeros(1 << 20, device="sim:1")
        except MemoryError as e:
            assert "sim:1" in str(e), str(e)
        else:
            raise AssertionError("no MemoryError")
        # The device still works after the failure.
        assert float(xp.sum(xp.ones(10, device="sim:1"))) == 10.0
        print("ok")
        """,
        ANYDEV_SIM_MEMORY_LIMIT="64K",
    )
    assert out.strip() == "ok"
