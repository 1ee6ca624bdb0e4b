//! NCCL communicators: the CUDA devices' own collectives.
//!
//! Communicators are NCCL's non-blocking kind, so that joining, and a
//! collective waiting for a peer that never comes, end after the
//! communicator's timeout with an abort instead of hanging the process.
//! NCCL reduces in the dtype itself, hop by hop along its ring or tree:
//! every rank gets the same bits, but f16 and bf16 sums of more than two
//! ranks round more than once (the plugin ABI's rule of one rounding from
//! f32 does not hold here), as they do in PyTorch's NCCL backend.

pub mod api;

use crate::device::{Core, CudaDevice};
use crate::driver::{Raw, NAME};
use crate::memory::CudaAllocation;
use crate::stream::CudaStream;
use anydev_core::collective::{check_call, CollectiveCall, CollectiveKind, CommInit, DeviceComm, ReduceOp, Region};
use anydev_core::stream::Stream;
use anydev_core::{DType, Device, Error, Result};
use api::{dtype, redop, Config, Nccl, NcclResult, RawComm, UniqueId, IN_PROGRESS, SUCCESS, UNIQUE_ID_BYTES};
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the `cuda.collectives` capability and `collectives()` report.
pub fn describe_availability() -> std::result::Result<String, String> {
    api::nccl().map(|n| format!("NCCL {}", api::version_string(n.version)))
}

fn unavailable(reason: String) -> Error {
    Error::backend(NAME, format!("NCCL is unavailable: {reason}"))
}

/// A new communicator's id (`ncclGetUniqueId`).
pub fn new_id() -> Result<Vec<u8>> {
    let nccl = api::nccl().map_err(unavailable)?;
    let mut id = UniqueId {
        internal: [0; UNIQUE_ID_BYTES],
    };
    // SAFETY: a valid out-pointer of NCCL's id type.
    let r = unsafe { (nccl.get_unique_id)(&mut id) };
    if r != SUCCESS {
        return Err(Error::backend(
            NAME,
            format!("ncclGetUniqueId failed: {}", nccl.describe(r, std::ptr::null_mut())),
        ));
    }
    Ok(id.internal.to_vec())
}

/// How a wait on a non-blocking communicator ended badly.
enum Unsettled {
    Failed(NcclResult),
    TimedOut,
    Aborted,
}

/// One rank's NCCL communicator on one device; destroyed when dropped.
pub struct NcclComm {
    nccl: &'static Nccl,
    core: Arc<Core>,
    device: Device,
    rank: usize,
    size: usize,
    timeout: Duration,
    /// The handle, `None` once aborted (NCCL frees it then). Held for each
    /// NCCL call, so an abort from another thread never frees it under one.
    raw: Mutex<Option<Raw<RawComm>>>,
    /// Held for a whole collective, until NCCL has taken it: a
    /// non-blocking communicator takes no new call while one is in progress.
    issuing: Mutex<()>,
}

