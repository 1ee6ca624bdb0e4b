"""DLPack both ways, and NumPy's conversions."""

import numpy as np
import pytest

import anydev as xp

CPU = xp.Device("cpu:0")


def host_devices():
    """The selected devices whose arrays live in host memory (DLPack kDLCPU)."""
    from conftest import DEVICES

    return [d for d in DEVICES if xp.zeros(1, device=d).__dlpack_device__() == (1, 0)]


def non_host_devices():
    from conftest import DEVICES

    return [d for d in DEVICES if xp.zeros(1, device=d).__dlpack_device__() != (1, 0)]


@pytest.fixture(params=host_devices(), ids=str)
def host_device(request):
    return request.param


@pytest.fixture(params=non_host_devices() or [None], ids=str)
def remote_device(request):
    if request.param is None:
        pytest.skip("every selected device is in host memory")
    return request.param


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64", "float32", "float64"])
def test_numpy_reads_anydev_host_memory_without_a_copy(host_device, dtype):
    x = xp.asarray(np.arange(6).reshape(2, 3).astype(dtype), device=host_device)
    a = np.from_dlpack(x)
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3).astype(dtype))
    # The same memory both times.
    assert np.from_dlpack(x).ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x), a)
    assert np.asarray(x).ctypes.data == a.ctypes.data


def test_writes_on_either_side_are_seen_on_the_other(host_device):
    x = xp.asarray([1.0, 2.0, 3.0], device=host_device)
    a = np.from_dlpack(x)
    assert a.flags.writeable
    a[0] = 10.0
    assert float(x[0]) == 10.0
    x[2] = -1.0
    assert a[2] == -1.0
    x += 1
    np.testing.assert_array_equal(a, [11.0, 3.0, 0.0])
    view = np.asarray(x[::-1])
    view[0] = 7.0
    assert float(x[2]) == 7.0


def test_views_export_with_their_strides_and_offset(host_device):
    base = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(base, device=host_device)
    for key in [(slice(1, 3), slice(None, None, 2)), (slice(None, None, -1), 2), (Ellipsis, slice(5, 0, -2))]:
        v = x[key]
        a = np.from_dlpack(v)
        np.testing.assert_array_equal(a, base[key])
        assert np.shares_memory(a, np.from_dlpack(x))
    np.testing.assert_array_equal(np.from_dlpack(x.mT), base.T)
    np.testing.assert_array_equal(np.from_dlpack(xp.asarray(2.5, device=host_device)), 2.5)
    assert np.from_dlpack(xp.zeros((0, 2), device=host_device)).shape == (0, 2)


def test_copy_requests_are_honoured(host_device):
    x = xp.asarray([1.0, 2.0], device=host_device)
    shared = np.from_dlpack(x)
    copied = np.from_dlpack(x, copy=True)
    assert not np.shares_memory(shared, copied)
    assert copied.flags.writeable
    copied[0] = 5.0
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0])
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0), copy=True))


def test_capsules_versioned_and_legacy(host_device):
    x = xp.asarray([1.0, 2.0], device=host_device)
    assert type(x.__dlpack__()).__name__ == "PyCapsule"
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(x.__dlpack__(max_version=(0, 8)))
    assert '"dltensor"' in repr(x.__dlpack__())
    # Unconsumed capsules free what they hold when they go (no leak, no crash).
    for _ in range(100):
        x.__dlpack__(max_version=(1, 0))
        x.__dlpack__()
    with pytest.raises(ValueError, match="stream"):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))


def test_memory_the_host_cannot_address_needs_an_explicit_copy(remote_device):
    x = xp.asarray([1.0, 2.0], device=remote_device)
    assert x.__dlpack_device__() == (12, remote_device.index)
    with pytest.raises(BufferError, match="not host memory"):
        x.__dlpack__()
    with pytest.raises(BufferError, match="not host memory"):
        x.__dlpack__(copy=False, dl_device=(1, 0))
    with pytest.raises(BufferError, match="not host memory"):
        np.asarray(x)
    np.testing.assert_array_equal(np.from_dlpack(x, copy=True), [1.0, 2.0])
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu", copy=True), [1.0, 2.0])
    capsule = x.__dlpack__(dl_device=(1, 0), max_version=(1, 0))
    assert "dltensor_versioned" in repr(capsule)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float32", "float64"])
