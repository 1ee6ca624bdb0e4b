//! Extension ops on a simulated device (ABI 1.4): the quantization
//! library's ops (`quant::*`) and the built-in `linalg` factorizations and
//! `fft` transforms (`linalg::*`, `fft::*`), each run by its library's own
//! host code linked without the runtime (`anydev_quant::call`,
//! `anydev_numerics`), so the plugin side of extension ops is exercised
//! with real kernels and the simulator gives the bits `cpu` gives.
//!
//! Like [`crate::exec`], a call is checked when it is enqueued and turned
//! into a job that owns its operands; a stream's worker runs it later.

use crate::config::SimConfig;
use crate::exec::Reach;
use crate::memory::{self, SimBuffer, View};
use anydev_ops::AttrValue;
use anydev_ops::{AttrLookup, HostOperand, HostOperandMut};
use anydev_plugin::codec::{ExtensionCall, TensorSpec};
use anydev_plugin::{PluginError, PluginTensor, Result};

/// Every op the simulator implements: the quantization library's, then
/// the factorizations and transforms.
pub fn implemented() -> impl Iterator<Item = &'static str> {
    anydev_quant::op::ALL.into_iter().chain(anydev_numerics::op::all())
}

/// Runs `op` (one of [`implemented`]) by its library's host code.
fn run_op(
    op: &str,
    ins: &[HostOperand<'_>],
    outs: &mut [HostOperandMut<'_>],
    attr: &AttrLookup<'_>,
) -> std::result::Result<(), String> {
    if anydev_quant::op::ALL.contains(&op) {
        anydev_quant::call::run(op, ins, outs, attr).map_err(|e| e.to_string())
    } else {
        anydev_numerics::run(op, ins, outs, attr).map_err(|e| e.reason)
    }
}

/// Whether a call of `op` can fail on the values it reads (a singular or
/// indefinite matrix, an eigensolver that does not converge): the
/// factorizations. Their calls wait for their job, so that such a failure
/// is the call's error as on `cpu` (PyTorch waits for the same reason on
/// CUDA), not a later synchronization's.
pub fn fails_on_data(op: &str) -> bool {
    anydev_numerics::op::linalg::ALL.contains(&op)
}

/// The names of the ops the simulated devices run, less the ones `config`
/// refuses.
pub fn ops(config: &SimConfig) -> Vec<String> {
    implemented()
        .filter(|&op| !config.refused_extensions.iter().any(|r| r == op))
        .map(str::to_owned)
        .collect()
}

fn listed(config: &SimConfig, op: &str) -> bool {
    implemented().any(|o| o == op) && !config.refused_extensions.iter().any(|r| r == op)
}

/// Whether the devices run `call`: a listed op none of whose operands has
/// a refused dtype (the shape rule, run by the host, has checked the rest).
pub fn supported(config: &SimConfig, call: &ExtensionCall<'_, TensorSpec<'_>>) -> bool {
    listed(config, call.op)
        && !call
            .inputs
            .iter()
            .chain(&call.outputs)
            .any(|t| config.refused.contains(&t.dtype))
}

/// One extension call that owns what it touches.
pub struct ExtensionJob {
    op: String,
    inputs: Vec<View>,
    outputs: Vec<View>,
    attrs: Vec<(String, AttrValue)>,
}

/// Checks `call` for the device of `reach` and returns the job that runs it.
pub fn prepare(
    reach: &Reach,
    config: &SimConfig,
    call: &ExtensionCall<'_, PluginTensor<'_, SimBuffer>>,
) -> Result<ExtensionJob> {
    if !listed(config, call.op) {
        return Err(PluginError::unimplemented(format!(
            "sim:{} does not implement the extension op {}",
            reach.device, call.op
        )));
    }
    let view = |t: &PluginTensor<'_, SimBuffer>| {
        if config.refused.contains(&t.dtype) {
            return Err(PluginError::unimplemented(format!(
                "sim:{} refuses dtype {} (ANYDEV_SIM_REFUSE_DTYPES)",
                reach.device, t.dtype
            )));
        }
        reach.check(t.buffer)?;
        View::new(t)
    };
    Ok(ExtensionJob {
        op: call.op.to_owned(),
        inputs: call.inputs.iter().map(view).collect::<Result<_>>()?,
        outputs: call.outputs.iter().map(view).collect::<Result<_>>()?,
        attrs: call.attrs.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect(),
    })
}

impl ExtensionJob {
    pub fn op(&self) -> &str {
        &self.op
    }

    pub fn run(&self) -> Result<()> {
        let attr = |name: &str| self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        memory::with_bytes(&self.inputs, &self.outputs, |ins, outs| {
            let ins: Vec<HostOperand<'_>> = self
                .inputs
                .iter()
                .zip(ins)
                .map(|(v, bytes)| HostOperand {
                    dtype: v.dtype(),
                    shape: v.shape(),
                    bytes,
                })
                .collect();
            let mut outs: Vec<HostOperandMut<'_>> = self
                .outputs
                .iter()
                .zip(outs.iter_mut())
                .map(|(v, bytes)| HostOperandMut {
                    dtype: v.dtype(),
                    shape: v.shape(),
                    bytes,
                })
                .collect();
            run_op(&self.op, &ins, &mut outs, &attr)
        })?
        .map_err(|e| PluginError::invalid_argument(format!("{}: {e}", self.op)))
    }
}
