//! NCCL's C API, opened at run time.
//!
//! cudarc has NCCL bindings, but its loader looks only for `libnccl.so`
//! and the CUDA-versioned names, while NCCL's runtime file is
//! `libnccl.so.2` (the only name NVIDIA's `nvidia-nccl-cu12`/`-cu13`
//! wheels and Debian's `libnccl2` ship), and its result and dtype enums
//! would be undefined behaviour for a code a newer NCCL adds. So the
//! backend opens the library itself and keeps NCCL's codes as plain
//! integers. Every symbol is looked up when the library is opened: a
//! missing one makes NCCL unavailable with its name, not a later panic.

use crate::driver::CUstream;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

/// `ANYDEV_NCCL_PATH`: the NCCL library (`libnccl.so.2`), by path.
pub const NCCL_PATH_ENV: &str = "ANYDEV_NCCL_PATH";

/// The names tried, in order, when `ANYDEV_NCCL_PATH` is unset.
const CANDIDATES: &[&str] = &["libnccl.so.2", "libnccl.so"];

/// The oldest NCCL with non-blocking communicators (`ncclConfig_t`),
/// which a join timeout and abort need: 2.14.
pub const MIN_VERSION: c_int = 21400;

pub type NcclResult = c_int;
pub const SUCCESS: NcclResult = 0;
pub const IN_PROGRESS: NcclResult = 7;

/// `ncclComm_t`.
pub type RawComm = *mut c_void;

/// `ncclDataType_t` codes.
pub mod dtype {
    use std::ffi::c_int;
    pub const INT8: c_int = 0;
    pub const UINT8: c_int = 1;
    pub const INT32: c_int = 2;
    pub const UINT32: c_int = 3;
    pub const INT64: c_int = 4;
    pub const UINT64: c_int = 5;
    pub const FLOAT16: c_int = 6;
    pub const FLOAT32: c_int = 7;
    pub const FLOAT64: c_int = 8;
    pub const BFLOAT16: c_int = 9;
}

/// `ncclRedOp_t` codes.
pub mod redop {
    use std::ffi::c_int;
    pub const SUM: c_int = 0;
    pub const PROD: c_int = 1;
    pub const MAX: c_int = 2;
    pub const MIN: c_int = 3;
}

/// `NCCL_UNIQUE_ID_BYTES`.
pub const UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    pub internal: [u8; UNIQUE_ID_BYTES],
}

/// `ncclConfig_t` as NCCL 2.14 defined it. Later versions append fields
/// and read the struct by its `size` and `version`, so this prefix works
/// with every NCCL since 2.14 and leaves the appended fields at their
/// defaults.
#[repr(C)]
pub struct Config {
    size: usize,
    magic: c_uint,
    version: c_uint,
    blocking: c_int,
}

impl Config {
    /// A non-blocking communicator's configuration: calls return
    /// `ncclInProgress` instead of waiting, so a join or a connection to
    /// a dead peer can be timed out and aborted.
    pub fn non_blocking() -> Config {
        Config {
            size: std::mem::size_of::<Config>(),
            magic: 0xcafe_beef,
            version: MIN_VERSION as c_uint,
            blocking: 0,
        }
    }
}

type Stream = CUstream;

/// The entry points the backend calls, resolved once.
pub struct Nccl {
    pub version: c_int,
    pub get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> NcclResult,
    pub comm_init_rank_config: unsafe extern "C" fn(*mut RawComm, c_int, UniqueId, c_int, *mut Config) -> NcclResult,
    pub comm_get_async_error: unsafe extern "C" fn(RawComm, *mut NcclResult) -> NcclResult,
    pub comm_abort: unsafe extern "C" fn(RawComm) -> NcclResult,
    pub comm_destroy: unsafe extern "C" fn(RawComm) -> NcclResult,
    get_error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    get_last_error: unsafe extern "C" fn(RawComm) -> *const c_char,
    pub all_reduce:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, RawComm, Stream) -> NcclResult,
    pub broadcast: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, RawComm, Stream) -> NcclResult,
    pub all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, RawComm, Stream) -> NcclResult,
    pub reduce_scatter:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, RawComm, Stream) -> NcclResult,
    pub send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, RawComm, Stream) -> NcclResult,
    pub recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, Stream) -> NcclResult,
    pub group_start: unsafe extern "C" fn() -> NcclResult,
    pub group_end: unsafe extern "C" fn() -> NcclResult,
    /// Kept open for the life of the process: the pointers above are into it.
    _library: libloading::Library,
}

