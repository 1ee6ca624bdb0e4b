"""DLPack both ways, and NumPy's conversions."""

import numpy as np
import pytest

import anydev as xp

CPU = xp.Device("cpu:0")


def host_devices():
    """The selected devices whose arrays live in host memory (DLPack kDLCPU)."""
    from conftest import DEVICES

    return [d for d in DEVICES if xp.zeros(1, device=d).__dlpack_device__() == (1, 0)]


def ext_devices():
    """The selected devices whose memory DLPack has no name for (kDLExtDev)."""
    from conftest import DEVICES

    return [d for d in DEVICES if xp.zeros(1, device=d).__dlpack_device__()[0] == 12]


def cuda_memory_devices():
    """The selected devices whose arrays live in CUDA device memory (kDLCUDA)."""
    from conftest import DEVICES

    return [d for d in DEVICES if xp.zeros(1, device=d).__dlpack_device__()[0] == 2]


@pytest.fixture(params=host_devices(), ids=str)
def host_device(request):
    return request.param


@pytest.fixture(params=ext_devices() or [None], ids=str)
def remote_device(request):
    if request.param is None:
        pytest.skip("no selected device has memory that DLPack has no name for")
    return request.param


@pytest.fixture(params=cuda_memory_devices() or [None], ids=str)
def cuda_device(request):
    if request.param is None:
        pytest.skip("no selected device has CUDA device memory")
    return request.param


def cuda_peer(name):
    """PyTorch or CuPy, when it sees a CUDA GPU (the DLPack peers of a CUDA array)."""
    module = pytest.importorskip(name)
    if name == "torch" and not module.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA GPU")
    return module


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


def test_broadcast_views_export_read_only(host_device):
    """A broadcast view's elements share memory, so anydev refuses writes
    to it; its export says so (DLPack 1.0's READ_ONLY flag), and a legacy
    capsule, which cannot, is refused as NumPy refuses its own."""
    x = xp.asarray([1.0, 2.0, 3.0], device=host_device)
    for view in [xp.broadcast_to(x, (2, 3)), xp.broadcast_to(x, (2, 3))[1]]:
        a = np.from_dlpack(view)
        assert not a.flags.writeable
        np.testing.assert_array_equal(a, np.broadcast_to([1.0, 2.0, 3.0], view.shape))
        assert np.shares_memory(a, np.from_dlpack(x))
        with pytest.raises(BufferError, match="read-only"):
            view.__dlpack__()
        copied = np.from_dlpack(view, copy=True)
        assert copied.flags.writeable
        assert not np.shares_memory(copied, np.from_dlpack(x))
    assert np.from_dlpack(x).flags.writeable


def test_copy_requests_are_honoured(host_device):
    x = xp.asarray([1.0, 2.0], device=host_device)
    shared = np.from_dlpack(x)
    copied = np.from_dlpack(x, copy=True)
    assert not np.shares_memory(shared, copied)
    assert copied.flags.writeable
    copied[0] = 5.0
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0])
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0), copy=True))


def test_numpy_asarray_with_a_dtype_keeps_the_view_or_copies_as_asked(host_device):
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=host_device)
    same = np.asarray(x, dtype=np.float32)
    same[0] = 7.0
    assert float(x[0]) == 7.0
    converted = np.asarray(x, dtype=np.float64)
    assert converted.dtype == np.float64 and not np.shares_memory(converted, same)
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, dtype=np.float64, copy=False)
    assert not np.shares_memory(np.asarray(x, dtype=np.float32, copy=True), same)


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
    # asarray onto cpu:0 takes the same path (the default device may be
    # another); copy=True is a copy.
    y = xp.asarray(a, device=CPU)
    a[0, 0] = 7.0
    assert float(y[0, 0]) == 7.0
    z = xp.from_dlpack(a, copy=True)
    a[0, 0] = 8.0
    assert float(z[0, 0]) == 7.0


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
    # An anydev array is held to the same rule.
    mine = xp.asarray(a, device="cpu:0")
    with pytest.raises(BufferError, match="copy=False"):
        xp.from_dlpack(mine, device=remote_device, copy=False)
    assert xp.from_dlpack(mine, device=remote_device).device == remote_device


