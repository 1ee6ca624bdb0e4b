"""Differential tests with hypothesis: every elementwise function and
operator on random arrays (0-d and empty shapes, NaN, ±inf, -0.0 included)
against array-api-strict, the standard's reference implementation, on
every device. Results must have strict's dtype and shape and agree within
a few ulps (docs/accuracy.md: anydev's kernels promise 1-2 ulps, NumPy's
libm a few)."""

import warnings

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import anydev as xp
from conftest import host, hypothesis_settings, needs_dtype, run_or_skip

FLOAT_UNARY = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "expm1", "floor",
    "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10", "negative", "positive", "reciprocal", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc",
]
FLOAT_BINARY = [
    "add", "atan2", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot", "less",
    "less_equal", "logaddexp", "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder",
    "subtract",
]
INT_UNARY = ["abs", "bitwise_invert", "negative", "positive", "sign", "square"]
INT_BINARY = [
    "add", "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "greater", "less", "maximum", "minimum",
    "multiply", "not_equal", "subtract",
]
# Functions whose bound is looser than a few ulps somewhere (docs/accuracy.md).
ULPS = {"logaddexp": 64, "tan": 8, "pow": 8}

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0]
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)

SETTINGS = hypothesis_settings(15)


def float_arrays(dtype, shape=shapes):
    width = 32 if dtype == "float32" else 64
    elements = st.floats(-50, 50, width=width) | st.sampled_from(SPECIALS)
    return hnp.arrays(dtype, shape, elements=elements)


def int_arrays(shape=shapes):
    return hnp.arrays("int64", shape, elements=st.integers(-(2**31), 2**31))


def strict(name, *arrays):
    with np.errstate(all="ignore"):
        return np.asarray(getattr(xs, name)(*[xs.asarray(a) for a in arrays]))


def close(got, expected, ulps):
    """Equal dtype, shape and values (NaN where NaN) within ``ulps``."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, expected.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    with np.errstate(all="ignore"):
        scale = np.spacing(np.maximum(np.abs(got), np.abs(expected)).astype(got.dtype))
        near = np.isfinite(got) & np.isfinite(expected) & (np.abs(got - expected) <= ulps * scale)
    bad = ~(same | near)
    assert not bad.any(), f"got {got[bad]} expected {expected[bad]}"


def run(device, name, *arrays):
    got = run_or_skip(getattr(xp, name), *[xp.asarray(a, device=device) for a in arrays])
    assert got.device == device
    close(host(got), strict(name, *arrays), ULPS.get(name, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_unary(device, name, dtype):
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(a=float_arrays(dtype))
    def check(a):
        run(device, name, a)

    check()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_float_binary(device, name, dtype):
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(data=st.data())
    def check(data):
        shape = data.draw(shapes)
        # Broadcasting: the second operand drops leading axes or has ones.
        other = data.draw(st.sampled_from([shape, shape[1:], tuple(1 for _ in shape)]))
        run(device, name, data.draw(float_arrays(dtype, shape)), data.draw(float_arrays(dtype, other)))

    check()


@pytest.mark.parametrize("name", INT_UNARY)
def test_integer_unary(device, name):
    @SETTINGS
    @given(a=int_arrays())
    def check(a):
        run(device, name, a)

    check()


@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary(device, name):
    @SETTINGS
    @given(data=st.data())
    def check(data):
        shape = data.draw(shapes)
        run(device, name, data.draw(int_arrays(shape)), data.draw(int_arrays(shape)))

    check()


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_reductions(device, name):
    @SETTINGS
    @given(a=float_arrays("float64", hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)))
    def check(a):
        got = host(getattr(xp, name)(xp.asarray(a, device=device), axis=-1))
        with np.errstate(all="ignore"):
            expected = np.asarray(getattr(xs, name)(xs.asarray(a), axis=-1))
        close(got, expected, 4 * a.shape[-1])

    check()


OPERATORS = ["__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__",
             "__lt__", "__ge__", "__eq__", "__ne__"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", OPERATORS)
def test_operators_with_python_scalars(device, op, dtype):
    """NEP 50 as the standard's reference applies it: the scalar takes the
    array's dtype (a scalar of the same or a lower kind than the array)."""
    needs_dtype(device, getattr(xp, dtype))
    is_float = dtype.startswith("float")
    if op.endswith("truediv__") and not is_float:
        pytest.skip("the standard leaves integer true division to the implementation")
    arrays = float_arrays(dtype) if is_float else hnp.arrays(dtype, shapes, elements=st.integers(-1000, 1000))
    scalars = st.floats(-10, 10, width=32) if is_float else st.integers(-100, 100)

    @SETTINGS
    @given(a=arrays, s=scalars)
    def check(a, s):
        got = run_or_skip(getattr(xp.asarray(a, device=device), op), s)
        with np.errstate(all="ignore"):
            expected = np.asarray(getattr(xs.asarray(a), op)(s))
        assert got.device == device
        close(host(got), expected, 4)

    check()



