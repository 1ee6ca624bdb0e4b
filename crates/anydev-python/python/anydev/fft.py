"""The standard's ``fft`` extension.

The transforms (``fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``,
``rfftn``, ``irfftn``, ``hfft``, ``ihfft``) are extension ops whose kernels
exist for ``cpu``; on another device they raise an error naming the device
and the kinds that have a kernel. Real input to ``fft`` is taken as complex
of the same precision. ``fftfreq``, ``rfftfreq``, ``fftshift`` and
``ifftshift`` run on every device. ``norm`` is ``"backward"`` (default),
``"ortho"`` or ``"forward"``.
"""

from . import _scope
from ._anydev import _fft as _native

fft = _native.fft
ifft = _native.ifft
fftn = _native.fftn
ifftn = _native.ifftn
rfft = _native.rfft
irfft = _native.irfft
rfftn = _native.rfftn
irfftn = _native.irfftn
hfft = _native.hfft
ihfft = _native.ihfft
fftshift = _native.fftshift
ifftshift = _native.ifftshift
# Creation functions: they honour the ``with anydev.device(...)`` scope.
fftfreq = _scope.creation(_native.fftfreq)
rfftfreq = _scope.creation(_native.rfftfreq)

__all__ = [
    "fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft", "irfftn", "rfft",
    "rfftfreq", "rfftn",
]
