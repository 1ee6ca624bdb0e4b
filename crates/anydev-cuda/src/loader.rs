//! Finding the CUDA libraries at run time, before cudarc touches them.
//!
//! cudarc opens each library lazily on first use and panics when it is
//! missing, so the backend first checks, with the same candidate names
//! cudarc will try, that the library opens. A library named by an
//! environment variable (a path) is opened first and kept open: the
//! dynamic loader then resolves cudarc's later `dlopen` of the same
//! soname to it, so NVRTC or cuBLAS from a Python wheel can be used
//! without touching `LD_LIBRARY_PATH`.

use std::sync::OnceLock;

/// `ANYDEV_CUDA_DRIVER_PATH`: the driver library (`libcuda.so.1`), by path.
pub const DRIVER_PATH_ENV: &str = "ANYDEV_CUDA_DRIVER_PATH";
/// `ANYDEV_NVRTC_PATH`: the NVRTC library (`libnvrtc.so.12`), by path.
pub const NVRTC_PATH_ENV: &str = "ANYDEV_NVRTC_PATH";
/// `ANYDEV_CUBLAS_PATH`: the cuBLAS library (`libcublas.so.12`), by path.
pub const CUBLAS_PATH_ENV: &str = "ANYDEV_CUBLAS_PATH";

/// One of the libraries the backend loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    Driver,
    Nvrtc,
    Cublas,
}

impl Lib {
    /// The base names cudarc tries, in its order.
    fn base_names(self) -> &'static [&'static str] {
        match self {
            Lib::Driver => &["cuda", "nvcuda"],
            Lib::Nvrtc => &["nvrtc"],
            Lib::Cublas => &["cublas"],
        }
    }

    fn env(self) -> &'static str {
        match self {
            Lib::Driver => DRIVER_PATH_ENV,
            Lib::Nvrtc => NVRTC_PATH_ENV,
            Lib::Cublas => CUBLAS_PATH_ENV,
        }
    }

    /// What people call the library in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Lib::Driver => "the NVIDIA driver library (libcuda.so.1 / nvcuda.dll)",
            Lib::Nvrtc => "NVRTC, the CUDA run-time compiler (libnvrtc.so.12 / nvrtc64_*.dll)",
            Lib::Cublas => "cuBLAS (libcublas.so.12 / cublas64_*.dll)",
        }
    }

    /// Every file name cudarc may open for this library.
    pub fn candidates(self) -> Vec<String> {
        self.base_names()
            .iter()
            .flat_map(|name| cudarc::get_lib_name_candidates(name))
            .collect()
    }
}

/// Libraries opened by path from the environment, kept open for the life
/// of the process so the loader finds them by soname.
static PINNED: OnceLock<[Option<libloading::Library>; 3]> = OnceLock::new();

fn pin_from_env() -> &'static [Option<libloading::Library>; 3] {
    PINNED.get_or_init(|| {
        let open = |lib: Lib| {
            let path = std::env::var_os(lib.env()).filter(|p| !p.is_empty())?;
            // SAFETY: loading a shared library runs its initialisers; these
            // are NVIDIA's libraries, named explicitly by the user.
            unsafe { libloading::Library::new(path).ok() }
        };
        [open(Lib::Driver), open(Lib::Nvrtc), open(Lib::Cublas)]
    })
}

/// Checks that `lib` can be opened the way cudarc will open it. `Err`
/// carries a message naming the library and the names that were tried.
pub fn check(lib: Lib) -> Result<(), String> {
    let pinned = pin_from_env();
    let slot = match lib {
        Lib::Driver => 0,
        Lib::Nvrtc => 1,
        Lib::Cublas => 2,
    };
    if std::env::var_os(lib.env()).is_some_and(|p| !p.is_empty()) && pinned[slot].is_none() {
        return Err(format!(
            "{} could not be opened from {}={:?}",
            lib.describe(),
            lib.env(),
            std::env::var_os(lib.env()).unwrap_or_default()
        ));
    }
    let candidates = lib.candidates();
    for name in &candidates {
        // SAFETY: as above; the handle is dropped at once (the library
        // stays loaded while cudarc or the pinned handle holds it).
        if unsafe { libloading::Library::new(name) }.is_ok() {
            return Ok(());
        }
    }
    // The shortest names are the usual ones (libcuda.so.1, libcuda.so).
    let mut tried: Vec<&String> = Vec::new();
    for name in &candidates {
        if !tried.contains(&name) {
            tried.push(name);
        }
    }
    let total = tried.len();
    tried.sort_by_key(|n| (n.len(), !n.ends_with(".so.1")));
    tried.truncate(4);
    let shown: Vec<&str> = tried.iter().map(|s| s.as_str()).collect();
    Err(format!(
        "{} was not found (tried {}{}); install the NVIDIA driver / CUDA libraries, add their directory to the library search path, or name the file with {}",
        lib.describe(),
        shown.join(", "),
        if total > shown.len() { format!(" and {} other names", total - shown.len()) } else { String::new() },
        lib.env()
    ))
}

/// Caches [`check`] per library for the life of the process.
pub fn available(lib: Lib) -> Result<(), String> {
    static CHECKED: [OnceLock<Result<(), String>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match lib {
        Lib::Driver => 0,
        Lib::Nvrtc => 1,
        Lib::Cublas => 2,
    };
    CHECKED[slot].get_or_init(|| check(lib)).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_include_the_versioned_sonames() {
        let driver = Lib::Driver.candidates();
        if cfg!(target_os = "linux") {
            assert!(driver.iter().any(|n| n == "libcuda.so.1"), "{driver:?}");
            assert!(driver.iter().any(|n| n == "libcuda.so"), "{driver:?}");
            let nvrtc = Lib::Nvrtc.candidates();
            assert!(nvrtc.iter().any(|n| n == "libnvrtc.so.12"), "{nvrtc:?}");
        }
        if cfg!(windows) {
            assert!(driver.iter().any(|n| n == "nvcuda.dll"), "{driver:?}");
        }
    }

    #[test]
    fn a_missing_library_is_reported_by_name() {
        // Whatever this machine has, the message of a failed check names
        // the library and what was tried.
        if let Err(message) = check(Lib::Cublas) {
            assert!(message.contains("cuBLAS"), "{message}");
            assert!(message.contains(CUBLAS_PATH_ENV), "{message}");
        }
    }
}