def axis(ndim, extra=0):
    """An axis of an ndim-d array (``extra`` more at the end, for inserting)."""
    return st.integers(-ndim - extra, ndim - 1 + extra)


# name: (the parameters to draw for an ndim-d input, the call on namespace m).
STRUCTURAL = {
    "permute_dims": (lambda n: st.permutations(range(n)), lambda m, a, p: m.permute_dims(a, tuple(p))),
    "flip": (axis, lambda m, a, p: m.flip(a, axis=p)),
    "roll": (lambda n: st.tuples(st.integers(-5, 5), axis(n)), lambda m, a, p: m.roll(a, p[0], axis=p[1])),
    "expand_dims": (lambda n: axis(n, 1), lambda m, a, p: m.expand_dims(a, axis=p)),
    "concat": (axis, lambda m, a, p: m.concat([a, m.flip(a)], axis=p)),
    "stack": (lambda n: axis(n, 1), lambda m, a, p: m.stack([a, a], axis=p)),
    "sort": (lambda n: st.tuples(axis(n), st.booleans()), lambda m, a, p: m.sort(a, axis=p[0], descending=p[1])),
    "argsort": (axis, lambda m, a, p: m.argsort(a, axis=p)),
    "cumulative_sum": (lambda n: st.integers(0, n - 1), lambda m, a, p: m.cumulative_sum(a, axis=p)),
    "where": (lambda n: st.just(None), lambda m, a, p: m.where(a > 0, a, -a)),
    "clip": (lambda n: st.just(None), lambda m, a, p: m.clip(a, -1.0, 1.0)),
    "reshape": (lambda n: st.just(None), lambda m, a, p: m.reshape(a, (-1,))),
    "unique_values": (lambda n: st.just(None), lambda m, a, p: m.sort(m.unique_values(a))),
}


