"""Namespace functions against NumPy as the independent reference."""

import array

import numpy as np
import pytest

import anydev as xp
from conftest import host, needs_dtype, run_or_skip, tolerance

FLOAT_UNARY = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p", "log2",
    "log10", "sin", "sinh", "sqrt", "tan", "tanh", "reciprocal",
]
NUMERIC_UNARY = ["abs", "ceil", "floor", "negative", "positive", "round", "sign", "square", "trunc"]
PREDICATES = ["isfinite", "isinf", "isnan", "signbit"]
NUMPY_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
               "atanh": "arctanh", "atan2": "arctan2", "pow": "power", "bitwise_invert": "invert",
               "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}

# Values in every float function's domain somewhere, with the special ones.
SPECIAL = np.array([0.5, 1.5, 3.0, -0.0, 0.0, np.inf, -np.inf, np.nan, -2.5, 1e-300, 1e300])


def reference(name):
    return getattr(np, NUMPY_NAMES.get(name, name))


def check(got, expected, dtype):
    assert got.dtype.name == str(expected.dtype) or expected.dtype == np.float64, (got.dtype, expected.dtype)
    g = host(got)
    np.testing.assert_allclose(g, expected.astype(g.dtype), rtol=max(tolerance(got.dtype), 1e-5 if g.dtype == np.float32 else 1e-10), equal_nan=True)
    # -0.0 and 0.0 differ in sign where the reference says so.
    both_zero = (g == 0) & (expected == 0)
    np.testing.assert_array_equal(np.signbit(g[both_zero]), np.signbit(expected.astype(g.dtype)[both_zero]))


@pytest.mark.parametrize("name", FLOAT_UNARY + NUMERIC_UNARY + PREDICATES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float_functions_match_numpy(device, name, dtype):
    d = getattr(xp, dtype)
    needs_dtype(device, d)
    with np.errstate(all="ignore"):
        a = SPECIAL.astype(dtype)
        expected = reference(name)(a)
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device))
    assert got.device == device
    if name in PREDICATES:
        np.testing.assert_array_equal(host(got), expected)
    else:
        check(got, expected, d)


@pytest.mark.parametrize("name", NUMERIC_UNARY + ["bitwise_invert"])
def test_unary_integer_functions_match_numpy(device, name):
    a = np.array([-3, 0, 7, 2**40], dtype=np.int64)
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device))
    np.testing.assert_array_equal(host(got), reference(name)(a))


@pytest.mark.parametrize("name", ["atan2", "copysign", "hypot", "logaddexp", "maximum", "minimum", "nextafter",
                                  "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow"])
def test_binary_float_functions_match_numpy(device, name):
    a = np.array([1.5, -2.0, 0.0, -0.0, np.inf, np.nan, 3.0])
    b = np.array([2.0, 0.5, -1.0, 1.0, 2.0, 1.0, -np.inf])
    with np.errstate(all="ignore"):
        expected = reference(name)(a, b)
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device), xp.asarray(b, device=device))
    check(got, expected, got.dtype)


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                  "logical_and", "logical_or", "logical_xor"])
def test_comparisons_and_logic_match_numpy(device, name):
    a = np.array([1, 0, 3, -2])
    b = np.array([1, 2, 0, -2])
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert got.dtype == xp.bool
    np.testing.assert_array_equal(host(got), reference(name)(a, b))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logic_reads_floats_as_nonzero(device, name):
    a = np.array([1.5, 0.0, np.nan, -0.0], dtype=np.float32)
    b = np.array([1.0, 1.0, 0.0, 2.0], dtype=np.float32)
    got = getattr(xp, name)(xp.asarray(a, device=device), xp.asarray(b, device=device))
    np.testing.assert_array_equal(host(got), reference(name)(a, b))


def test_axis_arguments_are_ints_or_tuples_of_ints(device):
    x = xp.ones((2, 3), device=device)
    for bad in [True, 1.0, (0, False), "0", [0]]:
        with pytest.raises(TypeError, match="axis"):
            xp.sum(x, axis=bad)


