//! Compiles every generated module with NVRTC, for sm_90 (PTX, so no GPU
//! is needed), and fails on any compile error. NVRTC is a library, not a
//! GPU: `scripts/test.sh` installs it from PyPI (`nvidia-cuda-nvrtc-cu12`)
//! and runs this test with `--ignored` and `ANYDEV_NVRTC_PATH` pointing at
//! `libnvrtc.so.12` (or put the library on the search path).

use anydev_cuda::codegen::{self, ModuleKey};
use anydev_cuda::compile::{self, Target};

/// What compiling one module gave: its image's size and kernel entries.
struct Compiled {
    bytes: usize,
    entries: usize,
}

type Outcome = Result<Compiled, String>;

#[test]
#[ignore = "needs NVRTC (about 80 s); scripts/test.sh installs it and runs this with --ignored"]
fn every_generated_module_compiles_with_nvrtc() {
    let version = compile::nvrtc_version().expect("NVRTC must load: set ANYDEV_NVRTC_PATH to libnvrtc.so.12");
    let arch: u32 = std::env::var("ANYDEV_NVRTC_ARCH")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or(90);
    let cubin = std::env::var("ANYDEV_NVRTC_CUBIN").as_deref() == Ok("1");
    let target = Target { arch, cubin };
    let only = std::env::var("ANYDEV_NVRTC_ONLY").ok();
    let modules: Vec<ModuleKey> = ModuleKey::all()
        .into_iter()
        .filter(|m| only.as_deref().is_none_or(|o| m.name().contains(o)))
        .collect();
    eprintln!(
        "NVRTC {}.{}: compiling {} modules for {}",
        version.0,
        version.1,
        modules.len(),
        target.option()
    );
    // NVRTC compiles distinct programs concurrently; one thread per core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut results: Vec<(usize, Outcome)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(key) = modules.get(i) else { break done };
                        let result = compile::compile(&key.name(), &codegen::source(*key), target)
                            .map(|image| {
                                let text = String::from_utf8_lossy(&image.bytes);
                                let entries = if cubin { 0 } else { text.matches(".entry ").count() };
                                Compiled {
                                    bytes: image.bytes.len(),
                                    entries,
                                }
                            })
                            .map_err(|e| e.to_string());
                        done.push((i, result));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a compile thread panicked"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut failures = Vec::new();
    let mut kernels = 0usize;
    for (i, result) in results {
        let name = modules[i].name();
        match result {
            Ok(Compiled { bytes, entries }) => {
                kernels += entries;
                eprintln!("ok   {name} ({bytes} bytes, {entries} kernels)");
            }
            Err(e) => {
                eprintln!("FAIL {name}: {e}");
                failures.push(name);
            }
        }
    }
    eprintln!("{} modules, {kernels} kernels compiled", modules.len() - failures.len());
    assert!(failures.is_empty(), "modules that failed to compile: {failures:?}");
}
