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


# Every pair of these as real and imaginary parts: signed zeros, finite
# values, infinities and NaN, where C99 Annex G (and NumPy, through the
# platform's libm) fixes the results, signs of zeros included. expm1 is
# left out: for non-finite arguments anydev's is exp(z) - 1, NumPy's a
# formula that gives NaN (docs/semantics.md).
SPECIAL = [0.0, -0.0, 1.5, -0.5, np.inf, -np.inf, np.nan]
SPECIAL_FUNCTIONS = ["sqrt", "exp", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                     "asin", "acos", "atan", "asinh", "acosh", "atanh", "square", "sign"]
NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
               "atanh": "arctanh"}


def annex_g(name, a, want):
    """NumPy's results with anydev's documented choices (docs/semantics.md)
    where Annex G leaves a sign open or NumPy's C library departs from it:
    asin(±inf + NaN i) and asinh(NaN ± inf i) take the infinite argument's
    sign, and (the Array API standard's rules) sign() of a value with a NaN
    component is NaN + NaN i even beside an infinity and acosh(±0 + NaN i)
    is NaN + pi/2 i."""
    want = want.copy()
    if name == "asin":
        at = np.isinf(a.real) & np.isnan(a.imag)
        want.imag[at] = np.copysign(np.inf, a.real[at])
    if name == "asinh":
        at = np.isnan(a.real) & np.isinf(a.imag)
        want.real[at] = np.copysign(np.inf, a.imag[at])
    if name == "sign":
        want[np.isnan(a.real) | np.isnan(a.imag)] = complex(np.nan, np.nan)
    if name == "acosh":
        want[(a.real == 0) & np.isnan(a.imag)] = complex(np.nan, np.pi / 2)
    return want


def same_special(want, got, rtol):
    """NaN for NaN (either sign), zeros and infinities exactly (signs
    included), other values within ``rtol`` of the complex value's size."""
    scale = np.where(np.isfinite(np.abs(want)), np.abs(want), 1.0)

    def part(w, g):
        exact = (w == 0) | np.isinf(w)
        return np.where(np.isnan(w) | np.isnan(g), np.isnan(w) & np.isnan(g),
                        np.where(exact, (w == g) & (np.signbit(w) == np.signbit(g)), np.abs(w - g) <= rtol * scale))

    return part(want.real, got.real) & part(want.imag, got.imag)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_special_values_match_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    a = np.array([complex(re, im) for re in SPECIAL for im in SPECIAL], dtype=dtype)
    # complex(re, im) loses a -0.0 imaginary part's sign on some builds.
    a.imag = np.tile(SPECIAL, len(SPECIAL))
    x = xp.asarray(a, device=device)
    wrong = []
    with np.errstate(all="ignore"):
        for name in SPECIAL_FUNCTIONS:
            got = host(run_or_skip(getattr(xp, name), x))
            want = annex_g(name, a, getattr(np, NUMPY_NAMES.get(name, name))(a))
            ok = same_special(want, got, TOL[dtype] * 4)
            wrong += [f"{name}({z}) = {g}, NumPy {w}" for z, g, w, k in zip(a, got, want, ok) if not k]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_pow_of_zero_matches_numpy(device, dtype):
    """0 ** b is 0 where b's real part is positive, whatever its
    imaginary part, 1 for b = 0, NaN otherwise (NumPy 2)."""
    needs_dtype(device, getattr(xp, dtype))
    exponents = [1 + 1j, 1 - 1j, 2, 0.5, 1e-30 + 5j, complex(np.inf, 1), complex(1, np.inf), -1 + 1j, -1, 1j, 0, -0.0,
                 complex(np.nan, 0), complex(0, np.nan)]
    a = np.zeros(3 * len(exponents), dtype=dtype)
    a.real[1::3], a.imag[2::3] = -0.0, -0.0
    b = np.repeat(np.array(exponents, dtype=dtype), 3)
    got = host(run_or_skip(xp.pow, xp.asarray(a, device=device), xp.asarray(b, device=device)))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    ok = same_special(want, got, 0)
    assert ok.all(), [f"{z} ** {w} = {g}, NumPy {e}" for z, w, g, e, k in zip(a, b, got, want, ok) if not k]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_pow_with_infinite_exponents_is_cpow(device, dtype):
    """Non-integer exponents give C's cpow, exp(b log a) with C99's
    multiplication, which keeps the infinities the plain formula turns
    into NaNs: 1j ** (inf + inf j) is 0 in NumPy, not NaN."""
    needs_dtype(device, getattr(xp, dtype))
    values = [1j, -2.0, 0.5 + 0.5j, 3.0, complex(np.inf, 1), complex(1, -np.inf), complex(-np.inf, np.inf)]
    exponents = [complex(np.inf, np.inf), complex(np.inf, -np.inf), complex(-np.inf, np.inf), complex(np.inf, 0.5),
                 complex(0.5, np.inf), complex(-np.inf, 0), 0.5 + 0.5j, -1.5 + 2j]
    a = np.repeat(np.array(values, dtype=dtype), len(exponents))
    b = np.tile(np.array(exponents, dtype=dtype), len(values))
    got = host(run_or_skip(xp.pow, xp.asarray(a, device=device), xp.asarray(b, device=device)))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    ok = same_special(want, got, TOL[dtype] * 64)
    assert ok.all(), [f"{z} ** {w} = {g}, NumPy {e}" for z, w, g, e, k in zip(a, b, got, want, ok) if not k]


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
    # Lengths with no int64 index (2^63 would overflow it) are refused.
    for n in [0, 2**63]:
        for freq in [xp.fft.fftfreq, xp.fft.rfftfreq]:
            with pytest.raises(ValueError, match="n"):
                freq(n, device=device)


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


