//! The calls device-agnostic code makes about devices, the same for every
//! backend and plugin (PyTorch's `torch.accelerator` and
//! `torch.accelerator.memory` are the model): which devices exist, which
//! one is current, waiting for one, its streams, its memory, timing work
//! on it, and its random generator.
//!
//! Every function takes the device it is about; asking about one kind
//! starts that kind's backend only (see the README on lazy start).

use anydev_array::runtime;
use anydev_core::stream::{Event as BackendEvent, Stream};
use anydev_core::{Backend, Device, Error, MemoryStats, Result};
use std::sync::Arc;
use std::time::Duration;

pub use anydev_array::{
    current_stream, manual_seed, manual_seed_device, new_stream, rng_state, set_rng_state, with_stream, StreamGuard,
};
pub use anydev_core::random::RngState;

/// Every available device, backends in registration order. Starts every
/// backend.
pub fn devices() -> Vec<Device> {
    runtime().devices()
}

/// How many devices of `kind` (`"cpu"`, `"cuda"`, a plugin's name) are
/// available: 0 for a kind that is unknown, disabled or has no devices.
/// Starts that kind's backend only.
pub fn device_count(kind: &str) -> usize {
    runtime()
        .record(kind)
        .and_then(|record| record.backend())
        .map_or(0, |backend| backend.device_count())
}

/// Whether at least one device of `kind` is available.
pub fn is_available(kind: &str) -> bool {
    device_count(kind) > 0
}

/// The device creation calls on this thread use now: the innermost
/// `with_device` scope, else the default device.
pub fn current_device() -> Result<Device> {
    runtime().creation_device(None)
}

/// The process default device (`ANYDEV_DEVICE`, [`set_default_device`],
/// else the available backend of highest priority).
pub fn default_device() -> Result<Device> {
    runtime().default_device()
}

/// Makes `device` the process default from now on, in every thread;
/// `None` returns to the rule. `with_device` scopes still win inside them.
pub fn set_default_device(device: Option<Device>) -> Result<()> {
    runtime().set_default_device(device)
}

pub(crate) fn backend(device: Device) -> Result<Arc<dyn Backend>> {
    runtime().backend(device).map(Arc::clone)
}

/// Blocks until all work enqueued on `device`, on every stream, completes.
pub fn synchronize(device: Device) -> Result<()> {
    backend(device)?.synchronize(device.index())
}

/// Blocks until all work enqueued on `stream` completes.
pub fn synchronize_stream(stream: &Stream) -> Result<()> {
    backend(stream.device())?.synchronize_stream(stream)
}

/// `device`'s memory: bytes in use and at peak, live allocations, bytes
/// reserved (in use plus cached), and free and total where the device
/// knows them.
pub fn memory_stats(device: Device) -> Result<MemoryStats> {
    backend(device)?.memory_stats(device.index())
}

/// Starts `device`'s peak again from its bytes in use now.
/// [`Error::FeatureUnsupported`] where the backend cannot.
pub fn reset_peak(device: Device) -> Result<()> {
    backend(device)?.reset_peak(device.index())
}

/// Gives memory `device` caches for reuse back to the system (the CPU's
/// block cache, a plugin's pool); arrays in use keep theirs.
pub fn empty_cache(device: Device) -> Result<()> {
    backend(device)?.empty_cache(device.index())
}

/// A point in a device's stream of work, for waiting on it and for timing
/// the work between two of them (as `torch.cuda.Event`).
#[derive(Clone)]
pub struct Event {
    backend: Arc<dyn Backend>,
    event: BackendEvent,
}

impl Event {
    /// Records an event after the work enqueued so far on `device`'s
    /// current stream (this thread's `with_stream` choice, else its
    /// default stream).
    pub fn record(device: Device) -> Result<Event> {
        Event::record_on(&anydev_array::current_stream(device)?)
    }

    /// Records an event after the work enqueued so far on `stream`.
    pub fn record_on(stream: &Stream) -> Result<Event> {
        let backend = backend(stream.device())?;
        let event = backend.record_timed_event(stream)?;
        Ok(Event { backend, event })
    }

    /// An event after the work enqueued so far on `stream`, for waiting
    /// only: cheaper than a timed one on backends whose timed events carry
    /// a timestamp.
    pub(crate) fn plain(backend: Arc<dyn Backend>, stream: &Stream) -> Result<Event> {
        let event = backend.record_event(stream)?;
        Ok(Event { backend, event })
    }

    pub fn device(&self) -> Device {
        self.event.device()
    }

    /// Makes work enqueued on `stream` from now on wait until this event
    /// completes, without blocking the host (`torch.cuda.Event.wait`).
    /// The stream must be of the event's device kind; another kind's
    /// backend cannot wait on this event inside its own stream.
    pub fn wait(&self, stream: &Stream) -> Result<()> {
        if stream.device().kind() != self.device().kind() {
            return Err(Error::DeviceMismatch {
                op: "Event::wait".into(),
                devices: vec![self.device(), stream.device()],
            });
        }
        self.backend.wait_event(stream, &self.event)
    }

    /// Whether the work before the event has completed, without blocking.
    pub fn query(&self) -> Result<bool> {
        self.backend.query_event(&self.event)
    }

    /// Blocks until the work before the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.backend.synchronize_event(&self.event)
    }

    /// The device time from this event to `end`, waiting for both. Both
    /// must be of one device whose `event_timing` capability is true;
    /// otherwise the error says why.
    pub fn elapsed(&self, end: &Event) -> Result<Duration> {
        if self.device() != end.device() {
            return Err(Error::DeviceMismatch {
                op: "Event::elapsed".into(),
                devices: vec![self.device(), end.device()],
            });
        }
        self.synchronize()?;
        end.synchronize()?;
        self.backend.event_elapsed(&self.event, &end.event)
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event").field("device", &self.device()).finish()
    }
}
