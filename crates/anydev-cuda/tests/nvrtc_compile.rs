//! Compiles every generated module with NVRTC, for sm_90 (PTX, so no GPU
//! is needed), and fails on any compile error. NVRTC is a library, not a
//! GPU: `scripts/test.sh` installs it from PyPI (`nvidia-cuda-nvrtc-cu12`)
//! and runs this test with `--ignored` and `ANYDEV_NVRTC_PATH` pointing at
//! `libnvrtc.so.12` (or put the library on the search path).

use anydev_cuda::codegen::{self, ModuleKey};
use anydev_cuda::compile::{self, Target};

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
    let mut failures = Vec::new();
    let mut kernels = 0usize;
    for key in &modules {
        let source = codegen::source(*key);
        match compile::compile(&key.name(), &source, target) {
            Ok(image) => {
                let text = String::from_utf8_lossy(&image.bytes);
                let entries = if cubin { 0 } else { text.matches(".entry ").count() };
                kernels += entries;
                eprintln!("ok   {} ({} bytes, {entries} kernels)", key.name(), image.bytes.len());
            }
            Err(e) => {
                eprintln!("FAIL {}: {e}", key.name());
                failures.push(key.name());
            }
        }
    }
    eprintln!("{} modules, {kernels} kernels compiled", modules.len() - failures.len());
    assert!(failures.is_empty(), "modules that failed to compile: {failures:?}");
}
