//! Running one op on a simulated device: check every operand against its
//! buffer and the device, then call the shared host kernels on it.

use crate::memory::SimBuffer;
use anydev_kernels::{HostTensor, KernelError};
use anydev_ops::{DType, Op, TensorDType};
use anydev_plugin::{PluginError, PluginTensor, Result};

/// Where `device`'s kernels may read and write: its own memory, and with
/// peer access its peers' too.
pub struct Reach {
    pub device: usize,
    pub peer_access: bool,
}

impl Reach {
    /// The host view of an operand after checking that it lies inside its
    /// buffer and that the device reaches that buffer.
    fn host<'a>(&self, t: &PluginTensor<'a, SimBuffer>) -> Result<HostTensor<'a>> {
        let buffer = t.buffer;
        if buffer.device() != self.device && !self.peer_access {
            return Err(PluginError::invalid_argument(format!(
                "sim:{} cannot reach memory of sim:{} (peer access is off); copy it over first",
                self.device,
                buffer.device()
            )));
        }
        let (start, end) = t.byte_span().ok_or_else(|| {
            PluginError::invalid_argument(format!("operand of shape {:?} has a malformed layout", t.shape))
        })?;
        buffer.check("execute", start, end - start)?;
        buffer.check("execute", t.byte_offset, 0)?;
        Ok(HostTensor::new(buffer.at(t.byte_offset), t.dtype, t.shape, t.strides))
    }
}

/// Runs `op` on `reach.device`, refusing `refused` dtypes anywhere in it.
pub fn run(reach: &Reach, refused: &[DType], op: &Op<'_, PluginTensor<'_, SimBuffer>>) -> Result<()> {
    let dtypes = op.inputs().chain([op.output()]).map(|t| t.dtype());
    if let Some(dtype) = dtypes.into_iter().find(|d| refused.contains(d)) {
        return Err(PluginError::unimplemented(format!(
            "sim:{} refuses dtype {dtype} (ANYDEV_SIM_REFUSE_DTYPES)",
            reach.device
        )));
    }
    let host = op.try_map(|t| reach.host(t))?;
    // SAFETY: every operand points into a live buffer of this plugin (the
    // handles are borrowed for the call) and was checked above to lie
    // inside it; the host checked that the output overlaps no input.
    unsafe { anydev_kernels::execute(&host) }.map_err(|e| match e {
        KernelError::Unsupported { .. } => PluginError::unimplemented(e.to_string()),
        KernelError::Invalid(message) => PluginError::invalid_argument(message),
    })
}
