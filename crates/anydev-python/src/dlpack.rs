//! DLPack in both directions.
//!
//! Export (`__dlpack__`) hands out the array's own memory, writable as
//! anydev arrays are (a write on either side is seen on the other), where
//! DLPack has a name for it: host memory (kDLCPU), and a CUDA device's
//! device, pinned and managed memory (kDLCUDA, kDLCUDAHost,
//! kDLCUDAManaged), so PyTorch and CuPy use a `cuda:N` array in place.
//! Memory DLPack has no name for (wgpu, plugin devices: kDLExtDev) is
//! exported only as a host copy, on request (`copy=True` or
//! `dl_device=(kDLCPU, 0)`).
//!
//! Import (`from_dlpack`, `asarray`) puts the array on the producer's
//! device unless told otherwise, and uses the producer's memory in place,
//! keeping its tensor until the last array over it is gone: host memory on
//! `cpu:0` (`Array::from_foreign_host`), and a CUDA tensor's device or
//! managed memory on its own `cuda` device (`Array::from_foreign_device`),
//! after the producer's pending work (ordered before the legacy stream,
//! which anydev's stream then follows).
//! Read-only, empty or misaligned memory, another target device and
//! `copy=True` copy instead, and `copy=False` refuses to copy. CUDA memory
//! bound for another device comes in through the host copy DLPack 1.0 lets
//! a consumer ask for.

use crate::array::{unshared, PyArray};
use crate::device::{device_of, PyDevice};
use crate::dtype::with_element;
use crate::errors::{compute, to_py};
use anydev::{Array, DType, Device, DeviceKind, Element, ForeignDevice, ForeignHost, MemoryKind};
use anydev_core::ordering::Access;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

// The structs of dlpack.h (DLPack 1.1), field for field.

const KDL_CPU: i32 = 1;
const KDL_CUDA: i32 = 2;
const KDL_CUDA_HOST: i32 = 3;
const KDL_CUDA_MANAGED: i32 = 13;
/// Devices DLPack has no code for (simulators, wgpu, vendor plugins).
const KDL_EXT_DEV: i32 = 12;
const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 2;

const LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

/// Host memory, the device of every host copy.
const HOST: DLDevice = DLDevice {
    device_type: KDL_CPU,
    device_id: 0,
};

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// DLPack's (code, bits) of a dtype: kDLInt 0, kDLUInt 1, kDLFloat 2,
/// kDLBfloat 4, kDLComplex 5, kDLBool 6.
fn dl_dtype(dtype: DType) -> DLDataType {
    let code = if dtype == DType::Bool {
        6
    } else if dtype == DType::BF16 {
        4
    } else if dtype.is_complex() {
        5
    } else if dtype.is_float() {
        2
    } else if dtype.is_signed() {
        0
    } else {
        1
    };
    DLDataType {
        code,
        bits: (dtype.size() * 8) as u8,
        lanes: 1,
    }
}

fn from_dl_dtype(t: DLDataType) -> Option<DType> {
    (t.lanes == 1).then_some(())?;
    DType::ALL.into_iter().find(|&d| {
        let dl = dl_dtype(d);
        dl.code == t.code && dl.bits == t.bits
    })
}

/// The host address of the array's memory, where the host may use it in
/// place.
fn host_address(a: &Array) -> Option<*mut u8> {
    a.buffer()
        .host_ptr()
        .filter(|_| a.buffer().kind() != MemoryKind::Device)
}

/// What an exported tensor keeps alive: the array (or the host copy) and
/// the shape and strides the tensor points into.
struct Export {
    /// The memory for a zero-copy export; dropped when the consumer is done.
    array: Option<Array>,
    /// The memory of a host copy.
    _copy: Vec<u8>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    /// Device memory handed to a consumer that works on its own streams:
    /// the device is synchronised before anydev may reuse the memory.
    sync_on_release: bool,
}

impl Drop for Export {
    fn drop(&mut self) {
        if let Some(array) = self.array.take().filter(|_| self.sync_on_release) {
            // The consumer's last kernels on the memory may still be
            // queued on its streams, which share the device's context.
            // Nobody is left to report a failure to; the wait is what
            // matters.
            let _ = anydev::accelerator::synchronize(array.device());
        }
    }
}

/// A tensor ready to be put in a capsule: its fields and what they point into.
struct Prepared {
    export: Export,
    data: *mut u8,
    device: DLDevice,
    dtype: DLDataType,
    copied: bool,
}