/// Joins communicator `init.id` as `init.rank` of `init.nranks` on `dev`.
pub fn join(dev: &CudaDevice, init: &CommInit<'_>) -> Result<NcclComm> {
    let op = "comm_init";
    let nccl = api::nccl().map_err(unavailable)?;
    let id: [u8; UNIQUE_ID_BYTES] = init.id.try_into().map_err(|_| {
        Error::invalid_argument(
            op,
            format!(
                "an NCCL communicator id has {UNIQUE_ID_BYTES} bytes, got {}",
                init.id.len()
            ),
        )
    })?;
    let (Ok(nranks), Ok(rank)) = (c_int::try_from(init.nranks), c_int::try_from(init.rank)) else {
        return Err(Error::invalid_argument(op, "more ranks than NCCL counts"));
    };
    if nranks <= 0 || rank >= nranks {
        return Err(Error::invalid_argument(
            op,
            format!("rank {rank} of a communicator of {nranks} ranks"),
        ));
    }
    dev.bind()?;
    let mut raw: RawComm = std::ptr::null_mut();
    let mut config = Config::non_blocking();
    // SAFETY: valid out-pointer and config; NCCL uses the current device,
    // whose primary context is bound above.
    let r = unsafe { (nccl.comm_init_rank_config)(&mut raw, nranks, UniqueId { internal: id }, rank, &mut config) };
    let comm = NcclComm {
        nccl,
        core: Arc::clone(&dev.core),
        device: dev.id,
        rank: init.rank,
        size: init.nranks,
        timeout: init.timeout,
        raw: Mutex::new((!raw.is_null()).then_some(Raw(raw))),
        issuing: Mutex::new(()),
    };
    if r != SUCCESS && r != IN_PROGRESS {
        let message = nccl.describe(r, raw);
        let _ = comm.abort();
        return Err(Error::backend(
            NAME,
            format!("ncclCommInitRankConfig failed: {message}"),
        ));
    }
    match comm.settle(Instant::now() + init.timeout) {
        Ok(()) => Ok(comm),
        Err(why) => {
            let message = match why {
                Unsettled::TimedOut => format!(
                    "not all {nranks} ranks joined the NCCL communicator within {:?}",
                    init.timeout
                ),
                Unsettled::Failed(r) => format!("joining the NCCL communicator failed: {}", nccl.describe(r, raw)),
                Unsettled::Aborted => "the NCCL communicator was aborted while joining".into(),
            };
            let _ = comm.abort();
            Err(Error::backend(NAME, message))
        }
    }
}

/// NCCL's dtype, the number of its elements per element of `dtype`, and
/// NCCL's operation, for reducing `dtype` with `op`; or why NCCL cannot.
pub fn reduction(dtype: DType, op: ReduceOp) -> std::result::Result<(c_int, usize, c_int), String> {
    let nccl_op = match op {
        ReduceOp::Sum => redop::SUM,
        ReduceOp::Prod => redop::PROD,
        ReduceOp::Min => redop::MIN,
        ReduceOp::Max => redop::MAX,
    };
    Ok(match dtype {
        // 0/1 bytes: or is max, and is min.
        DType::Bool => (
            dtype::UINT8,
            1,
            match op {
                ReduceOp::Sum | ReduceOp::Max => redop::MAX,
                ReduceOp::Prod | ReduceOp::Min => redop::MIN,
            },
        ),
        DType::I8 => (dtype::INT8, 1, nccl_op),
        DType::U8 => (dtype::UINT8, 1, nccl_op),
        DType::I32 => (dtype::INT32, 1, nccl_op),
        DType::U32 => (dtype::UINT32, 1, nccl_op),
        DType::I64 => (dtype::INT64, 1, nccl_op),
        DType::U64 => (dtype::UINT64, 1, nccl_op),
        DType::F16 => (dtype::FLOAT16, 1, nccl_op),
        DType::BF16 => (dtype::BFLOAT16, 1, nccl_op),
        DType::F32 => (dtype::FLOAT32, 1, nccl_op),
        DType::F64 => (dtype::FLOAT64, 1, nccl_op),
        DType::I16 | DType::U16 => return Err("NCCL has no 16-bit integer type".into()),
        // A complex sum is the sum of the parts; NCCL would multiply and
        // compare the parts one by one, which is not complex arithmetic.
        DType::C64 | DType::C128 if op == ReduceOp::Sum => {
            let part = if dtype == DType::C64 {
                dtype::FLOAT32
            } else {
                dtype::FLOAT64
            };
            (part, 2, redop::SUM)
        }
        DType::C64 | DType::C128 => {
            return Err(format!(
                "NCCL reduces the real and imaginary parts separately, which is not a complex {op:?}"
            ))
        }
    })
}

/// The device address of `region`.
fn address(region: Option<Region<'_>>) -> Result<*mut c_void> {
    let Some(region) = region else {
        return Ok(std::ptr::null_mut());
    };
    let alloc = region
        .buffer
        .downcast::<CudaAllocation>()
        .ok_or_else(|| crate::memory::foreign("collective", region.buffer))?;
    Ok((alloc.ptr as usize + region.offset) as *mut c_void)
}

