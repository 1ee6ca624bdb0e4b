//! Collectives a backend runs among processes itself (design section 13):
//! a plugin's ABI 1.6 calls, or a vendor library such as NCCL. The
//! distributed crate bootstraps communicators over its own MPI job and
//! drives them on buffers of one device per rank; MPI with host staging
//! remains the engine for devices whose backend offers none.
//!
//! The shape is NCCL's: one rank makes an opaque id
//! ([`crate::Backend::comm_id`]), the caller carries it to the other ranks, each
//! joins ([`crate::Backend::comm_init`]), and collectives are enqueued on a stream
//! of the rank's device like ops, so a caller bounds a wait by polling an
//! event and calls [`DeviceComm::abort`] when a peer is gone.

use crate::memory::Buffer;
use crate::stream::Stream;
use crate::{DType, Device, Error, Result};
use std::time::Duration;

pub use anydev_ops::collective::{CollectiveKind, ReduceOp};

/// The elements each side of `kind` holds on rank `rank` of `nranks`, or
/// `None` for a side the collective does not use there.
fn extents(kind: CollectiveKind, count: usize, nranks: usize, rank: usize) -> (Option<usize>, Option<usize>) {
    let all = count.checked_mul(nranks);
    match kind {
        CollectiveKind::AllReduce(_) => (Some(count), Some(count)),
        CollectiveKind::Broadcast { root } => ((rank == root).then_some(count), Some(count)),
        CollectiveKind::AllGather => (Some(count), all),
        CollectiveKind::ReduceScatter(_) => (all, Some(count)),
        CollectiveKind::AllToAll => (all, all),
        CollectiveKind::Send { .. } => (Some(count), None),
        CollectiveKind::Recv { .. } => (None, Some(count)),
    }
}

/// A buffer and a byte offset: where one side of a collective starts.
#[derive(Clone, Copy, Debug)]
pub struct Region<'a> {
    pub buffer: &'a Buffer,
    pub offset: usize,
}

/// One collective on this rank's device. `count` is per rank (see
/// [`CollectiveKind`]); the gathered or scattered side holds `nranks *
/// count` dense elements.
#[derive(Clone, Copy, Debug)]
pub struct CollectiveCall<'a> {
    pub kind: CollectiveKind,
    pub dtype: DType,
    pub count: usize,
    pub send: Option<Region<'a>>,
    pub recv: Option<Region<'a>>,
}

/// One rank's membership of a communicator, made by [`crate::Backend::comm_init`].
pub trait DeviceComm: Send + Sync {
    /// The rank's device.
    fn device(&self) -> Device;

    fn rank(&self) -> usize;

    fn size(&self) -> usize;

    /// Enqueues `call` on `stream` (a stream of [`DeviceComm::device`]).
    /// Implementations check it with [`check_call`] before any memory is
    /// touched.
    fn enqueue(&self, stream: &Stream, call: &CollectiveCall<'_>) -> Result<()>;

    /// Makes pending and later collectives fail soon, without waiting for
    /// the peers: for a caller whose wait ran out.
    fn abort(&self) -> Result<()>;
}

/// What a join asks for.
#[derive(Clone, Debug)]
pub struct CommInit<'a> {
    /// The bytes [`crate::Backend::comm_id`] made on one rank.
    pub id: &'a [u8],
    pub nranks: usize,
    pub rank: usize,
    /// How long to wait for every rank to join.
    pub timeout: Duration,
}

/// The error for a backend without collectives of its own.
pub fn no_collectives(backend: &str) -> Error {
    Error::backend(
        backend,
        "offers no collectives of its own; move its arrays between processes through host memory (MPI)",
    )
}

/// Checks a collective on `comm` before a backend touches memory: the
/// peer or root is another rank of the communicator, each side the
/// collective uses is present and lies inside its buffer on the
/// communicator's device, no unused side is given, the two do not
/// overlap, every reduction applies to the dtype, and `stream` is on that
/// device too.
pub fn check_call<C: DeviceComm + ?Sized>(comm: &C, stream: &Stream, call: &CollectiveCall<'_>) -> Result<()> {
    let (device, nranks, rank) = (comm.device(), comm.size(), comm.rank());
    let op = call.kind.name();
    let invalid = |why: String| Error::invalid_argument(op, why);
    match call.kind {
        CollectiveKind::Broadcast { root: peer } if peer >= nranks => {
            return Err(invalid(format!("root {peer} is not a rank of {nranks}")))
        }
        CollectiveKind::Send { peer } | CollectiveKind::Recv { peer } if peer >= nranks || peer == rank => {
            return Err(invalid(format!(
                "peer {peer} is not another rank of {nranks} (this is rank {rank})"
            )))
        }
        CollectiveKind::AllReduce(reduce) | CollectiveKind::ReduceScatter(reduce)
            if matches!(reduce, ReduceOp::Min | ReduceOp::Max) && call.dtype.is_complex() =>
        {
            return Err(invalid(format!("{reduce:?} is not defined for {}", call.dtype)))
        }
        _ => {}
    }
    let (send_len, recv_len) = extents(call.kind, call.count, nranks, rank);
    let size = call.dtype.size();
    let mut ranges = Vec::with_capacity(2);
    for (side, region, len) in [("send", call.send, send_len), ("recv", call.recv, recv_len)] {
        match (region, len) {
            (Some(region), Some(len)) => {
                let bytes = len
                    .checked_mul(size)
                    .ok_or_else(|| invalid(format!("{len} elements of {} overflow", call.dtype)))?;
                if region.buffer.device() != device {
                    return Err(invalid(format!(
                        "the {side} buffer is on {}, the communicator's device is {device}",
                        region.buffer.device()
                    )));
                }
                crate::backend::check_range(op, region.buffer, region.offset, bytes)?;
                ranges.push((region, bytes));
            }
            (None, Some(_)) => return Err(invalid(format!("needs a {side} buffer on rank {rank}"))),
            (Some(_), None) => return Err(invalid(format!("takes no {side} buffer on rank {rank}"))),
            (None, None) => {}
        }
    }
    if let [(a, a_len), (b, b_len)] = ranges[..] {
        // One `Usage` is shared by an allocation and every mapping of it.
        let same = std::ptr::eq(a.buffer.usage(), b.buffer.usage());
        if same && a.offset < b.offset + b_len && b.offset < a.offset + a_len && a_len > 0 && b_len > 0 {
            return Err(invalid(
                "the send and recv ranges overlap; receive into a fresh buffer".into(),
            ));
        }
    }
    if stream.device() != device {
        return Err(invalid(format!(
            "the stream is on {}, the communicator's device is {device}",
            stream.device()
        )));
    }
    Ok(())
}