def test_binary_functions_take_python_scalars(device):
    x = xp.asarray([1.0, 4.0], device=device)
    np.testing.assert_array_equal(host(xp.add(x, 1)), [2.0, 5.0])
    np.testing.assert_array_equal(host(xp.subtract(10, x)), [9.0, 6.0])
    np.testing.assert_array_equal(host(xp.logical_not(xp.asarray([True, False], device=device))), [False, True])


def test_where_and_clip(device):
    a = np.array([-2.0, 0.5, 3.0])
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(xp.where(x > 0, x, 0.0)), np.where(a > 0, a, 0.0))
    np.testing.assert_array_equal(host(xp.clip(x, -1.0, 1.0)), np.clip(a, -1, 1))
    np.testing.assert_array_equal(host(xp.clip(x, min=0.0)), np.clip(a, 0, None))
    # Bounds broadcast with x: the result has their common shape.
    lows = np.array([[0.0], [1.0]])
    got = xp.clip(x, min=xp.asarray(lows, device=device), max=2.0)
    np.testing.assert_array_equal(host(got), np.clip(a, lows, 2.0), strict=True)
    with pytest.raises(ValueError, match="clip"):
        xp.clip(x, min=xp.zeros(2, device=device))


def test_astype(device):
    needs_dtype(device, xp.int32)
    x = xp.asarray([1.7, -2.2], device=device)
    y = xp.astype(x, xp.int32)
    assert y.dtype == xp.int32 and host(y).tolist() == [1, -2]
    with pytest.raises(TypeError):
        xp.astype(x, "int32")


AXES = [None, 0, 1, (0, 1), -1]


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(device, name, axis, keepdims):
    a = np.array([[1.0, -2.0, 3.5], [4.0, 0.5, -6.0]])
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    assert got.shape == expected.shape
    np.testing.assert_allclose(host(got), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("correction", [0.0, 1.0])
def test_var_and_std(device, name, correction):
    a = np.array([[1.0, -2.0, 3.5], [4.0, 0.5, -6.0]])
    got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device), axis=1, correction=correction)
    np.testing.assert_allclose(host(got), getattr(np, name)(a, axis=1, ddof=correction), rtol=1e-10)


def test_logical_reductions_and_arg_extrema(device):
    a = np.array([[3, 1, 4], [1, 5, 9]])
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(xp.all(x > 0, axis=0)), np.all(a > 0, axis=0))
    np.testing.assert_array_equal(host(xp.any(x > 4)), np.any(a > 4))
    np.testing.assert_array_equal(host(xp.argmax(x, axis=1)), np.argmax(a, axis=1))
    assert int(xp.argmin(x)) == int(np.argmin(a))
    np.testing.assert_array_equal(host(xp.cumulative_sum(x, axis=1)), np.cumsum(a, axis=1))
    np.testing.assert_array_equal(host(xp.cumulative_prod(x, axis=1, include_initial=True)),
                                  np.concatenate([np.ones((2, 1), int), np.cumprod(a, axis=1)], axis=1))
    assert xp.sum(x, dtype=xp.float64).dtype == xp.float64


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_reductions_return_the_dtype_asked_for(device, dtype):
    # The standard casts x to `dtype` first and returns `dtype`; without
    # one, small integers widen as NumPy's do. Integer arithmetic wraps,
    # so the values are NumPy's computed in `dtype`.
    needs_dtype(device, getattr(xp, dtype), xp.int8, xp.int64, xp.uint64)
    a = np.array([[100, 27, 3], [90, 100, 7]], dtype=np.int8)
    x = xp.asarray(a, device=device)
    d = getattr(xp, dtype)
    with np.errstate(over="ignore"):
        cases = [
            (xp.sum(x, axis=1, dtype=d), np.sum(a.astype(dtype), axis=1, dtype=dtype)),
            (xp.prod(x, dtype=d), np.prod(a.astype(dtype), dtype=dtype)),
            (xp.cumulative_sum(x, axis=1, dtype=d), np.cumsum(a.astype(dtype), axis=1, dtype=dtype)),
            (xp.cumulative_prod(x, axis=0, dtype=d), np.cumprod(a.astype(dtype), axis=0, dtype=dtype)),
            (xp.linalg.trace(x[:, :2], dtype=d), np.trace(a[:, :2].astype(dtype), dtype=dtype)),
        ]
    for got, expected in cases:
        np.testing.assert_array_equal(host(got), expected, strict=True)
    assert xp.sum(x).dtype == xp.int64 and xp.sum(xp.astype(x, xp.uint8)).dtype == xp.uint64


