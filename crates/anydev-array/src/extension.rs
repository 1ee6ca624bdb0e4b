//! Extension ops (design section 11): ops that other crates add without
//! touching core, the array layer or the backends.
//!
//! An op is defined once ([`define_op`]): a namespaced name
//! (`quant::dequantize_4bit`), how many array inputs it takes, its typed
//! attributes, and a shape rule that computes the outputs' dtypes and
//! shapes without running anything. Kernels are registered per device kind
//! ([`register_kernel`]), by whoever supports that kind: a host function
//! for `cpu`, WGSL for `wgpu`, CUDA C++ for `cuda`; a device plugin may
//! also implement named ops itself, behind the C ABI (1.4). A call
//! ([`call`]) validates its arguments against the schema, puts its outputs
//! on the inputs' device (the placement rules of built-in ops), allocates
//! them, and runs, in this order of preference: the kernel registered for
//! that device's kind, or the device's own implementation when it lists
//! the op and accepts the call. Otherwise the call is [`Error::NoKernel`],
//! naming the kinds that have one; running the `cpu` kernel instead (and
//! moving the data there and back) happens only when the caller opts in,
//! per call or per op, and is counted ([`host_fallbacks`]).

use crate::array::Array;
use crate::dispatch::{alloc, ordered, same_device};
use anydev_core::extension::KernelBody;
pub use anydev_core::extension::{
    AttrKind, AttrValue, Attrs, Cuda, HostFn, HostTensor, HostTensorMut, LaunchRule, TensorMeta, Wgsl,
};
use anydev_core::{Device, Error, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// The kind of device whose kernels serve the host fallback.
const HOST_KIND: &str = "cpu";

/// Computes an op's outputs (dtype and shape each) from its inputs and
/// attributes, or says why the arguments are invalid.
pub type ShapeRule = dyn Fn(&[TensorMeta], &Attrs) -> Result<Vec<TensorMeta>> + Send + Sync;

/// The definition of an extension op.
#[derive(Clone)]
pub struct OpDef {
    /// `namespace::name`, e.g. `quant::dequantize_4bit`.
    pub name: String,
    /// How many array inputs a call takes (at least one: the outputs go to
    /// the inputs' device).
    pub inputs: usize,
    /// The attributes every call gives, with their types.
    pub attrs: Vec<(String, AttrKind)>,
    pub shape_rule: Arc<ShapeRule>,
}

/// One kernel of an op, for one device kind.
#[derive(Clone)]
pub enum Kernel {
    /// A Rust function over host memory, for the `cpu` kind.
    Host(Arc<HostFn>),
    /// WGSL, for the `wgpu` kind.
    Wgsl(Wgsl),
    /// CUDA C++ (NVRTC), for the `cuda` kind.
    Cuda(Cuda),
}

/// Per-call choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// Where the inputs' device kind has no kernel, run the `cpu` kernel on
    /// copies of the inputs and copy the outputs back.
    pub host_fallback: bool,
}

/// Shared so that a call takes what it needs from the registry by
/// reference count, without copying a schema or a kernel's source.
struct Entry {
    def: Arc<OpDef>,
    kernels: BTreeMap<String, Arc<Kernel>>,
    host_fallback: bool,
}

static REGISTRY: RwLock<BTreeMap<String, Entry>> = RwLock::new(BTreeMap::new());
static HOST_FALLBACKS: AtomicU64 = AtomicU64::new(0);

fn read() -> std::sync::RwLockReadGuard<'static, BTreeMap<String, Entry>> {
    REGISTRY.read().unwrap_or_else(PoisonError::into_inner)
}

fn write() -> std::sync::RwLockWriteGuard<'static, BTreeMap<String, Entry>> {
    REGISTRY.write().unwrap_or_else(PoisonError::into_inner)
}

