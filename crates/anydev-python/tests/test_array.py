"""The array object: attributes, operators with NumPy as the reference,
Python scalars (NEP 50), indexing, conversions."""

import operator
import re

import numpy as np
import pytest

import anydev as xp
from conftest import host, needs_dtype, run_or_skip, tolerance


def test_attributes(device):
    x = xp.reshape(xp.arange(6, dtype=xp.float32, device=device), (2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.dtype == xp.float32 and x.device == device
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    np.testing.assert_array_equal(host(x.T), host(x).T)
    assert xp.reshape(x, (1, 2, 3)).mT.shape == (1, 3, 2)
    with pytest.raises(ValueError, match="2-d"):
        xp.reshape(x, (6,)).T
    assert x.__array_namespace__() is xp
    assert len(x) == 2
    assert repr(x).startswith("anydev.Array(") and f"device='{device}'" in repr(x)


def test_zero_d_and_empty_arrays(device):
    s = xp.asarray(3.5, device=device)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    e = xp.zeros((0, 3), device=device)
    assert e.shape == (0, 3) and e.size == 0
    assert host(e + 1).shape == (0, 3)
    assert host(xp.sum(e, axis=0)).tolist() == [0.0, 0.0, 0.0]


BINARY = [
    (operator.add, np.add),
    (operator.sub, np.subtract),
    (operator.mul, np.multiply),
    (operator.truediv, np.divide),
    (operator.floordiv, np.floor_divide),
    (operator.mod, np.remainder),
    (operator.pow, np.power),
    (operator.lt, np.less),
    (operator.le, np.less_equal),
    (operator.gt, np.greater),
    (operator.ge, np.greater_equal),
    (operator.eq, np.equal),
    (operator.ne, np.not_equal),
]


@pytest.mark.parametrize("op,ref", BINARY, ids=lambda f: getattr(f, "__name__", ""))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_binary_operators_match_numpy(device, op, ref, dtype):
    d = getattr(xp, dtype)
    needs_dtype(device, d)
    a = np.array([[1, -2, 3], [4, 5, -6]], dtype=dtype)
    b = np.array([2, 3, -1] if op is not operator.pow else [2, 3, 1], dtype=dtype)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    if op is operator.pow and dtype.startswith("int"):
        a = np.abs(a)
        x = xp.abs(x)
    got = run_or_skip(op, x, y)
    assert got.device == device
    np.testing.assert_allclose(host(got), ref(a, b), rtol=tolerance(d))


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift])
def test_bitwise_operators_match_numpy(device, op):
    a = np.array([1, 6, 12, 255], dtype=np.int64)
    b = np.array([3, 2, 1, 4], dtype=np.int64)
    got = op(xp.asarray(a, device=device), xp.asarray(b, device=device))
    np.testing.assert_array_equal(host(got), op(a, b))
    np.testing.assert_array_equal(host(op(xp.asarray(a, device=device), 2)), op(a, 2))
    np.testing.assert_array_equal(host(op(2, xp.asarray(b, device=device))), op(2, b))


def test_unary_operators(device):
    a = np.array([-1.5, 0.0, 2.0])
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(-x), -a)
    np.testing.assert_array_equal(host(+x), a)
    np.testing.assert_array_equal(host(abs(x)), abs(a))
    np.testing.assert_array_equal(host(~xp.asarray([1, -2], device=device)), [-2, 1])
    np.testing.assert_array_equal(host(~xp.asarray([True, False], device=device)), [False, True])


def test_reflected_operators_with_python_scalars(device):
    a = np.array([1.0, 2.0, 4.0])
    x = xp.asarray(a, device=device)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.mod):
        np.testing.assert_allclose(host(op(3, x)), op(3, a), rtol=tolerance(x.dtype))
        np.testing.assert_allclose(host(op(x, 3)), op(a, 3), rtol=tolerance(x.dtype))
    np.testing.assert_array_equal(host(2 < x), 2 < a)


def test_python_scalars_take_the_arrays_dtype_and_device(device):
    needs_dtype(device, xp.float32, xp.int8)
    x = xp.asarray([1, 2], dtype=xp.float32, device=device)
    assert (x + 1.5).dtype == xp.float32 and (x + 1.5).device == device
    assert (2 * x).dtype == xp.float32
    i = xp.asarray([1, 2], dtype=xp.int8, device=device)
    assert (i + 1).dtype == xp.int8
    assert (i > 1).dtype == xp.bool
    assert (i * True).dtype == xp.int8
    # A float scalar with an integer array gives the default float (NEP 50).
    assert (i + 0.5).dtype == xp.result_type(xp.int8, 0.5)