def sorted_eigenvalues(w):
    """Eigenvalues in one canonical order (rounded real part, then
    imaginary part): the standard leaves eig's order open."""
    w = np.asarray(w)
    key = np.round(w.real, 6) + 0.0
    return np.take_along_axis(w, np.lexsort((w.imag, key), axis=-1), axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_matches_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    rng = np.random.default_rng(7)
    if dtype.startswith("complex"):
        a = complex_sample(dtype, (3, 4, 4), seed=7)
    else:
        a = rng.standard_normal((3, 4, 4)).astype(dtype)
    x = xp.asarray(a, device=device)
    w, v = run_or_skip(xp.linalg.eig, x)
    complex_dtype = {"float32": xp.complex64, "float64": xp.complex128}.get(dtype, getattr(xp, dtype))
    assert w.dtype == complex_dtype and v.dtype == complex_dtype
    assert w.shape == (3, 4) and v.shape == (3, 4, 4)
    assert w.device == device and v.device == device
    tol = 1e-3 if dtype in ("float32", "complex64") else 1e-9
    w, v = host(w), host(v)
    # Each pair: a v = λ v, with v of unit norm.
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol)
    want = np.linalg.eigvals(a.astype(np.complex128))
    np.testing.assert_allclose(sorted_eigenvalues(w), sorted_eigenvalues(want), rtol=tol, atol=tol)
    values = xp.linalg.eigvals(x)
    assert values.dtype == complex_dtype
    np.testing.assert_array_equal(host(values), w)
    assert isinstance(xp.linalg.eig(x), xp.linalg.EigResult)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_factorizations_match_numpy(device, dtype):
    needs_dtype(device, getattr(xp, dtype))
    m = complex_sample(dtype, (2, 4, 4), seed=3)
    hpd = (m @ np.conj(np.swapaxes(m, -1, -2)) + 4 * np.eye(4)).astype(dtype)
    x = xp.asarray(hpd, device=device)
    real = "float32" if dtype == "complex64" else "float64"
    tol = 1e-3 if dtype == "complex64" else 1e-9
    chol = run_or_skip(xp.linalg.cholesky, x)
    np.testing.assert_allclose(host(chol), np.linalg.cholesky(hpd), rtol=tol, atol=tol)
    upper = host(xp.linalg.cholesky(x, upper=True))
    np.testing.assert_allclose(np.conj(np.swapaxes(upper, -1, -2)) @ upper, hpd, rtol=tol, atol=tol)
    np.testing.assert_allclose(host(xp.linalg.inv(x)), np.linalg.inv(hpd), rtol=tol, atol=tol)
    g = complex_sample(dtype, (2, 4, 4), seed=4)
    y = xp.asarray(g, device=device)
    np.testing.assert_allclose(host(xp.linalg.det(y)), np.linalg.det(g), rtol=tol)
    sign, logabsdet = xp.linalg.slogdet(y)
    want_sign, want_log = np.linalg.slogdet(g)
    assert sign.dtype == getattr(xp, dtype) and logabsdet.dtype == getattr(xp, real)
    np.testing.assert_allclose(host(sign), want_sign, rtol=tol, atol=tol)
    np.testing.assert_allclose(host(logabsdet), want_log, rtol=tol)
    w, v = xp.linalg.eigh(x)
    assert w.dtype == getattr(xp, real)
    np.testing.assert_allclose(host(w), np.linalg.eigvalsh(hpd), rtol=tol, atol=tol)
    np.testing.assert_allclose(hpd @ host(v), host(v) * host(w)[..., None, :], rtol=tol, atol=tol)
    assert xp.linalg.eigvalsh(x).dtype == getattr(xp, real)
    tall = complex_sample(dtype, (2, 5, 3), seed=6)
    t = xp.asarray(tall, device=device)
    s = xp.linalg.svdvals(t)
    assert s.dtype == getattr(xp, real)
    np.testing.assert_allclose(host(s), np.linalg.svd(tall, compute_uv=False), rtol=tol, atol=tol)
    u, s, vh = xp.linalg.svd(t, full_matrices=False)
    np.testing.assert_allclose(host(u) * host(s)[..., None, :] @ host(vh), tall, rtol=tol, atol=tol)
    q, r = xp.linalg.qr(t)
    np.testing.assert_allclose(host(q) @ host(r), tall, rtol=tol, atol=tol)
    np.testing.assert_allclose(host(xp.linalg.pinv(t)), np.linalg.pinv(tall), rtol=tol, atol=tol)
    np.testing.assert_array_equal(host(xp.linalg.matrix_rank(t)), [3, 3])
    b = complex_sample(dtype, (2, 4, 2), seed=8)
    np.testing.assert_allclose(
        host(xp.linalg.solve(y, xp.asarray(b, device=device))), np.linalg.solve(g, b), rtol=tol, atol=tol
    )
    for ord in ("fro", "nuc", 2):
        norm = xp.linalg.matrix_norm(t, ord=ord)
        assert norm.dtype == getattr(xp, real)
        np.testing.assert_allclose(host(norm), np.linalg.norm(tall, ord=ord, axis=(-2, -1)), rtol=tol)
    norm = xp.linalg.vector_norm(y, axis=-1)
    assert norm.dtype == getattr(xp, real)
    np.testing.assert_allclose(host(norm), np.linalg.norm(g, axis=-1), rtol=tol)


def test_factorizations_refuse_float16(device):
    needs_dtype(device, xp.float16)
    x = xp.asarray(np.eye(3, dtype="float16"), device=device)
    with pytest.raises(TypeError):
        xp.linalg.eig(x)
