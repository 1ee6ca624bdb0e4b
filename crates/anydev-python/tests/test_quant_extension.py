"""``anydev.quant`` against a NumPy reference written here from bitsandbytes'
published algorithms (NF4 and FP4 as its decision trees, the 8-bit
``dQuantize`` search, blockwise absmax, nibble packing), not from the Rust
crate's tables; and ``anydev.extension``: ops by name, attributes converted
by the op's schema, and the errors of a call.

Codes, absmax and dequantized values are compared bit for bit; ``gemv_4bit``
within ``K * 2**-24 * sum_k |a_k w_k|`` of the float64 product plus the
rounding to the output dtype."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import anydev as xp
from anydev import extension, quant
from conftest import DEVICES, host

F32 = np.float32
QUANT_OPS = ["quant::dequantize_4bit", "quant::dequantize_blockwise", "quant::gemv_4bit", "quant::quantize_4bit",
             "quant::quantize_blockwise"]

# QLoRA's NormalFloat4 values (appendix E), code = index, as bitsandbytes
# writes them.
NF4 = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
], dtype=F32)
# bitsandbytes' dQuantizeNF4 tree compares with the midpoints of neighbours
# (f32 literals); a value above a midpoint goes up, so the code is the
# number of midpoints below the value.
NF4_MIDPOINTS = ((NF4[:-1].astype(np.float64) + NF4[1:]) / 2).astype(F32)
# bitsandbytes' FP4 (e2m1, bias 3): magnitude by the code's low three bits,
# and dQuantizeFP4's thresholds, in the order the magnitudes ascend.
FP4_MAGNITUDE = np.array([0.0, 5.208333333e-03, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667, 0.25], dtype=F32)
FP4_THRESHOLDS = np.array([0.00260417, 0.0859375, 0.20833333, 0.29166667, 0.4166667, 0.583333, 0.8333333], dtype=F32)
FP4_BY_RANK = np.array([0b000, 0b001, 0b110, 0b111, 0b100, 0b101, 0b010, 0b011], dtype=np.uint8)

FLOATS = ["float32", "float16", "bfloat16"]
LENGTHS = [0, 1, 63, 65, 1000, 9001]


def runs_quant(device):
    """Skips unless ``device`` runs the quantization ops (a capability: a
    kernel for its kind, or its plugin's own implementation)."""
    if not set(QUANT_OPS) <= set(extension.device_ops(device)):
        pytest.skip(f"{device} does not run the quant ops")


def round_bf16(v):
    """f32 ``v`` rounded to bfloat16 (nearest even), back as f32."""
    bits = np.asarray(v, dtype=F32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(F32)


def round_to(dtype, v):
    """f32 ``v`` rounded to ``dtype``, back as f32."""
    if dtype == "float16":
        return v.astype(np.float16).astype(F32)
    if dtype == "bfloat16":
        return round_bf16(v)
    return v.astype(F32)


def on_device(values, dtype, device, shape=None):
    """f32 ``values`` (exactly representable in ``dtype``) as a ``dtype``
    array on ``device``; skips where the device does not hold the dtype."""
    values = values.reshape(shape if shape is not None else values.shape)
    try:
        if dtype == "float16":
            return xp.asarray(values.astype(np.float16), device=device)
        x = xp.asarray(values, device=device)
        return xp.astype(x, xp.bfloat16) if dtype == "bfloat16" else x
    except xp.UnsupportedError as e:
        pytest.skip(str(e))


def values_of(x):
    """A float array's values as f32 on the host (f16/bf16 widen exactly)."""
    return host(xp.astype(x, xp.float32)).astype(F32).ravel()


def bits(v):
    return np.asarray(v, dtype=F32).view(np.uint32)


def data(dtype, n):
    """``n`` values in ``dtype`` (as f32): first a block holding 1.0 and
    every NF4 midpoint and FP4 threshold (so the normalized values fall
    exactly on them), a block of zeros and one of negative zeros, then
    uniform values at scales from 1e-3 to 1e3, a different scale every 64
    elements."""
    edges = np.concatenate([[1.0], NF4_MIDPOINTS, -NF4_MIDPOINTS, FP4_THRESHOLDS, -FP4_THRESHOLDS]).astype(F32)
    special = np.concatenate([edges, np.zeros(64 - edges.size, F32)])
    rng = np.random.default_rng(15)
    rest = rng.uniform(-1, 1, 9001).astype(F32)
    scales = np.array([1.0, 1e3, 1e-3, 7.5], dtype=F32)
    rest *= np.repeat(np.resize(scales, rest.size // 64 + 1), 64)[: rest.size]
    x = np.concatenate([special, np.zeros(64, F32), -np.zeros(64, F32), rest])[:n]
    return round_to(dtype, x)


def normalized(x, blocksize):
    """Per block: the absmax and the elements times ``1 / absmax`` in f32
    (0 for a block of zeros)."""
    n = x.size
    blocks = -(-n // blocksize)
    absmax = np.array([np.max(np.abs(x[b * blocksize:(b + 1) * blocksize])) for b in range(blocks)], dtype=F32)
    inv = np.divide(F32(1), absmax, out=np.zeros_like(absmax), where=absmax > 0)
    return absmax, x * np.repeat(inv, blocksize)[:n]


def codes_4bit(quant_type, v):
    if quant_type == "nf4":
        return (v[:, None] > NF4_MIDPOINTS[None, :]).sum(axis=1).astype(np.uint8)
    rank = (np.abs(v)[:, None] > FP4_THRESHOLDS[None, :]).sum(axis=1)
    return FP4_BY_RANK[rank] | np.where(v < 0, 0b1000, 0).astype(np.uint8)


def value_4bit(quant_type, codes):
    if quant_type == "nf4":
        return NF4[codes]
    magnitude = FP4_MAGNITUDE[codes & 0b111]
    return np.where(codes & 0b1000, -magnitude, magnitude).astype(F32)


def pack(codes):
    """Two codes per byte, element 2j in the high nibble; an odd count
    leaves the last low nibble 0."""
    padded = np.concatenate([codes, np.zeros(codes.size % 2, np.uint8)])
    return (padded[0::2] << 4 | padded[1::2]).astype(np.uint8)


def reference_4bit(x, blocksize, quant_type):
    absmax, v = normalized(x, blocksize)
    codes = codes_4bit(quant_type, v)
    dequantized = value_4bit(quant_type, codes) * np.repeat(absmax, blocksize)[: x.size]
    return pack(codes), absmax, dequantized


def dynamic_map_reference():
    """bitsandbytes' create_dynamic_map(signed=True, max_exponent_bits=7,
    total_bits=8) in f32, with PyTorch's f32 linspace (the first half from
    the start, the second from the end)."""
    def linspace(start, end, steps):
        start, end = F32(start), F32(end)
        step = (end - start) / F32(steps - 1)
        return np.array([start + step * F32(i) if i < steps // 2 else end - step * F32(steps - 1 - i)
                         for i in range(steps)], dtype=F32)
    values = [F32(0), F32(1)]
    for i in range(7):
        b = linspace(0.1, 1.0, 2 ** i + 1)
        means = (b[:-1] + b[1:]) / F32(2)
        scaled = F32(10.0 ** (i - 6)) * means
        values += list(scaled) + list(-scaled)
    return np.sort(np.array(values, dtype=F32))


def dynamic_codes(code, x):
    """bitsandbytes' dQuantize<0>: a binary search from index 127 keeping
    the values on either side, then the nearer neighbour by the midpoint."""
    pivot = np.full(x.shape, 127)
    lower_pivot, upper_pivot = np.zeros(x.shape, int), np.full(x.shape, 255)
    lower, upper = np.full(x.shape, -1.0, F32), np.full(x.shape, 1.0, F32)
    val = code[pivot]
    for step in (64, 32, 16, 8, 4, 2, 1):
        up = x > val
        lower_pivot, lower = np.where(up, pivot, lower_pivot), np.where(up, val, lower)
        upper_pivot, upper = np.where(up, upper_pivot, pivot), np.where(up, upper, val)
        pivot = np.where(up, pivot + step, pivot - step)
        val = code[pivot]
    upper = np.where(upper_pivot == 255, code[255], upper)
    lower = np.where(lower_pivot == 0, code[0], lower)
    above = np.where(x > (upper + val) * F32(0.5), upper_pivot, pivot)
    below = np.where(x < (lower + val) * F32(0.5), lower_pivot, pivot)
    return np.where(x > val, above, below).astype(np.uint8)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("blocksize", [64, 128, 4096])
@pytest.mark.parametrize("quant_type", ["nf4", "fp4"])
def test_4bit_codes_absmax_and_values_are_the_references(device, dtype, blocksize, quant_type):
    runs_quant(device)
    for n in LENGTHS:
        x = data(dtype, n)
        packed, absmax, dequantized = reference_4bit(x, blocksize, quant_type)
        shape = (n // 5, 5) if n % 5 == 0 and n else (n,)
        q = quant.quantize_4bit(on_device(x, dtype, device, shape), blocksize=blocksize, quant_type=quant_type)
        assert (q.shape, q.dtype.name, q.blocksize, q.quant_type, q.device) == (
            shape, dtype, blocksize, quant_type, device)
        assert q.packed.device == device and q.packed.dtype == xp.uint8
        assert np.array_equal(host(q.packed), packed), (n, "packed")
        assert np.array_equal(bits(host(q.absmax)), bits(absmax)), (n, "absmax")
        back = quant.dequantize_4bit(q)
        assert back.shape == shape and back.dtype.name == dtype and back.device == device
        assert np.array_equal(bits(values_of(back)), bits(round_to(dtype, dequantized))), (n, "dequantized")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("blocksize", [64, 4096])
def test_blockwise_codes_absmax_and_values_are_the_references(device, dtype, blocksize):
    runs_quant(device)
    code = quant.dynamic_map(device=device)
    table = host(code)
    for n in LENGTHS:
        x = data(dtype, n)
        absmax, v = normalized(x, blocksize)
        codes = dynamic_codes(table, v)
        q = quant.quantize_blockwise(on_device(x, dtype, device), blocksize=blocksize)
        assert (q.shape, q.dtype.name, q.blocksize, q.device) == ((n,), dtype, blocksize, device)
        assert np.array_equal(host(q.q), codes), (n, "codes")
        assert np.array_equal(bits(host(q.absmax)), bits(absmax)), (n, "absmax")
        assert np.array_equal(host(q.code), table)
        expected = round_to(dtype, table[codes] * np.repeat(absmax, blocksize)[:n])
        assert np.array_equal(bits(values_of(quant.dequantize_blockwise(q))), bits(expected)), (n, "dequantized")


def test_the_dynamic_map_is_bitsandbytes(device):
    table = host(quant.dynamic_map(device=device))
    assert table.dtype == F32 and table.shape == (256,)
    assert np.array_equal(bits(table), bits(dynamic_map_reference()))
    assert table[0] == F32(-0.99296875) and table[-1] == 1 and np.all(np.diff(table) > 0)


def test_dynamic_map_honours_the_device_scope(device):
    with xp.device(device):
        assert quant.dynamic_map().device == device


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("quant_type", ["nf4", "fp4"])
@pytest.mark.parametrize("lead", [(), (3,), (2, 2)])
def test_gemv_4bit_is_the_product_with_the_reference_weights(device, dtype, quant_type, lead):
    runs_quant(device)
    n, k = 37, 200
    rng = np.random.default_rng(6)
    w = round_to(dtype, rng.standard_normal(n * k).astype(F32))
    a = round_to(dtype, rng.standard_normal(lead + (k,)).astype(F32))
    _, _, w_ref = reference_4bit(w, 64, quant_type)
    q = quant.quantize_4bit(on_device(w, dtype, device, (n, k)), blocksize=64, quant_type=quant_type)
    out = quant.gemv_4bit(on_device(a, dtype, device), q)
    assert out.shape == lead + (n,) and out.dtype.name == dtype and out.device == device
    a64, w64 = a.astype(np.float64), w_ref.astype(np.float64).reshape(n, k)
    exact = a64 @ w64.T
    accumulation = k * 2.0 ** -24 * (np.abs(a64) @ np.abs(w64).T)
    unit = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[dtype]
    got = values_of(out).astype(np.float64).reshape(exact.shape)
    assert np.all(np.abs(got - exact) <= accumulation + unit * (np.abs(exact) + accumulation) + 1e-30)


def test_quantized_data_rebuilds_from_saved_arrays(device):
    """A bitsandbytes checkpoint keeps packed codes as uint8 [n/2, 1] and
    absmax as float32: the containers take them as they are."""
    runs_quant(device)
    x = data("float32", 512)
    packed, absmax, dequantized = reference_4bit(x, 64, "fp4")
    q = quant.Quantized4bit(
        xp.asarray(packed.reshape(-1, 1), device=device), xp.asarray(absmax, device=device), (16, 32), xp.float32,
        64, "fp4")
    assert repr(q) == f"anydev.quant.Quantized4bit(shape=(16, 32), dtype=float32, blocksize=64, quant_type='fp4', " \
        f"device='{device}')"
    back = quant.dequantize_4bit(q)
    assert back.shape == (16, 32)
    assert np.array_equal(bits(values_of(back)), bits(dequantized))
    saved = quant.quantize_blockwise(xp.asarray(x, device=device), blocksize=64)
    rebuilt = quant.QuantizedBlockwise(saved.q, saved.absmax, saved.code, saved.dtype, saved.blocksize)
    assert np.array_equal(host(quant.dequantize_blockwise(rebuilt)), host(quant.dequantize_blockwise(saved)))


def test_containers_and_functions_refuse_bad_fields(device):
    x = xp.zeros(64, dtype=xp.float32, device=device)
    u8 = xp.zeros(32, dtype=xp.uint8, device=device)
    with pytest.raises(ValueError, match="blocksize 100"):
        quant.Quantized4bit(u8, x, (64,), xp.float32, 100, "nf4")
    with pytest.raises(ValueError, match="quant_type"):
        quant.Quantized4bit(u8, x, (64,), xp.float32, 64, "int4")
    with pytest.raises(TypeError):
        quant.Quantized4bit(np.zeros(32, np.uint8), x, (64,), xp.float32, 64, "nf4")
    with pytest.raises(ValueError, match="blocksize -64"):
        quant.quantize_4bit(x, blocksize=-64)
    with pytest.raises(ValueError, match="quant_type"):
        quant.quantize_4bit(x, quant_type="int4")
    with pytest.raises(TypeError):
        quant.dequantize_4bit(x)
    runs_quant(device)
    # What the containers hold is checked by the ops: 32 packed bytes are
    # not the 64 codes of a [16, 16] array.
    with pytest.raises(ValueError, match="packed has 32 elements"):
        quant.dequantize_4bit(quant.Quantized4bit(u8, xp.zeros(4, dtype=xp.float32, device=device), (16, 16),
                                                  xp.float32, 64, "nf4"))
    with pytest.raises(TypeError, match="x must be float32, float16 or bfloat16"):
        quant.quantize_4bit(xp.zeros(64, dtype=xp.int32, device=device))


def other_device(device):
    others = [d for d in DEVICES if d != device]
    if not others:
        pytest.skip("needs a second device")
    return others[0]


def test_inputs_on_two_devices_are_a_value_error(device):
    runs_quant(device)
    other = other_device(device)
    q = quant.quantize_4bit(xp.ones((4, 64), dtype=xp.float32, device=device))
    with pytest.raises(ValueError, match=f"{device}.*{other}|{other}.*{device}"):
        quant.gemv_4bit(xp.ones(64, dtype=xp.float32, device=other), q)
    with pytest.raises(ValueError, match=f"{device}.*{other}|{other}.*{device}"):
        extension.call("quant::dequantize_4bit", q.packed, q.absmax.to_device(other), blocksize=64,
                       quant_type="nf4", shape=(4, 64), dtype=xp.float32)


def test_call_by_name_with_attributes_of_each_kind(device):
    runs_quant(device)
    x = xp.asarray(data("float32", 256).reshape(8, 32), device=device)
    packed, absmax = extension.call("quant::quantize_4bit", x, blocksize=64, quant_type="fp4")
    q = quant.quantize_4bit(x, blocksize=64, quant_type="fp4")
    assert np.array_equal(host(packed), host(q.packed)) and np.array_equal(host(absmax), host(q.absmax))
    for shape in [(8, 32), [8, 32]]:  # Shape from a tuple or a list; DType from a dtype.
        (out,) = extension.call("quant::dequantize_4bit", packed, absmax, blocksize=64, quant_type="fp4",
                                shape=shape, dtype=xp.float32)
        assert out.device == device and out.shape == (8, 32)
        assert np.array_equal(host(out), host(quant.dequantize_4bit(q)))


def test_float_and_bool_attributes(device):
    """fft::c2c takes ``scale`` (Float, from an int or a float) and
    ``inverse`` (Bool); it has a cpu kernel only, so elsewhere the call is
    ``UnsupportedError`` naming the op and the kinds that have it."""
    x = np.exp(1j * np.arange(8)).astype(np.complex64)
    try:
        z = xp.asarray(x, device=device)
    except xp.UnsupportedError as e:
        pytest.skip(str(e))
    if "fft::c2c" not in extension.device_ops(device):
        with pytest.raises(xp.UnsupportedError, match=f"fft::c2c.*{device}.*cpu"):
            extension.call("fft::c2c", z, scale=1.0, inverse=False)
        return
    (y,) = extension.call("fft::c2c", z, scale=2, inverse=False)
    np.testing.assert_allclose(host(y), 2 * np.fft.fft(x), rtol=1e-5, atol=1e-5)
    (back,) = extension.call("fft::c2c", y, scale=0.0625, inverse=True)
    np.testing.assert_allclose(host(back), x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs,error,message", [
    (dict(blocksize="64", quant_type="nf4"), TypeError, r"quant::quantize_4bit: attribute blocksize must be Int"),
    (dict(blocksize=True, quant_type="nf4"), TypeError, r"attribute blocksize must be Int \(an int\), got bool"),
    (dict(blocksize=64.0, quant_type="nf4"), TypeError, r"attribute blocksize must be Int"),
    (dict(blocksize=2 ** 70, quant_type="nf4"), ValueError, r"attribute blocksize \(Int\).*64-bit"),
    (dict(blocksize=64, quant_type=4), TypeError, r"attribute quant_type must be Str"),
    (dict(blocksize=64), ValueError, r"quant::quantize_4bit.*attribute quant_type \(Str\) is missing"),
    (dict(blocksize=64, quant_type="nf4", bogus=1), ValueError,
     r"quant::quantize_4bit: unknown attribute bogus \(declared: blocksize, quant_type\)"),
    (dict(blocksize=100, quant_type="nf4"), ValueError, r"quant::quantize_4bit: blocksize 100"),
])
def test_bad_attributes_are_clear_errors(device, attrs, error, message):
    x = xp.zeros(64, dtype=xp.float32, device=device)
    with pytest.raises(error, match=message):
        extension.call("quant::quantize_4bit", x, **attrs)


@pytest.mark.parametrize("shape,error,message", [
    ((-1, 64), ValueError, r"attribute shape \(Shape\).*non-negative"),
    ("ab", TypeError, r"attribute shape must be Shape \(a tuple or list of non-negative ints\), got str"),
    ((1.0, 64), TypeError, r"attribute shape must be Shape"),
    ((True, 64), TypeError, r"attribute shape must be Shape"),
])
def test_bad_shapes_and_dtypes_are_clear_errors(device, shape, error, message):
    u8, f32 = xp.zeros(32, dtype=xp.uint8, device=device), xp.zeros(1, dtype=xp.float32, device=device)
    common = dict(blocksize=64, quant_type="nf4")
    with pytest.raises(error, match=message):
        extension.call("quant::dequantize_4bit", u8, f32, shape=shape, dtype=xp.float32, **common)
    with pytest.raises(TypeError, match=r"attribute dtype must be DType \(an anydev dtype\), got str"):
        extension.call("quant::dequantize_4bit", u8, f32, shape=(64,), dtype="float32", **common)
    with pytest.raises(TypeError, match=r"attribute inverse must be Bool \(a bool\), got int"):
        extension.call("fft::c2c", f32, scale=1.0, inverse=1)
    with pytest.raises(TypeError, match="expected an anydev array"):
        extension.call("quant::dequantize_4bit", np.zeros(32, np.uint8), f32, shape=(64,), dtype=xp.float32,
                       **common)
    with pytest.raises(ValueError, match="takes 2 array inputs, got 1"):
        extension.call("quant::dequantize_4bit", u8, shape=(64,), dtype=xp.float32, **common)
    with pytest.raises(ValueError, match="quant::nothing.*no extension op of this name"):
        extension.call("quant::nothing", u8)


def test_the_registry_from_python(device):
    ops = extension.ops()
    assert ops == sorted(ops) and set(QUANT_OPS) <= set(ops) and "linalg::cholesky" in ops
    assert extension.kernel_kinds("quant::gemv_4bit") == ["cpu", "cuda", "wgpu"]
    listed = extension.device_ops(device)
    assert listed == sorted(listed)
    for op in ops:
        if device.kind in extension.kernel_kinds(op):
            assert op in listed, (op, device)
    with pytest.raises(ValueError, match="no extension op"):
        extension.kernel_kinds("quant::nothing")
    with pytest.raises(ValueError, match="no extension op"):
        extension.set_host_fallback("quant::nothing", True)
    assert isinstance(extension.host_fallbacks(), int)


def test_the_built_in_ops_answer_queries_before_any_use():
    """linalg::* and fft::* are defined lazily; a fresh process's first
    question about one must not find it missing."""
    code = textwrap.dedent(
        """
        from anydev import extension
        assert extension.kernel_kinds("linalg::inv") == ["cpu"]
        extension.set_host_fallback("fft::c2c", False)
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def sim_library():
    """The simulator library the test run loaded, from ``ANYDEV_PLUGINS``."""
    for entry in os.environ.get("ANYDEV_PLUGINS", "").split(","):
        name, _, path = entry.partition(":")
        if name == "sim" and path:
            return path
    pytest.skip("needs the simulator plugin through ANYDEV_PLUGINS")


def test_a_device_without_the_ops_and_the_host_fallback(tmp_path):
    """A simulator told to list none of the quant ops (``refuse_ops``),
    loaded beside the others in a child process: a call is
    ``UnsupportedError`` naming the op, the device and the kinds that have
    it, until the host fallback is asked for, per call or per op, which
    then runs and is counted."""
    manifest = {
        "file_format_version": "1.0.0", "name": "simbare", "library_path": sim_library(),
        "options": {"devices": 1, "refuse_ops": QUANT_OPS},
    }
    pathlib.Path(tmp_path, "simbare.json").write_text(json.dumps(manifest))
    code = """
        import numpy as np
        import anydev as xp
        from anydev import extension, quant

        bare = xp.Device("simbare:0")
        assert "quant::quantize_4bit" not in extension.device_ops(bare)
        values = np.linspace(-1, 1, 256, dtype=np.float32)
        x = xp.asarray(values, device=bare)
        try:
            extension.call("quant::quantize_4bit", x, blocksize=64, quant_type="nf4")
        except xp.UnsupportedError as e:
            message = str(e)
            assert "quant::quantize_4bit" in message and "simbare:0" in message, message
            assert "cpu" in message and "wgpu" in message, message
        else:
            raise AssertionError("no UnsupportedError")
        before = extension.host_fallbacks()
        packed, absmax = extension.call("quant::quantize_4bit", x, blocksize=64, quant_type="nf4",
                                        host_fallback=True)
        assert packed.device == bare and extension.host_fallbacks() == before + 1
        on_cpu = quant.quantize_4bit(xp.asarray(values, device="cpu:0"))
        assert np.array_equal(np.from_dlpack(packed, copy=True), np.from_dlpack(on_cpu.packed))
        extension.set_host_fallback("quant::quantize_4bit", True)
        assert quant.quantize_4bit(x).device == bare and extension.host_fallbacks() == before + 2
        extension.set_host_fallback("quant::quantize_4bit", False)
        try:
            quant.quantize_4bit(x)
        except xp.UnsupportedError:
            pass
        else:
            raise AssertionError("the fallback stayed on")
        print("ok")
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "ANYDEV_PLUGIN_PATH": str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
