//! One op on a simulated device, in two steps: [`prepare`] checks the call
//! when it is enqueued (refused and unsupported dtypes, the device's reach,
//! every operand against its buffer) and turns it into an [`ExecJob`] that
//! owns its operands; a stream's worker later [`ExecJob::run`]s it on the
//! shared host kernels.

use crate::memory::{self, SimBuffer, View};
use anydev_kernels::KernelError;
use anydev_ops::{DType, Op, TensorDType};
use anydev_plugin::{MemoryKind, PluginError, PluginTensor, Result};
use smallvec::SmallVec;

/// Where `device`'s kernels may read and write: its own memory, memory
/// every device reaches (managed, pinned and imported host memory), and
/// with peer access its peers' device memory too.
#[derive(Clone, Copy, Debug)]
pub struct Reach {
    pub device: usize,
    pub peer_access: bool,
}

impl Reach {
    pub fn check(&self, buffer: &SimBuffer) -> Result<()> {
        if buffer.kind() != MemoryKind::Device || buffer.device() == self.device || self.peer_access {
            return Ok(());
        }
        Err(PluginError::invalid_argument(format!(
            "sim:{} cannot reach memory of sim:{} (peer access is off); copy it over first",
            self.device,
            buffer.device()
        )))
    }
}

/// An op that owns everything it touches: operands as [`View`]s (which
/// keep their memory alive until the job is dropped), the op itself with
/// operands named by their index in `views`, and a reduction's axes.
pub struct ExecJob {
    op: Op<'static, usize>,
    axes: SmallVec<[usize; 4]>,
    views: SmallVec<[View; 4]>,
}

/// Checks `op` for `reach.device`, refusing `refused` dtypes anywhere in
/// it, and returns the job that runs it.
pub fn prepare(reach: &Reach, refused: &[DType], op: &Op<'_, PluginTensor<'_, SimBuffer>>) -> Result<ExecJob> {
    let dtypes = op.inputs().chain([op.output()]).map(|t| t.dtype());
    if let Some(dtype) = dtypes.into_iter().find(|d| refused.contains(d)) {
        return Err(PluginError::unimplemented(format!(
            "sim:{} refuses dtype {dtype} (ANYDEV_SIM_REFUSE_DTYPES)",
            reach.device
        )));
    }
    let (code, dtype) = (op.code(), op.support_dtype());
    if !anydev_kernels::supports(code, dtype) {
        return Err(PluginError::unimplemented(
            KernelError::Unsupported { op: code, dtype }.to_string(),
        ));
    }
    let mut views = SmallVec::new();
    let indexed = op.try_map(|t| {
        reach.check(t.buffer)?;
        views.push(View::new(t)?);
        Ok::<_, PluginError>(views.len() - 1)
    })?;
    let (op, axes) = detach(indexed);
    Ok(ExecJob { op, axes, views })
}

impl ExecJob {
    pub fn run(&self) -> Result<()> {
        let mut op: Op<'_, usize> = self.op.clone();
        if let Op::Reduce { axes, .. } = &mut op {
            *axes = &self.axes;
        }
        memory::execute(&op, &self.views).map_err(|e| match e {
            KernelError::Unsupported { .. } => PluginError::unimplemented(e.to_string()),
            KernelError::Invalid(message) => PluginError::invalid_argument(message),
        })
    }
}

/// The op without the caller's borrow: a reduction's axes move out (put
/// back by [`ExecJob::run`]); every other field is plain data.
fn detach(op: Op<'_, usize>) -> (Op<'static, usize>, SmallVec<[usize; 4]>) {
    let mut axes = SmallVec::new();
    let op = match op {
        Op::Reduce { op, x, axes: a, out } => {
            axes = SmallVec::from_slice(a);
            Op::Reduce { op, x, axes: &[], out }
        }
        Op::Unary { op, x, out } => Op::Unary { op, x, out },
        Op::Binary { op, lhs, rhs, out } => Op::Binary { op, lhs, rhs, out },
        Op::Cast { x, out } => Op::Cast { x, out },
        Op::Where { cond, x, y, out } => Op::Where { cond, x, y, out },
        Op::Scan { op, x, axis, out } => Op::Scan { op, x, axis, out },
        Op::Copy { x, out } => Op::Copy { x, out },
        Op::Fill { out, value } => Op::Fill { out, value },
        Op::Arange { out, start, step } => Op::Arange { out, start, step },
        Op::Random {
            out,
            dist,
            seed,
            counter,
        } => Op::Random {
            out,
            dist,
            seed,
            counter,
        },
        Op::Take { x, indices, axis, out } => Op::Take { x, indices, axis, out },
        Op::Matmul { a, b, out } => Op::Matmul { a, b, out },
        Op::Sort {
            x,
            axis,
            descending,
            out,
        } => Op::Sort {
            x,
            axis,
            descending,
            out,
        },
        Op::Argsort {
            x,
            axis,
            descending,
            out,
        } => Op::Argsort {
            x,
            axis,
            descending,
            out,
        },
        Op::SearchSorted {
            sorted,
            values,
            right,
            out,
        } => Op::SearchSorted {
            sorted,
            values,
            right,
            out,
        },
        Op::Nonzero { x, out } => Op::Nonzero { x, out },
    };
    (op, axes)
}
