//! A plugin's collectives (ABI 1.6) behind [`DeviceComm`].

use super::adapter::{PluginBackend, Shared};
use super::instance::CallError;
use crate::collective::{check_call, CollectiveCall, CollectiveKind, CommInit, DeviceComm, ReduceOp};
use crate::stream::Stream;
use crate::{Device, Error, Result};
use anydev_plugin_abi::*;
use std::sync::Arc;

/// One rank's communicator handle; destroyed when dropped.
pub(super) struct PluginComm {
    handle: *mut AnydevComm,
    backend: Arc<Shared>,
    device: Device,
    rank: usize,
    size: usize,
}

// SAFETY: the handle is a plugin object that the ABI lets any thread use
// (comm_abort is even meant to come from another thread).
unsafe impl Send for PluginComm {}
// SAFETY: as above.
unsafe impl Sync for PluginComm {}

impl Drop for PluginComm {
    fn drop(&mut self) {
        // Nobody to report a failed destroy to; the handle is gone either way.
        let _ = self.backend.instance.comm_destroy(self.handle);
    }
}

fn reduce_code(op: ReduceOp) -> u32 {
    match op {
        ReduceOp::Sum => ANYDEV_REDUCE_SUM,
        ReduceOp::Prod => ANYDEV_REDUCE_PROD,
        ReduceOp::Min => ANYDEV_REDUCE_MIN,
        ReduceOp::Max => ANYDEV_REDUCE_MAX,
    }
}

/// The ABI's kind, reduction and peer fields for `kind`.
fn kind_codes(kind: CollectiveKind) -> (u32, u32, usize) {
    match kind {
        CollectiveKind::AllReduce(op) => (ANYDEV_COLLECTIVE_ALL_REDUCE, reduce_code(op), 0),
        CollectiveKind::Broadcast { root } => (ANYDEV_COLLECTIVE_BROADCAST, 0, root),
        CollectiveKind::AllGather => (ANYDEV_COLLECTIVE_ALL_GATHER, 0, 0),
        CollectiveKind::ReduceScatter(op) => (ANYDEV_COLLECTIVE_REDUCE_SCATTER, reduce_code(op), 0),
        CollectiveKind::AllToAll => (ANYDEV_COLLECTIVE_ALL_TO_ALL, 0, 0),
        CollectiveKind::Send { peer } => (ANYDEV_COLLECTIVE_SEND, 0, peer),
        CollectiveKind::Recv { peer } => (ANYDEV_COLLECTIVE_RECV, 0, peer),
    }
}

impl PluginBackend {
    /// Joins a communicator through the plugin's `comm_init`.
    pub(super) fn join(&self, index: usize, init: &CommInit<'_>) -> Result<PluginComm> {
        let op = "comm_init";
        if init.id.len() != ANYDEV_COMM_ID_BYTES {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "a communicator id has {ANYDEV_COMM_ID_BYTES} bytes, got {}",
                    init.id.len()
                ),
            ));
        }
        let (Ok(nranks), Ok(rank)) = (u32::try_from(init.nranks), u32::try_from(init.rank)) else {
            return Err(Error::invalid_argument(op, "more ranks than the ABI counts"));
        };
        if nranks == 0 || rank >= nranks {
            return Err(Error::invalid_argument(
                op,
                format!("rank {rank} of a communicator of {nranks} ranks"),
            ));
        }
        let mut args = AnydevCommInitArgs::new_sized();
        args.id.bytes.copy_from_slice(init.id);
        args.nranks = nranks;
        args.rank = rank;
        args.timeout_ms = u64::try_from(init.timeout.as_millis()).unwrap_or(u64::MAX);
        let handle = self.instance().comm_init(index, &args).map_err(|e| self.error(e))?;
        Ok(PluginComm {
            handle,
            backend: Arc::clone(self.shared()),
            device: self.device(index),
            rank: init.rank,
            size: init.nranks,
        })
    }
}

impl PluginComm {
    fn error(&self, e: CallError) -> Error {
        self.backend.error(e)
    }
}

impl DeviceComm for PluginComm {
    fn device(&self) -> Device {
        self.device
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn enqueue(&self, stream: &Stream, call: &CollectiveCall<'_>) -> Result<()> {
        check_call(self, stream, call)?;
        let stream = self.backend.stream(stream)?.handle;
        let (kind, reduce_op, peer) = kind_codes(call.kind);
        let mut raw = AnydevCollectiveCall::new_sized();
        raw.kind = kind;
        raw.reduce_op = reduce_op;
        raw.peer = peer as u32;
        raw.dtype = call.dtype.code();
        raw.count = call.count as u64;
        if let Some(send) = call.send {
            raw.send = self.backend.buffer(send.buffer)?;
            raw.send_offset = send.offset as u64;
        }
        if let Some(recv) = call.recv {
            raw.recv = self.backend.buffer(recv.buffer)?;
            raw.recv_offset = recv.offset as u64;
        }
        self.backend
            .instance
            .collective(self.handle, stream, &raw)
            .map_err(|e| self.error(e))
    }

    fn abort(&self) -> Result<()> {
        self.backend.instance.comm_abort(self.handle).map_err(|e| self.error(e))
    }
}
