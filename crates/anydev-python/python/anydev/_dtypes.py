"""The standard's dtype helpers: ``isdtype``, ``can_cast``, ``finfo``, ``iinfo``.
Promotion itself is the Rust core's (``result_type``)."""

from dataclasses import dataclass

from . import _anydev
from ._info import _KINDS


def isdtype(dtype, kind):
    """Whether ``dtype`` is ``kind``: a dtype, a kind name, or a tuple of those."""
    if not isinstance(dtype, _anydev.DType):
        raise TypeError(f"isdtype takes an anydev dtype, not {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _anydev.DType):
        return dtype == kind
    if kind not in _KINDS:
        raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
    return dtype.kind in _KINDS[kind]


def can_cast(from_, to, /):
    """Whether promotion of ``from_`` (a dtype or array) with ``to`` gives ``to``."""
    source = from_.dtype if isinstance(from_, _anydev.Array) else from_
    return _anydev.result_type(source, to) == to


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: object


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: object


# (bits, mantissa bits, exponent bits) of IEEE binary formats.
_FLOATS = {"float16": (16, 10, 5), "bfloat16": (16, 7, 8), "float32": (32, 23, 8), "float64": (64, 52, 11)}


def _dtype_of(type):
    return type.dtype if isinstance(type, _anydev.Array) else type


# A complex dtype's finfo is its components' (the standard's rule).
_COMPONENTS = {"complex64": "float32", "complex128": "float64"}


def finfo(type, /):
    dtype = _dtype_of(type)
    name = getattr(dtype, "name", None)
    if name in _COMPONENTS:
        dtype = getattr(_anydev, _COMPONENTS[name])
        name = dtype.name
    if name not in _FLOATS:
        raise TypeError(f"finfo takes a floating-point dtype or array, not {type!r}")
    bits, mantissa, exponent = _FLOATS[name]
    bias = 2 ** (exponent - 1) - 1
    largest = (2 - 2.0**-mantissa) * 2.0**bias
    return finfo_object(bits, 2.0**-mantissa, largest, -largest, 2.0 ** (1 - bias), dtype)


def iinfo(type, /):
    dtype = _dtype_of(type)
    if getattr(dtype, "kind", None) not in ("signed integer", "unsigned integer"):
        raise TypeError(f"iinfo takes an integer dtype or array, not {type!r}")
    bits = dtype.itemsize * 8
    if dtype.kind == "signed integer":
        return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), dtype)
    return iinfo_object(bits, 2**bits - 1, 0, dtype)