def test_from_dlpack_of_an_anydev_array_is_that_array(host_device):
    x = xp.asarray([1.0], device=host_device)
    assert xp.from_dlpack(x).device == host_device
    same = xp.from_dlpack(x, copy=False)
    same[0] = 7.0
    assert float(x[0]) == 7.0


@pytest.mark.parametrize("producer", ["abc", [1.0, 2.0], 3, None])
def test_from_dlpack_of_a_non_producer_is_a_type_error(producer):
    with pytest.raises(TypeError, match="__dlpack__"):
        xp.from_dlpack(producer)


def test_numpy_operators_do_not_convert_anydev_arrays_implicitly(host_device):
    x = xp.asarray([1.0, 2.0], device=host_device)
    with pytest.raises(TypeError):
        np.ones(2) + x
    with pytest.raises(TypeError):
        np.add(x, 1.0)


def test_torch_uses_cuda_memory_in_place_both_ways(cuda_device):
    torch = cuda_peer("torch")
    x = xp.asarray([1.0, 2.0, 3.0, 4.0], device=cuda_device)
    t = torch.from_dlpack(x)
    assert t.device == torch.device("cuda", cuda_device.index)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0]
    # The same memory: a write by PyTorch is seen by anydev once PyTorch's
    # stream is done (the consumer orders its own work), and anydev's
    # pending writes are done before it hands the memory out again.
    t[0] = 10.0
    torch.cuda.synchronize()
    assert float(x[0]) == 10.0
    x[1] = -1.0
    again = torch.from_dlpack(x)
    assert again.data_ptr() == t.data_ptr()
    assert again.tolist() == [10.0, -1.0, 3.0, 4.0]
    # Views keep their offset and strides.
    v = torch.from_dlpack(x[1::2])
    assert v.tolist() == [-1.0, 4.0] and v.stride() == (2,)
    m = xp.reshape(xp.arange(6, dtype=xp.float32, device=cuda_device), (2, 3))
    assert torch.from_dlpack(m.mT).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_cuda_exports_honour_streams_and_copies(cuda_device):
    torch = cuda_peer("torch")
    x = xp.asarray([1.0, 2.0], device=cuda_device)
    assert x.__dlpack_device__() == (2, cuda_device.index)
    with pytest.raises(ValueError, match="stream=0"):
        x.__dlpack__(stream=0)
    for stream in (None, 1, 2, -1, torch.cuda.Stream(device=cuda_device.index).cuda_stream):
        assert "dltensor" in repr(x.__dlpack__(stream=stream))
    shared = torch.from_dlpack(x)
    copied = torch.from_dlpack(x.__dlpack__(copy=True, max_version=(1, 0)))
    assert copied.data_ptr() != shared.data_ptr() and copied.tolist() == [1.0, 2.0]
    # To the host only as asked: a copy, since device memory is not host memory.
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), [1.0, 2.0])
    with pytest.raises(BufferError, match="not host memory"):
        x.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="cannot export"):
        x.__dlpack__(dl_device=(2, cuda_device.index + 1))


def test_cupy_uses_cuda_memory_in_place(cuda_device):
    cp = cuda_peer("cupy")
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int32, device=cuda_device)
    with cp.cuda.Device(cuda_device.index):
        c = cp.from_dlpack(x)
        assert c.dtype == cp.int32 and c.tolist() == [[1, 2], [3, 4]]
        c *= 10
        cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu:0")), [[10, 20], [30, 40]])


