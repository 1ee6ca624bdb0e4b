//! The `plugin` engine: collectives through the device's own library (a
//! plugin's ABI 1.6 calls), with the data staying in device memory. MPI
//! carries only the metadata and, once per communicator, the library's
//! communicator id.

use super::{Communicator, ReduceOp};
use crate::error::{DistError, Result};
use crate::meta::Call;
use crate::wait::{lease, poll_until};
use anydev::collective::{self, CollectiveKind, CommInit, DeviceComm};
use anydev::{Array, DType, Device};
use mpi::request::StaticScope;
use mpi::traits::{Communicator as _, Root};
use std::rc::Rc;

/// Bytes of the message that carries the id from rank 0: a status byte,
/// the id's length (u32, little-endian), then the id or rank 0's error.
const ID_MESSAGE: usize = 1 + 4 + 1024;

/// One collective on the device: what it does, `count` elements per rank,
/// the shape of what this rank gets, and the device it goes back to (the
/// input's, which may be another device of the communicator's kind).
pub(super) struct Plan<'a> {
    pub kind: CollectiveKind,
    pub send: Option<&'a Array>,
    pub count: usize,
    pub out_shape: Vec<usize>,
    pub dtype: DType,
    pub home: Device,
}

/// The device library's reduction for `op` (a mean is a sum, divided after).
pub(super) fn device_reduce(op: ReduceOp) -> collective::ReduceOp {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => collective::ReduceOp::Sum,
        ReduceOp::Prod => collective::ReduceOp::Prod,
        ReduceOp::Min => collective::ReduceOp::Min,
        ReduceOp::Max => collective::ReduceOp::Max,
    }
}

/// `x` as dense elements: itself when contiguous, else a copy on its device.
pub(super) fn dense(x: &Array) -> Result<Array> {
    Ok(if x.is_contiguous() { x.clone() } else { x.copy()? })
}

impl Communicator {
    /// The device communicator of this communicator, joined on first use.
    /// Every rank reaches the first use in the same collective (they
    /// agreed on it, its device kind included, in the metadata exchange).
    fn device_comm(&self, call: Call, seq: u64) -> Result<Rc<dyn DeviceComm>> {
        if let Some(comm) = self.device_comm.borrow().as_ref() {
            return Ok(Rc::clone(comm));
        }
        // Rank 0 makes the id; a failure travels in the same message, so
        // no rank waits for an id that never comes.
        let mut message = vec![0u8; ID_MESSAGE];
        if self.rank == 0 {
            let (status, body) = match collective::comm_id(self.device) {
                Ok(id) => (1, id),
                Err(e) => (2, e.to_string().into_bytes()),
            };
            let len = body.len().min(ID_MESSAGE - 5);
            message[0] = status;
            message[1..5].copy_from_slice(&(len as u32).to_le_bytes());
            message[5..5 + len].copy_from_slice(&body[..len]);
        }
        let (l, buf) = lease(message);
        let request = self.ctrl.process_at_rank(0).immediate_broadcast_into(StaticScope, buf);
        let done = self.wait(request, call, seq, "sending the device communicator's id")?;
        let message = l.reclaim(&done);
        let len = (u32::from_le_bytes([message[1], message[2], message[3], message[4]]) as usize).min(ID_MESSAGE - 5);
        let body = &message[5..5 + len];
        if message[0] != 1 {
            return Err(DistError::PeerFailed {
                op: call.name().into(),
                seq,
                rank: 0,
                message: format!(
                    "it could not make a communicator id for {}: {}",
                    self.device,
                    String::from_utf8_lossy(body)
                ),
            });
        }
        let init = CommInit {
            id: body,
            nranks: self.size,
            rank: self.rank,
            timeout: self.timeout.get(),
        };
        let comm: Rc<dyn DeviceComm> = Rc::from(collective::comm_init(self.device, &init)?);
        *self.device_comm.borrow_mut() = Some(Rc::clone(&comm));
        Ok(comm)
    }

    /// Runs `plan` on the device and returns what this rank gets, waiting
    /// at most the timeout; past it the device communicator is aborted and
    /// this communicator broken, as for MPI.
    pub(super) fn run_on_device(&self, call: Call, seq: u64, plan: Plan<'_>) -> Result<Array> {
        let comm = self.device_comm(call, seq)?;
        let out = anydev::empty(&plan.out_shape, (plan.dtype, self.device))?;
        let event = collective::enqueue(comm.as_ref(), plan.kind, plan.send, Some(&out), plan.count)?;
        if !poll_until(self.timeout.get(), || event.query().unwrap_or(true)) {
            // The library may still wait on a dead peer; abort makes it give
            // up. Nothing more can be done about a failure to abort.
            let _ = comm.abort();
            return Err(self.stalled(call, seq, "moving data through the device's collectives"));
        }
        if let Err(e) = event.synchronize() {
            // A failed collective leaves the device communicator between
            // messages: nothing later on it could be trusted.
            self.shared.broken.borrow_mut().get_or_insert_with(|| e.to_string());
            return Err(e.into());
        }
        if plan.home == self.device {
            Ok(out)
        } else {
            Ok(out.to_device(plan.home)?)
        }
    }
}
