"""The package around the namespace: stubs in step with the native
module, and the test device selection following the Rust suite's rules."""

import ast
import pathlib

import pytest

import anydev as xp
from anydev import _anydev
from conftest import select

STUB = pathlib.Path(xp.__file__).with_name("_anydev.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
    # Not the stub's own type aliases (`_Device`, ...).
    return {n for n in names if not (n.startswith("_") and n[1].isupper())}


def test_the_stub_describes_exactly_the_native_module():
    native = {n for n in dir(_anydev) if not n.startswith("__")}
    # `_dist` exists only in builds with the `dist` feature.
    assert stub_names() - {"_dist"} == native - {"_dist"}
    assert "_dist" in stub_names()


def test_anydev_dist_imports_exactly_when_built_with_it():
    """With the `dist` feature the module imports (tests-dist runs it
    under mpirun); without it, importing says how to build it."""
    if hasattr(_anydev, "_dist"):
        import anydev.dist

        assert callable(anydev.dist.init)
    else:
        with pytest.raises(ImportError, match="`dist` feature"):
            import anydev.dist  # noqa: F401


def test_the_package_exports_the_native_names_and_its_own():
    for name in ("asarray", "sum", "Array", "Device", "float32", "isdtype", "device", "__array_namespace_info__"):
        assert name in xp.__all__
    assert "creation" not in xp.__all__


class FakeDevice:
    def __init__(self, name):
        self.name = name
        self.kind = name.split(":")[0]

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return self.name == other.name

    def __hash__(self):
        return hash(self.name)


AVAILABLE = [FakeDevice(n) for n in ("cpu:0", "wgpu:0", "sim:0", "sim:1")]


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("", ["cpu:0", "wgpu:0", "sim:0", "sim:1"]),
        ("cpu,sim", ["cpu:0", "sim:0", "sim:1"]),
        ("sim,cpu", ["cpu:0", "sim:0", "sim:1"]),
        ("sim:1", ["sim:1"]),
        ("-wgpu", ["cpu:0", "sim:0", "sim:1"]),
        ("all,-sim", ["cpu:0", "wgpu:0"]),
        ("sim, -sim:0", ["sim:1"]),
    ],
)
def test_device_selection_follows_the_rust_rules(spec, expected):
    assert [str(d) for d in select(AVAILABLE, spec)] == expected


@pytest.mark.parametrize("spec", ["cuda", "sim:7", "-cpu,-wgpu,-sim"])
def test_selecting_nothing_or_a_missing_kind_is_an_error(spec):
    with pytest.raises(pytest.UsageError):
        select(AVAILABLE, spec)
