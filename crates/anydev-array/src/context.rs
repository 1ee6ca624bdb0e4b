//! Which runtime array calls use, and what they remember per device.
//!
//! Ops never consult the runtime: an array's storage carries its device's
//! [`DeviceCtx`] (backend, stream, native memory kind, dtypes it holds),
//! built once per device and thread, so the hot path takes no lock and
//! clones no capability map. Only creation functions and `to_device` look
//! a device up, through the thread's runtime: the process-wide one, or one
//! installed with [`with_runtime`] / [`RuntimeGuard`] (tests build runtimes
//! with fake backends that way).

use crate::choice::{ChoiceGuard, DeviceChoices};
use crate::defaults::DefaultDTypes;
use crate::promote::Weak;
use anydev_core::capability::keys;
use anydev_core::memory::MemoryKind;
use anydev_core::reach::Reach;
use anydev_core::{Backend, DType, Device, Error, Result, Runtime, Stream};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

thread_local! {
    static RUNTIME: Cell<Option<&'static Runtime>> = const { Cell::new(None) };
    static CONTEXTS: RefCell<Vec<Arc<DeviceCtx>>> = const { RefCell::new(Vec::new()) };
    static STREAM_STACK: RefCell<Vec<(Device, Stream)>> = const { RefCell::new(Vec::new()) };
    static MEMORY_STACK: RefCell<Vec<(Device, MemoryKind)>> = const { RefCell::new(Vec::new()) };
}

/// The streams [`with_stream`] chose.
static CHOSEN_STREAMS: DeviceChoices<Stream> = DeviceChoices::new(&STREAM_STACK);

/// The memory kinds creation calls and `to_device_in` asked for.
static CHOSEN_MEMORY: DeviceChoices<MemoryKind> = DeviceChoices::new(&MEMORY_STACK);

/// Makes allocations on one device in this thread use a memory kind the
/// caller asked for (a creation call's `Spec::memory`, `to_device_in`)
/// until dropped. Checked against the kinds the device allocates.
#[must_use = "the memory kind is used only while the guard lives"]
pub(crate) struct MemoryGuard {
    _choice: Option<ChoiceGuard<MemoryKind>>,
}

impl MemoryGuard {
    /// A guard choosing `kind` on `ctx`'s device; `None` chooses nothing.
    pub fn new(op: &str, ctx: &DeviceCtx, kind: Option<MemoryKind>) -> Result<MemoryGuard> {
        let Some(kind) = kind else {
            return Ok(MemoryGuard { _choice: None });
        };
        let kinds = ctx.backend.memory_kinds(ctx.device.index());
        if !kinds.contains(&kind) {
            let offered: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
            return Err(Error::invalid_argument(
                op,
                format!(
                    "{} cannot allocate {kind} memory; it allocates: {}",
                    ctx.device,
                    offered.join(", ")
                ),
            ));
        }
        Ok(MemoryGuard {
            _choice: Some(CHOSEN_MEMORY.choose(ctx.device, kind)),
        })
    }
}

/// A new stream on `device` (in this thread's runtime), for [`with_stream`].
pub fn new_stream(device: Device) -> Result<Stream> {
    runtime().backend(device)?.create_stream(device.index())
}

/// The stream this thread's ops on `device` are enqueued on: the innermost
/// [`with_stream`] choice for it, else its default stream (as
/// `torch.cuda.current_stream`).
pub fn current_stream(device: Device) -> Result<Stream> {
    Ok(DeviceCtx::get(runtime(), device)?.stream().into_owned())
}

/// Runs `f` with `stream` as the stream this thread's ops on the stream's
/// device are enqueued on (as PyTorch's `torch.cuda.stream`). Ops on other
/// devices keep theirs. Reading and writing arrays across streams is
/// ordered for you: each buffer records its last write, and a use on
/// another stream waits for it.
pub fn with_stream<R>(stream: &Stream, f: impl FnOnce() -> R) -> R {
    let _guard = StreamGuard::new(stream);
    f()
}

/// Makes a stream current for its device on this thread until dropped;
/// guards nest and restore the previous choice, also during a panic.
#[must_use = "the stream is used only while the guard lives"]
pub struct StreamGuard {
    _choice: ChoiceGuard<Stream>,
}

impl StreamGuard {
    pub fn new(stream: &Stream) -> StreamGuard {
        StreamGuard {
            _choice: CHOSEN_STREAMS.choose(stream.device(), stream.clone()),
        }
    }
}