def test_a_python_scalar_out_of_the_dtypes_range_is_an_error(device):
    needs_dtype(device, xp.uint8)
    x = xp.asarray([1, 2], dtype=xp.uint8, device=device)
    with pytest.raises(TypeError, match="300"):
        x + 300


def test_error_messages_name_dtypes_as_python_does(device):
    needs_dtype(device, xp.uint8, xp.float32)
    x = xp.asarray([1, 2], dtype=xp.uint8, device=device)
    with pytest.raises(TypeError) as e:
        x + 300
    assert "does not fit in uint8" in str(e.value)
    assert not re.search(r"\bu8\b", str(e.value)), str(e.value)
    f = xp.asarray([1.0], dtype=xp.float32, device=device)
    with pytest.raises(TypeError, match=r"^bitwise_and: float32 is not a valid dtype here"):
        xp.bitwise_and(f, f)


def test_numpy_scalars_act_as_python_scalars_of_their_kind(device):
    needs_dtype(device, xp.float32, xp.uint8)
    a = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    x = xp.asarray(a, device=device)
    for s in (np.float16(0.5), np.float32(0.5), np.float64(0.5), np.int8(3), np.uint64(3), np.bool_(True)):
        for op in (operator.add, operator.mul, operator.truediv, operator.lt):
            left, right = op(x, s), op(s, x)
            assert left.dtype == op(x, float(s)).dtype and left.device == device
            np.testing.assert_allclose(host(left), op(a, a.dtype.type(s)), rtol=1e-6)
            np.testing.assert_allclose(host(right), op(a.dtype.type(s), a), rtol=1e-6)
    assert xp.result_type(x, np.float64(1)) == xp.float32
    small = xp.asarray([1, 2], dtype=xp.uint8, device=device)
    with pytest.raises(TypeError, match="300"):
        small + np.int64(300)
    assert host(xp.where(x > 1, x, np.float32(-1))).tolist() == [-1.0, 2.0, 4.0]
    x[0] = np.int16(7)
    assert host(x)[0] == 7
    with pytest.raises(TypeError, match="datetime64"):
        xp.maximum(x, np.datetime64("2020-01-01"))


def test_full_with_a_numpy_scalar_takes_its_dtype(device):
    for s in (np.float32(1.5), np.int16(-3), np.uint8(7), np.bool_(True)):
        needs_dtype(device, getattr(xp, s.dtype.name))
        f = xp.full((2,), s, device=device)
        assert f.dtype.name == s.dtype.name
        np.testing.assert_array_equal(host(f), np.full((2,), s))
    assert xp.full((2,), np.float32(1.5), dtype=xp.int32, device=device).dtype == xp.int32
    with pytest.raises(TypeError, match="no anydev dtype"):
        xp.full((2,), np.longdouble(1), device=device)


def test_in_place_operators_write_into_the_array(device):
    x = xp.asarray([1.0, 2.0], device=device)
    y = x
    view = x[::-1]
    x += 1
    assert x is y
    np.testing.assert_array_equal(host(x), [2.0, 3.0])
    # Every view of the memory sees the write.
    np.testing.assert_array_equal(host(view), [3.0, 2.0])
    x *= x
    x -= 1.0
    x /= 2
    np.testing.assert_array_equal(host(y), [1.5, 4.0])
    i = xp.asarray([5, 6], device=device)
    i //= 2
    i %= 2
    i <<= 1
    i |= 1
    np.testing.assert_array_equal(host(i), [1, 3])
    # A result that needs another dtype is refused, not cast.
    with pytest.raises(TypeError):
        i += 1.5
    with pytest.raises(TypeError):
        i += "a"


def test_matmul_operator(device):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    np.testing.assert_allclose(host(x @ y), a @ b)
    with pytest.raises(TypeError):
        x @ 2
    s = xp.asarray(a[:, :2], device=device)
    want = a[:, 1::-1].T.copy()  # on cpu:0, s shares a's memory
    view = s.mT
    s @= xp.asarray([[0.0, 1.0], [1.0, 0.0]], device=device)
    np.testing.assert_allclose(host(view), want)
    with pytest.raises(ValueError):
        s @= xp.asarray(b[:2], device=device)


def test_unsupported_operands_are_type_errors(device):
    x = xp.asarray([1.0], device=device)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + [1]
    with pytest.raises(TypeError):
        x + object()
    assert (x == "a") is False


