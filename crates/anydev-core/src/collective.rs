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

/// How all-reduce and reduce-scatter combine the ranks' elements. On bool,
/// `Sum` and `Max` are logical or, `Prod` and `Min` logical and; integers
/// wrap; f16 and bf16 accumulate in f32 and round once; `Min` and `Max`
/// propagate NaN and do not apply to complex dtypes. Ranks combine in rank
/// order, so every rank gets the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
}

/// What a collective does; ranks are indices in the communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    /// Every rank gets the reduction of every rank's `count` elements.
    AllReduce(ReduceOp),
    /// Every rank gets the root's `count` elements (only the root sends).
    Broadcast { root: usize },
    /// Every rank gets every rank's `count` elements, in rank order.
    AllGather,
    /// Rank `r` gets block `r` (of `count` elements) of the reduction.
    ReduceScatter(ReduceOp),
    /// Block `i` (of `count` elements) of rank `r`'s send goes to rank `i`,
    /// as its block `r`.
    AllToAll,
    /// `count` elements to rank `peer`.
    Send { peer: usize },
    /// `count` elements from rank `peer`.
    Recv { peer: usize },
}

impl CollectiveKind {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce(_) => "all_reduce",
            CollectiveKind::Broadcast { .. } => "broadcast",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter(_) => "reduce_scatter",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::Send { .. } => "send",
            CollectiveKind::Recv { .. } => "recv",
        }
    }

    /// The elements each side holds on rank `rank` of `nranks`, or `None`
    /// for a side the collective does not use there.
    fn extents(self, count: usize, nranks: usize, rank: usize) -> (Option<usize>, Option<usize>) {
        let all = count.checked_mul(nranks);
        match self {
            CollectiveKind::AllReduce(_) => (Some(count), Some(count)),
            CollectiveKind::Broadcast { root } => ((rank == root).then_some(count), Some(count)),
            CollectiveKind::AllGather => (Some(count), all),
            CollectiveKind::ReduceScatter(_) => (all, Some(count)),
            CollectiveKind::AllToAll => (all, all),
            CollectiveKind::Send { .. } => (Some(count), None),
            CollectiveKind::Recv { .. } => (None, Some(count)),
        }
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

/// Checks a collective before a backend touches memory: the peer or root
/// is another rank of the communicator, each side the collective uses is
/// present and lies inside its buffer on `device`, no unused side is
/// given, the two do not overlap, and every reduction applies to the dtype.
pub fn check_call(call: &CollectiveCall<'_>, device: Device, nranks: usize, rank: usize) -> Result<()> {
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
    let (send_len, recv_len) = call.kind.extents(call.count, nranks, rank);
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
    Ok(())
}