/// Where a DLPack consumer finds an array's memory in place.
#[derive(Clone, Copy)]
struct Place {
    device: DLDevice,
    /// The address of the buffer's first byte in `device`'s address space.
    base: *mut u8,
}

impl Place {
    fn cpu(base: *mut u8) -> Place {
        Place { device: HOST, base }
    }
}

impl DLDevice {
    /// Memory of a CUDA device (device, pinned or managed), which DLPack
    /// orders with a CUDA stream.
    fn is_cuda(self) -> bool {
        matches!(self.device_type, KDL_CUDA | KDL_CUDA_HOST | KDL_CUDA_MANAGED)
    }

    /// DLPack's (device type, device id) pair.
    fn code(self) -> (i32, i32) {
        (self.device_type, self.device_id)
    }
}

/// The array's own memory as DLPack names it: a CUDA device's memory by
/// its CUDA address and kind, host memory of other devices by its host
/// address; `None` for memory DLPack has no name for.
fn own_place(a: &Array) -> Option<Place> {
    let buffer = a.buffer();
    if a.device().kind().as_str() == "cuda" {
        if let Some(address) = buffer.device_address() {
            let (device_type, device_id) = match buffer.kind() {
                MemoryKind::Device => (KDL_CUDA, a.device().index() as i32),
                MemoryKind::HostPinned => (KDL_CUDA_HOST, 0),
                MemoryKind::Managed => (KDL_CUDA_MANAGED, a.device().index() as i32),
                MemoryKind::System => (KDL_CPU, 0),
            };
            return Some(Place {
                device: DLDevice { device_type, device_id },
                base: address as usize as *mut u8,
            });
        }
    }
    host_address(a).map(Place::cpu)
}

/// The array's own memory at `place`, or else a contiguous host copy.
/// `wait`: every pending use of the memory is finished first, since the
/// consumer may read and write it from then on (DLPack's `stream=-1`
/// asks for no waiting).
fn prepare(py: Python<'_>, a: &Array, place: Option<Place>, wait: bool) -> PyResult<Prepared> {
    let shape: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    if let Some(place) = place {
        if wait {
            compute(py, || a.buffer().usage().host_wait(Access::Write))?;
        }
        // The view's element offset lies inside the buffer, which the
        // export keeps alive (it holds the array); the address is only
        // computed here, never dereferenced.
        let data = place.base.wrapping_add(a.offset() * a.dtype().size());
        let strides = a.strides().iter().map(|&s| s as i64).collect();
        return Ok(Prepared {
            export: Export {
                array: Some(a.clone()),
                _copy: Vec::new(),
                shape,
                strides,
                sync_on_release: place.device.is_cuda(),
            },
            data,
            device: place.device,
            dtype: dl_dtype(a.dtype()),
            copied: false,
        });
    }
    let mut bytes = compute(py, || a.host_bytes())?;
    let strides = row_major(&shape);
    let data = bytes.as_mut_ptr();
    Ok(Prepared {
        export: Export {
            array: None,
            _copy: bytes,
            shape,
            strides,
            sync_on_release: false,
        },
        data,
        device: HOST,
        dtype: dl_dtype(a.dtype()),
        copied: true,
    })
}

/// How `__dlpack__` hands an array out.
enum Plan {
    /// Its own memory, in place.
    InPlace(Place),
    /// A copy on its own device, exported in place (`copy=True` for
    /// memory DLPack names).
    DeviceCopy,
    /// A contiguous host copy.
    HostCopy,
}

