"""Placement (design section 3) from Python: the contextvars scope for
creation only, ops following their inputs, mismatches, array-api-compat."""

import asyncio
import threading

import array_api_compat
import numpy as np
import pytest

import anydev as xp
from conftest import DEVICES, host


def other_than(device):
    """Another selected device, or a skip (a test that needs two devices)."""
    others = [d for d in DEVICES if d != device]
    if not others:
        pytest.skip("needs 2 devices")
    return others[0]


def test_scope_sets_the_device_of_creation_only(device):
    other = other_than(device)
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=other)
    with xp.device(device) as scoped:
        assert scoped == device
        assert xp.zeros(2).device == device
        assert xp.asarray([1, 2]).device == device
        assert xp.arange(3).device == device
        assert xp.__array_namespace_info__().default_device() == device
        # An explicit device wins over the scope.
        assert xp.ones(1, device=other).device == other
        # Ops follow their inputs, whatever the scope.
        assert (x + 1).device == other
        assert xp.exp(x).device == other
        assert xp.zeros_like(x).device == other
        # asarray of an anydev array infers the device from it, as the
        # standard asks; host data (a NumPy array) goes where creation goes.
        assert xp.asarray(x).device == other
        assert xp.asarray(x, device=device).device == device
        assert xp.asarray(np.ones(2)).device == device


def test_asarray_of_numpy_follows_the_default_device(device):
    try:
        xp.accelerator.set_default_device(device)
        assert xp.asarray(np.ones(2, dtype=np.float32)).device == device
        assert xp.asarray([1.0]).device == device
    finally:
        xp.accelerator.set_default_device(None)


def test_scopes_nest_and_take_strings(device):
    other = other_than(device)
    with xp.device(str(device)):
        with xp.device(other):
            assert xp.zeros(1).device == other
        assert xp.zeros(1).device == device


def test_scope_is_per_thread_and_per_task(device):
    other = other_than(device)
    seen = {}

    def worker():
        seen["thread"] = xp.zeros(1).device

    with xp.device(device):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert xp.zeros(1).device == device
    # A new thread starts with an empty context: the runtime's default.
    assert seen["thread"] == xp.__array_namespace_info__().default_device()

    async def task(dev):
        with xp.device(dev):
            await asyncio.sleep(0)
            return xp.zeros(1).device

    async def both():
        return await asyncio.gather(task(device), task(other))

    assert asyncio.run(both()) == [device, other]


def test_arrays_on_two_devices_meeting_is_a_value_error(device):
    other = other_than(device)
    x = xp.asarray([1.0], device=device)
    y = xp.asarray([1.0], device=other)
    for op in (lambda: x + y, lambda: xp.add(x, y), lambda: xp.where(x > 0, x, y), lambda: xp.concat([x, y])):
        with pytest.raises(ValueError) as e:
            op()
        message = str(e.value)
        assert str(device) in message and str(other) in message and "to_device" in message


def logsumexp(x, axis=None):
    """A SciPy-style function written once against any namespace."""
    xp_ = array_api_compat.array_namespace(x)
    m = xp_.max(x, axis=axis, keepdims=True)
    shifted = x - m
    e = xp_.exp(shifted)
    s = xp_.sum(e, axis=axis, keepdims=True)
    out = xp_.log(s) + m
    temporaries = (m, shifted, e, s, out)
    return xp_.squeeze(out, axis=axis) if axis is not None else xp_.reshape(out, ()), temporaries


def test_array_api_compat_sees_anydev(device):
    x = xp.asarray([1.0, 2.0, 3.0], device=device)
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.device(x) == device
    assert array_api_compat.to_device(x, device).device == device


def test_a_namespace_generic_function_stays_on_the_arrays_device(device):
    a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 1000.0]])
    x = xp.asarray(a, dtype=xp.float32, device=device)
    result, temporaries = logsumexp(x, axis=1)
    assert all(t.device == device for t in temporaries)
    assert result.device == device
    expected = np.log(np.sum(np.exp(a - a.max(axis=1, keepdims=True)), axis=1)) + a.max(axis=1)
    np.testing.assert_allclose(host(result), expected, rtol=1e-6)
    assert result.dtype == xp.float32
