"""Differential tests of indexing with hypothesis: random keys built from
integers, slices, `...`, `None`, integer arrays, boolean masks and Python
bools, read (`x[key]`) and written (`x[key] = v`) on every device, against
NumPy on the same data. docs/python.md promises NumPy's reading of every
such key; a key NumPy refuses with an `IndexError` must be refused with one
here too."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import anydev as xp
from conftest import host, hypothesis_settings

SETTINGS = hypothesis_settings(60)

shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)


@st.composite
def keys(draw, shape):
    """A key for an array of ``shape``: one part per axis it consumes, plus
    `None`s, at most one `...`, and sometimes an index out of bounds."""
    parts, axis, ellipsis = [], 0, False
    while axis < len(shape) and draw(st.booleans()):
        n = shape[axis]
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "ints", "mask", "bool"]))
        if kind == "int":
            parts.append(draw(st.integers(-n - 1, n)))
            axis += 1
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            parts.append(slice(draw(bound), draw(bound), draw(step)))
            axis += 1
        elif kind == "none":
            parts.append(None)
        elif kind == "ellipsis" and not ellipsis:
            parts.append(Ellipsis)
            ellipsis = True
            # `...` covers a random number of the axes left.
            axis += draw(st.integers(0, len(shape) - axis))
        elif kind == "ints":
            # Where the indices broadcast to no element, NumPy checks the
            # bounds of a 0-d index array as it does a Python integer's,
            # and anydev (like NumPy for other arrays) reads none of them:
            # so no 0-d index into an empty axis (docs/python.md).
            index_shape = draw(hnp.array_shapes(min_dims=0 if n else 1, max_dims=2, min_side=0, max_side=3))
            values = st.integers(-n, n - 1) if n else st.just(0)
            parts.append(draw(hnp.arrays(np.int64, index_shape, elements=values)))
            axis += 1
        elif kind == "mask":
            covered = draw(st.integers(1, len(shape) - axis))
            mask_shape = list(shape[axis:axis + covered])
            if draw(st.integers(0, 9)) == 0:
                mask_shape[-1] += 1  # a mask that does not fit
            parts.append(draw(hnp.arrays(np.bool_, tuple(mask_shape))))
            axis += covered
        elif kind == "bool":
            parts.append(draw(st.booleans()))
    return tuple(parts)


def on_device(key, device):
    """The key with its NumPy arrays as anydev arrays on ``device``."""
    return tuple(xp.asarray(k, device=device) if isinstance(k, np.ndarray) else k for k in key)


def numpy_outcome(fn):
    """``fn()``'s result, or the IndexError NumPy raised."""
    try:
        return fn(), None
    except IndexError as e:
        return None, e


@st.composite
def array_and_key(draw):
    shape = draw(shapes)
    data = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) - 7
    return data, draw(keys(shape))


@given(case=array_and_key())
@SETTINGS
def test_getitem_agrees_with_numpy(device, case):
    data, key = case
    expected, refused = numpy_outcome(lambda: data[key])
    x = xp.asarray(data, device=device)
    if refused is not None:
        try:
            x[on_device(key, device)]
        except IndexError:
            return
        raise AssertionError(f"{key!r}: NumPy raised {refused!r}, anydev did not")
    got = x[on_device(key, device)]
    assert got.device == device
    assert got.shape == expected.shape, (key, got.shape, expected.shape)
    np.testing.assert_array_equal(host(got), expected, err_msg=repr(key))


@given(case=array_and_key(), scalar=st.booleans())
@SETTINGS
def test_setitem_agrees_with_numpy(device, case, scalar):
    data, key = case
    expected = data.copy()
    selected, refused = numpy_outcome(lambda: expected[key])
    value = -100 if scalar or refused is not None else -100 - np.arange(selected.size).reshape(selected.shape)
    if refused is None:
        expected[key] = value
    x = xp.asarray(data.copy(), device=device)
    written = value if scalar or refused is not None else xp.asarray(value, device=device)
    if refused is not None:
        try:
            x[on_device(key, device)] = written
        except IndexError:
            return
        raise AssertionError(f"{key!r}: NumPy raised {refused!r}, anydev did not")
    x[on_device(key, device)] = written
    # Where integer indices repeat, NumPy keeps the last write in row-major
    # order in practice, and docs/python.md promises the same.
    np.testing.assert_array_equal(host(x), expected, err_msg=repr(key))
