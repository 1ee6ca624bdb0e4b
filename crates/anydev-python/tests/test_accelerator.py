"""anydev.accelerator on every device: counts, the current device, memory
accounting, cache release, events and their timing."""

import time

import numpy as np
import pytest

import anydev as xp
from anydev import accelerator as acc


def test_counts_and_availability(device):
    assert acc.device_count(device.kind) > device.index
    assert acc.is_available(device.kind)
    assert device in acc.devices()
    assert acc.device_count("nosuchkind") == 0
    assert not acc.is_available("nosuchkind")


def test_current_device_follows_the_scope(device):
    """A scope moves the current device, which the standard's
    `default_device()` reports, and leaves the process default alone."""
    info = xp.__array_namespace_info__()
    process_default = acc.default_device()
    other = next(d for d in acc.devices() if d != process_default) if len(acc.devices()) > 1 else device
    for scoped in {device, other}:
        with xp.device(scoped):
            assert acc.current_device() == scoped
            assert info.default_device() == scoped
            assert xp.zeros(1).device == scoped
            assert acc.default_device() == process_default
    assert acc.current_device() == info.default_device() == process_default


def test_set_default_device_changes_where_arrays_go(device):
    try:
        acc.set_default_device(device)
        assert acc.current_device() == device
        assert acc.default_device() == device
        assert xp.zeros(3).device == device
    finally:
        acc.set_default_device(None)
    with pytest.raises(RuntimeError, match="cpu:7"):
        acc.set_default_device("cpu:7")


def test_memory_stats_follow_an_array_and_the_peak_resets(device):
    acc.synchronize(device)
    before = acc.memory_stats(device)
    x = xp.ones(1 << 16, dtype=xp.float32, device=device)
    during = acc.memory_stats(device)
    assert during["in_use"] >= before["in_use"] + 4 * (1 << 16)
    assert acc.memory_allocated(device) == during["in_use"]
    assert acc.max_memory_allocated(device) >= during["in_use"]
    assert acc.memory_reserved(device) >= during["in_use"]
    if during["free"] is not None and during["total"] is not None:
        assert during["free"] <= during["total"]
    del x
    acc.synchronize(device)
    acc.reset_peak_memory_stats(device)
    after = acc.memory_stats(device)
    assert after["peak"] == after["in_use"] < during["peak"]


def test_a_refused_allocation_leaves_the_accounting(device):
    """A pebibyte is more than any device holds: the allocation is refused
    and in_use, the peak and the allocation count stay as they were."""

    def counts():
        stats = acc.memory_stats(device)
        return stats["in_use"], stats["peak"], stats["allocations"]

    acc.synchronize(device)
    before = counts()
    with pytest.raises(MemoryError):
        xp.empty((1 << 50,), dtype=xp.uint8, device=device)
    assert counts() == before


def test_empty_cache_leaves_nothing_cached_and_live_arrays_intact(device):
    values = np.arange(1024, dtype=np.float32)
    live = xp.asarray(values, device=device, copy=True)
    big = xp.zeros(1 << 20, dtype=xp.float32, device=device)
    del big
    acc.synchronize(device)
    acc.empty_cache(device)
    stats = acc.memory_stats(device)
    assert stats["reserved"] == stats["in_use"]
    np.testing.assert_array_equal(np.asarray(live.to_device("cpu:0")), values)


def test_events_complete_and_time_the_work_between_them(device):
    wall = time.perf_counter()
    start = acc.Event(device)
    x = xp.ones(1 << 18, dtype=xp.float32, device=device)
    y = x * 2.0
    end = acc.Event(device)
    end.synchronize()
    wall_ms = (time.perf_counter() - wall) * 1e3
    assert end.query() and start.query()
    assert end.device == device
    del x, y
    if device.capabilities().get("event_timing", False):
        assert 0.0 <= start.elapsed_time(end) <= wall_ms
    else:
        with pytest.raises(xp.UnsupportedError, match="event"):
            start.elapsed_time(end)


def test_events_of_two_devices_do_not_time_each_other():
    devices = acc.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices")
    first, second = acc.Event(devices[0]), acc.Event(devices[1])
    with pytest.raises(ValueError, match="different devices"):
        first.elapsed_time(second)