/// The plan for a `__dlpack__` request, or the `BufferError` that says
/// why it cannot be met.
fn plan(a: &Array, dl_device: Option<(i32, i32)>, copy: Option<bool>) -> PyResult<Plan> {
    let own = own_place(a);
    let own_code = code_of(a, own);
    let to_host = dl_device == Some((KDL_CPU, 0)) && own_code != (KDL_CPU, 0);
    if let Some(wanted) = dl_device.filter(|&d| d != own_code && !to_host) {
        return Err(PyBufferError::new_err(format!(
            "anydev cannot export {} to DLPack device {wanted:?}; only to its own, {own_code:?}, or to the host, (1, 0)",
            a.device()
        )));
    }
    let not_host =
        |how: &str| PyBufferError::new_err(format!("the memory of {} is not host memory; {how}", a.device()));
    if to_host {
        // Pinned and managed memory the host reaches in place.
        let host = host_address(a);
        return match (host, copy) {
            (Some(ptr), Some(false) | None) => Ok(Plan::InPlace(Place::cpu(ptr))),
            (_, Some(true)) | (None, None) => Ok(Plan::HostCopy),
            (None, Some(false)) => Err(not_host("exporting it to the host needs a copy (copy=False was asked)")),
        };
    }
    match (own, copy) {
        (Some(place), Some(false) | None) => Ok(Plan::InPlace(place)),
        (Some(place), Some(true)) if place.device.device_type == KDL_CPU => Ok(Plan::HostCopy),
        (Some(_), Some(true)) => Ok(Plan::DeviceCopy),
        (None, Some(true)) => Ok(Plan::HostCopy),
        (None, Some(false)) => Err(not_host("exporting it needs a copy (copy=False was asked)")),
        (None, None) => Err(not_host(
            "ask for a host copy with dl_device=(1, 0) or copy=True, or move the array with to_device('cpu:0')",
        )),
    }
}

/// Whether to wait for pending work before handing out memory in place,
/// from DLPack's `stream`: host memory takes none; CUDA memory takes
/// `None` (the legacy default stream), a stream handle, or -1 (no
/// synchronisation). The wait is on the host, so it orders the memory
/// before any consumer stream.
fn wait_for(stream: Option<&Bound<'_, PyAny>>, device: DLDevice) -> PyResult<bool> {
    let Some(stream) = stream else {
        return Ok(true);
    };
    if !device.is_cuda() {
        return Err(PyValueError::new_err(format!(
            "a DLPack export to device type {} takes no stream (stream=None)",
            device.device_type
        )));
    }
    match stream.extract::<i64>()? {
        0 => Err(PyValueError::new_err(
            "stream=0 is ambiguous for CUDA (DLPack): pass 1 for the legacy default stream, 2 for the \
             per-thread default stream, or the stream's handle",
        )),
        -1 => Ok(false),
        _ => Ok(true),
    }
}

/// Legacy and versioned managed tensors, each boxed with what it keeps alive.
#[repr(C)]
struct LegacyBox {
    tensor: DLManagedTensor,
    export: Export,
}

#[repr(C)]
struct VersionedBox {
    tensor: DLManagedTensorVersioned,
    export: Export,
}

/// The deleter of a legacy tensor.
///
/// # Safety
/// `t` is the first field of a leaked `Box<LegacyBox>`, deleted once.
unsafe extern "C" fn delete_legacy(t: *mut DLManagedTensor) {
    // SAFETY: see the function's contract; `tensor` is at offset 0.
    drop(unsafe { Box::from_raw(t as *mut LegacyBox) });
}

/// The deleter of a versioned tensor.
///
/// # Safety
/// `t` is the first field of a leaked `Box<VersionedBox>`, deleted once.
unsafe extern "C" fn delete_versioned(t: *mut DLManagedTensorVersioned) {
    // SAFETY: see the function's contract; `tensor` is at offset 0.
    drop(unsafe { Box::from_raw(t as *mut VersionedBox) });
}

/// The capsule destructor: a capsule nobody consumed (still named
/// `dltensor[_versioned]`) deletes its tensor; a consumer renames it and
/// calls the deleter itself.
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls this with the capsule being destroyed; the
    // pointer under either live name is the managed tensor this module
    // made, not yet deleted because the capsule was not consumed.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()) as *mut DLManagedTensor;
            delete_legacy(t);
        } else if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            delete_versioned(t);
        }
    }
}

/// A capsule named `name` owning `pointer` (a leaked managed tensor).
fn capsule<'py>(py: Python<'py>, pointer: *mut c_void, name: &'static CStr) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `pointer` is a valid managed tensor that the capsule owns
    // from here on; the name is static; the destructor matches the name.
    unsafe {
        let raw = ffi::PyCapsule_New(pointer, name.as_ptr(), Some(capsule_destructor));
        Bound::from_owned_ptr_or_err(py, raw)
    }
}

/// The DLPack device of an array: its own memory's code (host memory
/// kDLCPU, CUDA memory by kind), else kDLExtDev with the device's index
/// (DLPack has no code for most anydev devices).
fn code_of(a: &Array, own: Option<Place>) -> (i32, i32) {
    own.map_or((KDL_EXT_DEV, a.device().index() as i32), |place| place.device.code())
}

