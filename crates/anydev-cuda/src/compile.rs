//! Run-time compilation of generated modules with NVRTC, and the on-disk
//! cache of the results.
//!
//! A module compiles to a CUBIN for the device's own architecture when
//! NVRTC knows it, else to PTX for the newest architecture NVRTC knows
//! (which the driver JIT-compiles). Results are cached on disk under a key
//! hashing the source, the target, the NVRTC version, the driver version
//! and the options; an entry that fails its length or checksum test is
//! compiled again and rewritten, never trusted.

use crate::loader::{self, Lib};
use cudarc::nvrtc::sys as nvrtc;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// `ANYDEV_CUDA_CACHE_DIR`: where compiled modules are kept.
pub const CACHE_DIR_ENV: &str = "ANYDEV_CUDA_CACHE_DIR";
/// `ANYDEV_CUDA_CACHE=0`: compile every module afresh, read and write no cache.
pub const CACHE_ENV: &str = "ANYDEV_CUDA_CACHE";

/// Options every module is compiled with. `--fmad=false` keeps `a * b + c`
/// two roundings, as on the host, so results match the host kernels.
pub const OPTIONS: &[&str] = &["--std=c++17", "--fmad=false"];

/// Bumped when the cache file layout or the meaning of a key changes.
const FORMAT: &str = "anydev-cuda-cache-1";
const MAGIC: &[u8; 8] = b"ADCUDA01";

/// What to compile for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Compute capability as `major * 10 + minor` (90 for sm_90).
    pub arch: u32,
    /// A CUBIN for `sm_<arch>` (true) or PTX for `compute_<arch>`.
    pub cubin: bool,
}

impl Target {
    pub fn option(&self) -> String {
        if self.cubin {
            format!("--gpu-architecture=sm_{}", self.arch)
        } else {
            format!("--gpu-architecture=compute_{}", self.arch)
        }
    }

    fn extension(&self) -> &'static str {
        if self.cubin {
            "cubin"
        } else {
            "ptx"
        }
    }
}

/// A compiled module image (CUBIN bytes, or NUL-terminated PTX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub bytes: Vec<u8>,
}

/// NVRTC's version as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    loader::available(Lib::Nvrtc)?;
    guarded(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        let r = unsafe { nvrtc::nvrtcVersion(&mut major, &mut minor) };
        check(r, "nvrtcVersion")?;
        Ok((major, minor))
    })
}

/// The architectures NVRTC can generate code for (`[50, 52, ..., 90]`).
pub fn supported_archs() -> Result<Vec<u32>, String> {
    loader::available(Lib::Nvrtc)?;
    guarded(|| {
        let mut n = 0;
        // SAFETY: a valid out-pointer.
        check(
            unsafe { nvrtc::nvrtcGetNumSupportedArchs(&mut n) },
            "nvrtcGetNumSupportedArchs",
        )?;
        let mut archs = vec![0i32; n.max(0) as usize];
        // SAFETY: the buffer holds the `n` entries NVRTC reported.
        check(
            unsafe { nvrtc::nvrtcGetSupportedArchs(archs.as_mut_ptr()) },
            "nvrtcGetSupportedArchs",
        )?;
        Ok(archs.into_iter().filter(|&a| a > 0).map(|a| a as u32).collect())
    })
}

/// The target for a device of compute capability `arch`: its own SASS when
/// NVRTC supports it, else PTX for the newest older architecture NVRTC has.
pub fn target_for(arch: u32, supported: &[u32]) -> Option<Target> {
    if supported.contains(&arch) {
        return Some(Target { arch, cubin: true });
    }
    supported
        .iter()
        .copied()
        .filter(|&a| a <= arch)
        .max()
        .map(|a| Target { arch: a, cubin: false })
}

/// Runs `f`, turning a panic inside cudarc (a missing symbol) into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(format!("NVRTC call failed: {message}"))
    })
}

fn check(r: nvrtc::nvrtcResult, what: &str) -> Result<(), String> {
    if r == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        // SAFETY: NVRTC returns a static string for any result code.
        let text = unsafe { nvrtc::nvrtcGetErrorString(r) };
        let text = if text.is_null() {
            format!("{r:?}")
        } else {
            // SAFETY: non-null, NUL-terminated, static.
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        Err(format!("{what}: {text}"))
    }
}

