"""The namespace itself: version, dtypes, devices, inspection API."""

import math

import numpy as np
import pytest

import anydev as xp

STANDARD_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128"]


def test_declares_the_standard_version():
    assert xp.__array_api_version__ == "2025.12"


def test_signatures_show_their_defaults():
    """help() and editors read the signatures: every public function has
    one, and no default reads as `...`."""
    import inspect
    import types

    seen = 0
    for module in (xp, xp.linalg, xp.fft):
        for name in dir(module):
            f = getattr(module, name)
            if name.startswith("_") or not isinstance(f, types.BuiltinFunctionType):
                continue
            params = inspect.signature(f).parameters.values()
            hidden = [p.name for p in params if p.default is Ellipsis]
            assert not hidden, f"{module.__name__}.{name}: {hidden} show as ..."
            seen += 1
    assert seen > 100
    assert str(inspect.signature(xp.sort)) == "(x, /, *, axis=-1, descending=False, stable=True)"
    assert str(inspect.signature(xp.eye)) == "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)"


def test_constants():
    assert (xp.e, xp.pi, xp.inf) == (math.e, math.pi, math.inf)
    assert math.isnan(xp.nan)
    assert xp.newaxis is None


def test_dtypes_are_hashable_named_objects():
    for name in STANDARD_DTYPES + ["float16", "bfloat16"]:
        d = getattr(xp, name)
        assert d.name == name and repr(d) == f"anydev.{name}"
        assert d == getattr(xp, name) and hash(d) == hash(getattr(xp, name))
    assert xp.float32 != xp.float64
    assert {xp.int8: 1}[xp.int8] == 1


def test_devices_are_hashable_and_print_as_devices():
    d = xp.Device("sim:1")
    assert d == xp.Device("sim:1") and hash(d) == hash(xp.Device("sim:1"))
    assert repr(d) == "anydev.Device('sim:1')" and str(d) == "sim:1"
    assert (d.kind, d.index) == ("sim", 1)
    assert d != xp.Device("sim:0")


def test_a_malformed_device_name_is_a_value_error():
    with pytest.raises(ValueError, match="kind:index"):
        xp.Device("sim")


def test_devices_lists_cpu_and_every_plugin_device():
    devices = xp.__array_namespace_info__().devices()
    assert isinstance(devices, tuple)
    assert xp.Device("cpu:0") in devices
    assert all(isinstance(d, xp.Device) for d in devices)


def test_capabilities_are_the_standards_keys():
    caps = xp.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] is True
    assert caps["data-dependent shapes"] is True
    assert caps["max dimensions"] == 64


def test_max_dimensions_is_the_limit_every_device_enforces(device):
    limit = xp.__array_namespace_info__().capabilities()["max dimensions"]
    assert xp.zeros((1,) * limit, device=device).ndim == limit
    with pytest.raises(ValueError, match="dimensions"):
        xp.zeros((1,) * (limit + 1), device=device)


def test_default_device_is_available():
    info = xp.__array_namespace_info__()
    assert info.default_device() in info.devices()


def test_dtypes_of_each_device_are_standard_and_held(device):
    info = xp.__array_namespace_info__()
    dtypes = info.dtypes(device=device)
    assert set(dtypes) <= set(STANDARD_DTYPES)
    assert dtypes["bool"] == xp.bool
    for name, d in dtypes.items():
        assert d.name == name
        # Every listed dtype can really be made on the device.
        assert xp.zeros(2, dtype=d, device=device).dtype == d


def test_dtypes_by_kind(device):
    info = xp.__array_namespace_info__()
    floats = info.dtypes(device=device, kind="real floating")
    assert set(floats) <= {"float32", "float64"} and floats
    ints = info.dtypes(device=device, kind=("signed integer", "unsigned integer"))
    assert ints == info.dtypes(device=device, kind="integral")
    complex_ = info.dtypes(device=device, kind="complex floating")
    assert set(complex_) <= {"complex64", "complex128"}
    assert all(d.kind == "complex floating" for d in complex_.values())
    numeric = info.dtypes(device=device, kind="numeric")
    assert set(complex_) <= set(numeric) and set(floats) <= set(numeric)
    with pytest.raises(ValueError):
        info.dtypes(device=device, kind="strings")


def test_default_dtypes_follow_the_device(device):
    info = xp.__array_namespace_info__()
    defaults = info.default_dtypes(device=device)
    held = info.dtypes(device=device)
    expected = xp.float64 if "float64" in held else xp.float32
    assert defaults["real floating"] == expected
    assert defaults["complex floating"] == (xp.complex128 if "complex128" in held else xp.complex64)
    assert defaults["integral"] == xp.int64 and defaults["indexing"] == xp.int64
    # Creation without a dtype uses them.
    assert xp.zeros(3, device=device).dtype == expected
    assert xp.asarray([1.5], device=device).dtype == expected
    assert xp.asarray([1, 2], device=device).dtype == xp.int64
    assert xp.arange(3, device=device).dtype == xp.int64


def test_string_device_arguments_are_accepted(device):
    assert xp.zeros(1, device=str(device)).device == device
    assert xp.__array_namespace_info__().dtypes(device=str(device))


def test_isdtype_and_result_type():
    assert xp.isdtype(xp.int8, "signed integer")
    assert xp.isdtype(xp.uint8, "integral") and not xp.isdtype(xp.uint8, "real floating")
    assert xp.isdtype(xp.float32, ("bool", "numeric"))
    assert xp.isdtype(xp.float32, xp.float32)
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.float32, 1.0) == xp.float32
    assert xp.result_type(xp.int32, xp.float32) == xp.float64
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.int16, xp.int8)
    with pytest.raises(TypeError):
        xp.result_type(1, 2.0)
    with pytest.raises(TypeError):
        xp.isdtype("float32", "numeric")


def test_finfo_and_iinfo():
    f = xp.finfo(xp.float32)
    assert (f.bits, f.eps, f.max, f.smallest_normal) == (32, 2.0**-23, 3.4028234663852886e38, 2.0**-126)
    assert xp.finfo(xp.float64).max == 1.7976931348623157e308
    i = xp.iinfo(xp.int8)
    assert (i.bits, i.min, i.max) == (8, -128, 127)
    assert xp.iinfo(xp.uint64).max == 2**64 - 1
    with pytest.raises(TypeError):
        xp.finfo(xp.int8)
    with pytest.raises(TypeError):
        xp.iinfo(xp.float32)



def test_promotion_is_numpys_for_every_pair(device):
    """docs/semantics.md: promotion is NumPy 2's, mixed kinds included;
    for every pair of dtypes the device holds, `result_type` and the
    dtype of an actual `add` agree with `numpy.result_type`."""
    held = sorted(xp.__array_namespace_info__().dtypes(device=device))
    for a in held:
        for b in held:
            expected = np.result_type(a, b).name
            assert xp.result_type(getattr(xp, a), getattr(xp, b)).name == expected, (a, b)
            if expected not in held or expected == "bool":
                continue  # add takes numbers only
            x, y = xp.ones(2, dtype=getattr(xp, a), device=device), xp.ones(2, dtype=getattr(xp, b), device=device)
            assert xp.add(x, y).dtype.name == expected, (a, b)