#[pymethods]
impl PyArray {
    fn __dlpack_device__(&self) -> (i32, i32) {
        code_of(&self.inner, own_place(&self.inner))
    }

    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = &self.inner;
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        let plan = plan(a, dl_device, copy)?;
        let read_only = matches!(plan, Plan::InPlace(_)) && a.is_read_only();
        if read_only && !versioned {
            return Err(PyBufferError::new_err(
                "a read-only array (a broadcast view, or a view of one) cannot go out in place in a legacy \
                 DLPack capsule, which has no read-only flag: pass max_version=(1, 0), or copy=True",
            ));
        }
        let p = match plan {
            Plan::InPlace(place) => prepare(py, a, Some(place), wait_for(stream.as_ref(), place.device)?)?,
            Plan::DeviceCopy => {
                let copied = compute(py, || a.copy())?;
                let place = own_place(&copied).ok_or_else(|| {
                    PyBufferError::new_err(format!("the copy on {} has no DLPack address", a.device()))
                })?;
                let mut p = prepare(py, &copied, Some(place), wait_for(stream.as_ref(), place.device)?)?;
                p.copied = true;
                p
            }
            Plan::HostCopy => {
                wait_for(stream.as_ref(), HOST)?;
                prepare(py, a, None, true)?
            }
        };
        let tensor = |export: &mut Export| DLTensor {
            data: p.data.cast(),
            device: p.device,
            ndim: export.shape.len() as i32,
            dtype: p.dtype,
            shape: export.shape.as_mut_ptr(),
            strides: export.strides.as_mut_ptr(),
            byte_offset: 0,
        };
        let mut export = p.export;
        if versioned {
            let copied = if p.copied { FLAG_IS_COPIED } else { 0 };
            let flags = copied | if read_only { FLAG_READ_ONLY } else { 0 };
            let dl_tensor = tensor(&mut export);
            let boxed = Box::new(VersionedBox {
                tensor: DLManagedTensorVersioned {
                    version: DLPackVersion { major: 1, minor: 1 },
                    manager_ctx: std::ptr::null_mut(),
                    deleter: Some(delete_versioned),
                    flags,
                    dl_tensor,
                },
                export,
            });
            capsule(py, Box::into_raw(boxed).cast(), VERSIONED)
        } else {
            let dl_tensor = tensor(&mut export);
            let boxed = Box::new(LegacyBox {
                tensor: DLManagedTensor {
                    dl_tensor,
                    manager_ctx: std::ptr::null_mut(),
                    deleter: Some(delete_legacy),
                },
                export,
            });
            capsule(py, Box::into_raw(boxed).cast(), LEGACY)
        }
    }

    /// NumPy's conversion protocol, through DLPack: host-memory arrays
    /// convert without a copy, others fail with DLPack's error.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let numpy = py.import("numpy")?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("copy", copy)?;
        let out = numpy.call_method("from_dlpack", (slf,), Some(&kwargs))?;
        let Some(dtype) = dtype else {
            return Ok(out);
        };
        // Another dtype is a copy, which `copy=False` refuses as NumPy's
        // protocol asks; the same dtype stays the view (`from_dlpack` has
        // already copied for `copy=True`).
        let dtype = numpy.call_method1("dtype", (dtype,))?;
        if copy == Some(false) && !out.getattr("dtype")?.eq(&dtype)? {
            return Err(PyValueError::new_err(
                "__array__(copy=False): converting to another dtype needs a copy",
            ));
        }
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("copy", false)?;
        out.call_method("astype", (dtype,), Some(&kwargs))
    }
}

/// Row-major strides, in elements, of `shape` (a zero-length axis counts
/// as one, so the strides stay meaningful).
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