/// Compiles `source` (named `name` in messages) for `target` with NVRTC.
/// A compile error returns NVRTC's log.
pub fn compile(name: &str, source: &str, target: Target) -> Result<Image, String> {
    loader::available(Lib::Nvrtc)?;
    let src = CString::new(source).map_err(|_| format!("{name}: source contains a NUL byte"))?;
    let cname = CString::new(format!("{name}.cu")).map_err(|_| format!("{name}: bad name"))?;
    let mut options: Vec<CString> = OPTIONS.iter().map(|o| CString::new(*o).unwrap_or_default()).collect();
    options.push(CString::new(target.option()).unwrap_or_default());
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    guarded(|| {
        let mut prog: nvrtc::nvrtcProgram = std::ptr::null_mut();
        // SAFETY: valid NUL-terminated strings; no headers.
        let r = unsafe {
            nvrtc::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        check(r, "nvrtcCreateProgram")?;
        let result = (|| {
            // SAFETY: `prog` is a live program; the option pointers outlive the call.
            let r = unsafe { nvrtc::nvrtcCompileProgram(prog, option_ptrs.len() as i32, option_ptrs.as_ptr()) };
            if r != nvrtc::nvrtcResult::NVRTC_SUCCESS {
                let log = program_log(prog).unwrap_or_default();
                return Err(format!("compiling {name} for {}: {log}", target.option()));
            }
            let mut size = 0usize;
            let mut bytes;
            if target.cubin {
                // SAFETY: live program, valid out-pointer; the buffer has `size` bytes.
                check(
                    unsafe { nvrtc::nvrtcGetCUBINSize(prog, &mut size) },
                    "nvrtcGetCUBINSize",
                )?;
                bytes = vec![0u8; size];
                check(
                    unsafe { nvrtc::nvrtcGetCUBIN(prog, bytes.as_mut_ptr() as *mut c_char) },
                    "nvrtcGetCUBIN",
                )?;
            } else {
                // SAFETY: as above; the PTX size includes the NUL.
                check(unsafe { nvrtc::nvrtcGetPTXSize(prog, &mut size) }, "nvrtcGetPTXSize")?;
                bytes = vec![0u8; size];
                check(
                    unsafe { nvrtc::nvrtcGetPTX(prog, bytes.as_mut_ptr() as *mut c_char) },
                    "nvrtcGetPTX",
                )?;
                if bytes.last() != Some(&0) {
                    bytes.push(0);
                }
            }
            Ok(Image { bytes })
        })();
        // SAFETY: `prog` was created above and is destroyed once.
        unsafe { nvrtc::nvrtcDestroyProgram(&mut prog) };
        result
    })
}

fn program_log(prog: nvrtc::nvrtcProgram) -> Result<String, String> {
    let mut size = 0usize;
    // SAFETY: live program, valid out-pointer.
    check(
        unsafe { nvrtc::nvrtcGetProgramLogSize(prog, &mut size) },
        "nvrtcGetProgramLogSize",
    )?;
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: the buffer holds `size` bytes.
    check(
        unsafe { nvrtc::nvrtcGetProgramLog(prog, log.as_mut_ptr() as *mut c_char) },
        "nvrtcGetProgramLog",
    )?;
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    Ok(String::from_utf8_lossy(&log[..end]).into_owned())
}

/// FNV-1a over `bytes`, from `seed` (two seeds give a 128-bit key).
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_OFFSET_2: u64 = 0x6c62_272e_07bb_0142;

/// The cache key of a module: hex of a 128-bit hash of everything that
/// decides the compiled image.
pub fn cache_key(source: &str, target: Target, nvrtc: (i32, i32), driver: i32) -> String {
    let mut text = format!(
        "{FORMAT}\n{}\nnvrtc {}.{}\ndriver {driver}\n",
        target.option(),
        nvrtc.0,
        nvrtc.1
    );
    for o in OPTIONS {
        text.push_str(o);
        text.push('\n');
    }
    text.push_str(source);
    let bytes = text.as_bytes();
    format!("{:016x}{:016x}", fnv1a(FNV_OFFSET, bytes), fnv1a(FNV_OFFSET_2, bytes))
}

/// The cache directory: `ANYDEV_CUDA_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/anydev/cuda`, else `~/.cache/anydev/cuda` (on Windows
/// `%LOCALAPPDATA%\anydev\cuda`); `None` when `ANYDEV_CUDA_CACHE=0` or no
/// location is known.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if std::env::var(CACHE_ENV).is_ok_and(|v| matches!(v.trim(), "0" | "false" | "off" | "no")) {
        return None;
    }
    if let Some(dir) = var(CACHE_DIR_ENV) {
        return Some(dir);
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        return Some(xdg.join("anydev").join("cuda"));
    }
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("anydev").join("cuda"));
    }
    var("HOME").map(|h| h.join(".cache").join("anydev").join("cuda"))
}

/// The file of one cache entry.
pub fn entry_path(dir: &Path, module: &str, key: &str, target: Target) -> PathBuf {
    dir.join(format!("{module}-{key}.{}", target.extension()))
}

