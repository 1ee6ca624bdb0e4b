use crate::{DType, Device};
use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The one error type of anydev. Every variant says what happened and
/// what to do about it; bad input, missing hardware, broken plugins and
/// out-of-memory all end here rather than in a panic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid device {input:?}: {reason}; expected the form kind:index, such as cpu:0 or cuda:1")]
    InvalidDevice { input: String, reason: &'static str },

    #[error(
        "device {device} is not available: {reason}; available devices: {}",
        DeviceList(available)
    )]
    DeviceUnavailable {
        device: String,
        reason: String,
        available: Vec<Device>,
    },

    #[error(
        "{op}: arrays are on different devices ({}); move them to one device first with to_device",
        DeviceList(devices)
    )]
    DeviceMismatch { op: String, devices: Vec<Device> },

    #[error("{op} is not supported for dtype {dtype} on {device}")]
    Unsupported { op: String, dtype: DType, device: Device },

    #[error("{device} does not support {feature}: {reason}")]
    FeatureUnsupported {
        feature: String,
        device: Device,
        reason: String,
    },

    #[error("device {device} does not support dtype {dtype} (see its \"dtypes\" capability); use a supported dtype or another device")]
    UnsupportedDType { dtype: DType, device: Device },

    #[error("out of memory on {device}: could not allocate {requested} bytes ({in_use} bytes in use{}); free arrays or use smaller ones", limit.map(|l| format!(", limit {l} bytes")).unwrap_or_default())]
    OutOfMemory {
        device: Device,
        requested: usize,
        in_use: usize,
        limit: Option<usize>,
    },

    #[error("{op}: shapes {} do not match: {reason}", ShapeList(shapes))]
    ShapeMismatch {
        op: String,
        shapes: Vec<Vec<usize>>,
        reason: String,
    },

    #[error("{op}: axis {axis} is out of range for an array of {ndim} dimensions ({})", ValidAxes(*ndim))]
    InvalidAxis { op: String, axis: isize, ndim: usize },

    #[error("{op}: index {index} is out of bounds for an axis of length {len}")]
    IndexOutOfBounds { op: String, index: i128, len: usize },

    #[error("{op}: {message}")]
    InvalidArgument { op: String, message: String },

    #[error("{op}: {dtype} is not a valid dtype here: {reason}")]
    InvalidDType { op: String, dtype: DType, reason: String },

    #[error("backend {backend}: {message}")]
    Backend { backend: String, message: String },

    #[error("plugin {name} ({path}): {message}")]
    Plugin {
        name: String,
        path: String,
        message: String,
    },

    #[error(
        "{op} has no kernel for {device} (kernels exist for: {}); register one for its kind, or opt in to the host fallback",
        if available.is_empty() { "none".to_owned() } else { available.join(", ") }
    )]
    NoKernel {
        op: String,
        device: Device,
        available: Vec<String>,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid_argument(op: impl Into<String>, message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            op: op.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Backend`].
    pub fn backend(backend: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Backend {
            backend: backend.into(),
            message: message.into(),
        }
    }
}

struct DeviceList<'a>(&'a [Device]);

impl fmt::Display for DeviceList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

struct ShapeList<'a>(&'a [Vec<usize>]);

impl fmt::Display for ShapeList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" and ")?;
            }
            write!(f, "{s:?}")?;
        }
        Ok(())
    }
}

/// The axes an array of `ndim` dimensions has, for [`Error::InvalidAxis`].
struct ValidAxes(usize);

impl fmt::Display for ValidAxes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("a 0-d array has no axes"),
            n => write!(f, "valid: {} to {}", -(n as isize), n - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_mismatch_names_the_op_the_devices_and_the_fix() {
        let err = Error::DeviceMismatch {
            op: "add".into(),
            devices: vec!["sim:0".parse().unwrap(), "sim:1".parse().unwrap()],
        };
        let text = err.to_string();
        for needle in ["add", "sim:0", "sim:1", "to_device"] {
            assert!(text.contains(needle), "{text}");
        }
    }

    #[test]
    fn axis_error_states_the_valid_range() {
        let err = Error::InvalidAxis {
            op: "sum".into(),
            axis: 3,
            ndim: 2,
        };
        assert!(err.to_string().contains("-2 to 1"), "{err}");
        let zero_d = Error::InvalidAxis {
            op: "sort".into(),
            axis: -1,
            ndim: 0,
        };
        assert!(zero_d.to_string().ends_with("(a 0-d array has no axes)"), "{zero_d}");
    }
}
