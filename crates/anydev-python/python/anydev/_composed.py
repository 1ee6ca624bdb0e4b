"""Standard functions the core has no primitive for but that compose from
ones it has, exactly: they run on their inputs' device like everything else."""

from . import _anydev


def _before(ndim, axis):
    """The index items that skip to ``axis`` of an ndim-d array."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array of {ndim} dimensions")
    return (slice(None),) * (axis % ndim)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """How many elements are not zero (or True), as the default integer dtype."""
    nonzero = _anydev.not_equal(x, False if x.dtype == _anydev.bool else 0)
    return _anydev.sum(_anydev.astype(nonzero, _anydev.int64), axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis``."""
    if n < 0:
        raise ValueError(f"diff needs n >= 0, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    out = _anydev.concat(parts, axis=axis) if len(parts) > 1 else x
    before = _before(out.ndim, axis)
    for _ in range(n):
        out = out[before + (slice(1, None),)] - out[before + (slice(None, -1),)]
    return out


def unstack(x, /, *, axis=0):
    """The views of ``x`` along ``axis``, as a tuple."""
    if x.ndim == 0:
        raise ValueError("unstack needs an array of at least one dimension")
    before = _before(x.ndim, axis)
    return tuple(x[before + (i,)] for i in range(x.shape[axis]))
