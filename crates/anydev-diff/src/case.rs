//! The wire format: a case in, an outcome out, one JSON object per line.

use crate::hex;
use anydev::{Array, Error};
use serde::{Deserialize, Serialize};

/// One op call on one device.
#[derive(Debug, Deserialize)]
pub struct Case {
    /// Echoed in the outcome.
    pub id: u64,
    /// `cpu:0`, `sim:0`, `wgpu:0`, ...
    pub device: String,
    /// The anydev function's name (`add`, `astype`, `cumulative_sum`, ...).
    pub op: String,
    #[serde(default)]
    pub args: Vec<Input>,
    #[serde(default)]
    pub kw: Kwargs,
}

/// An input array, uploaded to the case's device.
#[derive(Debug, Deserialize)]
pub struct Input {
    pub dtype: String,
    pub shape: Vec<usize>,
    /// Row-major little-endian bytes.
    pub hex: String,
}

/// Keyword arguments; each op reads the ones it takes.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Kwargs {
    /// Reduction axes; absent for all of them.
    pub axes: Option<Vec<isize>>,
    /// The one axis of scans, sorts, `take`, `repeat`, `argmin`.
    pub axis: Option<isize>,
    pub keepdims: bool,
    pub correction: f64,
    pub include_initial: bool,
    pub descending: bool,
    /// `searchsorted`: `right`, else left.
    pub side: Option<String>,
    /// `slice`: one item per axis.
    pub index: Vec<Index>,
    /// A basic index applied to the first input before the op, so that ops
    /// see strided, reversed and offset views as well as fresh arrays.
    pub view: Vec<Index>,
    pub repeats: Option<Repeats>,
    /// `astype`'s target, `linspace`'s dtype.
    pub dtype: Option<String>,
    /// `linspace` and `arange` bounds, `arange`'s step.
    pub start: Option<Number>,
    pub stop: Option<Number>,
    pub step: Option<Number>,
    pub num: usize,
    pub endpoint: bool,
    /// `roll`'s shifts.
    pub shifts: Vec<isize>,
    /// A Rust scalar operand of a binary function, in place of its second
    /// array (its first with `scalar_first`).
    pub scalar: Option<Number>,
    pub scalar_first: bool,
    /// `clip` bounds.
    pub min: Option<Number>,
    pub max: Option<Number>,
    /// `isin`: the complement.
    pub invert: bool,
    /// `diff`: how many times; `matrix_power`'s exponent.
    pub n: usize,
    /// `diagonal` and `trace`: which diagonal.
    pub offset: isize,
    /// `vector_norm` and `matrix_norm`: a number (`"inf"`, `"-inf"`, `"2"`)
    /// or `"fro"` / `"nuc"`.
    pub ord: Option<String>,
    /// `fftfreq` and `rfftfreq`: the sample spacing (`num` is `n`).
    pub d: Option<f64>,
}

/// A basic index item: an integer or `[start, stop, step]` (`null` for a
/// default start or stop).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Index {
    At(isize),
    Range(Option<isize>, Option<isize>, isize),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Repeats {
    Each(usize),
    PerElement(Vec<usize>),
}

/// A Rust scalar argument: integers stay integers (weakly typed, as Rust
/// literals are), anything else is an `f64`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::UInt(v) => v as f64,
            Number::Float(v) => v,
        }
    }
}

/// What a case produced.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub id: Option<u64>,
    #[serde(flatten)]
    pub body: Body,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Body {
    Array {
        dtype: String,
        shape: Vec<usize>,
        hex: String,
    },
    /// An anydev error: the `Error` variant and its message.
    Error {
        kind: &'static str,
        message: String,
    },
    Panic {
        message: String,
    },
    /// The case itself could not be run (bad JSON, bad hex, unknown op):
    /// a bug in the harness, not in anydev.
    Driver {
        message: String,
    },
}

impl Outcome {
    pub fn from_result(id: u64, result: anydev::Result<Array>) -> Outcome {
        let body = match result.and_then(|a| Ok((a.host_bytes()?, a))) {
            Ok((bytes, a)) => Body::Array {
                dtype: a.dtype().name().to_owned(),
                shape: a.shape().to_vec(),
                hex: hex::encode(&bytes),
            },
            Err(e) => Body::Error {
                kind: kind(&e),
                message: e.to_string(),
            },
        };
        Outcome { id: Some(id), body }
    }

    pub fn panic(id: u64, message: String) -> Outcome {
        Outcome {
            id: Some(id),
            body: Body::Panic { message },
        }
    }

    pub fn driver(id: Option<u64>, message: String) -> Outcome {
        Outcome {
            id,
            body: Body::Driver { message },
        }
    }
}

/// The variant's name: devices must agree on it, while messages may name
/// the device.
fn kind(e: &Error) -> &'static str {
    match e {
        Error::InvalidDevice { .. } => "InvalidDevice",
        Error::DeviceUnavailable { .. } => "DeviceUnavailable",
        Error::DeviceMismatch { .. } => "DeviceMismatch",
        Error::Unsupported { .. } => "Unsupported",
        Error::UnsupportedDType { .. } => "UnsupportedDType",
        Error::OutOfMemory { .. } => "OutOfMemory",
        Error::ShapeMismatch { .. } => "ShapeMismatch",
        Error::InvalidAxis { .. } => "InvalidAxis",
        Error::IndexOutOfBounds { .. } => "IndexOutOfBounds",
        Error::InvalidArgument { .. } => "InvalidArgument",
        Error::InvalidDType { .. } => "InvalidDType",
        Error::Backend { .. } => "Backend",
        Error::Plugin { .. } => "Plugin",
        Error::NoKernel { .. } => "NoKernel",
        _ => "Other",
    }
}