/// `n` entries of a tensor's shape or strides (0-d tensors may carry null).
///
/// # Safety
/// Unless `n` is 0 or `ptr` null, `ptr` points at `n` live `i64`s.
unsafe fn dims<'a>(ptr: *const i64, n: usize) -> Option<&'a [i64]> {
    if ptr.is_null() {
        return (n == 0).then_some(&[]);
    }
    // SAFETY: the function's contract.
    Some(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// Moves the bytes of a strided host tensor into a contiguous vector.
///
/// # Safety
/// `t` describes live host memory of the producer's.
unsafe fn gather(t: &DLTensor, itemsize: usize) -> Vec<u8> {
    let ndim = t.ndim as usize;
    // SAFETY: DLPack guarantees `ndim` entries of shape (and of strides
    // unless null, which means row-major); `layout` checked the shape.
    let shape = unsafe { dims(t.shape, ndim) }.unwrap_or_default();
    let contiguous = row_major(shape);
    // SAFETY: as above.
    let strides = unsafe { dims(t.strides, ndim) }.unwrap_or(&contiguous);
    let count = shape.iter().product::<i64>().max(0) as usize;
    // SAFETY: the data pointer plus byte_offset is the first element.
    let base = unsafe { (t.data as *const u8).add(t.byte_offset as usize) };
    if count <= 1 || strides == contiguous.as_slice() {
        // SAFETY: a row-major tensor's elements are its first `count * itemsize` bytes.
        return unsafe { std::slice::from_raw_parts(base, count * itemsize) }.to_vec();
    }
    let mut out = Vec::with_capacity(count * itemsize);
    let mut index = vec![0i64; ndim];
    for _ in 0..count {
        let elem: i64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        // SAFETY: `index` lies inside `shape`, so the element is inside the
        // producer's tensor.
        let src = unsafe { std::slice::from_raw_parts(base.offset(elem as isize * itemsize as isize), itemsize) };
        out.extend_from_slice(src);
        for axis in (0..ndim).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

/// Host bytes of one dtype, little-endian, as an array on `device`.
pub fn upload(bytes: &[u8], shape: &[usize], dtype: DType, device: Device) -> anydev::Result<Array> {
    with_element!(dtype, T => {
        let data: Vec<T> = bytes.chunks_exact(dtype.size()).map(T::get_le).collect();
        Array::from_slice(&data, shape, device)
    })
}

/// Calls the producer's deleter, once, when the last holder of the tensor
/// (an import in progress, or the arrays lent its memory) lets go.
enum Release {
    Versioned(*mut DLManagedTensorVersioned),
    Legacy(*mut DLManagedTensor),
}

// SAFETY: DLPack lets the consumer call the deleter from any thread, and
// `drop` holds the GIL while it does (deleters release Python objects).
// Until then the struct is only read.
unsafe impl Send for Release {}
// SAFETY: as for `Send`; shared references only read the struct.
unsafe impl Sync for Release {}

impl Release {
    fn tensor(&self) -> &DLTensor {
        // SAFETY: the managed struct lives until the deleter runs, in `drop`.
        unsafe {
            match *self {
                Release::Versioned(m) => &(*m).dl_tensor,
                Release::Legacy(m) => &(*m).dl_tensor,
            }
        }
    }

    /// Whether the producer forbids writes (DLPack 1.0's read-only flag;
    /// legacy capsules have no flags).
    fn read_only(&self) -> bool {
        // SAFETY: as in `tensor`.
        matches!(*self, Release::Versioned(m) if unsafe { (*m).flags } & FLAG_READ_ONLY != 0)
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        // At interpreter shutdown nothing can be handed back any more, and
        // the memory goes with the process.
        Python::try_attach(|_| {
            // SAFETY: the deleter is the producer's, called exactly once,
            // here, on the struct it was handed out with.
            unsafe {
                match *self {
                    Release::Versioned(m) => {
                        if let Some(d) = (*m).deleter {
                            d(m)
                        }
                    }
                    Release::Legacy(m) => {
                        if let Some(d) = (*m).deleter {
                            d(m)
                        }
                    }
                }
            }
        });
    }
}

/// Takes the tensor out of a `dltensor[_versioned]` capsule: marks the
/// capsule used, so the producer's deleter now runs when the returned
/// value (and every array lent its memory) is gone.
fn consume(capsule: &Bound<'_, PyAny>) -> PyResult<Arc<Release>> {
    let raw = capsule.as_ptr();
    // SAFETY: the capsule came from a `__dlpack__` call; its name says
    // which struct its pointer is. A capsule that is not taken stays the
    // capsule's to release.
    unsafe {
        if ffi::PyCapsule_IsValid(raw, VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(raw, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            if (*m).version.major != 1 {
                return Err(PyBufferError::new_err(format!(
                    "DLPack version {}.{} is not supported (anydev reads 1.x)",
                    (*m).version.major,
                    (*m).version.minor
                )));
            }
            ffi::PyCapsule_SetName(raw, VERSIONED_USED.as_ptr());
            Ok(Arc::new(Release::Versioned(m)))
        } else if ffi::PyCapsule_IsValid(raw, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(raw, LEGACY.as_ptr()) as *mut DLManagedTensor;
            ffi::PyCapsule_SetName(raw, LEGACY_USED.as_ptr());
            Ok(Arc::new(Release::Legacy(m)))
        } else {
            Err(PyTypeError::new_err(
                "__dlpack__ did not return an unused DLPack capsule",
            ))
        }
    }
}

/// Whether the host reads memory of DLPack device type `code` in place.
fn host_code(code: i32) -> bool {
    code == KDL_CPU || code == KDL_CUDA_HOST
}

/// The DLPack device `(type, id)` the producer `x` says its memory is on.
fn producer_device(x: &Bound<'_, PyAny>) -> Option<(i32, i32)> {
    x.call_method0("__dlpack_device__")
        .and_then(|d| d.extract::<(i32, i32)>())
        .ok()
}

/// Whether the DLPack producer `x` says its memory is host memory.
pub fn host_producer(x: &Bound<'_, PyAny>) -> bool {
    producer_device(x).is_some_and(|(code, _)| host_code(code))
}

/// Whether DLPack device type `code` is a CUDA device's own memory
/// (device or managed), which only a `cuda` device uses in place.
fn cuda_code(code: i32) -> bool {
    code == KDL_CUDA || code == KDL_CUDA_MANAGED
}

/// The tensor's dtype and shape, when anydev has its dtype.
fn layout(t: &DLTensor) -> PyResult<(DType, Vec<usize>)> {
    let dtype = from_dl_dtype(t.dtype).ok_or_else(|| {
        PyBufferError::new_err(format!(
            "DLPack dtype (code {}, bits {}, lanes {}) has no anydev dtype",
            t.dtype.code, t.dtype.bits, t.dtype.lanes
        ))
    })?;
    // SAFETY: DLPack gives `ndim` shape entries.
    let shape = unsafe { dims(t.shape, t.ndim as usize) }
        .ok_or_else(|| PyBufferError::new_err("a DLPack tensor without a shape"))?;
    if shape.iter().any(|&d| d < 0) {
        return Err(PyBufferError::new_err(format!("a DLPack tensor of shape {shape:?}")));
    }
    Ok((dtype, shape.iter().map(|&d| d as usize).collect()))
}

/// Where a tensor's elements lie: the address of the lowest one it
/// reaches, the bytes from there to the end of the highest, and the
/// strides and element offset that find element 0 from that address.
struct Extent {
    first: u64,
    len: usize,
    strides: Vec<isize>,
    offset: usize,
}

/// The extent of a tensor of `dtype` and `shape`, or why it has none
/// (empty).
fn extent(release: &Release, dtype: DType, shape: &[usize]) -> Result<Extent, String> {
    let t = release.tensor();
    if shape.contains(&0) || t.data.is_null() {
        return Err("the tensor has no memory to share".into());
    }
    let contiguous = row_major(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>());
    // SAFETY: DLPack gives `ndim` stride entries unless the pointer is null
    // (row-major).
    let strides = unsafe { dims(t.strides, t.ndim as usize) }.unwrap_or(&contiguous);
    // The lowest and highest element the layout reaches, from element 0.
    let (low, high) = shape.iter().zip(strides).fold((0i64, 0i64), |(low, high), (&n, &s)| {
        let reach = (n as i64 - 1).saturating_mul(s);
        (low + reach.min(0), high + reach.max(0))
    });
    let item = dtype.size() as i64;
    Ok(Extent {
        first: (t.data as u64)
            .wrapping_add(t.byte_offset)
            .wrapping_add_signed(low * item),
        len: ((high - low + 1) * item) as usize,
        strides: strides.iter().map(|&s| s as isize).collect(),
        offset: (-low) as usize,
    })
}

/// An array on `cpu:0` over the producer's host memory, without a copy,
/// or why there cannot be one (read-only or empty memory, misaligned
/// elements).
fn lend(release: &Arc<Release>, dtype: DType, shape: &[usize]) -> Result<Array, String> {
    if release.read_only() {
        return Err(READ_ONLY.into());
    }
    let e = extent(release, dtype, shape)?;
    let ptr = std::ptr::NonNull::new(e.first as usize as *mut u8).ok_or("the tensor's memory is at address 0")?;
    // SAFETY: the producer keeps every element of the tensor, `e.len` bytes
    // from `e.first`, alive and writable (it is not read-only) until its
    // deleter runs, which the owner, a holder of `release`, delays. Writes
    // by the producer's other views are the caller's to order, as between
    // two NumPy views.
    let memory = unsafe { ForeignHost::new(ptr, e.len, Box::new(Arc::clone(release))) };
    Array::from_foreign_host(memory, dtype, shape, &e.strides, e.offset).map_err(|e| e.to_string())
}

/// An array on the `cuda` device `target` over the producer's CUDA memory,
/// without a copy, or why there cannot be one (empty memory, memory the
/// CUDA backend will not take: another device's, misaligned). Read-only
/// memory is the caller's to copy at once.
fn lend_device(release: &Arc<Release>, dtype: DType, shape: &[usize], target: Device) -> Result<Array, String> {
    let e = extent(release, dtype, shape)?;
    // SAFETY: as in `lend`: the producer keeps the tensor's memory
    // allocated until its deleter runs, which the owner delays, and its
    // pending writes come before `target`'s work (`import_cuda`'s stream
    // handshake). The backend checks the range with the
    // driver before any use, and waits for its work before it lets go.
    // Read-only memory is only read, by the copy the caller makes.
    let memory = unsafe { ForeignDevice::new(e.first, e.len, Box::new(Arc::clone(release))) };
    Array::from_foreign_device(target, memory, dtype, shape, &e.strides, e.offset).map_err(|e| e.to_string())
}

/// The anydev `cuda` device of a DLPack CUDA device id, where the runtime
/// has it.
fn cuda_device(id: i32) -> Option<Device> {
    let index = usize::try_from(id).ok()?;
    let kind = DeviceKind::parse("cuda").ok()?;
    (index < anydev::accelerator::device_count("cuda")).then(|| Device::new(kind, index))
}

/// Calls the producer's `__dlpack__` with `kwargs` and DLPack 1.x's
/// `max_version`, and takes the tensor out of the capsule.
fn request(py: Python<'_>, x: &Bound<'_, PyAny>, kwargs: &Bound<'_, pyo3::types::PyDict>) -> PyResult<Arc<Release>> {
    kwargs.set_item("max_version", (1, 1))?;
    let capsule = match x.call_method("__dlpack__", (), Some(kwargs)) {
        Ok(c) => c,
        // Producers from before DLPack 1.0 take no max_version.
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            kwargs.del_item("max_version")?;
            x.call_method("__dlpack__", (), Some(kwargs))?
        }
        Err(e) => return Err(e),
    };
    consume(&capsule)
}

/// A DLPack producer's tensor on `device`: by default the producer's own
/// device (`cuda:N` for a CUDA tensor where anydev has that GPU, else
/// `cpu:0`). The array uses the producer's memory in place when it can
/// (writable, aligned, not empty, and `device` reaches that memory: a CUDA
/// tensor on its own `cuda` device; host memory on cpu:0, or on a
/// unified-memory device through `Array::share_to`) unless `copy=True`;
/// when it cannot, it is a copy, which `copy=False` refuses. CUDA memory
/// bound elsewhere arrives through a host copy the producer makes.
/// anydev arrays import without DLPack.
pub fn import(py: Python<'_>, x: &Bound<'_, PyAny>, device: Option<PyDevice>, copy: Option<bool>) -> PyResult<Array> {
    if let Ok(a) = x.cast::<PyArray>() {
        let a = a.get().inner.clone();
        let target = device_of(device).unwrap_or(a.device());
        if copy == Some(false) {
            // Never a copy: the same memory, reached from `target`, or why not.
            return py
                .detach(|| a.share_to(target))
                .map_err(|e| in_place_refused(e.to_string()));
        }
        return compute(py, || unshared(a.to_device(target)?, &a, copy == Some(true)));
    }
    if !x.hasattr("__dlpack__")? {
        return Err(PyTypeError::new_err(format!(
            "from_dlpack needs an object with __dlpack__ and __dlpack_device__ (an array of a DLPack library), \
             got {}",
            x.get_type().name()?
        )));
    }
    let cuda = producer_device(x).filter(|d| cuda_code(d.0));
    let home = cuda.and_then(|(_, id)| cuda_device(id));
    let target = device_of(device).or(home).unwrap_or(Device::cpu());
    let kwargs = pyo3::types::PyDict::new(py);
    if let Some(code) = cuda {
        if home == Some(target) {
            return import_cuda(py, x, target, copy);
        }
        if copy == Some(false) {
            return Err(PyBufferError::new_err(format!(
                "from_dlpack(copy=False): the producer's memory is on DLPack device {code:?}, which {target} \
                 takes only through a host copy"
            )));
        }
        ask_for_host_copy(&kwargs)?;
    }
    import_host(py, x, &kwargs, target, copy)
}

/// DLPack 1.0's request for a copy in host memory, made by the producer.
fn ask_for_host_copy(kwargs: &Bound<'_, pyo3::types::PyDict>) -> PyResult<()> {
    kwargs.set_item("dl_device", (KDL_CPU, 0))?;
    kwargs.set_item("copy", true)
}

/// The producer's host tensor (`__dlpack__(**kwargs)`) on `target`: in
/// place where `target` reaches it and no copy is asked for, else copied.
fn import_host(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    kwargs: &Bound<'_, pyo3::types::PyDict>,
    target: Device,
    copy: Option<bool>,
) -> PyResult<Array> {
    let release = request(py, x, kwargs)?;
    if !host_code(release.tensor().device.device_type) {
        return Err(PyBufferError::new_err(format!(
            "anydev imports host memory (kDLCPU, kDLCUDAHost) on {target}, not DLPack device type {}; \
             the producer did not make the host copy anydev asked for",
            release.tensor().device.device_type
        )));
    }
    let (dtype, shape) = layout(release.tensor())?;
    let lent = match copy {
        Some(true) => Err("a copy was asked for".to_owned()),
        _ => lend(&release, dtype, &shape).and_then(|host| host.share_to(target).map_err(|e| e.to_string())),
    };
    match lent {
        Ok(array) => Ok(array),
        Err(why) if copy == Some(false) => Err(in_place_refused(why)),
        Err(_) => {
            // SAFETY: the tensor's memory is live while `release` is held.
            let bytes = unsafe { gather(release.tensor(), dtype.size()) };
            drop(release);
            compute(py, || upload(&bytes, &shape, dtype, target))
        }
    }
}

/// A CUDA tensor on its own GPU, `target`: in place, or copied on the
/// device for `copy=True`, read-only or misaligned memory. The producer
/// orders its pending work before the legacy default stream (`stream=1`),
/// and `target` then follows that stream. Handing the producer anydev's
/// own stream would do the same, but PyTorch then builds an event in Python
/// on every call (10 to 15 µs of a 23 to 35 µs import on an H100 or H200).
fn import_cuda(py: Python<'_>, x: &Bound<'_, PyAny>, target: Device, copy: Option<bool>) -> PyResult<Array> {
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("stream", 1)?;
    let release = request(py, x, &kwargs)?;
    if !anydev::follow_platform_stream(target).map_err(to_py)? {
        return Err(PyBufferError::new_err(format!(
            "{target} has no default stream of its platform to order the producer's work before"
        )));
    }
    let code = release.tensor().device;
    if !cuda_code(code.device_type) || i32::try_from(target.index()) != Ok(code.device_id) {
        return Err(PyBufferError::new_err(format!(
            "the producer exported DLPack device {:?} where its __dlpack_device__ said CUDA memory of {target}",
            code.code()
        )));
    }
    let (dtype, shape) = layout(release.tensor())?;
    if shape.contains(&0) {
        if copy == Some(false) {
            return Err(in_place_refused("the tensor has no memory to share".into()));
        }
        return compute(py, || upload(&[], &shape, dtype, target));
    }
    let read_only = release.read_only();
    if read_only && copy == Some(false) {
        return Err(in_place_refused(READ_ONLY.into()));
    }
    match lend_device(&release, dtype, &shape, target) {
        Ok(array) if copy == Some(false) || (copy.is_none() && !read_only) => Ok(array),
        Ok(array) => compute(py, || array.copy()),
        Err(why) if copy == Some(false) => Err(in_place_refused(why)),
        Err(_) => {
            // Memory the backend would not take: the producer's host copy.
            drop(release);
            let kwargs = pyo3::types::PyDict::new(py);
            ask_for_host_copy(&kwargs)?;
            import_host(py, x, &kwargs, target, Some(true))
        }
    }
}

const READ_ONLY: &str = "the producer exports its memory read-only";

fn in_place_refused(why: String) -> PyErr {
    PyBufferError::new_err(format!(
        "from_dlpack(copy=False) cannot use the producer's memory in place: {why}"
    ))
}

#[pyfunction]
#[pyo3(signature = (x, /, *, device = None, copy = None))]
fn from_dlpack(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    device: Option<PyDevice>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    import(py, x, device, copy).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    Ok(())
}
