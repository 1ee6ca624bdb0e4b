//! Which runtime array calls use, and what they remember per device.
//!
//! Ops never consult the runtime: an array's storage carries its device's
//! [`DeviceCtx`] (backend, stream, native memory kind, dtypes it holds),
//! built once per device and thread, so the hot path takes no lock and
//! clones no capability map. Only creation functions and `to_device` look
//! a device up, through the thread's runtime: the process-wide one, or one
//! installed with [`with_runtime`] / [`RuntimeGuard`] (tests build runtimes
//! with fake backends that way).

use anydev_core::memory::MemoryKind;
use anydev_core::{Backend, DType, Device, Error, Result, Runtime, Stream};
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

thread_local! {
    static RUNTIME: Cell<Option<&'static Runtime>> = const { Cell::new(None) };
    static CONTEXTS: RefCell<Vec<Arc<DeviceCtx>>> = const { RefCell::new(Vec::new()) };
}

/// The runtime array calls on this thread use: the one installed by the
/// innermost [`with_runtime`]/[`RuntimeGuard`], else the process-wide
/// runtime built from [`crate::backends::builtin_providers`] (plus plugins).
pub fn runtime() -> &'static Runtime {
    RUNTIME
        .with(Cell::get)
        .unwrap_or_else(|| Runtime::global(crate::backends::builtin_providers))
}

/// Runs `f` with `runtime` as this thread's runtime for array calls.
pub fn with_runtime<R>(runtime: &'static Runtime, f: impl FnOnce() -> R) -> R {
    let _guard = RuntimeGuard::new(runtime);
    f()
}

/// Makes a runtime this thread's runtime for array calls until dropped;
/// guards nest and restore the previous one, also during a panic.
#[must_use = "the runtime is used only while the guard lives"]
pub struct RuntimeGuard {
    previous: Option<&'static Runtime>,
    _not_send: PhantomData<*const ()>,
}

impl RuntimeGuard {
    pub fn new(runtime: &'static Runtime) -> RuntimeGuard {
        RuntimeGuard {
            previous: RUNTIME.with(|r| r.replace(Some(runtime))),
            _not_send: PhantomData,
        }
    }
}

impl Drop for RuntimeGuard {
    fn drop(&mut self) {
        RUNTIME.with(|r| r.set(self.previous));
    }
}

/// What array ops need to know about one device, looked up once.
pub(crate) struct DeviceCtx {
    pub runtime: &'static Runtime,
    pub device: Device,
    pub backend: Arc<dyn Backend>,
    pub stream: Stream,
    /// The device's native memory kind (the first it lists).
    pub memory_kind: MemoryKind,
    /// Indexed by `DType::code() - 1`: the device's `dtypes` capability.
    dtypes: [bool; 13],
}

impl DeviceCtx {
    /// The context of `device` in `runtime`, from this thread's cache or
    /// built now. Errors when the device is unavailable.
    pub fn get(runtime: &'static Runtime, device: Device) -> Result<Arc<DeviceCtx>> {
        let cached = CONTEXTS.with(|c| {
            c.borrow()
                .iter()
                .find(|ctx| ctx.device == device && std::ptr::eq(ctx.runtime, runtime))
                .cloned()
        });
        if let Some(ctx) = cached {
            return Ok(ctx);
        }
        let ctx = Arc::new(DeviceCtx::build(runtime, device)?);
        CONTEXTS.with(|c| c.borrow_mut().push(Arc::clone(&ctx)));
        Ok(ctx)
    }

    fn build(runtime: &'static Runtime, device: Device) -> Result<DeviceCtx> {
        let backend = Arc::clone(runtime.backend(device)?);
        let index = device.index();
        let caps = backend.capabilities(index)?;
        let mut dtypes = [false; 13];
        for d in DType::ALL {
            dtypes[d.code() as usize - 1] = caps.supports_dtype(d);
        }
        let memory_kind = backend.memory_kinds(index).first().copied().ok_or_else(|| {
            Error::backend(
                backend.name(),
                format!("{device} lists no memory kinds it can allocate"),
            )
        })?;
        Ok(DeviceCtx {
            runtime,
            device,
            stream: backend.default_stream(index)?,
            backend,
            memory_kind,
            dtypes,
        })
    }

    /// Fails with `UnsupportedDType` unless the device holds `dtype`.
    pub fn check_dtype(&self, dtype: DType) -> Result<()> {
        if self.dtypes[dtype.code() as usize - 1] {
            Ok(())
        } else {
            Err(Error::UnsupportedDType {
                dtype,
                device: self.device,
            })
        }
    }

    /// The context of another device in the same runtime.
    pub fn sibling(&self, device: Device) -> Result<Arc<DeviceCtx>> {
        DeviceCtx::get(self.runtime, device)
    }
}

/// The context for a creation call: explicit device, else the scope, else
/// the default (placement rule 1), in this thread's runtime.
pub(crate) fn creation_ctx(explicit: Option<Device>) -> Result<Arc<DeviceCtx>> {
    let rt = runtime();
    DeviceCtx::get(rt, rt.creation_device(explicit)?)
}