/// The error for a call or registration naming an op nobody defined.
fn unknown(registry: &BTreeMap<String, Entry>, op: &str) -> Error {
    let known: Vec<String> = registry.keys().cloned().collect();
    Error::invalid_argument(
        op,
        format!(
            "no extension op of this name is defined (defined: {}); define_op it first",
            list(&known)
        ),
    )
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Defines an op. The name must be `namespace::name` (letters, digits and
/// `_` in each part) and not defined before, by a library or by anydev's
/// own extensions (`linalg`, `fft`).
pub fn define_op(def: OpDef) -> Result<()> {
    builtins_defined()?;
    insert_op(def)
}

/// [`define_op`] without defining the built-in extensions first: how
/// they define themselves.
fn insert_op(def: OpDef) -> Result<()> {
    let well_formed = def.name.split_once("::").is_some_and(|(ns, name)| {
        let part = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        part(ns) && part(name)
    });
    if !well_formed {
        return Err(Error::invalid_argument(
            "define_op",
            format!(
                "{:?} is not a namespaced op name such as quant::dequantize_4bit",
                def.name
            ),
        ));
    }
    if def.inputs == 0 {
        return Err(Error::invalid_argument(
            "define_op",
            format!(
                "{} takes no array input; an op's outputs go to its inputs' device",
                def.name
            ),
        ));
    }
    let mut registry = write();
    if registry.contains_key(&def.name) {
        return Err(Error::invalid_argument(
            "define_op",
            format!("{} is already defined", def.name),
        ));
    }
    let entry = Entry {
        def: Arc::new(def.clone()),
        kernels: BTreeMap::new(),
        host_fallback: false,
    };
    registry.insert(def.name, entry);
    Ok(())
}

/// Registers `kernel` as `op`'s kernel for devices of `kind`. A host
/// kernel serves only `cpu`, WGSL only `wgpu`, CUDA only `cuda`; one
/// kernel per kind.
pub fn register_kernel(op: &str, kind: &str, kernel: Kernel) -> Result<()> {
    builtins_defined()?;
    insert_kernel(op, kind, kernel)
}

/// [`register_kernel`] without defining the built-in extensions first.
fn insert_kernel(op: &str, kind: &str, kernel: Kernel) -> Result<()> {
    let fits = match &kernel {
        Kernel::Host(_) => kind == HOST_KIND,
        Kernel::Wgsl(_) => kind == "wgpu",
        Kernel::Cuda(_) => kind == "cuda",
    };
    if !fits {
        return Err(Error::invalid_argument(
            "register_kernel",
            format!("{op}: a {} kernel cannot serve devices of kind {kind}", form(&kernel)),
        ));
    }
    let mut registry = write();
    if !registry.contains_key(op) {
        return Err(unknown(&registry, op));
    }
    let entry = registry.get_mut(op).expect("checked above");
    if entry.kernels.contains_key(kind) {
        return Err(Error::invalid_argument(
            "register_kernel",
            format!("{op} already has a kernel for {kind}"),
        ));
    }
    entry.kernels.insert(kind.to_owned(), Arc::new(kernel));
    Ok(())
}

/// Defines `def` and registers its `cpu` kernel: how the built-in
/// extensions (`linalg`, `fft`), whose other device kinds have no kernel
/// yet, declare their ops.
pub(crate) fn define_host_op(def: OpDef, kernel: Kernel) -> Result<()> {
    let name = def.name.clone();
    insert_op(def)?;
    insert_kernel(&name, HOST_KIND, kernel)
}

/// The `cpu` kernel of the built-in extension op `name` (a factorization
/// or a transform): `anydev_numerics`' code, which the simulator plugin
/// runs for the same op, over the call's tensors.
pub(crate) fn numerics_kernel(name: &str) -> Kernel {
    let name = name.to_owned();
    Kernel::Host(Arc::new(move |ins, outs, attrs| {
        let ins: Vec<_> = ins.iter().map(HostTensor::operand).collect();
        let mut outs: Vec<_> = outs.iter_mut().map(HostTensorMut::operand).collect();
        anydev_numerics::run(&name, &ins, &mut outs, &|attr| attrs.get(attr))
            .map_err(|e| Error::invalid_argument(e.function, e.reason))
    }))
}

fn form(kernel: &Kernel) -> &'static str {
    match kernel {
        Kernel::Host(_) => "host",
        Kernel::Wgsl(_) => "WGSL",
        Kernel::Cuda(_) => "CUDA",
    }
}

/// Opts `op` in (or out) of the host fallback for every call.
pub fn set_host_fallback(op: &str, allow: bool) -> Result<()> {
    builtins_defined()?;
    let mut registry = write();
    if !registry.contains_key(op) {
        return Err(unknown(&registry, op));
    }
    registry.get_mut(op).expect("checked above").host_fallback = allow;
    Ok(())
}

/// The device kinds with a kernel registered for `op` in this process
/// ([`register_kernel`]), sorted. Backends that implement `op` themselves
/// (wgpu's `linalg::*`, plugins that list it) are not kernels
/// registered here: [`device_ops`] lists them per device, and
/// [`Error::NoKernel`] names both.
pub fn kernel_kinds(op: &str) -> Result<Vec<String>> {
    builtins_defined()?;
    let registry = read();
    registry
        .get(op)
        .map(|e| e.kernels.keys().cloned().collect())
        .ok_or_else(|| unknown(&registry, op))
}

/// Defines the built-in extensions' ops (`linalg`, `fft`), once, before
/// any public function here looks at the registry: every one of them
/// knows the built-in names from the first call on, and no library can
/// take one of them first.
fn builtins_defined() -> Result<()> {
    crate::factorize::defined()?;
    crate::fft::kernels::defined()
}

/// The names of every defined op, the built-in extensions' included,
/// sorted: what [`call`] accepts, for a binding or a tool that lists them.
pub fn ops() -> Result<Vec<String>> {
    builtins_defined()?;
    Ok(read().keys().cloned().collect())
}

/// `op`'s attributes with their kinds, in the order defined: what a
/// binding from a dynamically typed language needs to turn its values
/// into [`AttrValue`]s before a [`call`].
pub fn op_attrs(op: &str) -> Result<Vec<(String, AttrKind)>> {
    builtins_defined()?;
    let registry = read();
    registry
        .get(op)
        .map(|e| e.def.attrs.clone())
        .ok_or_else(|| unknown(&registry, op))
}

/// The extension ops `device` (in this thread's runtime) can run: those
/// with a kernel registered for its kind, the built-in extensions'
/// included, and those its plugin implements itself (whether or not a
/// library has defined them yet), sorted and without repeats.
pub fn device_ops(device: Device) -> Result<Vec<String>> {
    device_ops_in(crate::context::runtime(), device)
}

/// [`device_ops`] for a device of `runtime`.
pub fn device_ops_in(runtime: &anydev_core::Runtime, device: Device) -> Result<Vec<String>> {
    let backend = runtime.backend(device)?;
    builtins_defined()?;
    let mut ops: Vec<String> = read()
        .iter()
        .filter(|(_, e)| e.kernels.contains_key(device.kind().as_str()))
        .map(|(name, _)| name.clone())
        .collect();
    ops.extend(backend.extension_ops(device.index()));
    ops.sort();
    ops.dedup();
    Ok(ops)
}

/// How many calls have run on the host instead of their inputs' device
/// (process-wide, every op).
pub fn host_fallbacks() -> u64 {
    HOST_FALLBACKS.load(Ordering::Relaxed)
}

/// Calls `op` on `inputs` with `attrs`; the outputs live on the inputs'
/// device.
pub fn call(op: &str, inputs: &[&Array], attrs: &Attrs) -> Result<Vec<Array>> {
    call_with(op, inputs, attrs, CallOptions::default())
}

/// [`call`] with per-call options.
pub fn call_with(op: &str, inputs: &[&Array], attrs: &Attrs, options: CallOptions) -> Result<Vec<Array>> {
    builtins_defined()?;
    // The kind whose kernel is wanted, if the inputs agree (checked below).
    let kind = inputs.first().map(|x| x.device().kind());
    let (def, kernel, host, op_fallback) = {
        let registry = read();
        let entry = registry.get(op).ok_or_else(|| unknown(&registry, op))?;
        let kernel = kind.and_then(|k| entry.kernels.get(k.as_str())).cloned();
        let host = entry.kernels.get(HOST_KIND).cloned();
        (Arc::clone(&entry.def), kernel, host, entry.host_fallback)
    };
    check_arguments(&def, inputs, attrs)?;
    let ctx = same_device(op, inputs)?;
    let device = ctx.device;
    let metas: Vec<TensorMeta> = inputs.iter().map(|x| TensorMeta::new(x.dtype(), x.shape())).collect();
    let outputs = (def.shape_rule)(&metas, attrs)?;
    if outputs.is_empty() {
        return Err(Error::invalid_argument(op, "the shape rule gave no outputs"));
    }
    // Wherever the op would run, its outputs land on this device.
    for output in &outputs {
        ctx.check_dtype(output.dtype)?;
    }
    if let Some(kernel) = &kernel {
        return run(op, &Body::Registered(kernel), inputs, &outputs, attrs);
    }
    let index = device.index();
    let listed = ctx.backend.extension_ops(index).iter().any(|o| o == op);
    let accepted = listed && ctx.backend.extension_supported(index, op, &metas, &outputs, attrs)?;
    if accepted {
        return run(op, &Body::Device, inputs, &outputs, attrs);
    }
    let host = host.filter(|_| options.host_fallback || op_fallback);
    let Some(host) = host else {
        if listed {
            return Err(Error::Unsupported {
                op: format!("{op}({})", signature(&metas, &outputs)),
                dtype: metas[0].dtype,
                device,
            });
        }
        let mut available = kernel_kinds(op)?;
        available.extend(implementing_kinds(ctx.runtime, op));
        available.sort();
        available.dedup();
        return Err(Error::NoKernel {
            op: op.to_owned(),
            device,
            available,
        });
    };
    HOST_FALLBACKS.fetch_add(1, Ordering::Relaxed);
    let cpu = Device::cpu();
    let moved: Vec<Array> = inputs.iter().map(|x| x.to_device(cpu)).collect::<Result<_>>()?;
    let on_host = run(
        op,
        &Body::Registered(&host),
        &moved.iter().collect::<Vec<_>>(),
        &outputs,
        attrs,
    )?;
    on_host.iter().map(|y| y.to_device(device)).collect()
}

/// The kinds of the loaded devices that implement `op` themselves.
fn implementing_kinds(runtime: &anydev_core::Runtime, op: &str) -> Vec<String> {
    runtime
        .backends()
        .iter()
        .filter_map(|record| record.backend())
        .filter(|b| (0..b.device_count()).any(|i| b.extension_ops(i).iter().any(|o| o == op)))
        .map(|b| b.name().to_owned())
        .collect()
}

/// A call's operand dtypes and shapes, inputs then outputs, for errors.
fn signature(inputs: &[TensorMeta], outputs: &[TensorMeta]) -> String {
    let show = |ms: &[TensorMeta]| -> Vec<String> { ms.iter().map(|m| format!("{}{:?}", m.dtype, m.shape)).collect() };
    format!("{} -> {}", show(inputs).join(", "), show(outputs).join(", "))
}

/// What runs a call: a kernel registered for the device's kind, or the
/// device's own implementation of the op.
enum Body<'a> {
    Registered(&'a Kernel),
    Device,
}

/// The call matches the schema: input count, every attribute present with
/// its type, none unknown.
fn check_arguments(def: &OpDef, inputs: &[&Array], attrs: &Attrs) -> Result<()> {
    let op = def.name.as_str();
    if inputs.len() != def.inputs {
        return Err(Error::invalid_argument(
            op,
            format!("takes {} array inputs, got {}", def.inputs, inputs.len()),
        ));
    }
    for (name, kind) in &def.attrs {
        match attrs.get(name) {
            Some(v) if v.kind() == *kind => {}
            Some(v) => {
                return Err(Error::invalid_argument(
                    op,
                    format!("attribute {name} must be {kind:?}, got {:?}", v.kind()),
                ))
            }
            None => {
                return Err(Error::invalid_argument(
                    op,
                    format!("attribute {name} ({kind:?}) is missing"),
                ))
            }
        }
    }
    if let Some((name, _)) = attrs.iter().find(|(n, _)| !def.attrs.iter().any(|(d, _)| d == n)) {
        let declared: Vec<String> = def.attrs.iter().map(|(n, _)| n.clone()).collect();
        return Err(Error::invalid_argument(
            op,
            format!("unknown attribute {name} (declared: {})", list(&declared)),
        ));
    }
    Ok(())
}

/// Runs `body` on the inputs' device: contiguous inputs from element 0,
/// fresh outputs.
fn run(op: &str, body: &Body<'_>, inputs: &[&Array], outputs: &[TensorMeta], attrs: &Attrs) -> Result<Vec<Array>> {
    let ctx = inputs[0].ctx();
    let packed: Vec<Array> = inputs
        .iter()
        .map(|x| match x.as_contiguous()? {
            c if c.offset == 0 => Ok(c),
            c => c.copy(),
        })
        .collect::<Result<_>>()?;
    let results: Vec<Array> = outputs
        .iter()
        .map(|m| alloc(ctx, m.dtype, &m.shape))
        .collect::<Result<_>>()?;
    let in_refs: Vec<_> = packed.iter().map(Array::tensor_ref).collect();
    let out_refs: Vec<_> = results.iter().map(Array::tensor_ref).collect();
    let in_metas: Vec<TensorMeta> = packed.iter().map(|x| TensorMeta::new(x.dtype(), x.shape())).collect();
    let key;
    let params;
    let body = match body {
        Body::Device => KernelBody::Device { op },
        Body::Registered(Kernel::Host(f)) => KernelBody::Host(f.as_ref()),
        Body::Registered(Kernel::Wgsl(w)) => {
            params = (w.params)(&in_metas, outputs, attrs)?;
            key = format!("{op}:{}", w.entry_point);
            KernelBody::Wgsl {
                key: &key,
                kernel: w,
                grid: (w.grid)(&in_metas, outputs, attrs)?,
                params: &params,
            }
        }
        Body::Registered(Kernel::Cuda(c)) => {
            params = (c.params)(&in_metas, outputs, attrs)?;
            key = format!("{op}:{}", c.name);
            KernelBody::Cuda {
                key: &key,
                kernel: c,
                grid: (c.grid)(&in_metas, outputs, attrs)?,
                block: (c.block)(&in_metas, outputs, attrs)?,
                params: &params,
            }
        }
    };
    ordered(
        ctx,
        || in_refs.iter(),
        || out_refs.iter(),
        |stream| ctx.backend.run_kernel(stream, &body, &in_refs, &out_refs, attrs),
    )?;
    Ok(results)
}
