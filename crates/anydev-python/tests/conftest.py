"""Device-generic tests: every test that takes ``device`` runs once per
device the runtime sees, narrowed by ``ANYDEV_TEST_DEVICES`` with the Rust
suite's rules (crates/anydev-testing/src/select.rs): a comma-separated list
of kinds (``cpu,sim``) or devices (``sim:1``), or exclusions (``-wgpu``); a
list starting with an exclusion or ``all`` starts from every device; naming
something with no device is an error, never an empty green run. Tests skip
on capabilities (``needs_dtype``), never on device names."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import anydev as xp

VARIABLE = "ANYDEV_TEST_DEVICES"


def select(available, spec):
    """The devices ``spec`` selects among ``available``, in runtime order."""
    items = [i.strip() for i in spec.split(",") if i.strip()]
    from_all = not items or items[0] == "all" or items[0].startswith("-")
    chosen = list(available) if from_all else []
    for item in items:
        if item == "all":
            chosen = list(available)
            continue
        exclude = item.startswith("-")
        name = item[1:].strip() if exclude else item
        if ":" in name:
            matching = [d for d in available if str(d) == name]
        else:
            matching = [d for d in available if d.kind == name]
        if not matching:
            raise pytest.UsageError(
                f"{VARIABLE}={spec!r} names {name!r}, which has no available device "
                f"(available: {', '.join(map(str, available))})"
            )
        if exclude:
            chosen = [d for d in chosen if d not in matching]
        else:
            chosen += [d for d in matching if d not in chosen]
    if not chosen:
        raise pytest.UsageError(f"{VARIABLE}={spec!r} selects no device")
    return [d for d in available if d in chosen]


DEVICES = select(xp.__array_namespace_info__().devices(), os.environ.get(VARIABLE, ""))


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES, ids=str)


def needs_dtype(device, *dtypes):
    """Skips unless ``device`` holds every one of ``dtypes``."""
    held = xp.__array_namespace_info__().dtypes(device=device).values()
    for d in dtypes:
        if d not in held:
            pytest.skip(f"{device} does not hold {d.name}")


def host(x):
    """An independent NumPy copy of ``x``'s values, from any device."""
    return np.from_dlpack(x, device="cpu", copy=True)


def tolerance(dtype):
    """Relative tolerance for comparing a device's results with NumPy's."""
    return {"float32": 2e-6, "float64": 1e-12}.get(dtype.name, 0)


def run_or_skip(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, skipping when the device declares that it
    lacks the op for that dtype (a capability, ``anydev.UnsupportedError``)."""
    try:
        return fn(*args, **kwargs)
    except xp.UnsupportedError as e:
        pytest.skip(str(e))


def hypothesis_settings(max_examples):
    """The settings of every hypothesis test here: derandomized (the same
    examples every run, so a CI failure reproduces), no deadline (devices
    compile kernels on first use) and no example database."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