def test_reductions_of_empty_and_special_values(device):
    e = xp.zeros((0,), device=device)
    assert float(xp.sum(e)) == 0.0 and float(xp.prod(e)) == 1.0
    n = xp.asarray([1.0, np.nan], device=device)
    assert np.isnan(float(xp.max(n)))
    assert float(xp.sum(xp.asarray([np.inf, 1.0], device=device))) == np.inf


def test_sorting_a_0d_array_is_an_axis_error_that_says_why(device):
    for sort in [xp.sort, xp.argsort]:
        with pytest.raises(xp.AxisError, match="a 0-d array has no axes"):
            sort(xp.asarray(1.0, device=device))


def test_sorting_and_searching(device):
    a = np.array([3.0, -1.0, 2.0, -1.0, 7.0])
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(xp.sort(x)), np.sort(a))
    np.testing.assert_array_equal(host(xp.sort(x, descending=True)), np.sort(a)[::-1])
    np.testing.assert_array_equal(host(xp.argsort(x)), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(host(xp.unique_values(x)), np.unique(a))
    (nz,) = xp.nonzero(x > 0)
    np.testing.assert_array_equal(host(nz), np.nonzero(a > 0)[0])
    s = xp.sort(x)
    v = xp.asarray([0.0, 2.0, 10.0], device=device)
    np.testing.assert_array_equal(host(xp.searchsorted(s, v)), np.searchsorted(np.sort(a), [0.0, 2.0, 10.0]))
    np.testing.assert_array_equal(host(xp.searchsorted(s, v, side="right")),
                                  np.searchsorted(np.sort(a), [0.0, 2.0, 10.0], side="right"))
    np.testing.assert_array_equal(host(xp.searchsorted(x, v, sorter=xp.argsort(x))),
                                  np.searchsorted(a, [0.0, 2.0, 10.0], sorter=np.argsort(a, kind="stable")))
    idx = xp.asarray([4, 0], device=device)
    np.testing.assert_array_equal(host(xp.take(x, idx)), a[[4, 0]])
    with pytest.raises(ValueError):
        xp.searchsorted(s, v, side="middle")


def test_manipulation_matches_numpy(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a, device=device)
    cases = [
        (xp.reshape(x, (4, -1)), a.reshape(4, -1)),
        (xp.permute_dims(x, (2, 0, 1)), a.transpose(2, 0, 1)),
        (xp.matrix_transpose(x), np.swapaxes(a, -1, -2)),
        (xp.expand_dims(x, axis=1), np.expand_dims(a, 1)),
        (xp.squeeze(xp.expand_dims(x, axis=0), axis=0), a),
        (xp.flip(x), np.flip(a)),
        (xp.flip(x, axis=(0, 2)), np.flip(a, axis=(0, 2))),
        (xp.roll(x, 2), np.roll(a, 2)),
        (xp.roll(x, (1, -1), axis=(0, 2)), np.roll(a, (1, -1), axis=(0, 2))),
        (xp.concat([x, x], axis=1), np.concatenate([a, a], axis=1)),
        (xp.concat([x, x], axis=None), np.concatenate([a, a], axis=None)),
        (xp.stack([x, x], axis=-1), np.stack([a, a], axis=-1)),
        (xp.broadcast_to(xp.asarray([1.0, 2.0], device=device), (3, 2)), np.broadcast_to([1.0, 2.0], (3, 2))),
        (xp.tile(x, (1, 2, 1)), np.tile(a, (1, 2, 1))),
        (xp.repeat(x, 2, axis=1), np.repeat(a, 2, axis=1)),
        (xp.repeat(x, xp.asarray([1, 0, 2], device=device), axis=1), np.repeat(a, [1, 0, 2], axis=1)),
        (xp.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1)),
        (xp.tril(x[0]), np.tril(a[0])),
        (xp.triu(x[0], k=1), np.triu(a[0], k=1)),
    ]
    for got, expected in cases:
        assert got.device == device
        np.testing.assert_array_equal(host(got), expected)
    p, q = xp.broadcast_arrays(xp.asarray([[1.0], [2.0]], device=device), xp.asarray([3.0, 4.0, 5.0], device=device))
    assert p.shape == q.shape == (2, 3)
    with pytest.raises(ValueError):
        xp.reshape(x, (5, -1))
    with pytest.raises(ValueError, match="copy"):
        xp.reshape(xp.permute_dims(x, (2, 0, 1)), (-1,), copy=False)


