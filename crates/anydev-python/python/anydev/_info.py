"""The standard's inspection namespace, ``__array_namespace_info__()``.

Devices, their dtypes and default dtypes come from the runtime: every
device anydev sees (plugins included), and only the dtypes each one holds
(a device without float64 lists none and defaults to float32).
"""

from . import _anydev, _scope

# Standard kinds, by the dtype ``kind`` names of anydev.DType.
_KINDS = {
    "bool": {"bool"},
    "signed integer": {"signed integer"},
    "unsigned integer": {"unsigned integer"},
    "integral": {"signed integer", "unsigned integer"},
    "real floating": {"real floating"},
    "complex floating": {"complex floating"},
    "numeric": {"signed integer", "unsigned integer", "real floating", "complex floating"},
}

# float16 and bfloat16 are anydev extras, not the standard's dtypes.
_EXTRAS = {"float16", "bfloat16"}


class _Info:
    """What ``__array_namespace_info__()`` returns."""

    __module__ = "anydev"

    def capabilities(self):
        return {
            "boolean indexing": True,
            # nonzero and unique_values exist.
            "data-dependent shapes": True,
            # NumPy's limit, which every device enforces alike; a backend
            # may refuse fewer dimensions of a layout it cannot merge.
            "max dimensions": _anydev._max_ndim,
        }

    def default_device(self):
        return _scope.current_device()

    def devices(self):
        return tuple(_anydev._devices())

    def default_dtypes(self, *, device=None):
        real, complex_, integral, indexing = _anydev._default_dtypes(_scope.resolve(device))
        return {"real floating": real, "complex floating": complex_, "integral": integral, "indexing": indexing}

    def dtypes(self, *, device=None, kind=None):
        held = [d for d in _anydev._device_dtypes(_scope.resolve(device)) if d.name not in _EXTRAS]
        if kind is None:
            return {d.name: d for d in held}
        kinds = (kind,) if isinstance(kind, str) else tuple(kind)
        wanted = set()
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"unknown dtype kind {k!r}; expected one of {sorted(_KINDS)}")
            wanted |= _KINDS[k]
        return {d.name: d for d in held if d.kind in wanted}


def __array_namespace_info__():
    return _Info()
