"""Behaviour that needs a device configured a particular way, set up through
the simulator's options in a child process: a device without f64 (design
section 14: float32 defaults), a device out of memory (MemoryError
naming it) and a device that reaches host memory (DLPack imports in
place). Skipped where the simulator is not loaded."""

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


def test_data_in_a_dtype_the_device_lacks_converts_on_the_way():
    """float64 and complex128 data (NumPy's defaults) reach a device
    without them when asarray is given a dtype it holds: converted on
    the host first, whatever the data came as."""
    out = run_child(
        """
        import array
        import numpy as np
        import anydev as xp
        d = xp.Device("sim:0")
        values = np.array([0.1, -2.5, 3.0])
        sources = [values, xp.asarray(values, device="cpu:0"), array.array("d", values), values.tolist()]
        for source in sources:
            x = xp.asarray(source, dtype=xp.float32, device=d)
            assert x.device == d and x.dtype == xp.float32, (type(source), x)
            np.testing.assert_array_equal(np.from_dlpack(x.to_device("cpu:0")), values.astype(np.float32))
        z = xp.asarray(values + 1j, dtype=xp.complex64, device=d)
        np.testing.assert_array_equal(np.from_dlpack(z.to_device("cpu:0")), (values + 1j).astype(np.complex64))
        try:
            xp.asarray(values, device=d)
        except xp.UnsupportedError as e:
            assert "float64" in str(e) and "sim:0" in str(e)
        else:
            raise AssertionError("float64 data kept as float64 on a device without it")
        print("ok")
        """,
        ANYDEV_SIM_REFUSE_DTYPES="f64,c128",
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


def test_a_device_that_reaches_host_memory_imports_dlpack_tensors_in_place():
    out = run_child(
        """
        import numpy as np
        import anydev as xp
        d = xp.Device("sim:0")
        assert d.capabilities()["pageable_memory_access"]
        # Plugin devices import memory at 256-byte boundaries.
        raw = np.zeros(64 * 4 + 256, dtype=np.uint8)
        start = -raw.ctypes.data % 256
        a = raw[start:start + 64 * 4].view(np.float32)
        a[:] = np.arange(64)
        x = xp.from_dlpack(a, device=d, copy=False)
        assert x.device == d
        x[...] = x * 2.0
        xp.accelerator.synchronize(d)
        np.testing.assert_array_equal(a, np.arange(64) * 2.0)
        a[0] = -1.0
        assert float(x[0]) == -1.0
        # Memory the device cannot import in place is copied, unless the
        # caller refuses copies.
        misaligned = raw[start + 4:start + 4 + 16 * 4].view(np.float32)
        y = xp.from_dlpack(misaligned, device=d)
        y[...] = 0.0
        xp.accelerator.synchronize(d)
        assert misaligned[0] == 2.0
        try:
            xp.from_dlpack(misaligned, device=d, copy=False)
        except BufferError as e:
            assert "aligned" in str(e), str(e)
        else:
            raise AssertionError("copy=False accepted memory it had to copy")
        print("ok")
        """,
        ANYDEV_SIM_UNIFIED="1",
    )
    assert out.strip() == "ok"


def test_plugin_memory_the_host_reaches_exports_in_place():
    out = run_child(
        """
        import numpy as np
        import anydev as xp
        d = xp.Device("sim:0")
        # Every op sleeps first, so an export that did not wait for the
        # pending write would read zeros.
        x = xp.zeros(8, device=d) + xp.arange(8.0, device=d)
        assert x.__dlpack_device__() == (1, 0), x.__dlpack_device__()
        a = np.from_dlpack(x)
        np.testing.assert_array_equal(a, np.arange(8.0))
        a[0] = -1.0
        assert float(x[0]) == -1.0
        x[1] = 5.0
        xp.accelerator.synchronize(d)
        assert a[1] == 5.0
        view = np.from_dlpack(x[2:7:2])
        assert np.shares_memory(view, a)
        assert np.shares_memory(np.asarray(x), a)
        np.testing.assert_array_equal(view, [2.0, 4.0, 6.0])
        copied = np.from_dlpack(x, copy=True)
        copied[2] = 100.0
        assert float(x[2]) == 2.0
        print("ok")
        """,
        ANYDEV_UNIFIED_MEMORY="1",
        ANYDEV_SIM_UNIFIED="1",
        ANYDEV_SIM_OP_DELAY_US="20000",
    )
    assert out.strip() == "ok"
