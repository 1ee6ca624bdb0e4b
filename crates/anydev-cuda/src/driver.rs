//! The thin layer over the CUDA driver API: result checking, error
//! messages, the per-call context binding and the raw handle types that
//! the rest of the crate shares between threads.

use anydev_core::Error;
use cudarc::driver::sys;
use std::ffi::CStr;

pub use sys::{CUcontext, CUdevice, CUdeviceptr, CUevent, CUfunction, CUmodule, CUresult, CUstream};

/// Backend name used in error messages.
pub const NAME: &str = "cuda";

/// Driver entry points the backend calls. Their presence is checked once
/// at initialisation, so no later call can hit cudarc's panic on a missing
/// symbol (a driver older than the CUDA 12.2 API the bindings target).
/// The backend calls the driver only through `cudarc::driver::sys`, never
/// through cudarc's safe wrappers, so this is exactly the set of `sys::cu*`
/// functions named in this crate's sources (a test compares the two).
/// Modules are kept for the life of the process, so `cuModuleUnload` is
/// not called and not listed.
pub const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDeviceCanAccessPeer",
    "cuDevicePrimaryCtxRetain",
    "cuDeviceGetDefaultMemPool",
    "cuCtxSetCurrent",
    "cuCtxEnablePeerAccess",
    "cuCtxSynchronize",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuEventElapsedTime",
    "cuEventDestroy_v2",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocManaged",
    "cuMemPrefetchAsync",
    "cuMemAdvise",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemHostGetDevicePointer_v2",
    "cuMemPoolSetAttribute",
    "cuMemcpyAsync",
    "cuMemcpyPeerAsync",
    "cuMemsetD8Async",
    "cuMemsetD16Async",
    "cuMemsetD32Async",
    "cuPointerGetAttributes",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// The symbols of `REQUIRED_SYMBOLS` the loaded driver lacks.
pub fn missing_symbols() -> Vec<&'static str> {
    // SAFETY: the driver library was checked to open before this is called;
    // `culib` opens it (once) and looking a symbol up has no side effects.
    let lib = unsafe { sys::culib() };
    REQUIRED_SYMBOLS
        .iter()
        .copied()
        // SAFETY: only the address is looked up; nothing is called.
        .filter(|name| unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_err())
        .collect()
}

/// The driver's name and description of a result code.
pub fn describe(r: CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: valid out-pointers; the driver returns static strings.
    let (rn, rt) = unsafe { (sys::cuGetErrorName(r, &mut name), sys::cuGetErrorString(r, &mut text)) };
    let read = |ok: CUresult, p: *const std::ffi::c_char| {
        // SAFETY: on success `p` is a static NUL-terminated string.
        (ok == CUresult::CUDA_SUCCESS && !p.is_null())
            .then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    match (read(rn, name), read(rt, text)) {
        (Some(n), Some(t)) => format!("{n}: {t}"),
        (Some(n), None) => n,
        _ => format!("{r:?}"),
    }
}

/// `Ok` for `CUDA_SUCCESS`, else a backend error naming the call.
pub fn check(r: CUresult, what: &str) -> Result<(), Error> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::backend(NAME, format!("{what} failed: {}", describe(r))))
    }
}

/// Makes `ctx` current on the calling thread. Every backend entry point
/// calls this for the device it names (or its stream's or buffer's), so
/// work never lands on whatever device happens to be current.
pub fn bind(ctx: CUcontext) -> Result<(), Error> {
    // SAFETY: `ctx` is a retained primary context that outlives the backend.
    check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")
}

/// A raw driver handle that may cross threads: CUDA handles are plain
/// identifiers valid from any thread once their context is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw<T>(pub T);

// SAFETY: see the type's documentation; the driver API is thread-safe.
unsafe impl<T> Send for Raw<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Raw<T> {}

/// Reads an integer device attribute (0 when the driver does not know it).
pub fn attribute(dev: CUdevice, attr: sys::CUdevice_attribute) -> i32 {
    let mut v = 0;
    // SAFETY: valid out-pointer and device handle.
    let r = unsafe { sys::cuDeviceGetAttribute(&mut v, attr, dev) };
    if r == CUresult::CUDA_SUCCESS {
        v
    } else {
        0
    }
}

/// Creates an event in the current context: without timing (the cheap
/// kind, for ordering) unless `timed`.
pub fn new_event(timed: bool) -> Result<CUevent, Error> {
    let flags = if timed {
        sys::CUevent_flags::CU_EVENT_DEFAULT
    } else {
        sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
    };
    let mut e: CUevent = std::ptr::null_mut();
    // SAFETY: valid out-pointer; a context is current.
    check(unsafe { sys::cuEventCreate(&mut e, flags as u32) }, "cuEventCreate")?;
    Ok(e)
}

/// Makes `waiter` (in context `waiter_ctx`) wait for all work enqueued so
/// far on `on` (in context `on_ctx`). The event is made and recorded in
/// `on`'s context, as the driver requires, and released at once (the
/// driver keeps it until it completes). Leaves `waiter_ctx` current.
pub fn order_after(waiter: CUstream, waiter_ctx: CUcontext, on: CUstream, on_ctx: CUcontext) -> Result<(), Error> {
    if waiter == on {
        return Ok(());
    }
    bind(on_ctx)?;
    let e = new_event(false)?;
    // SAFETY: `e` is a live event of `on`'s context; the streams are live.
    let mut r = unsafe { sys::cuEventRecord(e, on) };
    if r == CUresult::CUDA_SUCCESS {
        // SAFETY: as above; waiting on an event of another context is allowed.
        r = unsafe { sys::cuStreamWaitEvent(waiter, e, 0) };
    }
    // SAFETY: destroying a recorded event is allowed; it is freed once complete.
    unsafe { sys::cuEventDestroy_v2(e) };
    bind(waiter_ctx)?;
    check(r, "ordering two streams")
}

#[cfg(test)]
mod tests {
    use super::REQUIRED_SYMBOLS;
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The driver functions the crate's sources call through `sys`.
    fn called_in_sources() -> BTreeSet<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut names = BTreeSet::new();
        for entry in std::fs::read_dir(&src).expect("src directory") {
            let path = entry.expect("directory entry").path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source file");
            for (i, _) in text.match_indices("sys::cu") {
                let rest = &text[i + "sys::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                // `sys::culib` opens the library; it is not an entry point.
                if rest[end..].starts_with('(') && &rest[..end] != "culib" {
                    names.insert(rest[..end].to_string());
                }
            }
        }
        names
    }

    #[test]
    fn required_symbols_are_exactly_the_driver_calls_in_the_sources() {
        let listed: BTreeSet<String> = REQUIRED_SYMBOLS.iter().map(|s| s.to_string()).collect();
        assert_eq!(listed.len(), REQUIRED_SYMBOLS.len(), "duplicates in REQUIRED_SYMBOLS");
        let called = called_in_sources();
        assert!(called.contains("cuPointerGetAttributes"), "{called:?}");
        let unlisted: Vec<_> = called.difference(&listed).collect();
        let uncalled: Vec<_> = listed.difference(&called).collect();
        assert!(unlisted.is_empty(), "called but not in REQUIRED_SYMBOLS: {unlisted:?}");
        assert!(
            uncalled.is_empty(),
            "in REQUIRED_SYMBOLS but never called: {uncalled:?}"
        );
    }
}
