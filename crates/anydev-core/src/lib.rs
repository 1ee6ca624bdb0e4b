//! The core of anydev: what a device is, what a backend must provide, and
//! the process-wide registry that finds backends and picks devices.
//!
//! The core knows no concrete device. Backends (the built-in CPU, CUDA and
//! wgpu ones, and plugin adapters) implement [`Backend`] and are handed to
//! the [`Runtime`] as [`BackendProvider`]s; the runtime initialises each
//! one independently, records how it ended, and answers "which backend
//! serves `kind:index`" for the array layer.

pub mod backend;
pub mod builtin;
pub mod capability;
pub mod collective;
mod device;
pub mod elf;
mod error;
pub mod extension;
pub mod memory;
pub mod ordering;
pub mod plugin;
pub mod random;
pub mod reach;
pub mod runtime;
mod scope;
pub mod stream;
pub mod validate;

pub use anydev_ops as ops;
pub use anydev_ops::{DType, Scalar};
pub use backend::{Backend, Checked, DeviceProperties, TensorRef};
pub use builtin::builtin_providers;
pub use capability::{CapValue, Capabilities};
pub use device::{Device, DeviceKind};
pub use error::{Error, Result};
pub use memory::{Buffer, ForeignDevice, ForeignHost, MemoryAdvice, MemoryKind, MemoryStats, TransferStats};
pub use runtime::{BackendProvider, BackendStatus, InitError, Runtime, RuntimeConfig};
pub use scope::{current_device, scoped_device, with_device, DeviceGuard};
pub use stream::{Event, Stream};