def test_arrays_are_unhashable(device):
    with pytest.raises(TypeError):
        hash(xp.asarray([1], device=device))


@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        (1, 2),
        slice(None),
        slice(1, None),
        slice(None, None, -1),
        slice(4, 0, -2),
        slice(10, 20),
        (Ellipsis, 1),
        (None, 1, Ellipsis),
        (slice(None), None),
        (1, slice(None, None, 2), None),
        (),
        Ellipsis,
    ],
    ids=repr,
)
def test_getitem_matches_numpy(device, key):
    a = np.arange(24).reshape(4, 6)
    got = xp.asarray(a, device=device)[key]
    assert got.device == device
    np.testing.assert_array_equal(host(got), a[key])


def test_getitem_errors(device):
    x = xp.reshape(xp.arange(6, device=device), (2, 3))
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(ValueError):
        x[::0]
    with pytest.raises(IndexError):
        x[xp.asarray([5], device=device)]
    with pytest.raises(IndexError, match="boolean index"):
        x[xp.asarray([True, False, True], device=device), 1:]
    with pytest.raises(IndexError, match="boolean index"):
        x[:, xp.asarray([True, False], device=device)]
    with pytest.raises(IndexError):
        x[xp.asarray([0], device=device), 3]
    with pytest.raises(IndexError):
        x[xp.asarray([0], device=device), ..., ...]
    with pytest.raises(IndexError):
        x[True, 0, 0, 0]
    with pytest.raises(IndexError, match="ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError):
        x[1.5:]
    with pytest.raises(TypeError):
        x["a"]
    with pytest.raises(TypeError, match="list"):
        x[[0, 1]]


def test_slice_bounds_beyond_the_index_range_clamp(device):
    a = np.arange(5)
    x = xp.asarray(a, device=device)
    for key in [slice(-10**20, 10**20), slice(None, None, -10**20), slice(10**20, None, -1), slice(np.int64(1), None)]:
        np.testing.assert_array_equal(host(x[key]), a[key])


def test_iteration_goes_along_the_first_axis(device):
    a = np.arange(6).reshape(3, 2)
    rows = list(xp.asarray(a, device=device))
    assert len(rows) == 3
    for got, want in zip(rows, a):
        np.testing.assert_array_equal(host(got), want)
    assert [int(v) for v in xp.asarray([3, 4], device=device)] == [3, 4]
    assert list(xp.asarray(np.zeros((0, 2)), device=device)) == []
    # A 0-d array has no first axis: iterating it is an error, as in NumPy,
    # not an empty loop.
    with pytest.raises(TypeError, match="0-d"):
        iter(xp.asarray(5, device=device))


def test_mask_and_integer_array_indexing_match_numpy(device):
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a, device=device)
    mask = a > 4.5
    got = x[xp.asarray(mask, device=device)]
    assert got.device == device
    np.testing.assert_array_equal(host(got), a[mask])
    rows = np.array([2, 0, -1])
    np.testing.assert_array_equal(host(x[xp.asarray(rows, device=device)]), a[rows])
    cols = np.array([[0, 3], [1, 1]])
    np.testing.assert_array_equal(host(x[xp.asarray(rows[:2], device=device), xp.asarray(cols, device=device)]),
                                  a[rows[:2], cols])
    np.testing.assert_array_equal(host(x[xp.asarray(a[:, 0] > 3, device=device)]), a[a[:, 0] > 3])


def test_setitem_writes_into_the_array(device):
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a, device=device)
    view = x[1]
    x[1, 2] = -1.0
    a[1, 2] = -1.0
    x[0] = xp.asarray([9.0, 8.0, 7.0, 6.0], device=device)
    a[0] = [9.0, 8.0, 7.0, 6.0]
    x[:, ::-2] = 0
    a[:, ::-2] = 0
    x[xp.asarray(a > 5, device=device)] = 100.0
    a[a > 5] = 100.0
    x[...] = x + 1
    a[...] = a + 1
    np.testing.assert_array_equal(host(x), a)
    np.testing.assert_array_equal(host(view), a[1])
    with pytest.raises(IndexError):
        x[xp.asarray([0, 3], device=device)] = 1.0
    with pytest.raises(ValueError):
        x[0] = xp.zeros(3, device=device)
    with pytest.raises(TypeError):
        x[0] = "a"
    i = xp.asarray([1, 2], device=device)
    with pytest.raises(TypeError):
        i[0] = 1.5


