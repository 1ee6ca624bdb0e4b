//! What a test case is: a name, the dtypes it is parametrised over, what it
//! needs from a device, and a body that says what it expected and what it got.

use anydev_core::ops::{BinaryOp, OpCode, ReduceOp};
use anydev_core::{DType, Device, Runtime};
use std::fmt;

/// The body of a case: checks one behaviour on `ctx.device`.
pub type Body = fn(&CaseCtx) -> Result<(), Failure>;

/// A requirement on the device a case runs on, in terms of capabilities.
/// An unmet one turns the case into a skip that names it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Need {
    /// The device holds 64-bit floats (`f64` capability).
    F64,
    /// The device declares this dtype (for cases not parametrised over dtypes).
    DType(DType),
    /// The device implements this op for the given dtype, or for the case's
    /// dtype when `None`.
    Op(OpCode, Option<DType>),
    /// At least this many devices of the device's kind are selected.
    SameKindDevices(usize),
    /// At least this many selected devices in all (of any kinds).
    Devices(usize),
    /// The device reaches host memory or managed memory without copies.
    UnifiedMemory,
    /// The device declares at least one peer device.
    PeerAccess,
    /// The device has at least this many bytes of memory.
    MemoryBytes(u64),
    /// The backend enforces an allocation limit (reported by `memory_stats`).
    MemoryLimit,
    /// The device runs this extension op: a kernel registered for its
    /// kind, or its plugin's own implementation (an extension library's
    /// cases, which a plugin without the op skips).
    ExtensionOp(&'static str),
    /// The device reports this boolean capability as true (`event_timing`).
    Capability(&'static str),
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::F64 => f.write_str("needs f64"),
            Need::DType(d) => write!(f, "needs dtype {d}"),
            Need::Op(op, Some(d)) => write!(f, "needs op {} for {d}", op.name()),
            Need::Op(op, None) => write!(f, "needs op {}", op.name()),
            Need::SameKindDevices(n) => write!(f, "needs {n} devices of the same kind"),
            Need::Devices(n) => write!(f, "needs {n} devices"),
            Need::UnifiedMemory => f.write_str("needs unified memory"),
            Need::PeerAccess => f.write_str("needs peer access"),
            Need::MemoryBytes(n) => write!(f, "needs {n} bytes of device memory"),
            Need::MemoryLimit => f.write_str("needs an enforced memory limit"),
            Need::ExtensionOp(op) => write!(f, "needs extension op {op}"),
            Need::Capability(key) => write!(f, "needs capability {key}"),
        }
    }
}

/// Which devices a case touches. The runner serialises cases per device and
/// checks that every device it touched holds no more memory afterwards, so
/// a case that creates arrays on other devices must say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Only the device under test.
    Device,
    /// Any selected device (round trips, mismatches).
    AllDevices,
}

/// One device-generic case.
pub struct Case {
    /// `family::behaviour`, e.g. `elementwise::add_broadcast`.
    pub name: String,
    /// Dtypes to instantiate for; empty for a case that is not parametrised.
    pub dtypes: Vec<DType>,
    pub needs: Vec<Need>,
    pub scope: Scope,
    /// Whether the body gates its own ops on the device's answers (see
    /// [`Case::asks_support_itself`]); every other case declares each op
    /// and dtype it dispatches on the device under test.
    pub asks_support: bool,
    pub body: Body,
}

impl Case {
    pub fn new(name: impl Into<String>, body: Body) -> Case {
        Case {
            name: name.into(),
            dtypes: Vec::new(),
            needs: Vec::new(),
            scope: Scope::Device,
            asks_support: false,
            body,
        }
    }

    pub fn dtypes(mut self, dtypes: &[DType]) -> Case {
        self.dtypes = dtypes.to_vec();
        self
    }

    pub fn needs(mut self, need: Need) -> Case {
        self.needs.push(need);
        self
    }

    /// Needs `op` for the case's dtype.
    pub fn op(self, op: OpCode) -> Case {
        self.needs(Need::Op(op, None))
    }

    /// Needs each of `ops` for `dtype` (the op's support dtype: its first
    /// input's, or the output's for fill, arange and random).
    pub fn ops_for(self, dtype: DType, ops: &[OpCode]) -> Case {
        ops.iter().fold(self, |case, &op| case.needs(Need::Op(op, Some(dtype))))
    }

