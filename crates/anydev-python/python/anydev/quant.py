"""Blockwise quantization as bitsandbytes defines it (NF4, FP4, 8-bit
dynamic, and the 4-bit matrix-vector product), from the Rust library
anydev-quant; docs/quantization.md describes the formats and guarantees.

    w = anydev.quant.quantize_4bit(weights, blocksize=64, quant_type="nf4")
    y = anydev.quant.gemv_4bit(x, w)             # x @ weights.T
    back = anydev.quant.dequantize_4bit(w)

Every function runs on its inputs' device; ``dynamic_map`` creates the code
on the ``device=``, else the ``with anydev.device(...)`` scope's, else the
default device. ``Quantized4bit(packed, absmax, shape, dtype, blocksize,
quant_type)`` and ``QuantizedBlockwise(q, absmax, code, dtype, blocksize)``
rebuild quantized data from saved arrays (e.g. a bitsandbytes checkpoint's
packed ``uint8`` and ``float32`` absmax); the ops check what they hold when
they run.
"""

from . import _scope
from ._anydev import _quant as _native

Quantized4bit = _native.Quantized4bit
QuantizedBlockwise = _native.QuantizedBlockwise
quantize_4bit = _native.quantize_4bit
dequantize_4bit = _native.dequantize_4bit
gemv_4bit = _native.gemv_4bit
quantize_blockwise = _native.quantize_blockwise
dequantize_blockwise = _native.dequantize_blockwise
# A creation function: it honours the ``with anydev.device(...)`` scope.
dynamic_map = _scope.creation(_native.dynamic_map)

__all__ = [
    "Quantized4bit", "QuantizedBlockwise", "dequantize_4bit", "dequantize_blockwise", "dynamic_map", "gemv_4bit",
    "quantize_4bit", "quantize_blockwise",
]