@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_structural_functions(device, name):
    params, call = STRUCTURAL[name]

    @SETTINGS
    @given(data=st.data())
    def check(data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
        # Distinct finite values, so that sorts have one right answer.
        a = data.draw(hnp.arrays("float64", shape, elements=st.floats(-50, 50), unique=True))
        p = data.draw(params(a.ndim))
        ours = call(xp, xp.asarray(a, device=device), p)
        assert ours.device == device
        close(host(ours), np.asarray(call(xs, xs.asarray(a), p)), 0)

    check()


def near(got, expected, scale):
    """Same shape and dtype, values within a few ulps of ``scale``: where a
    creation function's values pass through zero, that is what rounding
    of the other order of operations can reach."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=4 * np.finfo(got.dtype).eps * scale)


bounds = st.floats(-100, 100)


@SETTINGS
@given(start=bounds, stop=bounds, step=st.floats(0.01, 10) | st.floats(-10, -0.01))
def test_float_arange(device, start, stop, step):
    # The length is the standard's (array-api-strict's); the values are
    # start + i * step, each rounded once from the exact product. (NumPy
    # steps by (start + step) - start, whose rounding grows with i.)
    n = np.asarray(xs.arange(start, stop, step)).size
    expected = start + np.arange(n) * step
    near(host(xp.arange(start, stop, step, device=device)), expected, max(abs(start), abs(stop), abs(step)))


@SETTINGS
@given(start=st.integers(-50, 50), stop=st.integers(-50, 50), step=st.integers(-7, 7).filter(bool))
def test_integer_arange(device, start, stop, step):
    got = host(xp.arange(start, stop, step, device=device))
    np.testing.assert_array_equal(got, np.asarray(xs.arange(start, stop, step)), strict=True)


@SETTINGS
@given(start=bounds, stop=bounds, num=st.integers(0, 40), endpoint=st.booleans())
def test_linspace(device, start, stop, num, endpoint):
    got = host(xp.linspace(start, stop, num, endpoint=endpoint, device=device))
    expected = np.asarray(xs.linspace(start, stop, num, endpoint=endpoint))
    near(got, expected, max(abs(start), abs(stop)))
    if num and endpoint:
        assert got[0] == start and (num == 1 or got[-1] == stop)


# Few distinct values, so that they repeat; NaNs are each their own value.
repeating_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
repeating = hnp.arrays(
    "float64",
    repeating_shapes,
    elements=st.sampled_from([np.nan, -0.0, 0.0, 1.0, -1.0, 2.5, np.inf, -np.inf]),
)


@SETTINGS
@given(a=repeating | hnp.arrays("int64", shapes, elements=st.integers(-3, 3)))
def test_unique_functions(device, a):
    check_unique(device, a)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unique_functions_complex(device, dtype):
    """Complex values in NumPy's order: by real then imaginary part, those
    with a NaN component (each its own value) last."""
    needs_dtype(device, getattr(xp, dtype))
    part = st.sampled_from([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf])
    nan = complex(np.nan, 1.0)

    @SETTINGS
    @given(a=hnp.arrays(dtype, repeating_shapes, elements=st.builds(complex, part, part)))
    @example(a=np.array(nan, dtype))
    @example(a=np.zeros((2, 0), dtype))
    @example(a=np.array([1j, -0.0, 0j, nan, 1 + 1j, complex(1, np.nan), 1j, -1, nan], dtype))
    def check(a):
        check_unique(device, a)

    check()


def check_unique(device, a):
    """The values as array-api-strict's (sorted, each NaN its own value),
    and the indices, inverse and counts that the standard defines for them.
    Which NaN comes where is unspecified, so those are checked as sets."""
    x = xp.asarray(a, device=device)
    flat = a.reshape(-1)
    expected = np.asarray(xs.unique_values(xs.asarray(a)))
    values, indices, inverse, counts = (host(r) for r in xp.unique_all(x))
    for other in (host(xp.unique_values(x)), host(xp.unique_counts(x).values), host(xp.unique_inverse(x).values)):
        np.testing.assert_array_equal(other, values)
    assert values.dtype == a.dtype and indices.dtype == inverse.dtype == counts.dtype == np.int64
    np.testing.assert_array_equal(values, expected, strict=True)
    np.testing.assert_array_equal(host(xp.unique_counts(x).counts), counts)
    np.testing.assert_array_equal(host(xp.unique_inverse(x).inverse_indices), inverse)
    nan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.shape, bool)
    known = values[~nan]
    np.testing.assert_array_equal(indices[~nan], [np.flatnonzero(flat == v)[0] for v in known])
    np.testing.assert_array_equal(counts[~nan], [np.count_nonzero(flat == v) for v in known])
    assert sorted(indices[nan]) == list(np.flatnonzero(np.isnan(flat))) and (counts[nan] == 1).all()
    assert inverse.shape == a.shape
    np.testing.assert_array_equal(values[inverse], a)
    if nan.any():
        # Each NaN maps back to a NaN of its own.
        assert sorted(inverse[np.isnan(a)]) == sorted(np.flatnonzero(nan))


def indices_into(n, size):
    """A strategy for ``size`` indices into an axis of length ``n``."""
    return hnp.arrays("int64", (size,), elements=st.integers(0, max(n - 1, 0)))


# name: (the parameters to draw for an input of some shape, the call on
# namespace m). Inputs repeat values and hold NaNs; sides may be 0.
SELECTIONS = {
    "take": (
        lambda d, a: (k := d.draw(axis(a.ndim)), d.draw(indices_into(a.shape[k], 4 if a.shape[k] else 0))),
        lambda m, a, p: m.take(a, m.asarray(p[1], device=a.device), axis=p[0]),
    ),
    "take_along_axis": (
        lambda d, a: d.draw(axis(a.ndim)),
        lambda m, a, p: m.take_along_axis(a, m.argsort(a, axis=p), axis=p),
    ),
    "repeat": (
        lambda d, a: (d.draw(st.integers(0, 3)), d.draw(st.none() | axis(a.ndim))),
        lambda m, a, p: m.repeat(a, p[0], axis=p[1]),
    ),
    "tile": (
        lambda d, a: tuple(d.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))),
        lambda m, a, p: m.tile(a, p),
    ),
    "moveaxis": (lambda d, a: (d.draw(axis(a.ndim)), d.draw(axis(a.ndim))), lambda m, a, p: m.moveaxis(a, p[0], p[1])),
    "unstack": (lambda d, a: d.draw(axis(a.ndim)), lambda m, a, p: m.stack(m.unstack(a, axis=p), axis=p)),
    "diff": (
        lambda d, a: (d.draw(axis(a.ndim)), d.draw(st.integers(0, 2))),
        lambda m, a, p: m.diff(a, axis=p[0], n=p[1]),
    ),
    "cumulative_prod": (
        lambda d, a: (d.draw(axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.cumulative_prod(a, axis=p[0], include_initial=p[1]),
    ),
    "cumulative_sum": (
        lambda d, a: (d.draw(axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.cumulative_sum(a, axis=p[0], include_initial=p[1]),
    ),
    "count_nonzero": (
        lambda d, a: (d.draw(st.none() | axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.count_nonzero(a, axis=p[0], keepdims=p[1]),
    ),
    "nonzero": (lambda d, a: None, lambda m, a, p: m.stack(m.nonzero(a))),
    "argmax": (
        lambda d, a: (d.draw(st.none() | axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.argmax(a, axis=p[0], keepdims=p[1]),
    ),
    "argmin": (
        lambda d, a: (d.draw(st.none() | axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.argmin(a, axis=p[0], keepdims=p[1]),
    ),
    "var": (
        lambda d, a: (d.draw(st.none() | axis(a.ndim)), d.draw(st.sampled_from([0.0, 1.0])), d.draw(st.booleans())),
        lambda m, a, p: m.var(a, axis=p[0], correction=p[1], keepdims=p[2]),
    ),
    "std": (
        lambda d, a: (d.draw(st.none() | axis(a.ndim)), d.draw(st.sampled_from([0.0, 1.0])), d.draw(st.booleans())),
        lambda m, a, p: m.std(a, axis=p[0], correction=p[1], keepdims=p[2]),
    ),
    "any": (lambda d, a: d.draw(st.none() | axis(a.ndim)), lambda m, a, p: m.any(a, axis=p)),
    "all": (lambda d, a: d.draw(st.none() | axis(a.ndim)), lambda m, a, p: m.all(a, axis=p)),
    "sort": (
        lambda d, a: (d.draw(axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.sort(a, axis=p[0], descending=p[1]),
    ),
    "argsort": (
        lambda d, a: (d.draw(axis(a.ndim)), d.draw(st.booleans())),
        lambda m, a, p: m.argsort(a, axis=p[0], descending=p[1], stable=True),
    ),
    "searchsorted": (
        lambda d, a: d.draw(st.sampled_from(["left", "right"])),
        lambda m, a, p: m.searchsorted(m.sort(m.reshape(a, (-1,))), a, side=p),
    ),
}
# Functions that need a non-empty axis, or whose NaN behaviour the standard
# leaves open (argmax/argmin of NaN: NumPy's first NaN is not promised).
NON_EMPTY = {"argmax", "argmin", "take_along_axis", "unstack"}
NO_NAN = {"argmax", "argmin", "searchsorted"}
# A device may sum in another order than NumPy's pairwise sum; the
# deviations from the mean then round differently, by tens of ulps of a
# small variance where the mean is not exact.
STAT_ULPS = {"var": 64, "std": 64}


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selections_and_statistics(device, name):
    params, call = SELECTIONS[name]

    @SETTINGS
    @given(data=st.data())
    def check(data):
        side = 1 if name in NON_EMPTY else 0
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=side, max_side=4))
        choices = [0.0, -0.0, 1.0, 2.5, -3.0] + ([] if name in NO_NAN else [np.nan])
        a = data.draw(hnp.arrays("float64", shape, elements=st.sampled_from(choices)))
        p = params(data, a)
        # NumPy warns of empty means and variances; their NaNs are the point.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.asarray(call(xs, xs.asarray(a), p))
        ours = run_or_skip(call, xp, xp.asarray(a, device=device), p)
        assert ours.device == device
        close(host(ours), expected, STAT_ULPS.get(name, 4))

    check()


@SETTINGS
@given(
    a=hnp.arrays("float64", shapes, elements=st.sampled_from([0.0, -0.0, 1.0, 2.5, np.nan])),
    invert=st.booleans(),
)
def test_isin(device, a, invert):
    """Against NumPy (array-api-strict takes integers only): NaN is in
    nothing, -0.0 is in what holds 0.0."""
    test = [0.0, 2.5, np.nan]
    got = xp.isin(xp.asarray(a, device=device), xp.asarray(test, device=device), invert=invert)
    np.testing.assert_array_equal(host(got), np.isin(a, test, invert=invert), strict=True)


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
# Wrapping arithmetic, the rounding of integer division and the sign of
# remainders, shifts and the bitwise functions, as NumPy (and so
# array-api-strict) computes them in every width.
WIDE_INT_BINARY = INT_BINARY + ["floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", WIDE_INT_BINARY)
def test_every_integer_width(device, name, dtype):
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(data=st.data())
    def check(data):
        shape = data.draw(shapes)
        info = np.iinfo(dtype)
        a = data.draw(hnp.arrays(dtype, shape, elements=st.integers(info.min, info.max)))
        if name in ("floor_divide", "remainder"):
            # Division by zero is left to implementations.
            b = data.draw(hnp.arrays(dtype, shape, elements=st.integers(info.min, info.max).filter(bool)))
        elif name.startswith("bitwise_") and "shift" in name:
            b = data.draw(hnp.arrays(dtype, shape, elements=st.integers(0, info.bits - 1)))
        else:
            b = data.draw(hnp.arrays(dtype, shape, elements=st.integers(info.min, info.max)))
        run(device, name, a, b)

    check()


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod", "max", "min"])
def test_integer_reductions_in_every_width(device, name, dtype):
    """The accumulation dtype (the default integer of the same sign, as
    the standard asks) and wrapping, against array-api-strict."""
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(data=st.data())
    def check(data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5))
        a = data.draw(hnp.arrays(dtype, shape))
        axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
        got = run_or_skip(getattr(xp, name), xp.asarray(a, device=device), axis=axis)
        expected = np.asarray(getattr(xs, name)(xs.asarray(a), axis=axis))
        assert got.device == device
        np.testing.assert_array_equal(host(got), expected, strict=True)

    check()


# log1p is not here: NumPy's complex log1p is log(1 + z), which loses a
# small z entirely (log1p(1e-37) is 0 there); anydev's kernel tests hold
# it to the textbook formulas instead.
COMPLEX_UNARY = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log2", "log10",
    "reciprocal", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
]
# docs/accuracy.md's normwise bounds (|got - want| / |want|), with room
# for the reference: NumPy's complex128, from the same (exact) inputs.
COMPLEX_BOUND = {"complex64": 1e-5, "complex128": 1e-13}
NUMPY_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
               "atanh": "arctanh"}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary(device, name, dtype):
    needs_dtype(device, getattr(xp, dtype))
    part = st.floats(-5, 5, width=32 if dtype == "complex64" else 64, allow_subnormal=False)

    @SETTINGS
    @given(z=hnp.arrays(dtype, shapes, elements=st.complex_numbers(max_magnitude=7) | st.builds(complex, part, part)))
    def check(z):
        got = host(run_or_skip(getattr(xp, name), xp.asarray(z, device=device)))
        with np.errstate(all="ignore"):
            want = getattr(np, NUMPY_NAMES.get(name, name))(z.astype(np.complex128))
        assert got.dtype == z.dtype and got.shape == z.shape
        finite = np.isfinite(want) & (np.abs(want) < 1e30)
        error = np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), np.finfo(dtype).tiny)
        assert (error <= COMPLEX_BOUND[dtype]).all(), (z[finite][error > COMPLEX_BOUND[dtype]], got[finite][error > COMPLEX_BOUND[dtype]])

    check()
