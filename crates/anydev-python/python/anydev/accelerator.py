"""The calls device-agnostic code makes about devices, the same on every
device kind and plugin (``torch.accelerator`` and
``torch.accelerator.memory`` are the model):

    n = anydev.accelerator.device_count("sim")
    start = anydev.accelerator.Event("sim:0")
    y = x @ x
    end = anydev.accelerator.Event("sim:0")
    ms = start.elapsed_time(end)
    anydev.accelerator.memory_allocated("sim:0")

``device=None`` means the current device: the innermost
``with anydev.device(...)`` block, else the default device. Asking about
one kind starts only that kind's backend. A device that cannot do
something (reset its peak, time events: its ``event_timing`` capability)
raises ``anydev.UnsupportedError``.
"""

from ._anydev import _accelerator as _native
from ._anydev import _default_device, _devices
from ._scope import current_device
from ._scope import resolve as _device

device_count = _native.device_count


def is_available(kind):
    """Whether at least one device of ``kind`` ("cpu", "wgpu", a plugin's
    name) is available."""
    return device_count(kind) > 0


def devices():
    """Every available device, plugins included (starts every backend)."""
    return tuple(_devices())


def default_device():
    """The process default: the device of ``set_default_device``, else
    ``ANYDEV_DEVICE``, else device 0 of the available backend of highest
    priority. ``anydev.device(...)`` blocks do not change it; creation
    calls inside one use ``current_device()``, which is also what the
    standard's ``__array_namespace_info__().default_device()`` returns."""
    return _default_device()


def set_default_device(device):
    """Makes ``device`` the process default from now on, in every thread
    (``None`` returns to ``ANYDEV_DEVICE`` or the highest-priority device);
    ``anydev.device(...)`` blocks still win inside them."""
    _native.set_default_device(None if device is None else _device(device))


def synchronize(device=None):
    """Waits until all work enqueued on ``device`` has completed."""
    _native.synchronize(_device(device))


def memory_stats(device=None):
    """``device``'s memory as a dict: ``in_use``, ``peak``, ``allocations``,
    ``reserved`` (in use plus cached), ``limit``, ``free`` and ``total``
    (None where the device does not know them)."""
    return _native.memory_stats(_device(device))


def memory_allocated(device=None):
    """Bytes held by live arrays on ``device``."""
    return memory_stats(device)["in_use"]


def max_memory_allocated(device=None):
    """The most bytes held at once since start-up or the last
    ``reset_peak_memory_stats``."""
    return memory_stats(device)["peak"]


def memory_reserved(device=None):
    """Bytes the device holds from the system: in use plus cached."""
    return memory_stats(device)["reserved"]


def reset_peak_memory_stats(device=None):
    """Starts the peak again from the bytes in use now."""
    _native.reset_peak(_device(device))


def empty_cache(device=None):
    """Gives memory the device caches for reuse back to the system; live
    arrays keep theirs."""
    _native.empty_cache(_device(device))


class Stream(_native.Stream):
    """One of a device's streams (``torch.Stream``): work enqueued on one
    stream runs in order; work on two streams may overlap unless an event
    orders it. ``with anydev.accelerator.stream(s):`` sends this thread's
    work on ``s.device`` there; ``x.to_device(d, stream=s)`` orders a copy
    on it. Reading and writing arrays across streams is ordered for you."""

    __slots__ = ()

    def __new__(cls, device=None):
        return super().__new__(cls, _device(device))

    def wait_event(self, event):
        """Makes later work on this stream wait for ``event``, without
        waiting here."""
        super().wait_event(event._event)


def current_stream(device=None):
    """The stream this thread's work on ``device`` goes to now: the
    innermost ``stream(...)`` block for it, else its default stream."""
    return _native.Stream.current(_device(device))


def stream(s):
    """A ``with`` block in which this thread's work on ``s.device`` is
    enqueued on ``s`` (``torch.cuda.stream``); other devices keep theirs.
    The choice is per thread, as PyTorch's is."""
    if not isinstance(s, _native.Stream):
        raise TypeError(f"stream() takes an anydev.accelerator.Stream, not {type(s).__name__}")
    return _native._StreamScope(s)


class Event:
    """A point in a device's work, recorded when made on ``stream`` (by
    default the device's current stream); ``elapsed_time`` gives the
    milliseconds between two of them."""

    __slots__ = ("_event",)

    def __init__(self, device=None, stream=None):
        if device is None and stream is not None:
            device = stream.device
        self._event = _native.Event(_device(device), stream)

    def wait(self, stream=None):
        """Makes later work on ``stream`` (by default the current stream of
        the event's device) wait for this event, without waiting here."""
        self._event.wait(current_stream(self.device) if stream is None else stream)

    @property
    def device(self):
        return self._event.device

    def query(self):
        """Whether the work before the event has completed."""
        return self._event.query()

    def synchronize(self):
        """Waits until the work before the event has completed."""
        self._event.synchronize()

    def elapsed_time(self, end):
        """Milliseconds of device time from this event to ``end``."""
        return self._event.elapsed_time(end._event)

    def __repr__(self):
        return f"<anydev.accelerator.Event on {self.device}>"


__all__ = [
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "default_device",
    "device_count",
    "devices",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_default_device",
    "stream",
    "synchronize",
]