def test_torch_cuda_tensors_import_in_place(cuda_device):
    torch = cuda_peer("torch")
    t = torch.arange(12, dtype=torch.float32, device=f"cuda:{cuda_device.index}").reshape(3, 4)
    # The producer's device by default, over the producer's memory.
    x = xp.from_dlpack(t)
    assert x.device == cuda_device
    assert torch.from_dlpack(x).data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu:0")), t.cpu().numpy())
    # Writes on either side are seen on the other, once the writer's
    # stream is done.
    x[0, 0] = 100.0
    xp.accelerator.synchronize(cuda_device)
    assert t[0, 0].item() == 100.0
    t[1, 1] = -5.0
    torch.cuda.synchronize()
    assert float(x[1, 1]) == -5.0
    # Views keep their strides and offset, and still share the memory.
    for view in (t[:, 1::2], t.T, t[2]):
        v = xp.from_dlpack(view)
        assert torch.from_dlpack(v).data_ptr() == view.data_ptr()
        np.testing.assert_array_equal(np.asarray(v.to_device("cpu:0")), view.cpu().numpy())
    assert float(xp.sum(xp.from_dlpack(t[:, ::3]))) == float(t[:, ::3].sum())
    assert xp.asarray(t).device == cuda_device
    # copy=False is met in place; copy=True copies on the device.
    assert torch.from_dlpack(xp.from_dlpack(t, copy=False)).data_ptr() == t.data_ptr()
    c = xp.from_dlpack(t, copy=True)
    assert c.device == cuda_device and torch.from_dlpack(c).data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(np.asarray(c.to_device("cpu:0")), t.cpu().numpy())
    # Elsewhere through the producer's host copy, which copy=False refuses.
    np.testing.assert_array_equal(np.asarray(xp.from_dlpack(t, device="cpu:0")), t.cpu().numpy())
    with pytest.raises(BufferError, match="host copy"):
        xp.from_dlpack(t, device="cpu:0", copy=False)
    empty = xp.from_dlpack(t[:0])
    assert empty.shape == (0, 4) and empty.device == cuda_device


def test_imported_cuda_memory_outlives_the_producers_tensor(cuda_device):
    torch = cuda_peer("torch")
    import gc

    n = 1 << 20
    gc.collect()
    before = torch.cuda.memory_allocated(cuda_device.index)
    t = torch.ones(n, dtype=torch.float32, device=f"cuda:{cuda_device.index}")
    x = xp.from_dlpack(t)
    del t
    gc.collect()
    assert torch.cuda.memory_allocated(cuda_device.index) >= before + 4 * n
    y = xp.multiply(x, 2.0)
    assert float(xp.sum(y)) == 2.0 * n
    del x
    gc.collect()
    # The producer's deleter ran: PyTorch has its memory back.
    assert torch.cuda.memory_allocated(cuda_device.index) < before + 4 * n
    del y


def test_cuda_imports_wait_for_the_producers_stream(cuda_device):
    torch = cuda_peer("torch")
    side = torch.cuda.Stream(device=cuda_device.index)
    with torch.cuda.stream(side):
        # Enough queued work on a stream anydev does not know that a read
        # not ordered after it would see the early values.
        a = torch.ones(1 << 24, dtype=torch.float64, device=f"cuda:{cuda_device.index}")
        for _ in range(30):
            a.mul_(1.5)
        x = xp.from_dlpack(a)
        low, high = xp.min(x), xp.max(x)
    assert float(low) == float(high) == 1.5**30
    side.synchronize()


def test_cupy_arrays_import_in_place(cuda_device):
    cp = cuda_peer("cupy")
    with cp.cuda.Device(cuda_device.index):
        c = cp.arange(6, dtype=cp.int32).reshape(2, 3)
        x = xp.from_dlpack(c)
        assert x.device == cuda_device and x.dtype == xp.int32
        x[...] = x * 10
        xp.accelerator.synchronize(cuda_device)
        assert c.tolist() == [[0, 10, 20], [30, 40, 50]]
        # Work queued on a stream that does not wait for the legacy one.
        with cp.cuda.Stream(non_blocking=True) as side:
            a = cp.ones(1 << 24, dtype=cp.float64)
            for _ in range(30):
                a *= 1.5
            y = xp.from_dlpack(a)
            low, high = xp.min(y), xp.max(y)
        assert float(low) == float(high) == 1.5**30
        side.synchronize()
