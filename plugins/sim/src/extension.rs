//! Extension ops on a simulated device (ABI 1.4): the quantization
//! library's ops (`quant::*`), run by that library's own host code
//! (`anydev_quant::call`, linked without the runtime), so the plugin side
//! of extension ops is exercised with real kernels and the library's
//! conformance cases.
//!
//! Like [`crate::exec`], a call is checked when it is enqueued and turned
//! into a job that owns its operands; a stream's worker runs it later.

use crate::config::SimConfig;
use crate::exec::Reach;
use crate::memory::{self, SimBuffer, View};
use anydev_ops::AttrValue;
use anydev_plugin::codec::{ExtensionCall, TensorSpec};
use anydev_plugin::{PluginError, PluginTensor, Result};
use anydev_quant::call::{self, Operand, OperandMut};

/// The names of the ops the simulated devices run: the library's, less
/// the ones `config` refuses.
pub fn ops(config: &SimConfig) -> Vec<String> {
    anydev_quant::op::ALL
        .iter()
        .filter(|&&op| !config.refused_extensions.iter().any(|r| r == op))
        .map(|&op| op.to_owned())
        .collect()
}

fn listed(config: &SimConfig, op: &str) -> bool {
    anydev_quant::op::ALL.contains(&op) && !config.refused_extensions.iter().any(|r| r == op)
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
    pub fn run(&self) -> Result<()> {
        let attr = |name: &str| self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        memory::with_bytes(&self.inputs, &self.outputs, |ins, outs| {
            let ins: Vec<Operand<'_>> = self
                .inputs
                .iter()
                .zip(ins)
                .map(|(v, bytes)| Operand {
                    dtype: v.dtype(),
                    shape: v.shape(),
                    bytes,
                })
                .collect();
            let mut outs: Vec<OperandMut<'_>> = self
                .outputs
                .iter()
                .zip(outs.iter_mut())
                .map(|(v, bytes)| OperandMut {
                    dtype: v.dtype(),
                    shape: v.shape(),
                    bytes,
                })
                .collect();
            call::run(&self.op, &ins, &mut outs, &attr)
        })?
        .map_err(|e| PluginError::invalid_argument(format!("{}: {e}", self.op)))
    }
}
