"""Extension ops by name: any op a library defined in the process (the
quantization ops ``quant::*`` that ship with the package, the built-in
``linalg::*`` and ``fft::*``, or a Rust library's own), called on anydev
arrays.

    q, absmax = anydev.extension.call(
        "quant::quantize_4bit", x, blocksize=64, quant_type="nf4")

The call follows the Rust rules (docs/extensions.md): every input must be
an anydev array and all of them on one device, where the outputs go; the
attributes are keywords, converted by the kind the op declares (``Int``
from an int, ``Float`` from an int or a float, ``Bool`` from a bool,
``Str`` from a str, ``DType`` from an anydev dtype, ``Shape`` from a
tuple or list of non-negative ints). A value of the wrong type is a
``TypeError``; a missing or unknown attribute, or arguments the op
refuses, a ``ValueError``; a device without a kernel for the op is
``anydev.UnsupportedError`` naming the op, unless ``host_fallback=True``
(or ``set_host_fallback(op, True)``) lets the ``cpu`` kernel run on copies,
which ``host_fallbacks()`` counts. An attribute cannot be called
``host_fallback``.
"""

from ._anydev import _extension as _native

call = _native.call
ops = _native.ops
device_ops = _native.device_ops
kernel_kinds = _native.kernel_kinds
host_fallbacks = _native.host_fallbacks
set_host_fallback = _native.set_host_fallback

__all__ = ["call", "device_ops", "host_fallbacks", "kernel_kinds", "ops", "set_host_fallback"]
