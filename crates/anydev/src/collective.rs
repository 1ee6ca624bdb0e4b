//! Collectives on arrays through a device's own collective library (a
//! plugin's ABI 1.6 calls, or NCCL): the building block of the
//! distributed crate's device engines (design section 13).
//!
//! A communicator joins one device per rank. One rank makes an id with
//! [`comm_id`], the caller carries it to every rank (over MPI), each joins
//! with [`comm_init`], and [`enqueue`] puts one collective on arrays of the
//! rank's device on the thread's current stream, ordered after the work
//! that writes its input, and returns an event after it so the caller can
//! bound its wait and call [`DeviceComm::abort`] when a peer is gone.

pub use anydev_core::collective::{CollectiveKind, CommInit, DeviceComm, ReduceOp};

use crate::accelerator::{backend, Event};
use anydev_core::collective::{CollectiveCall, Region};
use anydev_core::ordering::Access;
use anydev_core::{Device, Error, Result};

/// The collective library `device`'s backend uses between processes
/// (e.g. `"sim (plugin)"`), or `None` when it has none.
pub fn library(device: Device) -> Result<Option<String>> {
    Ok(backend(device)?.collectives())
}

/// The id of a new communicator among devices of `device`'s backend.
pub fn comm_id(device: Device) -> Result<Vec<u8>> {
    backend(device)?.comm_id()
}

/// Joins a communicator with `device`; returns once every rank has joined
/// or `init.timeout` has passed.
pub fn comm_init(device: Device, init: &CommInit<'_>) -> Result<Box<dyn DeviceComm>> {
    backend(device)?.comm_init(device.index(), init)
}

/// Where a collective reads or writes `array`: its buffer and byte offset.
/// Collectives move dense elements, so the array must be contiguous.
fn region<'a>(op: &str, comm: &dyn DeviceComm, array: &'a crate::Array) -> Result<Region<'a>> {
    if array.device() != comm.device() {
        return Err(Error::DeviceMismatch {
            op: op.into(),
            devices: vec![array.device(), comm.device()],
        });
    }
    if !array.is_contiguous() {
        return Err(Error::invalid_argument(
            op,
            "collectives move dense elements: pass a contiguous array (copy a view first)",
        ));
    }
    Ok(Region {
        buffer: array.buffer(),
        offset: array.offset() * array.dtype().size(),
    })
}

/// Enqueues one collective of `count` elements per rank (see
/// [`CollectiveKind`]) reading `send` and writing `recv`, both contiguous
/// arrays of `comm`'s device, on the thread's current stream for it, and
/// returns an event recorded after it.
pub fn enqueue(
    comm: &dyn DeviceComm,
    kind: CollectiveKind,
    send: Option<&crate::Array>,
    recv: Option<&crate::Array>,
    count: usize,
) -> Result<Event> {
    let op = kind.name();
    let dtype = match (send, recv) {
        (Some(s), Some(r)) if s.dtype() != r.dtype() => {
            return Err(Error::invalid_argument(
                op,
                format!("send is {} but recv is {}", s.dtype(), r.dtype()),
            ))
        }
        (Some(a), _) | (None, Some(a)) => a.dtype(),
        (None, None) => return Err(Error::invalid_argument(op, "needs a send or a recv array")),
    };
    let call = CollectiveCall {
        kind,
        dtype,
        count,
        send: send.map(|a| region(op, comm, a)).transpose()?,
        recv: recv.map(|a| region(op, comm, a)).transpose()?,
    };
    let backend = backend(comm.device())?;
    let stream = crate::current_stream(comm.device())?;
    let uses = || {
        let reads = call.send.map(|r| (r.buffer, Access::Read));
        reads.into_iter().chain(call.recv.map(|r| (r.buffer, Access::Write)))
    };
    for (buffer, access) in uses() {
        buffer.usage().before(&backend, &stream, access)?;
    }
    comm.enqueue(&stream, &call)?;
    for (buffer, access) in uses() {
        buffer.usage().after(&backend, &stream, access);
    }
    Event::plain(backend, &stream)
}