/// An image wrapped for the disk: magic, length, checksum, bytes.
pub fn encode(image: &Image) -> Vec<u8> {
    let mut out = Vec::with_capacity(image.bytes.len() + 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(image.bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(FNV_OFFSET, &image.bytes).to_le_bytes());
    out.extend_from_slice(&image.bytes);
    out
}

/// The image in a cache file, or `None` when the file is not a complete,
/// intact entry.
pub fn decode(data: &[u8]) -> Option<Image> {
    let header = data.get(..24)?;
    if &header[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(header[8..16].try_into().ok()?) as usize;
    let sum = u64::from_le_bytes(header[16..24].try_into().ok()?);
    let bytes = data.get(24..)?;
    (bytes.len() == len && fnv1a(FNV_OFFSET, bytes) == sum && len > 0).then(|| Image { bytes: bytes.to_vec() })
}

/// Reads an entry; a missing, truncated or corrupt file reads as `None`.
pub fn read_cached(path: &Path) -> Option<Image> {
    std::fs::read(path).ok().and_then(|d| decode(&d))
}

/// Writes an entry atomically (a temporary file renamed into place);
/// failures are ignored, since the cache is only an optimisation.
pub fn write_cached(path: &Path, image: &Image) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, encode(image)).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Compiles through the cache: an intact entry is returned as is, anything
/// else is compiled and written back.
pub fn compile_cached(
    name: &str,
    source: &str,
    target: Target,
    nvrtc: (i32, i32),
    driver: i32,
) -> Result<Image, String> {
    let path = cache_dir().map(|dir| entry_path(&dir, name, &cache_key(source, target, nvrtc, driver), target));
    if let Some(image) = path.as_deref().and_then(read_cached) {
        return Ok(image);
    }
    let image = compile(name, source, target)?;
    if let Some(path) = &path {
        write_cached(path, &image);
    }
    Ok(image)
}

/// Removes a cache entry that the driver refused to load.
pub fn evict(name: &str, source: &str, target: Target, nvrtc: (i32, i32), driver: i32) {
    if let Some(dir) = cache_dir() {
        let _ = std::fs::remove_file(entry_path(
            &dir,
            name,
            &cache_key(source, target, nvrtc, driver),
            target,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_every_input() {
        let t = Target { arch: 90, cubin: true };
        let base = cache_key("src", t, (12, 4), 12040);
        assert_eq!(base.len(), 32);
        assert_eq!(base, cache_key("src", t, (12, 4), 12040), "keys are deterministic");
        assert_ne!(base, cache_key("src2", t, (12, 4), 12040));
        assert_ne!(base, cache_key("src", Target { arch: 80, cubin: true }, (12, 4), 12040));
        assert_ne!(
            base,
            cache_key("src", Target { arch: 90, cubin: false }, (12, 4), 12040)
        );
        assert_ne!(base, cache_key("src", t, (12, 5), 12040));
        assert_ne!(base, cache_key("src", t, (12, 4), 12050));
    }

    #[test]
    fn fnv_matches_the_published_vectors() {
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn corrupt_entries_are_rejected() {
        let image = Image {
            bytes: b"\x7fELF cubin bytes".to_vec(),
        };
        let data = encode(&image);
        assert_eq!(decode(&data), Some(image.clone()));
        assert_eq!(decode(&data[..data.len() - 1]), None, "truncated");
        let mut flipped = data.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&flipped), None, "checksum");
        let mut magic = data.clone();
        magic[0] = b'X';
        assert_eq!(decode(&magic), None, "magic");
        assert_eq!(decode(b""), None);
    }

    #[test]
    fn cache_files_round_trip_and_corruption_means_recompile() {
        let dir = std::env::temp_dir().join(format!("anydev-cuda-cache-test-{}", std::process::id()));
        let t = Target { arch: 90, cubin: false };
        let path = entry_path(&dir, "unary_f32", &cache_key("x", t, (12, 2), 12020), t);
        let image = Image {
            bytes: b"ptx\0".to_vec(),
        };
        write_cached(&path, &image);
        assert_eq!(read_cached(&path), Some(image));
        std::fs::write(&path, b"garbage").unwrap();
        assert_eq!(read_cached(&path), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn targets_fall_back_to_ptx_for_newer_devices() {
        let supported = [75, 80, 86, 89, 90];
        assert_eq!(target_for(90, &supported), Some(Target { arch: 90, cubin: true }));
        assert_eq!(target_for(100, &supported), Some(Target { arch: 90, cubin: false }));
        assert_eq!(target_for(87, &supported), Some(Target { arch: 86, cubin: false }));
        assert_eq!(target_for(60, &supported), None);
    }
}
