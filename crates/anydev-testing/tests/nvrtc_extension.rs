//! The extension test ops' CUDA kernels compile with NVRTC, as the cuda
//! backend compiles an extension op's source at run time (PTX for sm_90,
//! so no GPU is needed). Run by `scripts/test.sh` with `--ignored` and
//! `ANYDEV_NVRTC_PATH`, like anydev-cuda's `nvrtc_compile`.

use anydev_cuda::compile::{self, Target};
use anydev_testing::cases::extension::CUDA_SOURCES;

#[test]
#[ignore = "needs NVRTC; scripts/test.sh installs it and runs this with --ignored"]
fn extension_kernels_compile_with_nvrtc() {
    compile::nvrtc_version().expect("NVRTC must load: set ANYDEV_NVRTC_PATH to libnvrtc.so.12");
    let target = Target { arch: 90, cubin: false };
    for (name, source) in CUDA_SOURCES {
        let image = compile::compile(name, source, target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ptx = String::from_utf8_lossy(&image.bytes);
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "{name}: no entry point in the PTX"
        );
    }
}
