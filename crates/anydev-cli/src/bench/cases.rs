//! The fixed set of benchmarked ops and the work each call does.
//!
//! Every case is an f32 op through the public array API, output allocation
//! included, as user code calls it. The work per call (bytes read plus
//! bytes written, or floating-point operations) turns a time into GB/s or
//! GFLOP/s; bytes are counted the same way for the memcpy baseline, so the
//! ratio of the two says how close an op comes to the device's own copy
//! bandwidth.

use anydev::{Array, DType, Device, Result};

/// One benchmarked op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Device-to-device copy of one buffer with `Backend::copy_between`:
    /// the bandwidth baseline.
    Memcpy,
    Add,
    Multiply,
    Divide,
    Exp,
    /// Sum of all elements to a 0-d array.
    Sum,
    /// `to_device` from `cpu:0` onto the benchmarked device.
    ToDeviceFromCpu,
    /// `to_device` from the benchmarked device to `cpu:0`.
    ToDeviceToCpu,
    /// Square `n x n` times `n x n`.
    Matmul,
}

impl Op {
    /// The ops timed at every elementwise size, in table order.
    pub const ELEMENTWISE: [Op; 5] = [Op::Add, Op::Multiply, Op::Divide, Op::Exp, Op::Sum];
    /// Transfers, timed on every device but the host itself.
    pub const TRANSFERS: [Op; 2] = [Op::ToDeviceFromCpu, Op::ToDeviceToCpu];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Memcpy => "memcpy",
            Op::Add => "add",
            Op::Multiply => "multiply",
            Op::Divide => "divide",
            Op::Exp => "exp",
            Op::Sum => "sum",
            Op::ToDeviceFromCpu => "to_device_from_cpu",
            Op::ToDeviceToCpu => "to_device_to_cpu",
            Op::Matmul => "matmul",
        }
    }

    /// Elements in the largest single buffer the case allocates, for the
    /// device's `max_allocation_bytes` check. `size` is the element count,
    /// or `n` of an `n x n` matmul.
    pub fn largest_buffer(self, size: usize) -> usize {
        match self {
            Op::Matmul => size * size,
            _ => size,
        }
    }

    /// Bytes read plus bytes written per call (f32), for bandwidth-bound ops.
    pub fn bytes(self, size: usize) -> Option<f64> {
        let arrays = match self {
            Op::Add | Op::Multiply | Op::Divide => 3.0,
            Op::Exp | Op::Memcpy | Op::ToDeviceFromCpu | Op::ToDeviceToCpu => 2.0,
            Op::Sum => 1.0,
            Op::Matmul => return None,
        };
        Some(arrays * size as f64 * DType::F32.size() as f64)
    }

    /// Work per call in the op's own unit (bytes or flops), for scaling a
    /// time measured at one size to another.
    pub fn work(self, size: usize) -> f64 {
        self.bytes(size).or(self.flops(size)).unwrap_or(1.0)
    }

    /// Floating-point operations per call, for compute-bound ops.
    pub fn flops(self, size: usize) -> Option<f64> {
        (self == Op::Matmul).then(|| 2.0 * (size as f64).powi(3))
    }
}

/// The inputs one size needs on one device, created once and shared by the
/// ops at that size.
pub struct Inputs {
    x: Array,
    y: Array,
    /// `x` on the host, for transfers onto the device (when it is not the host).
    host_x: Option<Array>,
    device: Device,
    host: Device,
}

impl Inputs {
    /// Two vectors of `n` values in [0.5, 1.5) (no overflow in `exp`, no
    /// division by zero), or two `n x n` matrices for matmul. They are drawn
    /// on the host and copied over, so a device that has no random numbers
    /// (a plugin with a few ops) is measured all the same.
    pub fn new(device: Device, shape: &[usize], host: Device) -> Result<Inputs> {
        let draw = || anydev::random_uniform(shape, 0.5, 1.5, (DType::F32, host));
        let (host_x, host_y) = (draw()?, draw()?);
        if device == host {
            return Ok(Inputs {
                x: host_x,
                y: host_y,
                host_x: None,
                device,
                host,
            });
        }
        Ok(Inputs {
            x: host_x.to_device(device)?,
            y: host_y.to_device(device)?,
            host_x: Some(host_x),
            device,
            host,
        })
    }

    /// Runs `op` once; the result is dropped (after the caller's
    /// synchronisation the device has produced it).
    pub fn call(&self, op: Op) -> Result<()> {
        let (x, y) = (&self.x, &self.y);
        match op {
            Op::Add => x.add(y).map(drop),
            Op::Multiply => x.multiply(y).map(drop),
            Op::Divide => x.divide(y).map(drop),
            Op::Exp => x.exp().map(drop),
            Op::Sum => x.sum(anydev::ALL, false).map(drop),
            Op::Matmul => x.matmul(y).map(drop),
            Op::ToDeviceToCpu => x.to_device(self.host).map(drop),
            Op::ToDeviceFromCpu => match &self.host_x {
                Some(h) => h.to_device(self.device).map(drop),
                None => Err(anydev::Error::invalid_argument(op.name(), "the device is the host")),
            },
            Op::Memcpy => Err(anydev::Error::invalid_argument(
                op.name(),
                "runs on raw buffers, see `Baseline`",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_per_call_counts_every_array_touched() {
        assert_eq!(Op::Add.bytes(10), Some(120.0));
        assert_eq!(Op::Exp.bytes(10), Some(80.0));
        assert_eq!(Op::Sum.bytes(10), Some(40.0));
        assert_eq!(Op::Matmul.bytes(10), None);
        assert_eq!(Op::Matmul.flops(10), Some(2000.0));
        assert_eq!(Op::Matmul.largest_buffer(10), 100);
    }
}