# Keys with integer arrays among integers, slices, ... and None; "i" and
# "j" stand for the index arrays below, of shapes (3,) and (2, 1). The
# arrays' broadcast axes go where the indexed axes were when those are
# adjacent in the key, and first when something separates them.
MIXED_KEYS = [
    ("i",),
    ("i", "j"),
    (slice(None), "i", "j"),
    (slice(None), "i", slice(None), "j"),
    ("i", slice(1, 3), "j"),
    (Ellipsis, "i"),
    ("i", Ellipsis, "j"),
    (1, slice(None), "i"),
    (slice(None), 1, "i"),
    (slice(None), "i", 2, slice(None, None, -2)),
    (None, "i", slice(None, None, -1), 2),
    ("i", None, "j"),
    (slice(None), "i", "j", slice(1, None, 2)),
    (slice(1, None), "j", None, Ellipsis),
]
I = np.array([2, 0, -1])
J = np.array([[1], [-3]])


def mixed_key(key, convert):
    return tuple(convert(I) if k == "i" else convert(J) if k == "j" else k for k in key)


def assert_reads_like_numpy(device, key_with):
    """Reads a 4-d array with the key `key_with(convert)` builds, its index
    arrays made by `convert`: NumPy's for the reference, anydev's on
    `device` for the result."""
    a = np.arange(360.0, dtype=np.float32).reshape(3, 4, 5, 6)
    x = xp.asarray(a, device=device)
    want = a[key_with(lambda v: v)]
    got = x[key_with(lambda v: xp.asarray(v, device=device))]
    assert got.device == device
    assert got.shape == want.shape
    np.testing.assert_array_equal(host(got), want)


@pytest.mark.parametrize("key", MIXED_KEYS, ids=repr)
def test_integer_arrays_mixed_with_basic_indices_match_numpy(device, key):
    assert_reads_like_numpy(device, lambda convert: mixed_key(key, convert))


# Keys with bool arrays or Python bools among other indices, where NumPy
# reads a bool array as the integer arrays of its nonzero() and a bool
# scalar as a new axis of length 1 (True) or 0 (False); "m" covers axis 1
# (three True, so it broadcasts with "i"), "n" axes 2 and 3 (three True),
# "o" axis 0 (one True), "t"/"f" are 0-d bool arrays.
M = np.array([True, False, True, True])
N = np.zeros((5, 6), dtype=bool)
N[[0, 2, 4], [5, 1, 1]] = True
O = np.array([False, True, False])
BOOL_KEYS = [
    ("o", "m"),
    (slice(None), "m", Ellipsis),
    (slice(None), "m"),
    (slice(None), "m", "i"),
    ("i", "m"),
    ("o", slice(None), "n"),
    (Ellipsis, "n"),
    (slice(None), "m", slice(None), "i"),
    (1, "m", slice(None, None, -1)),
    (None, "o", "m", 0),
    (Ellipsis, "n", None),
    (True,),
    (False,),
    (True, 1),
    (slice(None), False, 2),
    (slice(None), "m", True),
    (Ellipsis, True),
    ("o", True, "m"),
    ("t", slice(None), "i"),
    ("f", "o"),
]
BOOLS = {"m": M, "n": N, "o": O, "i": I, "t": np.array(True), "f": np.array(False)}


def bool_key(key, convert):
    return tuple(convert(BOOLS[k]) if isinstance(k, str) else k for k in key)


@pytest.mark.parametrize("key", BOOL_KEYS, ids=repr)
def test_bool_indices_mixed_with_others_match_numpy(device, key):
    assert_reads_like_numpy(device, lambda convert: bool_key(key, convert))


def assert_writes_like_numpy(device, key_with, values_for):
    """Writes each of `values_for(shape)` (arrays of the selection's shape
    or broadcasting to it, and scalars) through the key `key_with(convert)`
    builds, into a 4-d array and into NumPy's copy of it, comparing the
    whole array after each write, and a view taken before them at the end."""
    a = np.arange(360.0, dtype=np.float32).reshape(3, 4, 5, 6)
    x = xp.asarray(a, device=device)
    view = x[1:]
    np_key = key_with(lambda v: v)
    key = key_with(lambda v: xp.asarray(v, device=device))
    for value in values_for(a[np_key].shape):
        x[key] = xp.asarray(value, device=device) if isinstance(value, np.ndarray) else value
        a[np_key] = value
        np.testing.assert_array_equal(host(x), a)
    np.testing.assert_array_equal(host(view), a[1:])


