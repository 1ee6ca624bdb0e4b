"""Creation functions at the edges of their dtypes, on every device:
64-bit integer ranges past 2**53 (where a float64 no longer holds every
integer), complex dtypes and complex bounds, and diagonal offsets beyond
any matrix. References are Python's own integers and NumPy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import anydev as xp
from conftest import host, hypothesis_settings, needs_dtype

SETTINGS = hypothesis_settings(30)

INT_RANGES = {"int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1)}


@st.composite
def int_ranges(draw, dtype):
    """(start, stop, step) whose every value fits ``dtype``, with most
    values past 2**53 in magnitude."""
    lo, hi = INT_RANGES[dtype]
    start = draw(st.integers(lo, hi))
    count = draw(st.integers(1, 40))
    up = draw(st.booleans())
    room = (hi - start) if up else (start - lo)
    step = draw(st.integers(1, max(1, room // count)))
    step = step if up else -step
    stop = start + count * step
    stop = min(stop, hi + 1) if up else max(stop, lo - 1)
    return start, stop, step


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_integer_arange_is_exact_past_2_53(device, dtype):
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(bounds=int_ranges(dtype))
    def check(bounds):
        start, stop, step = bounds
        got = host(xp.arange(start, stop, step, dtype=getattr(xp, dtype), device=device))
        assert got.dtype == np.dtype(dtype)
        assert [int(v) for v in got] == list(range(start, stop, step))

    check()


def test_integer_arange_refuses_values_outside_the_dtype(device):
    with pytest.raises(ValueError, match="does not fit in uint8"):
        xp.arange(250, 260, dtype=xp.uint8, device=device)
    with pytest.raises(ValueError, match="does not fit in int8"):
        xp.arange(-200, 0, 50, dtype=xp.int8, device=device)
    needs_dtype(device, xp.int64)
    with pytest.raises(ValueError, match="does not fit in int64"):
        xp.arange(2**63 - 2, 2**63 + 2, dtype=xp.int64, device=device)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_arange_in_a_complex_dtype(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    for args in [(0, 4, 2), (1.5, -2.0, -0.75), (5,)]:
        got = host(xp.arange(*args, dtype=getattr(xp, dtype), device=device))
        np.testing.assert_array_equal(got, np.arange(*args, dtype=dtype), strict=True)


def test_arange_refuses_complex_bounds(device):
    with pytest.raises(ValueError, match="must be real"):
        xp.arange(0, 3j, device=device)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_linspace_with_complex_bounds(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    eps = np.finfo(np.dtype(dtype)).eps

    @SETTINGS
    @given(
        start=st.complex_numbers(max_magnitude=100, allow_nan=False, allow_infinity=False),
        stop=st.complex_numbers(max_magnitude=100, allow_nan=False, allow_infinity=False),
        num=st.integers(0, 20),
        endpoint=st.booleans(),
    )
    def check(start, stop, num, endpoint):
        got = host(xp.linspace(start, stop, num, endpoint=endpoint, dtype=getattr(xp, dtype), device=device))
        expected = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=8 * eps * max(abs(start), abs(stop), 1))
        if endpoint and num > 1:
            assert got[-1] == np.asarray(stop, dtype=dtype)

    check()


def test_linspace_complex_bounds_pick_the_default_complex_dtype(device):
    needs_dtype(device, xp.complex64)
    got = xp.linspace(0j, 1j, 3, device=device)
    default = xp.__array_namespace_info__().default_dtypes(device=device)["complex floating"]
    assert got.dtype == default
    np.testing.assert_array_equal(host(got), np.asarray([0, 0.5j, 1j], dtype=default.name))
    with pytest.raises(ValueError, match="need a complex dtype"):
        xp.linspace(0, 1j, 3, dtype=xp.float32, device=device)


@pytest.mark.parametrize("k", [2**63, -(2**63) - 1, 2**100, -(2**70)])
def test_diagonal_offsets_beyond_isize_select_nothing(device, k):
    np.testing.assert_array_equal(host(xp.eye(2, 3, k=k, device=device)), np.eye(2, 3, k=min(max(k, -9), 9)))
    x = xp.ones((2, 3), device=device)
    np.testing.assert_array_equal(host(xp.tril(x, k=k)), np.tril(np.ones((2, 3)), k=min(max(k, -9), 9)))
    np.testing.assert_array_equal(host(xp.triu(x, k=k)), np.triu(np.ones((2, 3)), k=min(max(k, -9), 9)))