def test_from_dlpack_copies_numpy_arrays_to_any_device(device, dtype):
    from conftest import host, needs_dtype

    needs_dtype(device, getattr(xp, dtype))
    a = (np.arange(12) % 5).reshape(3, 4).astype(dtype)
    for source in (a, a[::-1, 1::2], a.T, np.asarray(a[0, 0])):
        x = xp.from_dlpack(source, device=device)
        assert x.device == device and x.dtype == getattr(xp, dtype)
        np.testing.assert_array_equal(host(x), source)
    # asarray takes DLPack producers too, and honours the scope.
    with xp.device(device):
        assert xp.asarray(a).device == device


def test_from_dlpack_uses_writable_host_memory_in_place():
    a = np.arange(12.0).reshape(3, 4)
    for source, view in ((a, lambda b: b), (a[::-1, 1::2], lambda b: b[::-1, 1::2]), (a.T, lambda b: b.T)):
        x = xp.from_dlpack(source)
        assert x.device == CPU
        a[2, 1] = -1.0
        np.testing.assert_array_equal(np.from_dlpack(x, copy=True), view(a))
        x[0, 0] = 100.0
        assert source[0, 0] == 100.0
    # asarray takes the same path; copy=True is a copy.
    y = xp.asarray(a)
    a[0, 0] = 7.0
    assert float(y[0, 0]) == 7.0
    z = xp.from_dlpack(a, copy=True)
    a[0, 0] = 8.0
    assert float(z[0, 0]) == 7.0
    with pytest.raises(AttributeError):
        xp.from_dlpack([1.0])


def test_the_producer_lives_as_long_as_an_array_uses_its_memory():
    import gc
    import weakref

    a = np.arange(6.0)
    alive = weakref.ref(a)
    x = xp.from_dlpack(a)[2:]
    del a
    gc.collect()
    assert alive() is not None
    np.testing.assert_array_equal(np.from_dlpack(x, copy=True), [2.0, 3.0, 4.0, 5.0])
    del x
    gc.collect()
    assert alive() is None


def test_memory_that_cannot_be_shared_is_copied_or_refused():
    ro = np.arange(3.0)
    ro.flags.writeable = False
    x = xp.from_dlpack(ro)
    assert float(x[1]) == 1.0
    with pytest.raises(BufferError, match="read-only"):
        xp.from_dlpack(ro, copy=False)
    # An f8 array one byte into its memory: its elements are misaligned.
    raw = np.zeros(8 * 4 + 1, dtype=np.uint8)
    misaligned = raw[1:33].view(np.float64)
    misaligned[:] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(np.from_dlpack(xp.from_dlpack(misaligned), copy=True), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(BufferError, match="aligned"):
        xp.from_dlpack(misaligned, copy=False)
    assert xp.from_dlpack(np.zeros((0, 3))).shape == (0, 3)


def test_importing_to_another_device_copies(remote_device):
    if remote_device.capabilities().get("pageable_memory_access"):
        pytest.skip("the device uses host memory in place (test_configured_devices.py)")
    a = np.array([1.0, 2.0], dtype=np.float32)
    x = xp.from_dlpack(a, device=remote_device)
    a[0] = 5.0
    assert x.device == remote_device and float(x[0]) == 1.0
    with pytest.raises(BufferError, match="copy=False"):
        xp.from_dlpack(a, device=remote_device, copy=False)


def test_from_dlpack_of_an_anydev_array_is_that_array(host_device):
    x = xp.asarray([1.0], device=host_device)
    assert xp.from_dlpack(x).device == host_device


def test_numpy_operators_do_not_convert_anydev_arrays_implicitly(host_device):
    x = xp.asarray([1.0, 2.0], device=host_device)
    with pytest.raises(TypeError):
        np.ones(2) + x
    with pytest.raises(TypeError):
        np.add(x, 1.0)