def test_linear_algebra_matches_numpy(device):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    np.testing.assert_allclose(host(xp.matmul(x, y)), a @ b)
    np.testing.assert_allclose(host(xp.tensordot(x, y, axes=1)), np.tensordot(a, b, axes=1))
    np.testing.assert_allclose(host(xp.tensordot(x, y, axes=([1], [0]))), np.tensordot(a, b, axes=([1], [0])))
    np.testing.assert_allclose(host(xp.vecdot(x, x)), np.sum(a * a, axis=-1))
    with pytest.raises(ValueError):
        xp.matmul(y, y)


def test_creation_functions(device):
    cases = [
        (xp.zeros((2, 3), device=device), np.zeros((2, 3))),
        (xp.ones(4, dtype=xp.int64, device=device), np.ones(4, dtype=np.int64)),
        (xp.full((2,), 7, device=device), np.full((2,), 7)),
        (xp.full((2,), 2.5, device=device), np.full((2,), 2.5)),
        (xp.arange(5, device=device), np.arange(5)),
        (xp.arange(1, 10, 3, device=device), np.arange(1, 10, 3)),
        (xp.arange(0.0, 1.0, 0.25, device=device), np.arange(0.0, 1.0, 0.25)),
        (xp.eye(3, 4, k=1, device=device), np.eye(3, 4, k=1)),
        (xp.linspace(0.0, 1.0, 5, device=device), np.linspace(0.0, 1.0, 5)),
        (xp.linspace(0.0, 1.0, 4, endpoint=False, device=device), np.linspace(0.0, 1.0, 4, endpoint=False)),
        (xp.asarray([[1, 2], [3, 4]], device=device), np.array([[1, 2], [3, 4]])),
        (xp.asarray([True, False], device=device), np.array([True, False])),
        (xp.asarray([], device=device), np.array([])),
        (xp.asarray(((1.5,),), device=device), np.array([[1.5]])),
    ]
    for got, expected in cases:
        assert got.device == device and got.shape == expected.shape
        np.testing.assert_allclose(host(got), expected)
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int64, device=device)
    for like, value in ((xp.zeros_like, 0), (xp.ones_like, 1)):
        y = like(x)
        assert (y.dtype, y.device, host(y).tolist()) == (x.dtype, device, [[value] * 2] * 2)
    assert host(xp.full_like(x, 9)).tolist() == [[9, 9], [9, 9]]
    assert xp.empty((2, 2), device=device).shape == (2, 2)
    assert xp.empty_like(x).dtype == xp.int64
    g1, g2 = xp.meshgrid(xp.arange(3, device=device), xp.arange(2, device=device))
    n1, n2 = np.meshgrid(np.arange(3), np.arange(2))
    np.testing.assert_array_equal(host(g1), n1)
    np.testing.assert_array_equal(host(g2), n2)


