"""``asarray`` of buffer-protocol objects, with NumPy's reading of the same
buffer (``numpy.asarray(memoryview(...))``) as the reference."""

import array
import ctypes

import numpy as np
import pytest

import anydev as xp
from conftest import host, needs_dtype

# NumPy's dtype for each anydev dtype a buffer can carry.
DTYPES = {
    np.dtype(np.bool_): xp.bool,
    np.dtype(np.int8): xp.int8,
    np.dtype(np.uint8): xp.uint8,
    np.dtype(np.int16): xp.int16,
    np.dtype(np.uint16): xp.uint16,
    np.dtype(np.int32): xp.int32,
    np.dtype(np.uint32): xp.uint32,
    np.dtype(np.int64): xp.int64,
    np.dtype(np.uint64): xp.uint64,
    np.dtype(np.float16): xp.float16,
    np.dtype(np.float32): xp.float32,
    np.dtype(np.float64): xp.float64,
    np.dtype(np.complex64): xp.complex64,
    np.dtype(np.complex128): xp.complex128,
}


def check_reads_like_numpy(obj, device):
    """``obj`` imported on ``device`` has NumPy's dtype, shape and values."""
    ref = np.asarray(memoryview(obj))
    dtype = DTYPES[ref.dtype.newbyteorder("=")]
    needs_dtype(device, dtype)
    x = xp.asarray(obj, device=device)
    assert x.device == device
    assert x.dtype == dtype and x.shape == ref.shape
    np.testing.assert_array_equal(host(x), ref)


@pytest.mark.parametrize("code", "bBhHiIlLqQfd")
def test_array_array_of_every_typecode(device, code):
    values = [0, 1, 2, 7, 100] if code.isupper() else [-3, 0, 1, 2, 100]
    if code in "fd":
        values = [-1.5, 0.0, 2.25, float("inf"), float("nan")]
    check_reads_like_numpy(array.array(code, values), device)


def test_bytes_and_bytearray_are_uint8(device):
    for obj in (b"\x00\x01\xfe\xff", bytearray(b"anydev")):
        check_reads_like_numpy(obj, device)
    assert xp.asarray(b"", device=device).shape == (0,)


def test_memoryviews_keep_their_shape_and_stride(device):
    data = array.array("f", [float(i) / 4 for i in range(24)])
    check_reads_like_numpy(memoryview(data).cast("B").cast("f", (2, 3, 4)), device)
    # Every third element: not contiguous, read in row-major order.
    check_reads_like_numpy(memoryview(data)[1::3], device)


def test_big_endian_and_ctypes_buffers(device):
    big = (ctypes.c_int32.__ctype_be__ * 3)(1, -2, 300000)
    assert memoryview(big).format.startswith(">")
    check_reads_like_numpy(big, device)
    check_reads_like_numpy((ctypes.c_double.__ctype_be__ * 2)(1.5, -0.1), device)
    check_reads_like_numpy((ctypes.c_uint16 * 2 * 3)(*[(i, 65535 - i) for i in range(3)]), device)
    # A ctypes scalar is a 0-d buffer.
    check_reads_like_numpy(ctypes.c_double(2.5), device)
    check_reads_like_numpy((ctypes.c_bool * 3)(True, False, True), device)


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128])
def test_formats_array_array_lacks(device, dtype):
    # A memoryview of a NumPy array: a buffer without __dlpack__.
    values = np.array([1.5, -2.0, 65504.0], dtype=dtype)
    if values.dtype.kind == "c":
        values = values * (1 - 0.5j)
        check_reads_like_numpy(memoryview(values.astype(values.dtype.newbyteorder(">"))), device)
    check_reads_like_numpy(memoryview(values), device)


def test_dtype_argument_converts(device):
    x = xp.asarray(array.array("i", [1, -2, 3]), dtype=xp.float32, device=device)
    assert x.dtype == xp.float32
    np.testing.assert_array_equal(host(x), np.array([1, -2, 3], dtype=np.float32))


def test_the_array_is_a_copy(device):
    source = bytearray(b"\x01\x02\x03")
    x = xp.asarray(source, device=device)
    source[0] = 9
    assert host(x).tolist() == [1, 2, 3]
    assert xp.asarray(source, copy=True, device=device).dtype == xp.uint8
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(source, copy=False, device=device)


@pytest.mark.parametrize(
    "obj",
    [
        memoryview(np.zeros(2, dtype="S3")),
        memoryview(np.zeros(2, dtype=[("a", "i4"), ("b", "f8")])),
        array.array("u", "ab"),
    ],
    ids=["bytes3", "struct", "wchar"],
)
def test_formats_without_a_dtype_are_type_errors(device, obj):
    with pytest.raises(TypeError, match="format"):
        xp.asarray(obj, device=device)


def test_numpy_arrays_dlpack_cannot_carry_are_read_as_buffers(device):
    # DLPack has no byte order: NumPy refuses to export big-endian arrays,
    # and the buffer protocol reads them instead.
    for a in [np.array([1.5, -2.0], dtype=">f4"), np.array([[1, 2], [3, -4]], dtype=">i4")]:
        got = xp.asarray(a, device=device)
        assert got.dtype == getattr(xp, a.dtype.newbyteorder("=").name)
        np.testing.assert_array_equal(host(got), a)
    # NumPy strings have no anydev dtype: a TypeError naming the format.
    with pytest.raises(TypeError, match="format"):
        xp.asarray(np.array(["a"]), device=device)


def test_strings_are_not_buffers(device):
    with pytest.raises(TypeError, match="buffer-protocol"):
        xp.asarray("abc", device=device)