    /// Needs what checking integer indices against an axis dispatches:
    /// their smallest and largest and the shift of negative ones, in `i64`
    /// after a cast from the cases' other index dtype, `i32`.
    pub fn checks_indices(self) -> Case {
        let i64_op = |op| Need::Op(op, Some(DType::I64));
        self.needs(i64_op(OpCode::Reduce(ReduceOp::Min)))
            .needs(i64_op(OpCode::Reduce(ReduceOp::Max)))
            .needs(i64_op(OpCode::Binary(BinaryOp::Less)))
            .needs(i64_op(OpCode::Binary(BinaryOp::Add)))
            .needs(i64_op(OpCode::Where))
            .needs(Need::Op(OpCode::Cast, Some(DType::I32)))
            .needs(Need::DType(DType::Bool))
    }

    /// Needs what counting non-zero elements dispatches (`count_nonzero`,
    /// and so `nonzero`, boolean masks and the `unique_*` functions): the
    /// flags cast to `i32`, summed, and the counts cast to the default
    /// integer dtype.
    pub fn counts_nonzero(self) -> Case {
        self.needs(Need::DType(DType::I32))
            .needs(Need::Op(OpCode::Cast, Some(DType::Bool)))
            .needs(Need::Op(OpCode::Reduce(ReduceOp::Sum), Some(DType::I32)))
            .needs(Need::Op(OpCode::Cast, Some(DType::I32)))
    }

    /// Marks a case that asks the device what it supports and dispatches
    /// only that (the ABI checks of declared ops and dtypes, the accuracy
    /// sweep): its ops depend on the device, so it declares none.
    pub fn asks_support_itself(mut self) -> Case {
        self.asks_support = true;
        self
    }

    pub fn all_devices(mut self) -> Case {
        self.scope = Scope::AllDevices;
        self
    }
}

/// What a case body sees: its device, its dtype, and the other devices of
/// the run.
pub struct CaseCtx {
    pub runtime: &'static Runtime,
    pub device: Device,
    /// The dtype of this instance; `None` for cases not parametrised.
    pub dtype: Option<DType>,
    /// Every selected device, the device under test included, in runtime order.
    pub devices: Vec<Device>,
}

impl CaseCtx {
    /// The instance's dtype; f32 for cases not parametrised.
    pub fn dtype(&self) -> DType {
        self.dtype.unwrap_or(DType::F32)
    }

    /// The other selected devices of the same kind.
    pub fn peers(&self) -> Vec<Device> {
        let kind = self.device.kind();
        self.devices
            .iter()
            .copied()
            .filter(|d| d.kind() == kind && *d != self.device)
            .collect()
    }

    /// The other selected devices, of any kind.
    pub fn others(&self) -> Vec<Device> {
        self.devices.iter().copied().filter(|d| *d != self.device).collect()
    }
}

/// A failed check: what was checked, what was expected, what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub what: String,
    pub expected: String,
    pub got: String,
}

impl Failure {
    pub fn new(what: impl Into<String>, expected: impl fmt::Display, got: impl fmt::Display) -> Failure {
        Failure {
            what: what.into(),
            expected: expected.to_string(),
            got: got.to_string(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: expected {}, got {}", self.what, self.expected, self.got)
    }
}

/// An unexpected error from an array call fails the case with the error's
/// message as what was got.
impl From<anydev_core::Error> for Failure {
    fn from(e: anydev_core::Error) -> Failure {
        Failure::new("array call", "success", format!("error: {e}"))
    }
}

/// Fails with `what` unless `expected == got`.
pub fn check_eq<T: PartialEq + fmt::Debug>(what: impl Into<String>, expected: T, got: T) -> Result<(), Failure> {
    if expected == got {
        Ok(())
    } else {
        Err(Failure::new(what, format!("{expected:?}"), format!("{got:?}")))
    }
}

/// Fails with `what` unless `ok`; `expected` says what should have held.
pub fn check(
    ok: bool,
    what: impl Into<String>,
    expected: impl fmt::Display,
    got: impl fmt::Display,
) -> Result<(), Failure> {
    if ok {
        Ok(())
    } else {
        Err(Failure::new(what, expected, got))
    }
}

/// Fails unless `result` is an error accepted by `is_expected`.
pub fn expect_err<T: fmt::Debug>(
    what: impl Into<String>,
    expected: &str,
    result: anydev_core::Result<T>,
    is_expected: impl Fn(&anydev_core::Error) -> bool,
) -> Result<anydev_core::Error, Failure> {
    match result {
        Err(e) if is_expected(&e) => Ok(e),
        Err(e) => Err(Failure::new(what, expected, format!("error {e:?}"))),
        Ok(v) => Err(Failure::new(what, expected, format!("success ({v:?})"))),
    }
}