def test_device_capabilities_are_the_backends_facts(device):
    caps = device.capabilities()
    assert isinstance(caps["dtypes"], list)
    held = xp.__array_namespace_info__().dtypes(device=device)
    assert ("float64" in held) == bool(caps.get("f64", False))


def test_interpreter_exit_shuts_plugins_down_with_arrays_still_alive(device):
    # At exit the package shuts the runtime's plugins down (atexit), and
    # arrays collected afterwards let go of their memory without reaching
    # the plugin: the process exits cleanly, whatever device held them.
    import subprocess
    import sys

    script = (
        "import anydev as xp\n"
        f"x = xp.ones(1000, device={str(device)!r})\n"
        "y = x + 1\n"
        "assert float(xp.sum(y)) == 2000.0\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "warning" not in done.stderr.lower(), done.stderr


def test_to_device_in_each_memory_kind_the_device_allocates(device):
    values = np.arange(32, dtype=np.float32)
    x = xp.asarray(values, device=device, copy=True)
    kinds = ["device", "host_pinned", "managed", "system"]
    made = []
    for kind in kinds:
        try:
            y = x.to_device(device, memory=kind)
        except ValueError as e:
            assert kind in str(e) and "allocates" in str(e)
            continue
        made.append(kind)
        assert y.memory_kind == kind
        y.prefetch(device)
        np.testing.assert_array_equal(np.asarray(y.to_device("cpu:0")), values)
    # The device's own kind is always among them.
    assert x.memory_kind in made
    with pytest.raises(ValueError, match="not one of"):
        x.to_device(device, memory="video")


def test_a_stream_scope_sends_this_threads_work_there(device):
    default = acc.current_stream(device)
    s = acc.Stream(device)
    assert s.device == device and s != default and s == s
    with acc.stream(s) as entered:
        assert entered == s
        assert acc.current_stream(device) == s
        inner = acc.Stream(device)
        with acc.stream(inner):
            assert acc.current_stream(device) == inner
        assert acc.current_stream(device) == s
        values = np.arange(4096, dtype=np.float32)
        x = xp.asarray(values, device=device, copy=True)
        y = x * 3.0
    assert acc.current_stream(device) == default
    # Read on the default stream after the write on `s`: ordered for us.
    np.testing.assert_array_equal(np.asarray((y + 1.0).to_device("cpu:0")), values * 3.0 + 1.0)
    s.synchronize()
    with pytest.raises(TypeError, match="Stream"):
        acc.stream(device)


def test_events_order_work_across_streams(device):
    first, second = acc.Stream(device), acc.Stream(device)
    values = np.linspace(-1.0, 1.0, 1 << 14, dtype=np.float32)
    with acc.stream(first):
        x = xp.asarray(values, device=device, copy=True)
        y = xp.exp(x)
    done = acc.Event(stream=first)
    assert done.device == device
    done.wait(second)
    second.wait_event(done)
    with acc.stream(second):
        z = y - 1.0
    second.synchronize()
    # exp to 1 ulp near 1, then a cancelling subtraction: an absolute bound.
    np.testing.assert_allclose(np.asarray(z.to_device("cpu:0")), np.exp(values) - 1.0, rtol=1e-6, atol=1e-6)
    other = [d for d in acc.devices() if d != device]
    if other:
        with pytest.raises(ValueError, match="stream"):
            acc.Event(other[0], stream=first)


def test_to_device_orders_the_copy_on_a_given_stream(device):
    values = np.arange(1000, dtype=np.float32)
    x = xp.asarray(values, device="cpu:0", copy=True)
    s = acc.Stream(device)
    y = x.to_device(device, stream=s)
    assert y.device == device
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu:0", stream=acc.Stream("cpu:0"))), values)
    with pytest.raises(TypeError, match="Stream"):
        x.to_device(device, stream=7)
    elsewhere = [d for d in acc.devices() if d not in (device, xp.Device("cpu:0"))]
    if elsewhere:
        with pytest.raises(ValueError, match="stream is on"):
            x.to_device(device, stream=acc.Stream(elsewhere[0]))