/// The runtime array calls on this thread use: the one installed by the
/// innermost [`with_runtime`]/[`RuntimeGuard`], else the process-wide
/// runtime of the backends compiled into the program
/// ([`anydev_core::builtin_providers`]: the `anydev` facade registers
/// them) plus plugins.
pub fn runtime() -> &'static Runtime {
    RUNTIME
        .with(Cell::get)
        .unwrap_or_else(|| Runtime::global(anydev_core::builtin_providers))
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
    /// The device's default stream, used unless [`with_stream`] names another.
    stream: Stream,
    /// The device's native memory kind (the first it lists).
    native_kind: MemoryKind,
    /// The kind new arrays get when unified memory is on, when the device
    /// has one the host reaches other than its native kind (the host's own
    /// devices have none, and skip reading the setting).
    unified_kind: Option<MemoryKind>,
    /// Which memory the device uses in place.
    pub reach: Reach,
    /// Whether work may still run after the backend call returns, so
    /// buffer uses must be recorded for ordering.
    pub asynchronous: bool,
    /// Indexed by `DType::code() - 1`: the device's `dtypes` capability.
    dtypes: [bool; DType::ALL.len()],
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
        // An unreadable ANYDEV_UNIFIED_MEMORY fails every device, not just
        // the arrays it would have changed.
        runtime.unified_memory()?;
        let backend = Arc::clone(runtime.backend(device)?);
        let index = device.index();
        let caps = backend.capabilities(index)?;
        let mut dtypes = [false; DType::ALL.len()];
        for d in DType::ALL {
            dtypes[d.code() as usize - 1] = caps.supports_dtype(d);
        }
        let kinds = backend.memory_kinds(index);
        let native_kind = kinds.first().copied().ok_or_else(|| {
            Error::backend(
                backend.name(),
                format!("{device} lists no memory kinds it can allocate"),
            )
        })?;
        let reach = Reach::from_capabilities(&caps);
        Ok(DeviceCtx {
            runtime,
            device,
            stream: backend.default_stream(index)?,
            backend,
            native_kind,
            unified_kind: reach.unified_kind(&kinds).filter(|&kind| kind != native_kind),
            reach,
            asynchronous: caps.flag(keys::ASYNC_EXECUTION),
            dtypes,
        })
    }

    /// The memory kind for a new array: the one this thread's
    /// [`MemoryGuard`] chose for the device, else the native one, or with
    /// unified memory on a kind the host reaches too.
    #[inline]
    pub fn memory_kind(&self) -> MemoryKind {
        if let Some(kind) = CHOSEN_MEMORY.chosen(self.device) {
            return kind;
        }
        match self.unified_kind {
            // `build` has checked that the setting reads.
            Some(kind) if self.runtime.unified_memory().unwrap_or(false) => kind,
            _ => self.native_kind,
        }
    }

    /// The stream ops on this device run on: this thread's [`with_stream`]
    /// choice for the device, else its default stream.
    /// Borrowed in the common case (no choice made), so a small op pays no
    /// reference-count traffic for it.
    pub fn stream(&self) -> Cow<'_, Stream> {
        CHOSEN_STREAMS
            .chosen(self.device)
            .map_or(Cow::Borrowed(&self.stream), Cow::Owned)
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

    /// The device's default dtypes (design section 14).
    pub fn default_dtypes(&self) -> DefaultDTypes {
        DefaultDTypes::for_device_holding(|d| self.check_dtype(d).is_ok())
    }

    /// The device's default float dtype: `f64`, or `f32` on a device
    /// without `f64`.
    pub fn default_float(&self) -> DType {
        self.default_dtypes().real_floating
    }

    /// The device's default integer dtype: `i64`, or `i32` on a device
    /// without `i64`.
    pub fn default_int(&self) -> DType {
        self.default_dtypes().integral
    }

    /// The device's default complex dtype: `c128`, or `c64` on a device
    /// without `c128`.
    pub fn default_complex(&self) -> DType {
        self.default_dtypes().complex_floating
    }

    /// The dtype a Rust or Python scalar has on its own on this device:
    /// `bool`, or the device's default integer, float or complex dtype.
    pub fn natural_dtype(&self, value: Weak) -> DType {
        match value {
            Weak::Bool(_) => DType::Bool,
            Weak::Int(_) => self.default_int(),
            Weak::Float(_) => self.default_float(),
            Weak::Complex(..) => self.default_complex(),
        }
    }

    /// The float dtype a computation that wants `wanted` runs in here:
    /// `wanted` when the device holds it, else the next wider float it
    /// holds, at most the default float (complex dtypes likewise, at most
    /// the default complex dtype). Other dtypes pass unchanged.
    pub fn float_for(&self, wanted: DType) -> DType {
        if !wanted.is_inexact() || self.check_dtype(wanted).is_ok() {
            return wanted;
        }
        if wanted.is_complex() {
            // `c128` where the device has no f64: `c64`, as the real
            // components narrow to `f32`.
            return [DType::C64, DType::C128]
                .into_iter()
                .skip_while(|&d| d != wanted)
                .find(|&d| self.check_dtype(d).is_ok())
                .unwrap_or_else(|| self.default_complex());
        }
        [DType::F16, DType::F32, DType::F64]
            .into_iter()
            .skip_while(|&d| d != wanted)
            .find(|&d| self.check_dtype(d).is_ok())
            .unwrap_or_else(|| self.default_float())
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

/// [`creation_ctx`] for `spec`, with its memory kind chosen for the
/// allocations of the call while the guard lives.
pub(crate) fn creation_placement(op: &str, spec: &crate::Spec) -> Result<(Arc<DeviceCtx>, MemoryGuard)> {
    let ctx = creation_ctx(spec.device)?;
    let guard = MemoryGuard::new(op, &ctx, spec.memory)?;
    Ok((ctx, guard))
}