def test_asarray_of_sequences_holding_arrays_and_numpy_scalars(device):
    """Anydev arrays, NumPy arrays and scalars, buffers and ranges inside
    sequences count with their dtypes, as NumPy counts them."""
    f32 = xp.asarray(1.5, dtype=xp.float32, device=device)
    row = xp.asarray([1, 2], dtype=xp.int16, device=device)
    cases = [
        ([f32, 2.0], [np.float32(1.5), 2.0]),
        ([f32, f32], [np.float32(1.5), np.float32(1.5)]),
        ([np.float32(1.5), np.float32(-0.0)], None),
        ([np.int8(-3), 2], None),
        ([np.int8(-3), np.uint8(200)], None),
        ([np.bool_(True), False], None),
        ([np.int16(7), np.float32(0.5)], None),
        ([np.complex64(1j), 2], None),
        # np.float64 and np.complex128 subclass Python's float and complex,
        # but count as NumPy scalars, with their dtypes.
        ([np.float64(1.5), np.float32(2)], None),
        ([np.complex128(1j), np.complex64(2)], None),
        ([row, [3, 4]], [np.array([1, 2], dtype=np.int16), [3, 4]]),
        ([row, row], [np.array([1, 2], dtype=np.int16)] * 2),
        ([np.array([0.5, 1.5], dtype=np.float32), array.array("f", [2.5, 3.5])], None),
        (range(4), None),
        ([range(3), range(3, 6)], None),
        ((np.uint64(2**64 - 1),), None),
    ]
    held = set(xp.__array_namespace_info__().dtypes(device=device))
    for given, reference in cases:
        expected = np.asarray(given if reference is None else reference)
        if expected.dtype.name not in held:
            with pytest.raises(xp.UnsupportedError):
                xp.asarray(given, device=device)
            continue
        got = xp.asarray(given, device=device)
        assert (got.device, got.dtype.name, got.shape) == (device, expected.dtype.name, expected.shape), given
        np.testing.assert_array_equal(host(got), expected)
    assert xp.asarray([f32, 2.0], dtype=xp.float32, device=device).dtype == xp.float32


def test_asarray_follows_the_anydev_arrays_inside(device):
    x = xp.asarray([1.0, 2.0], device=device)
    assert xp.asarray([x, x]).device == device
    others = [d for d in xp.__array_namespace_info__().devices() if d != device]
    if not others:
        pytest.skip("needs a second device")
    y = xp.asarray([3.0, 4.0], device=others[0])
    with pytest.raises(ValueError, match="to_device") as raised:
        xp.asarray([x, y])
    assert str(device) in str(raised.value) and str(others[0]) in str(raised.value)
    moved = xp.asarray([x, y], device=others[0])
    assert moved.device == others[0]
    assert host(moved).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_bad_creation_arguments(device):
    with pytest.raises(ValueError, match="ragged"):
        xp.asarray([[1, 2], [3]], device=device)
    with pytest.raises(ValueError, match="ragged"):
        xp.asarray([[1, 2], 3], device=device)
    with pytest.raises(TypeError):
        xp.asarray(["a"], device=device)
    with pytest.raises(TypeError):
        xp.asarray(object(), device=device)
    with pytest.raises(ValueError, match="negative"):
        xp.zeros((-1,), device=device)
    with pytest.raises(TypeError):
        xp.zeros("3", device=device)
    with pytest.raises(TypeError):
        xp.full((2,), "x", device=device)
    with pytest.raises(TypeError):
        xp.zeros(2, dtype="float32", device=device)
    with pytest.raises(ValueError):
        xp.arange(0, 10, 0, device=device)
    with pytest.raises(ValueError):
        xp.meshgrid(xp.arange(2, device=device), indexing="ji")
    with pytest.raises(TypeError):
        xp.sum([1, 2])
    with pytest.raises(ValueError):
        xp.asarray(1.5, device=device, copy=False)


