"""The standard's named-tuple results of the ``unique_*`` functions."""

from typing import NamedTuple

from . import _anydev


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /):
    return UniqueAllResult(*_anydev._unique_all(x))


def unique_counts(x, /):
    return UniqueCountsResult(*_anydev._unique_counts(x))


def unique_inverse(x, /):
    return UniqueInverseResult(*_anydev._unique_inverse(x))
