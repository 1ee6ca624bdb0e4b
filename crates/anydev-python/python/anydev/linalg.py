"""The standard's ``linalg`` extension.

``cholesky``, ``det``, ``eig``, ``eigh``, ``eigvals``, ``eigvalsh``, ``inv``,
``matrix_rank``, ``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd`` and
``svdvals`` are extension ops whose kernels exist for ``cpu``; on another
device they raise an error naming the device and the kinds that have a
kernel (nothing is moved to the host behind your back). They take real and
complex floating-point input (float32, float64, complex64, complex128).
``eig`` and ``eigvals`` return complex results even for real input, the
eigenvalues unsorted (see docs/semantics.md).
The main namespace's ``matmul``, ``matrix_transpose``, ``tensordot`` and
``vecdot`` are re-exported.
"""

from typing import NamedTuple

from ._anydev import _linalg as _native
from ._anydev import Array, matmul, matrix_transpose, tensordot, vecdot

cholesky = _native.cholesky
cross = _native.cross
det = _native.det
diagonal = _native.diagonal
eigvals = _native.eigvals
eigvalsh = _native.eigvalsh
inv = _native.inv
matrix_norm = _native.matrix_norm
matrix_power = _native.matrix_power
matrix_rank = _native.matrix_rank
outer = _native.outer
pinv = _native.pinv
solve = _native.solve
svdvals = _native.svdvals
trace = _native.trace
vector_norm = _native.vector_norm


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def eig(x, /):
    return EigResult(*_native.eig(x))


def eigh(x, /):
    return EighResult(*_native.eigh(x))


def qr(x, /, *, mode="reduced"):
    return QRResult(*_native.qr(x, mode=mode))


def slogdet(x, /):
    return SlogdetResult(*_native.slogdet(x))


def svd(x, /, *, full_matrices=True):
    return SVDResult(*_native.svd(x, full_matrices=full_matrices))


__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "trace", "vecdot", "vector_norm",
]