def test_count_nonzero_diff_unstack(device):
    a = np.array([[0.0, 1.5, -2.0, 0.0], [3.0, 0.0, 0.0, 4.0]])
    x = xp.asarray(a, device=device)
    assert int(xp.count_nonzero(x)) == np.count_nonzero(a)
    np.testing.assert_array_equal(host(xp.count_nonzero(x, axis=1)), np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(host(xp.count_nonzero(x > 0, axis=0, keepdims=True)),
                                  np.count_nonzero(a > 0, axis=0, keepdims=True))
    np.testing.assert_array_equal(host(xp.diff(x)), np.diff(a))
    np.testing.assert_array_equal(host(xp.diff(x, axis=0)), np.diff(a, axis=0))
    np.testing.assert_array_equal(host(xp.diff(x, n=2)), np.diff(a, n=2))
    pre = xp.zeros((2, 1), device=device)
    np.testing.assert_array_equal(host(xp.diff(x, prepend=pre, append=pre)),
                                  np.diff(a, prepend=np.zeros((2, 1)), append=np.zeros((2, 1))))
    assert xp.diff(x).device == device
    rows = xp.unstack(x)
    assert isinstance(rows, tuple) and len(rows) == 2
    np.testing.assert_array_equal(host(rows[1]), a[1])
    cols = xp.unstack(x, axis=-1)
    assert len(cols) == 4
    np.testing.assert_array_equal(host(cols[2]), a[:, 2])
    with pytest.raises(OverflowError):
        xp.diff(x, n=-1)
    with pytest.raises(ValueError):
        xp.unstack(x, axis=2)


def test_sets_and_take_along_axis(device):
    a = np.array([3, 1, 3, 2, 1, 3])
    x = xp.asarray(a, device=device)
    values, indices, inverse, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    u = xp.unique_all(x)
    for got, expected in zip(u, (values, indices, inverse, counts)):
        np.testing.assert_array_equal(host(got), expected)
    assert u.values.device == device
    c = xp.unique_counts(x)
    np.testing.assert_array_equal(host(c.counts), counts)
    i = xp.unique_inverse(x)
    np.testing.assert_array_equal(host(i.inverse_indices), inverse)
    t = xp.asarray([1, 4], device=device)
    np.testing.assert_array_equal(host(xp.isin(x, t)), np.isin(a, [1, 4]))
    np.testing.assert_array_equal(host(xp.isin(x, t, invert=True)), np.isin(a, [1, 4], invert=True))
    m = np.array([[4.0, 1.0, 3.0], [2.0, 5.0, 0.0]])
    y = xp.asarray(m, device=device)
    order = xp.argsort(y, axis=1)
    np.testing.assert_array_equal(host(xp.take_along_axis(y, order, axis=1)), np.sort(m, axis=1))


def test_isin_with_a_python_scalar(device):
    # The standard's isin takes a Python int on either side (at least one
    # array): a scalar x1 gives a 0-d result.
    a = np.array([[3, 1], [2, 3]])
    x = xp.asarray(a, device=device)
    for value in [3, 7, 2**70, 2.0, 2.5]:
        for invert in [False, True]:
            got = xp.isin(x, value, invert=invert)
            assert got.device == device
            np.testing.assert_array_equal(host(got), np.isin(a, value, invert=invert), strict=True)
            got = xp.isin(value, x, invert=invert)
            assert got.shape == () and got.device == device
            np.testing.assert_array_equal(host(got), np.isin(value, a, invert=invert), strict=True)
    with pytest.raises(ValueError, match="at least one array"):
        xp.isin(1, 2)


def test_isin_of_complex_arrays_agrees_with_numpy(device):
    needs_dtype(device, xp.complex64)
    rng = np.random.default_rng(7)
    # Few distinct components, so that many needles are found; NaNs and
    # both zeros among them.
    parts = np.array([0.0, -0.0, 1.0, 2.5, np.nan], dtype=np.float32)
    pick = lambda n: parts[rng.integers(0, len(parts), n)]
    haystack = (pick(40) + 1j * pick(40)).astype(np.complex64)
    needles = (pick(60) + 1j * pick(60)).astype(np.complex64).reshape(3, 4, 5)
    x1, x2 = xp.asarray(needles, device=device), xp.asarray(haystack, device=device)
    for invert in [False, True]:
        want = np.isin(needles, haystack, invert=invert)
        np.testing.assert_array_equal(host(xp.isin(x1, x2, invert=invert)), want, strict=True)
    np.testing.assert_array_equal(host(xp.isin(x1, 1 + 2.5j)), np.isin(needles, 1 + 2.5j))


def test_linalg_extension(device):
    a = np.arange(1.0, 10.0).reshape(3, 3)
    x = xp.asarray(a, device=device)
    la = xp.linalg
    assert la.matmul is xp.matmul
    np.testing.assert_allclose(host(la.diagonal(x, offset=1)), np.diagonal(a, offset=1))
    np.testing.assert_allclose(host(la.trace(x)), np.trace(a))
    v = xp.asarray([1.0, 2.0, 3.0], device=device)
    np.testing.assert_allclose(host(la.outer(v, v)), np.outer([1, 2, 3], [1, 2, 3]))
    np.testing.assert_allclose(host(la.cross(x, x[::-1])), np.cross(a, a[::-1]))
    np.testing.assert_allclose(host(la.vector_norm(x)), np.linalg.norm(a.ravel()))
    np.testing.assert_allclose(host(la.vector_norm(x, axis=1, ord=1)), np.linalg.norm(a, ord=1, axis=1))
    np.testing.assert_allclose(host(la.matrix_norm(x)), np.linalg.norm(a, "fro"))
    np.testing.assert_allclose(host(la.matrix_norm(x, ord=np.inf)), np.linalg.norm(a, np.inf))
    np.testing.assert_allclose(host(la.matrix_power(x, 3)), np.linalg.matrix_power(a, 3))
    assert la.matrix_power(x, 0).device == device
    with pytest.raises(ValueError):
        la.matrix_norm(x, ord="max")
    with pytest.raises(ValueError):
        la.diagonal(v)
    with pytest.raises(xp.AxisError, match="vector_norm"):
        la.vector_norm(x, axis=5)
    # Offsets past the matrix, the most negative included, select nothing.
    for offset in [-2**63, -3, 3, 2**63 - 1]:
        assert host(la.diagonal(x, offset=offset)).shape == (0,)
        np.testing.assert_allclose(host(la.trace(x, offset=offset)), 0.0)


def test_deeply_nested_input_is_a_value_error_not_a_crash(device):
    deep = 1.0
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        xp.asarray(deep, device=device)


def test_revision_2025_12_additions(device):
    """expand_dims with several axes, broadcast_shapes and searchsorted of a
    Python scalar, new in the standard's 2025.12 revision."""
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a, device=device)
    for axis in [(0, 2), (3, 0), (-1, 1), (-4, -1), ()]:
        got = xp.expand_dims(x, axis=axis)
        assert got.device == device
        np.testing.assert_array_equal(host(got), np.expand_dims(a, axis))
    np.testing.assert_array_equal(host(xp.expand_dims(x, 1)), np.expand_dims(a, 1))
    with pytest.raises(ValueError, match="repeated"):
        xp.expand_dims(x, axis=(0, -4))
    with pytest.raises(IndexError):
        xp.expand_dims(x, axis=(0, 4))
    with pytest.raises(TypeError, match="tuple of ints"):
        xp.expand_dims(x, axis=1.0)

    for shapes in [((2, 1), (3,)), ((), (4, 1, 5), (1, 6, 1)), ((0, 1), (1, 3)), ((7,),), ()]:
        assert xp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match="broadcast"):
        xp.broadcast_shapes((2, 3), (4,))

    s = xp.asarray([1.0, 2.0, 2.0, 5.0], device=device)
    for value in [2.0, 0, 9.5]:
        for side in ["left", "right"]:
            got = xp.searchsorted(s, value, side=side)
            assert got.shape == () and got.device == device
            assert int(got) == np.searchsorted([1.0, 2.0, 2.0, 5.0], value, side=side)


def test_integers_with_index_are_indices(device):
    """NumPy's integers index like Python's (through ``__index__``)."""
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(x[np.int64(2)]), a[2])
    np.testing.assert_array_equal(host(x[np.int32(1), np.uint8(3)]), a[1, 3])
    x[np.int64(0), np.int16(1)] = -1.0
    a[0, 1] = -1.0
    np.testing.assert_array_equal(host(x), a)
    with pytest.raises(IndexError):
        x[np.int64(3)]
    with pytest.raises(TypeError, match="an index must be"):
        x[np.float64(1.0)]
