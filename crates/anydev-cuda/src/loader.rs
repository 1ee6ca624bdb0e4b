//! Finding the CUDA libraries at run time, before cudarc touches them.
//!
//! cudarc opens each library lazily on first use and panics when it is
//! missing, so the backend first checks, with the same candidate names
//! cudarc will try, that the library opens. A library named by an
//! environment variable (a path) is opened first and kept open: the
//! dynamic loader then resolves cudarc's later `dlopen` of the same
//! soname to it, so NVRTC or cuBLAS from a Python wheel can be used
//! without touching `LD_LIBRARY_PATH`.

use anydev_core::elf;
use std::path::Path;
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
/// carries a message naming the library and the names that were tried,
/// or, when the library's variable names a file, why that file is not
/// used.
pub fn check(lib: Lib) -> Result<(), String> {
    let pinned = pin_from_env();
    let slot = match lib {
        Lib::Driver => 0,
        Lib::Nvrtc => 1,
        Lib::Cublas => 2,
    };
    let named = std::env::var_os(lib.env()).filter(|p| !p.is_empty());
    let candidates = lib.candidates();
    let mut soname = None;
    if let Some(path) = &named {
        if pinned[slot].is_none() {
            return Err(format!(
                "{} could not be opened from {}={:?}",
                lib.describe(),
                lib.env(),
                path
            ));
        }
        // The file opened, but cudarc opens the library by name, and the
        // dynamic loader hands it the pinned file only when that file's
        // soname is the name asked for.
        soname = elf::soname(Path::new(path));
        if soname.as_ref().is_some_and(|s| !candidates.contains(s)) {
            return Err(named_file_unused(lib, Path::new(path), soname.as_deref()));
        }
    }
    for name in &candidates {
        // SAFETY: as above; the handle is dropped at once (the library
        // stays loaded while cudarc or the pinned handle holds it).
        if unsafe { libloading::Library::new(name) }.is_ok() {
            return Ok(());
        }
    }
    if let Some(path) = &named {
        // The file opened and no soname could be read from it, and no
        // name cudarc tries resolves.
        return Err(named_file_unused(lib, Path::new(path), soname.as_deref()));
    }
    Err(format!(
        "{} was not found (tried {}); install the NVIDIA driver / CUDA libraries, add their directory to the library search path, or name the file with {}",
        lib.describe(),
        candidate_names(lib),
        lib.env()
    ))
}

/// Up to four of the names cudarc tries, the usual ones first (the
/// shortest: libcuda.so.1, libcuda.so), and how many more there are.
fn candidate_names(lib: Lib) -> String {
    let mut tried: Vec<String> = Vec::new();
    for name in lib.candidates() {
        if !tried.contains(&name) {
            tried.push(name);
        }
    }
    let total = tried.len();
    tried.sort_by_key(|n| (n.len(), !n.ends_with(".so.1")));
    tried.truncate(4);
    let more = total - tried.len();
    let shown = tried.join(", ");
    if more > 0 {
        format!("{shown} and {more} other names")
    } else {
        shown
    }
}

/// Why the file at `path`, named by `lib`'s variable and opened, is not
/// the library cudarc uses: its `soname` (read from the ELF file, `None`
/// when there is none) is not one of the names cudarc opens.
fn named_file_unused(lib: Lib, path: &Path, soname: Option<&str>) -> String {
    let found = match soname {
        Some(s) => format!("its soname is {s}"),
        None => "no soname could be read from it".to_string(),
    };
    format!(
        "{} was opened from {}={}, but {found}, and cudarc opens the library by name, so that file would not be used; name a file whose soname is one of the names cudarc opens ({})",
        lib.describe(),
        lib.env(),
        path.display(),
        candidate_names(lib),
    )
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

    /// A file that opens but whose soname is not one cudarc opens is
    /// reported as such, naming the file, its soname and what is needed.
    #[test]
    fn a_named_file_with_the_wrong_soname_is_reported() {
        let libm = Path::new("/lib/x86_64-linux-gnu/libm.so.6");
        if !libm.exists() {
            return;
        }
        let soname = elf::soname(libm);
        assert_eq!(soname.as_deref(), Some("libm.so.6"));
        let message = named_file_unused(Lib::Driver, libm, soname.as_deref());
        assert!(message.contains(DRIVER_PATH_ENV), "{message}");
        assert!(message.contains("/lib/x86_64-linux-gnu/libm.so.6"), "{message}");
        assert!(message.contains("its soname is libm.so.6"), "{message}");
        assert!(message.contains("libcuda.so.1"), "{message}");
        assert!(!message.contains("was not found"), "{message}");
    }

    #[test]
    fn a_file_that_is_not_elf_has_no_soname() {
        let this = Path::new(file!());
        let this = if this.exists() {
            this.to_path_buf()
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("src/loader.rs")
        };
        assert_eq!(elf::soname(&this), None);
        let message = named_file_unused(Lib::Driver, &this, None);
        assert!(message.contains("no soname could be read from it"), "{message}");
    }
}
