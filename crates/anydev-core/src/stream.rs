//! Streams and events: the ordering vocabulary of an asynchronous device.
//!
//! Work on a device is enqueued on a [`Stream`] and runs in order on that
//! stream. An [`Event`] marks a point in a stream; other streams can wait
//! on it and the host can query or wait for it. Backends that complete work
//! synchronously (the CPU) implement the same interface with events that
//! are complete when recorded.

use crate::Device;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A backend-defined handle behind a [`Stream`] or [`Event`].
pub type Handle = Arc<dyn Any + Send + Sync>;

/// An in-order queue of work on one device.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    handle: Handle,
}

impl Stream {
    /// Wraps a backend's stream handle. Called by backends.
    pub fn new(device: Device, handle: Handle) -> Stream {
        Stream { device, handle }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// The backend's handle as its concrete type.
    pub fn downcast<T: Any>(&self) -> Option<&T> {
        self.handle.downcast_ref()
    }

    /// Whether two values name the same stream.
    pub fn same_as(&self, other: &Stream) -> bool {
        Arc::ptr_eq(&self.handle, &other.handle)
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Stream({} @ {:p})", self.device, Arc::as_ptr(&self.handle))
    }
}

/// A marker recorded on a stream; complete once all work enqueued on that
/// stream before it has finished.
#[derive(Clone)]
pub struct Event {
    device: Device,
    handle: Handle,
}

impl Event {
    /// Wraps a backend's event handle. Called by backends.
    pub fn new(device: Device, handle: Handle) -> Event {
        Event { device, handle }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn downcast<T: Any>(&self) -> Option<&T> {
        self.handle.downcast_ref()
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Event({} @ {:p})", self.device, Arc::as_ptr(&self.handle))
    }
}
