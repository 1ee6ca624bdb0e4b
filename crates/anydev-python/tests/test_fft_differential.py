"""`fft` with hypothesis against array-api-strict (NumPy's pocketfft) on
every device: random shapes and lengths, `n`/`s` that crop or pad, every
axis and `norm`, complex128 and float64 input (complex64 and float32
where the device lacks the wide dtypes)."""

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import anydev as xp
from conftest import host, hypothesis_settings

SETTINGS = hypothesis_settings(12)
NORMS = st.sampled_from(["backward", "ortho", "forward"])
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9)
values = st.floats(-10, 10, allow_subnormal=False)


def widest(device, kind):
    """The widest dtype of ``kind`` ("complex" or "real") whose complex
    counterpart the device holds (every transform computes in it)."""
    held = xp.__array_namespace_info__().dtypes(device=device)
    wide = "complex128" in held
    if kind == "complex":
        return "complex128" if wide else "complex64"
    return "float64" if wide else "float32"


def data(draw, device, kind, shape):
    dtype = widest(device, kind)
    real = draw(hnp.arrays(np.float64, shape, elements=values))
    if kind == "complex":
        real = real + 1j * draw(hnp.arrays(np.float64, shape, elements=values))
    return real.astype(dtype)


def agree(got, expected, a):
    """Same dtype and shape; values within the rounding of an FFT of that
    size, relative to the input's magnitude."""
    got, expected = host(got), np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    eps = np.finfo(expected.dtype).eps
    scale = max(1.0, float(np.abs(a).max(initial=0.0))) * max(1, a.size)
    np.testing.assert_allclose(got, expected, rtol=0, atol=16 * eps * scale)


ONE_AXIS = {"fft": "complex", "ifft": "complex", "rfft": "real", "irfft": "complex", "hfft": "complex", "ihfft": "real"}


@pytest.mark.parametrize("name", sorted(ONE_AXIS))
def test_one_axis_transforms(device, name):
    @SETTINGS
    @given(draw=st.data(), shape=shapes, norm=NORMS)
    def check(draw, shape, norm):
        a = data(draw.draw, device, ONE_AXIS[name], shape)
        axis = draw.draw(st.integers(-a.ndim, a.ndim - 1))
        n = draw.draw(st.none() | st.integers(1, 12))
        if name in ("irfft", "hfft") and n is None and a.shape[axis] == 1:
            n = 2  # the default output length 2 (m - 1) would be 0
        expected = getattr(xs.fft, name)(xs.asarray(a), n=n, axis=axis, norm=norm)
        got = getattr(xp.fft, name)(xp.asarray(a, device=device), n=n, axis=axis, norm=norm)
        assert got.device == device
        agree(got, expected, a)

    check()


MANY_AXES = {"fftn": "complex", "ifftn": "complex", "rfftn": "real", "irfftn": "complex"}


@pytest.mark.parametrize("name", sorted(MANY_AXES))
def test_many_axes_transforms(device, name):
    @SETTINGS
    @given(draw=st.data(), shape=shapes, norm=NORMS)
    def check(draw, shape, norm):
        a = data(draw.draw, device, MANY_AXES[name], shape)
        axes = draw.draw(st.none() | st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
        s = None
        if axes is not None and draw.draw(st.booleans()):
            s = draw.draw(st.lists(st.integers(1, 10), min_size=len(axes), max_size=len(axes)))
        last = a.shape[-1] if axes is None else a.shape[axes[-1]]
        if name == "irfftn" and s is None and last == 1:
            return  # the default last length 2 (m - 1) would be 0
        kwargs = {"axes": None if axes is None else tuple(axes), "s": None if s is None else tuple(s), "norm": norm}
        expected = getattr(xs.fft, name)(xs.asarray(a), **kwargs)
        got = getattr(xp.fft, name)(xp.asarray(a, device=device), **kwargs)
        assert got.device == device
        agree(got, expected, a)

    check()


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(device, name):
    # axes: None, one axis, or any sequence of axes (the standard's
    # Union[int, Sequence[int]]), against array-api-strict.
    @SETTINGS
    @given(draw=st.data(), shape=shapes)
    def check(draw, shape):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        axes = draw.draw(
            st.none()
            | st.integers(-a.ndim, a.ndim - 1)
            | st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True)
        )
        expected = getattr(xs.fft, name)(xs.asarray(a), axes=axes)
        got = getattr(xp.fft, name)(xp.asarray(a, device=device), axes=axes)
        np.testing.assert_array_equal(host(got), np.asarray(expected), strict=True)
        got = getattr(xp.fft, name)(xp.asarray(a, device=device), axes=tuple(axes) if isinstance(axes, list) else axes)
        np.testing.assert_array_equal(host(got), np.asarray(expected), strict=True)

    check()