impl NcclComm {
    fn handle(&self) -> MutexGuard<'_, Option<Raw<RawComm>>> {
        self.raw.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one NCCL call on the live handle.
    fn call(&self, f: impl FnOnce(RawComm) -> NcclResult) -> std::result::Result<(), Unsettled> {
        let handle = self.handle();
        let raw = handle.ok_or(Unsettled::Aborted)?.0;
        match f(raw) {
            SUCCESS | IN_PROGRESS => Ok(()),
            r => Err(Unsettled::Failed(r)),
        }
    }

    /// Waits until NCCL has finished the call in progress, or `deadline`.
    fn settle(&self, deadline: Instant) -> std::result::Result<(), Unsettled> {
        loop {
            let mut state = SUCCESS;
            self.call(|raw| {
                // SAFETY: a live communicator and a valid out-pointer.
                let r = unsafe { (self.nccl.comm_get_async_error)(raw, &mut state) };
                if r == SUCCESS {
                    state
                } else {
                    r
                }
            })?;
            if state == SUCCESS {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Unsettled::TimedOut);
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// Issues `calls` (one collective, or a group of point-to-point calls)
    /// and waits until NCCL has taken them; a timeout aborts.
    fn issue(&self, what: &str, calls: impl FnOnce(RawComm) -> NcclResult) -> Result<()> {
        let _issuing = self.issuing.lock().unwrap_or_else(|e| e.into_inner());
        let outcome = self
            .call(calls)
            .and_then(|()| self.settle(Instant::now() + self.timeout));
        match outcome {
            Ok(()) => Ok(()),
            Err(Unsettled::Aborted) => Err(Error::backend(
                NAME,
                format!("{what}: the NCCL communicator was aborted"),
            )),
            Err(Unsettled::Failed(r)) => {
                let raw = self.handle().map_or(std::ptr::null_mut(), |r| r.0);
                Err(Error::backend(NAME, format!("{what}: {}", self.nccl.describe(r, raw))))
            }
            Err(Unsettled::TimedOut) => {
                let _ = self.abort();
                Err(Error::backend(
                    NAME,
                    format!(
                        "{what}: NCCL did not take the call within {:?} (a peer rank is missing or stuck); \
                         the communicator was aborted",
                        self.timeout
                    ),
                ))
            }
        }
    }

    fn unsupported(&self, call: &CollectiveCall<'_>, reason: String) -> Error {
        Error::FeatureUnsupported {
            feature: format!("{} of {} through NCCL", call.kind.name(), call.dtype),
            device: self.device,
            reason,
        }
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        if let Some(raw) = self.handle().take() {
            if crate::driver::bind(self.core.ctx.0).is_ok() {
                // SAFETY: a live communicator, destroyed once; nothing else
                // holds it (this is the last reference).
                unsafe { (self.nccl.comm_destroy)(raw.0) };
            }
        }
    }
}

impl DeviceComm for NcclComm {
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
        let what = call.kind.name();
        let s = stream
            .downcast::<CudaStream>()
            .filter(|s| Arc::ptr_eq(&s.core, &self.core))
            .ok_or_else(|| Error::backend(NAME, format!("{stream:?} is not a stream of {}", self.device)))?;
        let nccl_reduction = |op| reduction(call.dtype, op).map_err(|reason| self.unsupported(call, reason));
        if let CollectiveKind::AllReduce(op) | CollectiveKind::ReduceScatter(op) = call.kind {
            nccl_reduction(op)?;
        }
        let bytes = call.count * call.dtype.size();
        if bytes == 0 {
            // Nothing moves (NCCL may refuse the empty buffers' null addresses).
            return Ok(());
        }
        let send = address(call.send)?;
        let recv = address(call.recv)?;
        let peer = |p: usize| p as c_int;
        let nccl = self.nccl;
        crate::stream::ordered(s, |cu| match call.kind {
            CollectiveKind::AllReduce(op) => {
                let (dt, parts, nop) = nccl_reduction(op)?;
                // SAFETY: `check_call` checked both ranges against their
                // buffers, which are live device memory of this device.
                self.issue(what, |c| unsafe {
                    (nccl.all_reduce)(send, recv, call.count * parts, dt, nop, c, cu)
                })
            }
            CollectiveKind::ReduceScatter(op) => {
                let (dt, parts, nop) = nccl_reduction(op)?;
                // SAFETY: as above.
                self.issue(what, |c| unsafe {
                    (nccl.reduce_scatter)(send, recv, call.count * parts, dt, nop, c, cu)
                })
            }
            CollectiveKind::Broadcast { root } => {
                // Only the root's send buffer is read; NCCL takes the
                // receive buffer in its place elsewhere.
                let from = if send.is_null() { recv } else { send };
                // SAFETY: as above.
                self.issue(what, |c| unsafe {
                    (nccl.broadcast)(from, recv, bytes, dtype::UINT8, peer(root), c, cu)
                })
            }
            CollectiveKind::AllGather => {
                // SAFETY: as above.
                self.issue(what, |c| unsafe {
                    (nccl.all_gather)(send, recv, bytes, dtype::UINT8, c, cu)
                })
            }
            CollectiveKind::AllToAll => self.issue(what, |c| {
                // SAFETY: as above: block `p` of each side lies inside it.
                unsafe {
                    let mut r = (nccl.group_start)();
                    for p in 0..self.size {
                        if r != SUCCESS && r != IN_PROGRESS {
                            break;
                        }
                        let at = p * bytes;
                        r = (nccl.send)(send.byte_add(at), bytes, dtype::UINT8, peer(p), c, cu);
                        if r == SUCCESS || r == IN_PROGRESS {
                            r = (nccl.recv)(recv.byte_add(at), bytes, dtype::UINT8, peer(p), c, cu);
                        }
                    }
                    // A group is always closed, also after a failed call.
                    let end = (nccl.group_end)();
                    if r == SUCCESS || r == IN_PROGRESS {
                        end
                    } else {
                        r
                    }
                }
            }),
            CollectiveKind::Send { peer: p } => {
                // SAFETY: as above.
                self.issue(what, |c| unsafe {
                    (nccl.send)(send, bytes, dtype::UINT8, peer(p), c, cu)
                })
            }
            CollectiveKind::Recv { peer: p } => {
                // SAFETY: as above.
                self.issue(what, |c| unsafe {
                    (nccl.recv)(recv, bytes, dtype::UINT8, peer(p), c, cu)
                })
            }
        })
    }

    fn abort(&self) -> Result<()> {
        if let Some(raw) = self.handle().take() {
            // SAFETY: a live communicator; taking it out of the lock first
            // means no other call can use it during or after the abort.
            let r = unsafe { (self.nccl.comm_abort)(raw.0) };
            if r != SUCCESS {
                return Err(Error::backend(
                    NAME,
                    format!("ncclCommAbort failed: {}", self.nccl.describe(r, std::ptr::null_mut())),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_map_onto_nccl_types_or_say_why_not() {
        assert_eq!(
            reduction(DType::F32, ReduceOp::Sum),
            Ok((dtype::FLOAT32, 1, redop::SUM))
        );
        assert_eq!(
            reduction(DType::BF16, ReduceOp::Max),
            Ok((dtype::BFLOAT16, 1, redop::MAX))
        );
        // or / and of 0/1 bytes
        assert_eq!(reduction(DType::Bool, ReduceOp::Sum), Ok((dtype::UINT8, 1, redop::MAX)));
        assert_eq!(
            reduction(DType::Bool, ReduceOp::Prod),
            Ok((dtype::UINT8, 1, redop::MIN))
        );
        // complex sums are sums of twice as many parts
        assert_eq!(
            reduction(DType::C128, ReduceOp::Sum),
            Ok((dtype::FLOAT64, 2, redop::SUM))
        );
        assert!(reduction(DType::C64, ReduceOp::Prod)
            .unwrap_err()
            .contains("not a complex Prod"));
        assert!(reduction(DType::I16, ReduceOp::Sum).unwrap_err().contains("16-bit"));
        for dtype in DType::ALL {
            for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max] {
                if let Ok((_, parts, _)) = reduction(dtype, op) {
                    assert!(parts == 1 || dtype.is_complex(), "{dtype} {op:?}");
                }
            }
        }
    }

    #[test]
    fn the_config_is_nccls_2_14_prefix() {
        // size_t size; unsigned magic, version; int blocking
        assert_eq!(std::mem::size_of::<Config>(), 24);
        assert_eq!(api::version_string(22703), "2.27.3");
    }
}
