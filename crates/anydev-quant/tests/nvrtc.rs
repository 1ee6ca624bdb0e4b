//! The quant ops' CUDA kernels compile with NVRTC, as the cuda backend
//! compiles an extension op's source at run time (PTX for sm_90, so no
//! GPU is needed). Run by `scripts/test.sh` with `--ignored` and
//! `ANYDEV_NVRTC_PATH`, like anydev-testing's `nvrtc_extension`.

use anydev_cuda::compile::{self, Target};

#[test]
#[ignore = "needs NVRTC; scripts/test.sh installs it and runs this with --ignored"]
fn quant_kernels_compile_with_nvrtc() {
    compile::nvrtc_version().expect("NVRTC must load: set ANYDEV_NVRTC_PATH to libnvrtc.so.12");
    let target = Target { arch: 90, cubin: false };
    let sources = anydev_quant::cuda::sources();
    assert_eq!(sources.len(), anydev_quant::op::ALL.len(), "a kernel per op");
    for (op, name, source) in sources {
        let image = compile::compile(name, &source, target).unwrap_or_else(|e| panic!("{op}: {e}"));
        let ptx = String::from_utf8_lossy(&image.bytes);
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "{op}: no entry point in the PTX"
        );
    }
}
