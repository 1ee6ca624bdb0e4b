"""`linalg` on random float64 matrices with hypothesis, on every device:
batch shapes and sizes from empty to 5, checked against NumPy where the
answer is unique and against the factorization's defining identities
(Q R = A, A V = V diag(w), U S Vh = A, ...) where it is not."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import anydev as xp
from conftest import DEVICES, host, hypothesis_settings, needs_dtype, run_or_skip

la = xp.linalg
SETTINGS = hypothesis_settings(12)
RTOL = 1e-9

batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
entries = st.floats(-4, 4, allow_subnormal=False)


@st.composite
def matrices(draw, square=True, well_conditioned=False, rows=None):
    batch = draw(batches)
    m = draw(st.integers(0, 5)) if rows is None else rows
    n = m if square else draw(st.integers(0, 5))
    a = draw(hnp.arrays(np.float64, batch + (m, n), elements=entries))
    if well_conditioned:
        # Diagonally dominant: far from singular.
        a = a + 25 * np.eye(m)
    return a


def run(device, fn, *arrays, **kwargs):
    needs_dtype(device, xp.float64)
    try:
        return fn(*[xp.asarray(a, device=device) for a in arrays], **kwargs)
    except xp.UnsupportedError as e:
        pytest.skip(str(e))


def same(got, expected, scale=1.0):
    got = host(got) if not isinstance(got, np.ndarray) else got
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=RTOL * scale)


def size_of(a):
    return max(1.0, float(np.abs(a).max(initial=0.0)) * max(a.shape[-2:], default=1))


@SETTINGS
@given(a=matrices(well_conditioned=True), k=st.integers(1, 3))
def test_inverse_solve_det(device, a, k):
    same(run(device, la.inv, a), np.linalg.inv(a))
    b = np.arange(a.shape[-1] * k, dtype=np.float64).reshape(a.shape[-1], k) - 2
    same(run(device, la.solve, a, b), np.linalg.solve(a, b), size_of(b))
    det = np.linalg.det(a)
    same(run(device, la.det, a), det, np.abs(det).max(initial=1.0))
    sign, logabs = run(device, la.slogdet, a)
    expected = np.linalg.slogdet(a)
    same(sign, expected.sign)
    same(logabs, expected.logabsdet, size_of(a))


@SETTINGS
@given(a=matrices(), p=st.integers(0, 4))
def test_matrix_power_and_products(device, a, p):
    scale = size_of(a) ** max(p, 1)
    same(run(device, lambda x: la.matrix_power(x, p), a), np.linalg.matrix_power(a, p), scale)
    same(run(device, xp.matmul, a, a), a @ a, scale)
    same(run(device, la.trace, a), np.trace(a, axis1=-2, axis2=-1), size_of(a))
    same(run(device, la.trace, a, offset=1), np.trace(a, offset=1, axis1=-2, axis2=-1), size_of(a))
    same(run(device, la.diagonal, a, offset=-1), np.diagonal(a, offset=-1, axis1=-2, axis2=-1))


@SETTINGS
@given(a=matrices(well_conditioned=True))
def test_cholesky_and_eigh(device, a):
    spd = a @ np.swapaxes(a, -1, -2)
    scale = size_of(spd)
    same(run(device, la.cholesky, spd), np.linalg.cholesky(spd), scale)
    same(run(device, la.cholesky, spd, upper=True), np.swapaxes(np.linalg.cholesky(spd), -1, -2), scale)
    w, v = (host(r) for r in run(device, la.eigh, spd))
    same(w, np.linalg.eigvalsh(spd), scale)
    same(run(device, la.eigvalsh, spd), np.linalg.eigvalsh(spd), scale)
    same(v @ (w[..., None] * np.swapaxes(v, -1, -2)), spd, scale)
    same(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(spd.shape[-1]), spd.shape))


@SETTINGS
@given(a=matrices(square=False), mode=st.sampled_from(["reduced", "complete"]))
def test_qr(device, a, mode):
    q, r = (host(t) for t in run(device, la.qr, a, mode=mode))
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    assert q.shape == a.shape[:-2] + (m, k) and r.shape == a.shape[:-2] + (k, n)
    same(q @ r, a, size_of(a))
    same(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), a.shape[:-2] + (k, k)))
    assert (np.tril(r, -1) == 0).all()


@SETTINGS
@given(a=matrices(square=False), full=st.booleans())
def test_svd_pinv_rank(device, a, full):
    u, s, vh = (host(t) for t in run(device, la.svd, a, full_matrices=full))
    m, n = a.shape[-2:]
    k = min(m, n)
    scale = size_of(a)
    same(s, np.linalg.svd(a, compute_uv=False), scale)
    same(run(device, la.svdvals, a), np.linalg.svd(a, compute_uv=False), scale)
    same((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, scale)
    if a.size:
        # Within rounding of the largest singular value, the rank and the
        # pseudo-inverse are NumPy's (random entries are far from rank
        # deficient, or exactly so where hypothesis draws zeros).
        assert host(run(device, la.matrix_rank, a)).tolist() == np.linalg.matrix_rank(a).tolist()
        pinv = host(run(device, la.pinv, a))
        same(a @ pinv @ a, a, scale * max(1.0, np.abs(pinv).max()) * scale)


ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@SETTINGS
@given(a=matrices(square=False), ord=st.sampled_from(ORDS), keepdims=st.booleans())
def test_matrix_norm(device, a, ord, keepdims):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return  # NumPy refuses the norms of empty matrices.
    kwargs = {} if ord is None else {"ord": ord}
    expected = np.linalg.norm(a, axis=(-2, -1), keepdims=keepdims, **kwargs)
    same(run(device, la.matrix_norm, a, keepdims=keepdims, **kwargs), expected, size_of(a))


@SETTINGS
@given(
    a=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), elements=entries),
    ord=st.sampled_from([1, 2, 3, 0, np.inf, -np.inf, -1, 0.5]),
    data=st.data(),
)
def test_vector_norm(device, a, ord, data):
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keepdims = data.draw(st.booleans())
    got = run(device, la.vector_norm, a, axis=axis, ord=ord, keepdims=keepdims)
    flat = a.reshape(-1) if axis is None else a
    expected = np.linalg.norm(flat, ord=ord, axis=None if axis is None else axis, keepdims=keepdims)
    if axis is None and keepdims:
        expected = np.reshape(expected, (1,) * a.ndim)
    with np.errstate(all="ignore"):
        same(got, expected, size_of(a.reshape(1, -1)))


@SETTINGS
@given(data=st.data())
def test_vector_products(device, data):
    batch = data.draw(batches)
    a = data.draw(hnp.arrays(np.float64, batch + (3,), elements=entries))
    b = data.draw(hnp.arrays(np.float64, batch + (3,), elements=entries))
    same(run(device, la.cross, a, b), np.cross(a, b), 64)
    same(run(device, la.vecdot, a, b), np.sum(a * b, axis=-1), 64)
    same(run(device, la.outer, a.reshape(-1), b.reshape(-1)), np.outer(a, b), 16)
    # tensordot contracts a's last `axes` axes with the first of c.
    axes = data.draw(st.integers(0, a.ndim))
    c = data.draw(hnp.arrays(np.float64, a.shape[a.ndim - axes:] + (2,), elements=entries))
    same(run(device, la.tensordot, a, c, axes=axes), np.tensordot(a, c, axes=axes), 16 * max(1, a.size))


@SETTINGS
@given(a=matrices(square=False), k=st.sampled_from([-1000, -600, -300, 300, 600, 1000]))
def test_factorizations_at_extreme_scales(device, a, k):
    """Scaling by a power of two is exact, and the factorizations follow
    it: their sums of squares must neither underflow nor overflow."""
    scaled = np.ldexp(a, k)
    # Entries stay finite and normal: GPUs may flush subnormal numbers
    # to zero (WGSL allows it), and such entries carry fewer bits anyway.
    nonzero = np.abs(scaled[scaled != 0])
    assume(np.isfinite(scaled).all() and (nonzero >= np.finfo(np.float64).tiny).all())
    s = np.linalg.svd(a, compute_uv=False)
    same(np.ldexp(host(run(device, la.svdvals, scaled)), -k), s, size_of(a))
    q, r = (host(t) for t in run(device, la.qr, scaled))
    same(q @ np.ldexp(r, -k), a, size_of(a))
    if a.shape[-1] == a.shape[-2]:
        sym = a + np.swapaxes(a, -1, -2)
        w = host(run(device, la.eigvalsh, np.ldexp(sym, k)))
        same(np.ldexp(w, -k), np.linalg.eigvalsh(sym), size_of(sym))


# Mixed dtypes: the standard promotes the operands of the two-operand
# functions; mixing real and complex floats gives complex.
PAIRS = [
    ("float32", "float64"),
    ("float64", "float32"),
    ("float32", "complex64"),
    ("complex64", "float64"),
    ("float64", "complex128"),
]


def promoted_tol(dtype):
    return 1e-4 if dtype.itemsize == 4 or dtype == np.complex64 else 1e-10


def both_on(device, d1, d2):
    """Skips unless ``device`` holds both dtypes (and so their promotion)."""
    t1, t2 = getattr(xp, d1), getattr(xp, d2)
    needs_dtype(device, t1, t2, xp.result_type(t1, t2))
    return t1, t2, np.result_type(d1, d2)


@pytest.mark.parametrize("d1,d2", PAIRS)
def test_solve_promotes_mixed_dtypes(device, d1, d2):
    t1, t2, expected = both_on(device, d1, d2)
    rng = np.random.default_rng(7)
    a = (rng.uniform(-1, 1, (2, 3, 3)) + 4 * np.eye(3)).astype(d1)
    x1 = xp.asarray(a, device=device)
    for b in (rng.uniform(-1, 1, (3, 2)).astype(d2), rng.uniform(-1, 1, (3,)).astype(d2)):
        got = run_or_skip(xp.linalg.solve, x1, xp.asarray(b, device=device))
        assert got.dtype == xp.result_type(t1, t2)
        assert str(got.dtype) == expected.name
        wide = b.astype(expected)
        want = np.linalg.solve(a.astype(expected), wide[:, None] if b.ndim == 1 else wide)
        want = want[..., 0] if b.ndim == 1 else want
        np.testing.assert_allclose(host(got), want, rtol=promoted_tol(expected), atol=promoted_tol(expected))


@pytest.mark.parametrize("d1,d2", PAIRS)
def test_two_operand_functions_promote(device, d1, d2):
    t1, t2, expected = both_on(device, d1, d2)
    rng = np.random.default_rng(8)
    a, b = rng.uniform(-2, 2, (2, 3)).astype(d1), rng.uniform(-2, 2, (2, 3)).astype(d2)
    x1, x2 = xp.asarray(a, device=device), xp.asarray(b, device=device)
    wide = (a.astype(expected), b.astype(expected))
    cases = [
        (xp.matmul, (x1, xp.matrix_transpose(x2)), {}, wide[0] @ wide[1].T),
        (xp.linalg.matmul, (x1, xp.matrix_transpose(x2)), {}, wide[0] @ wide[1].T),
        (xp.vecdot, (x1, x2), {}, np.sum(np.conj(wide[0]) * wide[1], axis=-1)),
        (xp.linalg.vecdot, (x1, x2), {}, np.sum(np.conj(wide[0]) * wide[1], axis=-1)),
        (xp.tensordot, (x1, x2), {"axes": ([1], [1])}, np.tensordot(*wide, axes=([1], [1]))),
        (xp.linalg.tensordot, (x1, xp.matrix_transpose(x2)), {"axes": 1}, np.tensordot(wide[0], wide[1].T, axes=1)),
        (xp.linalg.cross, (x1, x2), {}, np.cross(*wide)),
        (xp.linalg.outer, (x1[0, ...], x2[1, ...]), {}, np.outer(wide[0][0], wide[1][1])),
    ]
    for fn, args, kwargs, want in cases:
        got = run_or_skip(fn, *args, **kwargs)
        assert str(got.dtype) == expected.name, fn
        tol = promoted_tol(expected)
        np.testing.assert_allclose(host(got), want, rtol=tol, atol=tol, err_msg=str(fn))


def with_singular_values(batch, s, seed):
    """Float64 matrices of shape ``batch + (m, n)`` with exactly the
    singular values ``s`` (descending, one row per matrix of the batch)."""
    rng = np.random.default_rng(seed)
    m, n = 4, 3
    out = np.empty(batch + (m, n))
    for index in np.ndindex(*batch):
        u, _ = np.linalg.qr(rng.normal(size=(m, m)))
        v, _ = np.linalg.qr(rng.normal(size=(n, n)))
        out[index] = (u[:, :n] * s) @ v.T
    return out


# Singular values 8, 2, 0.5: relative cutoffs between them (0.1, 0.5) and
# above them all (2) are far from any tie.
SINGULAR = np.array([8.0, 2.0, 0.5])
RTOLS = [
    ((2,), [0.01, 0.1]),
    ((2, 3), [[0.01], [0.5]]),
    ((2, 3), [0.1, 2.0, 0.01]),
    ((2, 3), 0.1),
    ((2, 3), [[0.5, 0.1, 0.01]]),
    ((3,), [0.5]),
    ((), 0.5),
]


@pytest.mark.parametrize("batch,rtol", RTOLS)
def test_pinv_and_matrix_rank_take_an_array_rtol(device, batch, rtol):
    a = with_singular_values(batch, SINGULAR, seed=len(batch))
    r = np.asarray(rtol, dtype=np.float64)
    needs_dtype(device, xp.float64)
    x = xp.asarray(a, device=device)
    rank = run_or_skip(xp.linalg.matrix_rank, x, rtol=xp.asarray(r, device=device))
    assert rank.shape == batch
    np.testing.assert_array_equal(host(rank), np.linalg.matrix_rank(a, rtol=r))
    got = run_or_skip(xp.linalg.pinv, x, rtol=xp.asarray(r, device=device))
    assert got.shape == batch + (3, 4)
    np.testing.assert_allclose(host(got), np.linalg.pinv(a, rcond=np.broadcast_to(r, batch)), rtol=1e-9, atol=1e-9)
    # A float32 rtol serves float64 matrices too.
    rank32 = run_or_skip(xp.linalg.matrix_rank, x, rtol=xp.asarray(r, dtype=xp.float32, device=device))
    np.testing.assert_array_equal(host(rank32), np.linalg.matrix_rank(a, rtol=r))


def test_array_rtol_of_float32_matrices(device):
    a = with_singular_values((2,), SINGULAR, seed=3).astype(np.float32)
    r = np.asarray([0.1, 0.5], dtype=np.float32)
    x = xp.asarray(a, device=device)
    rank = run_or_skip(xp.linalg.matrix_rank, x, rtol=xp.asarray(r, device=device))
    np.testing.assert_array_equal(host(rank), [2, 1])
    got = run_or_skip(xp.linalg.pinv, x, rtol=xp.asarray(r, device=device))
    assert got.dtype == xp.float32
    np.testing.assert_allclose(host(got), np.linalg.pinv(a.astype(np.float64), rcond=r), rtol=1e-4, atol=1e-4)
    # Python floats and the default are as before.
    np.testing.assert_array_equal(host(run_or_skip(xp.linalg.matrix_rank, x, rtol=0.1)), [2, 2])
    np.testing.assert_array_equal(host(run_or_skip(xp.linalg.matrix_rank, x)), [3, 3])


def test_rtol_that_does_not_broadcast_is_a_value_error(device):
    x = xp.ones((2, 3, 3), device=device)
    for shape in [(3,), (2, 2), (1, 2), (1, 2, 1)]:
        rtol = xp.full(shape, 0.1, device=device)
        for fn in (xp.linalg.pinv, xp.linalg.matrix_rank):
            with pytest.raises(ValueError, match="rtol must broadcast to x's stack shape"):
                fn(x, rtol=rtol)
    # An integer array is not an rtol.
    with pytest.raises(TypeError, match="real floating-point"):
        xp.linalg.matrix_rank(x, rtol=xp.asarray([1, 2], device=device))


def test_rtol_on_another_device_is_a_device_mismatch(device):
    others = [d for d in DEVICES if d != device]
    if not others:
        pytest.skip("needs 2 devices")
    x = xp.ones((2, 3, 3), device=device)
    rtol = xp.asarray([0.1, 0.2], device=others[0])
    for fn in (xp.linalg.pinv, xp.linalg.matrix_rank):
        with pytest.raises(ValueError) as e:
            fn(x, rtol=rtol)
        assert str(device) in str(e.value) and str(others[0]) in str(e.value)
