//! anydev: one array API, every accelerator.
//!
//! Arrays live on a [`Device`] (`cpu:0`, `cuda:1`, `sim:0`, ...). Creation
//! functions place them on an explicit device, else the innermost
//! [`with_device`] scope, else the default device; every other op runs on
//! the device of its inputs, and arrays on different devices never meet
//! implicitly: [`Error::DeviceMismatch`] says to call `to_device`.
//!
//! This crate re-exports what users need; the pieces live in
//! `anydev-core` (devices, runtime, backends) and `anydev-array` (arrays).

pub mod accelerator;
pub mod backends;
pub mod collective;

/// Shuts down the device plugins the process has used, for the end of a
/// program: the process-wide runtime is never dropped, so without this a
/// plugin's `shutdown` (flushing a trace, releasing a device lock) never
/// runs. Work in flight completes first; arrays that outlive the call
/// must not be used. Python's `anydev` calls it at interpreter exit and
/// the `anydev` command before it exits.
pub fn shutdown() -> Result<()> {
    anydev_array::runtime().shutdown()
}

pub use anydev_array::*;
pub use anydev_core::{
    capability, current_device, plugin, scoped_device, with_device, BackendProvider, BackendStatus, CapValue,
    Capabilities, DType, Device, DeviceGuard, DeviceKind, DeviceProperties, Error, InitError, MemoryKind, MemoryStats,
    Result, Runtime, RuntimeConfig, Scalar, Stream, TransferStats,
};
