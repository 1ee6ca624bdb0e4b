"""The device scope: ``with anydev.device("sim:1"):``.

A ``contextvars.ContextVar`` (so each thread and each asyncio task has its
own scope), read here and handed to Rust as the explicit ``device=`` of
creation calls only; every other operation follows its inputs' device.
"""

import contextlib
import functools
from contextvars import ContextVar

from ._anydev import Device, _default_device

_current: ContextVar = ContextVar("anydev_device", default=None)


def current_device():
    """The device creation functions use now: the innermost
    ``device(...)`` block's, else the default device."""
    return _current.get() or _default_device()


def resolve(device):
    """A ``device=`` argument as a Device: None is the current device, a
    name (``"sim:1"``) is parsed."""
    if device is None:
        return current_device()
    return device if isinstance(device, Device) else Device(device)


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
