//! A program that only uses `cpu:0` starts no other backend: no Vulkan
//! adapter enumeration, no CUDA driver, no plugin library opened. Its own
//! test binary, so the process-wide runtime is fresh. It names only items
//! the facade re-exports, as most programs do, and still finds every
//! backend the facade registers.

use anydev::{Array, DType, Device};

#[test]
fn a_cpu_only_program_starts_only_the_cpu_backend() -> anydev::Result<()> {
    let cpu = Device::cpu();
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3], cpu)?;
    let y = anydev::with_device(cpu, || anydev::ones(&[3], DType::F32))?;
    let total: Vec<f32> = anydev::sum(&x.add(&y)?, anydev::ALL, false)?.to_vec()?;
    assert_eq!(total, vec![9.0]);
    anydev::random_uniform(&[4], 0.0, 1.0, (DType::F32, cpu))?;

    let records = anydev::runtime().backends();
    let started: Vec<&str> = records.iter().filter(|b| b.is_started()).map(|b| b.name()).collect();
    assert_eq!(started, vec!["cpu"], "backends started by a cpu-only program");
    // The registry still knows the others, and starts them when asked.
    assert!(records.iter().any(|b| b.name() == "wgpu"));
    assert!(records.iter().any(|b| b.name() == "cuda"));
    Ok(())
}
