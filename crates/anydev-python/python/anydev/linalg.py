"""The standard's ``linalg`` extension, as far as anydev's core has it:
``cross``, ``diagonal``, ``matrix_norm`` (not the spectral norms yet),
``matrix_power`` (non-negative powers), ``outer``, ``trace``,
``vector_norm``, and the main namespace's ``matmul``, ``matrix_transpose``,
``tensordot`` and ``vecdot``. Decompositions, solvers and inverses need
core ops that do not exist yet and are absent."""

from ._anydev import _linalg as _native
from ._anydev import matmul, matrix_transpose, tensordot, vecdot

cross = _native.cross
diagonal = _native.diagonal
matrix_norm = _native.matrix_norm
matrix_power = _native.matrix_power
outer = _native.outer
trace = _native.trace
vector_norm = _native.vector_norm

__all__ = [
    "cross", "diagonal", "matmul", "matrix_norm", "matrix_power", "matrix_transpose", "outer", "tensordot",
    "trace", "vecdot", "vector_norm",
]