/// NCCL, opened on first use, or why it cannot be used.
pub fn nccl() -> Result<&'static Nccl, String> {
    static NCCL: OnceLock<Result<Nccl, String>> = OnceLock::new();
    NCCL.get_or_init(open).as_ref().map_err(Clone::clone)
}

fn open() -> Result<Nccl, String> {
    let library = open_library()?;
    let lookup_failed = |name: &str, e: libloading::Error| {
        format!("the NCCL library lacks {name} ({e}); anydev needs NCCL 2.14 or later")
    };
    macro_rules! symbol {
        ($name:literal) => {
            // SAFETY: the symbol is NCCL's public function of that name,
            // whose C signature the field's type spells out; the pointer
            // stays valid while `_library` is held.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|e| lookup_failed($name, e))?
        };
    }
    let get_version: unsafe extern "C" fn(*mut c_int) -> NcclResult = symbol!("ncclGetVersion");
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    if unsafe { get_version(&mut version) } != SUCCESS || version < MIN_VERSION {
        return Err(format!(
            "NCCL {} is too old; anydev needs 2.14 or later (non-blocking communicators)",
            version_string(version)
        ));
    }
    Ok(Nccl {
        version,
        get_unique_id: symbol!("ncclGetUniqueId"),
        comm_init_rank_config: symbol!("ncclCommInitRankConfig"),
        comm_get_async_error: symbol!("ncclCommGetAsyncError"),
        comm_abort: symbol!("ncclCommAbort"),
        comm_destroy: symbol!("ncclCommDestroy"),
        get_error_string: symbol!("ncclGetErrorString"),
        get_last_error: symbol!("ncclGetLastError"),
        all_reduce: symbol!("ncclAllReduce"),
        broadcast: symbol!("ncclBroadcast"),
        all_gather: symbol!("ncclAllGather"),
        reduce_scatter: symbol!("ncclReduceScatter"),
        send: symbol!("ncclSend"),
        recv: symbol!("ncclRecv"),
        group_start: symbol!("ncclGroupStart"),
        group_end: symbol!("ncclGroupEnd"),
        _library: library,
    })
}

fn open_library() -> Result<libloading::Library, String> {
    if let Some(path) = std::env::var_os(NCCL_PATH_ENV).filter(|p| !p.is_empty()) {
        // SAFETY: loading runs the library's initialisers; it is NVIDIA's
        // NCCL, named explicitly by the user.
        return unsafe { libloading::Library::new(&path) }
            .map_err(|e| format!("{NCCL_PATH_ENV}={}: {e}", path.to_string_lossy()));
    }
    let mut errors = Vec::new();
    for name in CANDIDATES {
        // SAFETY: as above, found by the dynamic loader's search.
        match unsafe { libloading::Library::new(*name) } {
            Ok(library) => return Ok(library),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(format!(
        "NCCL was not found ({}); install it (pip install nvidia-nccl-cu12, or the libnccl2 package) and \
         put it on the loader's path or set {NCCL_PATH_ENV}",
        errors.join("; ")
    ))
}

/// `2.27.3` for NCCL's integer version.
pub fn version_string(version: c_int) -> String {
    format!("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100)
}

impl Nccl {
    /// NCCL's words for `result`, with the communicator's last error
    /// message when NCCL left one.
    pub(crate) fn describe(&self, result: NcclResult, comm: RawComm) -> String {
        let read = |p: *const c_char| {
            // SAFETY: NCCL returns NUL-terminated strings it owns (static
            // for error strings, per thread for the last error).
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        // SAFETY: any result code is accepted.
        let name = read(unsafe { (self.get_error_string)(result) }).unwrap_or_else(|| format!("code {result}"));
        // SAFETY: NULL or a live communicator are both accepted.
        match read(unsafe { (self.get_last_error)(comm) }).filter(|s| !s.is_empty()) {
            Some(detail) => format!("{name} ({detail})"),
            None => name,
        }
    }
}