@pytest.mark.parametrize("key", BOOL_KEYS, ids=repr)
def test_writes_through_bool_keys_match_numpy(device, key):
    assert_writes_like_numpy(
        device,
        lambda convert: bool_key(key, convert),
        lambda shape: [-np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 1, 7],
    )


@pytest.mark.parametrize("key", MIXED_KEYS, ids=repr)
def test_writes_through_mixed_keys_match_numpy(device, key):
    # One value per selected element (repeated positions: the last wins),
    # then a value broadcast along the last axis, then a scalar.
    assert_writes_like_numpy(
        device,
        lambda convert: mixed_key(key, convert),
        lambda shape: [
            -np.arange(np.prod(shape), dtype=np.float32).reshape(shape),
            np.arange(shape[-1], dtype=np.float32) + 1000,
            7,
        ],
    )


def test_writes_through_integer_arrays_check_values(device):
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    x = xp.asarray(a, device=device)
    i = xp.asarray([0, 2], device=device)
    with pytest.raises(ValueError):
        x[:, i] = xp.zeros((3, 4), device=device)
    with pytest.raises(IndexError):
        x[:, i, 4] = 1.0
    with pytest.raises(TypeError):
        xp.asarray([1, 2, 3], device=device)[i[:1]] = 0.5
    np.testing.assert_array_equal(host(x), a)
    # Repeated indices: the last write in row-major order of the indices wins.
    repeats, value = np.array([[1, 1], [-2, 0]]), np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    x[:, xp.asarray(repeats, device=device), 0] = xp.asarray(value, device=device)
    a[:, repeats, 0] = value
    np.testing.assert_array_equal(host(x), a)


def test_python_scalar_conversions(device):
    assert float(xp.asarray(2.5, device=device)) == 2.5
    assert int(xp.asarray(-7, device=device)) == -7
    assert int(xp.asarray(2.9, device=device)) == 2
    assert bool(xp.asarray(0, device=device)) is False
    assert complex(xp.asarray(1.5, device=device)) == 1.5 + 0j
    assert operator.index(xp.asarray(3, device=device)) == 3
    assert [10, 20, 30][xp.asarray(1, device=device)] == 20
    big = xp.asarray(2**63 - 1, device=device)
    assert int(big) == 2**63 - 1
    with pytest.raises(TypeError):
        operator.index(xp.asarray(1.0, device=device))
    with pytest.raises(TypeError, match="0-d"):
        float(xp.asarray([1.0], device=device))
    with pytest.raises(TypeError, match="0-d"):
        bool(xp.asarray([1.0, 2.0], device=device))
    with pytest.raises(ValueError):
        int(xp.asarray(float("nan"), device=device))
    with pytest.raises(OverflowError):
        int(xp.asarray(float("inf"), device=device))
    with pytest.raises(TypeError):
        len(xp.asarray(1, device=device))


def test_to_device_moves_between_devices(device):
    info = xp.__array_namespace_info__()
    x = xp.asarray([1.0, 2.0], device=device)
    assert x.to_device(device).device == device
    for other in info.devices():
        if "float64" not in info.dtypes(device=other):
            continue
        moved = x.to_device(other)
        assert moved.device == other
        np.testing.assert_array_equal(host(moved), [1.0, 2.0])
    assert x.to_device(str(device)).device == device
    # A stream is an anydev.accelerator.Stream (test_accelerator.py).
    with pytest.raises(TypeError, match="stream"):
        x.to_device(device, stream=1)


def test_reflected_power(device):
    a = np.array([1.0, 2.0, 4.0])
    x = xp.asarray(a, device=device)
    np.testing.assert_allclose(host(run_or_skip(operator.pow, 3, x)), 3**a, rtol=tolerance(x.dtype))


def test_array_namespace_checks_the_api_version(device):
    x = xp.asarray([1], device=device)
    for version in [None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"]:
        assert x.__array_namespace__(api_version=version) is xp
    for version in ["2020.12", "2026.12", "latest"]:
        with pytest.raises(ValueError, match="2025.12"):
            x.__array_namespace__(api_version=version)


def test_arrays_can_be_weakly_referenced(device):
    import gc
    import weakref

    x = xp.ones(3, device=device)
    ref = weakref.ref(x)
    assert ref() is x
    finalized = []
    weakref.finalize(x, finalized.append, True)
    del x
    gc.collect()
    assert ref() is None and finalized == [True]
