"""Printing against NumPy: `str(x)` is NumPy's `str` of the same values
(for a 0-d array, NumPy's `array2string`: NumPy prints the Python scalar
there, `0.0` where we print `0.`), and `repr(x)` holds `array2string`
with our prefix, for every dtype NumPy has, on every device: one float
style per array chosen from the values shown, 8 digits at most, lines
wrapped at 75 characters, summaries past 1000 elements."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import anydev as xp
from conftest import hypothesis_settings, needs_dtype

SETTINGS = hypothesis_settings(40)

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

# Magnitudes that switch NumPy between its positional and scientific
# styles, beside whatever hypothesis draws.
EDGES = [0.0, -0.0, 1e-4, 9.9e-5, 1e8, 99999999.0, 1 / 3, 1e3, 1e-300, 1e300]


def parts(width):
    """Floats of `width` bits: the edges it holds, and any others."""
    kind = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    with np.errstate(over="ignore"):
        edges = sorted({float(kind(v)) for v in EDGES if np.isfinite(kind(v))})
    return st.one_of(st.sampled_from(edges), st.floats(width=width))


def elements(dtype):
    kind, size = np.dtype(dtype).kind, np.dtype(dtype).itemsize
    if kind == "f":
        return parts(size * 8)
    if kind == "c":
        return st.builds(complex, parts(size * 4), parts(size * 4))
    return None


def arrays(dtype, max_side=12):
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=max_side)
    return hnp.arrays(np.dtype(dtype), shapes, elements=elements(dtype))


def check(device, values):
    x = xp.asarray(values, device=device)
    with np.errstate(all="ignore"):
        assert str(x) == (str(values) if values.ndim else np.array2string(values))
        prefix = "anydev.Array("
        expected = np.array2string(values, separator=", ", prefix=prefix, suffix=")")
    name = "bool" if values.dtype == np.bool_ else values.dtype.name
    assert repr(x) == f"{prefix}{expected}, dtype={name}, device='{device}')"


@pytest.mark.parametrize("dtype", DTYPES)
def test_printing_matches_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))

    @SETTINGS
    @given(values=arrays(dtype))
    def run(values):
        check(device, values)

    run()


@pytest.mark.parametrize("dtype", ["int32", "float32", "complex64"])
def test_long_rows_wrap_and_large_arrays_summarise(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    rng = np.random.default_rng(7)
    for shape in [(40,), (3, 30), (1001,), (20, 60), (2, 3, 200)]:
        values = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)
        if np.dtype(dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        check(device, values.astype(dtype))
