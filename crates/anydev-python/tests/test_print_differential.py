"""Printing against NumPy: `str(x)` is NumPy's `str` of the same values
(for a 0-d array, NumPy's `array2string`: NumPy prints the Python scalar
there, `0.0` where we print `0.`), and `repr(x)` holds `array2string`
with our prefix, for every dtype NumPy has, on every device: one float
style per array chosen from the values shown, 8 digits at most, lines
wrapped at 75 characters, summaries past 1000 elements, and `repr`'s
keywords placed as NumPy places its `shape=` and `dtype=`, and `format`
with a spec as NumPy's."""

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


def check(device, values, x=None):
    """`x` (by default `values` copied to `device`) prints as NumPy
    prints `values`."""
    if x is None:
        x = xp.asarray(values, device=device)
    with np.errstate(all="ignore"):
        assert str(x) == (str(values) if values.ndim else np.array2string(values))
        prefix = "anydev.Array("
        text = prefix + np.array2string(values, separator=", ", prefix=prefix, suffix=")") + ","
    # NumPy's `_array_repr_implementation`: the shape where the values do
    # not show it, then the keywords, on a new line when they would pass
    # 75 characters.
    extras = []
    if (values.size == 0 and values.shape != (0,)) or values.size > 1000:
        extras.append(f"shape={values.shape}")
    name = "bool" if values.dtype == np.bool_ else values.dtype.name
    extras += [f"dtype={name}", f"device='{device}'"]
    extras = ", ".join(extras) + ")"
    last_line = len(text) - (text.rfind("\n") + 1)
    spacer = "\n" + " " * len(prefix) if last_line + len(extras) + 1 > 75 else " "
    assert repr(x) == text + spacer + extras


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


@pytest.mark.parametrize("dtype", ["int32", "float32", "complex64"])
def test_printing_reads_back_only_what_it_shows(device, dtype):
    """Broadcast views of up to 6 * 10^12 elements, which no device could
    hold materialised, print their summaries as NumPy does."""
    needs_dtype(device, getattr(xp, dtype))
    row = np.arange(1, 7) * 1.5 ** np.arange(-3, 3)
    n = 10**6
    for base, shape in [((1, 6), (n, 6)), ((6, 1), (6, n)), ((1, 1), (n, n)), ((6, 1, 1), (6, n, n))]:
        values = row[: np.prod(base)].reshape(base).astype(dtype)
        x = xp.broadcast_to(xp.asarray(values, device=device), shape)
        check(device, np.broadcast_to(values, shape), x)


SPECS = {
    "b": ["d", ">7", "^9"],
    "i": ["d", "+05d", "x", ",", "8.2f"],
    "u": ["d", "05d", "X", "_"],
    "f": [".2f", "+.3e", "g", "12.4%", "<10.1f"],
    "c": [".2f", "+.3e", "g", "^30.1f"],
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_format_matches_numpy(device, dtype):
    """`f"{x:spec}"` as NumPy gives it: a 0-d array formats its element
    as the Python scalar does; other arrays take only the empty spec."""
    needs_dtype(device, getattr(xp, dtype))
    kind = np.dtype(dtype).kind
    with np.errstate(all="ignore"):
        raw = [0.0, -1.0, 1 / 3, 1e-7, 255.0, 123456.0] + ([np.nan, -np.inf] if kind in "fc" else [])
        scalars = np.asarray(np.abs(raw) if kind in "bu" else raw).astype(dtype)
    if kind == "c":
        scalars = scalars + np.asarray(2.5j, dtype)
    for value in scalars:
        reference = np.asarray(value)
        x = xp.asarray(reference, device=device)
        for spec in SPECS[kind]:
            assert format(x, spec) == format(reference[()], spec), spec
        # The empty spec is `str`, whose one difference from NumPy's scalar
        # printing (`0.` for `0.0`) the module docstring states.
        assert format(x, "") == str(x)
    values = scalars.reshape(2, -1)
    x = xp.asarray(values, device=device)
    assert f"{x}" == str(values)
    for target in (x, values):
        with pytest.raises(TypeError, match="unsupported format string"):
            format(target, SPECS[kind][0])
