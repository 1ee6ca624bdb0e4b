"""Complex numbers, the fft extension and the linalg factorizations
against NumPy, on every device that holds the dtypes (and, for the
extension ops, has their kernels: elsewhere they raise UnsupportedError
naming the device, and the tests skip on that capability)."""

import numpy as np
import pytest

import anydev as xp
from conftest import host, needs_dtype, run_or_skip

COMPLEX = ["complex64", "complex128"]
TOL = {"complex64": 2e-5, "complex128": 1e-12, "float32": 2e-5, "float64": 1e-12}


def complex_sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_arithmetic_and_components(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    a, b = complex_sample(dtype, (3, 4), 1), complex_sample(dtype, (3, 4), 2)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    tol = TOL[dtype]
    for name in ["add", "subtract", "multiply", "divide"]:
        got = run_or_skip(getattr(xp, name), x, y)
        assert got.dtype == x.dtype and got.device == device
        np.testing.assert_allclose(host(got), getattr(np, name)(a, b), rtol=tol)
    for name in ["sqrt", "exp", "log", "sin", "cos", "tanh"]:
        got = run_or_skip(getattr(xp, name), x)
        np.testing.assert_allclose(host(got), getattr(np, name)(a), rtol=tol * 10)
    for name, ref in [("abs", np.abs), ("real", np.real), ("imag", np.imag), ("conj", np.conj)]:
        got = run_or_skip(getattr(xp, name), x)
        assert host(got).dtype == ref(a).dtype, name
        np.testing.assert_allclose(host(got), ref(a), rtol=tol)
    assert bool(xp.all(run_or_skip(xp.equal, x, x)))


def test_complex_scalars_promote_weakly(device):
    needs_dtype(device, xp.float32, xp.complex64)
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    y = run_or_skip(xp.multiply, x, 1j)
    assert y.dtype == xp.complex64 and y.device == device
    np.testing.assert_array_equal(host(y), np.array([1j, 2j], dtype=np.complex64))
    assert complex(y[1]) == 2j
    with pytest.raises(TypeError):
        float(y[1])
    # complex to a real dtype would drop the imaginary part.
    with pytest.raises(TypeError, match="imaginary"):
        xp.astype(y, xp.float32)


def test_complex_has_no_order(device):
    needs_dtype(device, xp.complex64)
    z = xp.asarray([1 + 1j], device=device)
    for fn in [xp.less, xp.maximum]:
        with pytest.raises(TypeError):
            fn(z, z)


def test_complex_dlpack_round_trip(device):
    needs_dtype(device, xp.complex128)
    a = complex_sample("complex128", (5,), 3)
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(x), a)
    assert xp.__array_namespace_info__().default_dtypes(device=device)["complex floating"] == xp.complex128


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fft_matches_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 10)).astype(dtype)
    x = xp.asarray(a, device=device)
    tol = TOL[dtype] * 10
    f = run_or_skip(xp.fft.fft, x)
    assert f.device == device and f.dtype == (xp.complex64 if dtype == "float32" else xp.complex128)
    np.testing.assert_allclose(host(f), np.fft.fft(a), rtol=tol, atol=tol * 10)
    cases = [
        (xp.fft.ifft, np.fft.ifft, {"n": 7, "norm": "ortho"}),
        (xp.fft.rfft, np.fft.rfft, {"axis": 0}),
        (xp.fft.ihfft, np.fft.ihfft, {}),
    ]
    for ours, theirs, kwargs in cases:
        np.testing.assert_allclose(host(ours(x, **kwargs)), theirs(a, **kwargs), rtol=tol, atol=tol * 10)
    for ours, theirs in [(xp.fft.fftn, np.fft.fftn), (xp.fft.rfftn, np.fft.rfftn)]:
        np.testing.assert_allclose(host(ours(x, norm="forward")), theirs(a, norm="forward"), rtol=tol, atol=tol)
    r = xp.fft.rfft(x)
    np.testing.assert_allclose(host(xp.fft.irfft(r, n=10)), a, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(host(xp.fft.irfftn(xp.fft.rfftn(x), s=(3, 10))), a, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(host(xp.fft.hfft(r, n=10)), np.fft.hfft(np.fft.rfft(a), n=10), rtol=tol, atol=tol * 100)
    with pytest.raises(ValueError):
        xp.fft.fft(x, norm="sideways")


def test_fft_frequencies_follow_the_scope(device):
    with xp.device(device):
        f = xp.fft.fftfreq(8, d=0.5)
    assert f.device == device
    np.testing.assert_allclose(host(f), np.fft.fftfreq(8, d=0.5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linalg_factorizations_match_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    rng = np.random.default_rng(5)
    m = rng.standard_normal((2, 4, 4)).astype(dtype)
    spd = (m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)).astype(dtype)
    x = xp.asarray(spd, device=device)
    tol = 1e-3 if dtype == "float32" else 1e-9
    chol = run_or_skip(xp.linalg.cholesky, x)
    np.testing.assert_allclose(host(chol), np.linalg.cholesky(spd), rtol=tol, atol=tol)
    np.testing.assert_allclose(host(xp.linalg.inv(x)), np.linalg.inv(spd), rtol=tol, atol=tol)
    np.testing.assert_allclose(host(xp.linalg.det(x)), np.linalg.det(spd), rtol=tol)
    sign, logabsdet = xp.linalg.slogdet(x)
    np.testing.assert_allclose(host(logabsdet), np.linalg.slogdet(spd)[1], rtol=tol)
    w, v = xp.linalg.eigh(x)
    np.testing.assert_allclose(host(w), np.linalg.eigvalsh(spd), rtol=tol, atol=tol)
    np.testing.assert_allclose(host(xp.linalg.svdvals(x)), np.linalg.svd(spd, compute_uv=False), rtol=tol, atol=tol)
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(host(u) * host(s)[..., None, :] @ host(vh), spd, rtol=tol, atol=tol)
    q, r = xp.linalg.qr(x)
    np.testing.assert_allclose(host(q) @ host(r), spd, rtol=tol, atol=tol)
    b = rng.standard_normal((2, 4, 1)).astype(dtype)
    np.testing.assert_allclose(
        host(xp.linalg.solve(x, xp.asarray(b, device=device))), np.linalg.solve(spd, b), rtol=tol, atol=tol
    )
    assert int(xp.linalg.matrix_rank(x[0])) == 4
    with pytest.raises(ValueError):
        xp.linalg.qr(x, mode="economic")
