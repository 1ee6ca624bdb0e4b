"""anydev: an Array API namespace whose arrays live on any anydev device.

    import anydev as xp
    x = xp.arange(10, device="sim:1")
    y = xp.exp(x) + 1          # runs on sim:1, the device of its inputs

Creation functions place their result on the explicit ``device=``, else the
device of the innermost ``with anydev.device(...):`` block, else anydev's
default device; every other function follows its inputs, and arrays on two
devices meeting is a ``ValueError`` that says to call ``to_device``.
See docs/python.md for what of the standard is covered.
"""

import math as _math

from . import _anydev
from ._anydev import *  # noqa: F401,F403  (Array, Device, dtypes, functions)
from ._dtypes import can_cast, finfo, iinfo, isdtype
from ._info import __array_namespace_info__
from ._scope import creation, device
from ._sets import unique_all, unique_counts, unique_inverse
from . import accelerator, extension, fft, linalg, quant

import atexit as _atexit

# The process-wide runtime is never dropped: this is how device plugins
# hear that the interpreter exits (their shutdown call).
_atexit.register(_anydev._shutdown)

__array_api_version__ = "2025.12"

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

# The creation functions without array inputs honour the device scope;
# the Python half hands the scope's device to Rust explicitly.
_scoped_asarray = creation(_anydev.asarray)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``obj`` as an anydev array. An anydev array stays on its device
    unless ``device=`` names another, as the standard asks; anything else
    (sequences, NumPy and DLPack arrays) goes where creation calls go."""
    if isinstance(obj, Array):
        return _anydev.asarray(obj, dtype=dtype, device=device, copy=copy)
    return _scoped_asarray(obj, dtype=dtype, device=device, copy=copy)


arange = creation(_anydev.arange)
empty = creation(_anydev.empty)
eye = creation(_anydev.eye)
full = creation(_anydev.full)
linspace = creation(_anydev.linspace)
ones = creation(_anydev.ones)
zeros = creation(_anydev.zeros)

__all__ = sorted(
    name for name in dir() if not name.startswith("_") and name not in {"annotations"}
) + ["__array_api_version__", "__array_namespace_info__"]
__all__.remove("creation")
