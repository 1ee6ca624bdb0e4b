"""The device scope: ``with anydev.device("sim:1"):``.

A ``contextvars.ContextVar`` (so each thread and each asyncio task has its
own scope), read here and handed to Rust as the explicit ``device=`` of
creation calls only; every other operation follows its inputs' device.
"""

import contextlib
import functools
from contextvars import ContextVar

from ._anydev import Device

_current: ContextVar = ContextVar("anydev_device", default=None)


def current():
    """The device of the innermost ``device(...)`` block, or None."""
    return _current.get()


@contextlib.contextmanager
def device(dev):
    """Makes ``dev`` (a Device or its name) the default device of creation
    functions inside the block."""
    token = _current.set(dev if isinstance(dev, Device) else Device(dev))
    try:
        yield token.var.get()
    finally:
        _current.reset(token)


def creation(fn):
    """``fn`` with ``device=None`` replaced by the scope's device."""

    @functools.wraps(fn)
    def scoped(*args, device=None, **kwargs):
        return fn(*args, device=_current.get() if device is None else device, **kwargs)

    return scoped
