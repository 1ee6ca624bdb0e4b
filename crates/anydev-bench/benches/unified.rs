//! Moving an array between the host and a device, shared versus copied.
//!
//! The simulator in unified mode reaches host memory, so with unified
//! memory on `to_device` shares the buffer: the time must not grow with
//! the size (1 MiB to 1 GiB). The same moves with unified memory off copy,
//! and show what sharing saves. The simulator library comes from
//! `ANYDEV_SIM_LIBRARY` (build it with `cargo build --release -p anydev-sim`).

use anydev::plugin::PluginConfig;
use anydev::{Array, Device, Runtime, RuntimeConfig};
use anydev_bench::config;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

const MIB: usize = 1 << 20;

/// A runtime with the CPU and the simulator in unified mode, discovered
/// through a manifest in a scratch directory.
fn unified_runtime(unified_memory: bool) -> &'static Runtime {
    let dir = std::env::temp_dir().join(format!("anydev-bench-unified-{}-{unified_memory}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let manifest = format!(
        r#"{{"file_format_version": "1.0.0", "name": "sim", "library_path": {:?},
            "abi_version": "1.1", "priority": 10, "options": {{"unified": true}}}}"#,
        anydev_testing::locate::sim_library()
    );
    std::fs::write(dir.join("sim.json"), manifest).expect("manifest");
    let config = RuntimeConfig {
        plugins: PluginConfig {
            search_dirs: vec![dir],
            direct: None,
        },
        ..RuntimeConfig::default()
    };
    let rt = Box::leak(Box::new(Runtime::with_plugins(
        anydev::backends::builtin_providers(),
        config,
    )));
    rt.set_unified_memory(unified_memory);
    rt
}

fn moves(c: &mut Criterion) {
    let (cpu, sim): (Device, Device) = ("cpu:0".parse().unwrap(), "sim:0".parse().unwrap());
    let mut group = c.benchmark_group("to_device cpu->sim");
    group.sample_size(10);
    for (label, unified) in [("shared", true), ("copied", false)] {
        let rt = unified_runtime(unified);
        anydev::with_runtime(rt, || {
            for mib in [1, 64, 1024] {
                let x = anydev::zeros(&[mib * MIB / 4], (anydev::DType::F32, cpu)).unwrap();
                group.throughput(Throughput::Bytes((mib * MIB) as u64));
                group.bench_with_input(BenchmarkId::new(label, format!("{mib} MiB")), &x, |b, x: &Array| {
                    b.iter(|| black_box(x).to_device(sim).unwrap())
                });
            }
        });
        let stats = rt.transfers().stats();
        assert_eq!(stats.shared > 0, unified, "{label}: {stats:?}");
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = moves
}
criterion_main!(benches);
