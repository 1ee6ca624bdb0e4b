//! Unified memory end to end: zero-copy `to_device` exactly where the
//! reach table allows it (the simulator's unified mode), copies everywhere
//! else, and correct results when the memory is shared with asynchronous
//! streams. Sharing is proven with the runtime's transfer counter, the
//! devices' memory accounting and the buffers' host addresses, not timing.

mod support;

use anydev_array::{self as ad, Array};
use anydev_core::{DType, Device, ForeignHost, MemoryKind, Runtime, TransferStats};
use support::{run_sim_cases, runtime_with};

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

/// A process-lifetime runtime with the CPU and the simulator configured by
/// `options`, with unified memory switched `on` or off.
fn runtime(test: &str, options: &str, unified: bool) -> &'static Runtime {
    let rt: &'static Runtime = Box::leak(Box::new(runtime_with(test, options, vec![anydev_cpu::provider()])));
    rt.set_unified_memory(unified);
    rt
}

fn in_use(rt: &Runtime, device: &str) -> usize {
    let device = dev(device);
    rt.backend(device).unwrap().memory_stats(device.index()).unwrap().in_use
}

/// Moves `x` to `device` and reports what the move did.
fn moved(rt: &Runtime, x: &Array, device: &str) -> (Array, TransferStats) {
    let before = rt.transfers().stats();
    let y = x.to_device(dev(device)).unwrap();
    let after = rt.transfers().stats();
    let delta = TransferStats {
        shared: after.shared - before.shared,
        copies: after.copies - before.copies,
        bytes_copied: after.bytes_copied - before.bytes_copied,
    };
    (y, delta)
}

const SHARED: TransferStats = TransferStats {
    shared: 1,
    copies: 0,
    bytes_copied: 0,
};

fn copied(bytes: u64) -> TransferStats {
    TransferStats {
        shared: 0,
        copies: 1,
        bytes_copied: bytes,
    }
}

#[test]
fn unified_mode_shares_memory_between_the_host_and_the_devices() {
    let rt = runtime("unified-share", r#"{"unified": true}"#, true);
    ad::with_runtime(rt, || {
        let values: Vec<f32> = (0..4096).map(|i| i as f32).collect();
        let x = Array::from_slice(&values, &[64, 64], dev("cpu:0")).unwrap();
        let (sim_before, cpu_before) = (in_use(rt, "sim:0"), in_use(rt, "cpu:0"));

        let (on_sim, did) = moved(rt, &x, "sim:0");
        assert_eq!(did, SHARED);
        assert_eq!(on_sim.device(), dev("sim:0"));
        assert_eq!(on_sim.buffer().host_ptr(), x.buffer().host_ptr(), "the same memory");
        assert_eq!(on_sim.buffer().owner(), dev("cpu:0"));
        assert_eq!(on_sim.buffer().kind(), MemoryKind::System);
        assert_eq!(in_use(rt, "sim:0"), sim_before, "nothing allocated on the device");
        assert_eq!(in_use(rt, "cpu:0"), cpu_before);

        // Ops on the device read the host's memory in place.
        let doubled = on_sim.multiply(2.0f32).unwrap();
        assert_eq!(doubled.device(), dev("sim:0"));
        assert_eq!(
            doubled.buffer().kind(),
            MemoryKind::Managed,
            "unified memory allocates a kind the host reaches"
        );

        // ... and the host reads the device's managed memory in place.
        let (back, did) = moved(rt, &doubled, "cpu:0");
        assert_eq!(did, SHARED);
        assert_eq!(back.buffer().host_ptr(), doubled.buffer().host_ptr());
        let expected: Vec<f32> = values.iter().map(|v| v * 2.0).collect();
        assert_eq!(back.to_vec::<f32>().unwrap(), expected);
        assert_eq!(back.add(1.0f32).unwrap().to_vec::<f32>().unwrap()[..2], [1.0, 3.0]);

        // Managed memory is shared between the simulated devices too.
        let (other, did) = moved(rt, &doubled, "sim:1");
        assert_eq!(did, SHARED);
        assert_eq!(other.buffer().owner(), dev("sim:0"));
        assert_eq!(
            ad::sum(&other, ad::ALL, false).unwrap().to_scalar::<f32>().unwrap(),
            2.0 * 4095.0 * 4096.0 / 2.0
        );

        // A mapping moved back to its owner is the original array's memory.
        let (home, did) = moved(rt, &on_sim, "cpu:0");
        assert_eq!(did, SHARED);
        assert!(home.shares_buffer(&x));
    });
}

#[test]
fn views_keep_their_layout_when_shared() {
    let rt = runtime("unified-views", r#"{"unified": true}"#, true);
    ad::with_runtime(rt, || {
        let x = Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3], dev("cpu:0")).unwrap();
        let t = x.matrix_transpose().unwrap();
        let (on_sim, did) = moved(rt, &t, "sim:1");
        assert_eq!(did, SHARED, "a strided view needs no contiguous copy");
        assert_eq!(on_sim.strides(), t.strides());
        assert_eq!(on_sim.to_vec::<i32>().unwrap(), [1, 4, 2, 5, 3, 6]);
    });
}

#[test]
fn discrete_mode_always_copies() {
    let rt = runtime("discrete-copies", "{}", true);
    ad::with_runtime(rt, || {
        let x = Array::from_slice(&[1.0f64, 2.0, 3.0], &[3], dev("cpu:0")).unwrap();
        let (on_sim, did) = moved(rt, &x, "sim:0");
        assert_eq!(did, copied(24));
        assert_eq!(
            on_sim.buffer().kind(),
            MemoryKind::Device,
            "a discrete device has no host-reachable kind"
        );
        assert_ne!(on_sim.buffer().host_ptr(), x.buffer().host_ptr());
        assert_eq!(
            on_sim.buffer().read_on_host(0, 24, |_| ()).unwrap(),
            None,
            "the host cannot read device memory in place"
        );
        let (_, did) = moved(rt, &on_sim, "sim:1");
        assert_eq!(did, copied(24));
        let (back, did) = moved(rt, &on_sim, "cpu:0");
        assert_eq!(did, copied(24));
        assert_eq!(back.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0]);
    });
}

#[test]
fn unified_memory_off_copies_even_where_the_device_could_share() {
    let rt = runtime("unified-off", r#"{"unified": true}"#, false);
    ad::with_runtime(rt, || {
        let x = Array::from_slice(&[7u8; 100], &[100], dev("cpu:0")).unwrap();
        let (on_sim, did) = moved(rt, &x, "sim:0");
        assert_eq!(did, copied(100));
        assert_eq!(on_sim.buffer().kind(), MemoryKind::Device, "the native kind");
        let (_, did) = moved(rt, &on_sim, "cpu:0");
        assert_eq!(did, copied(100));
    });
}

/// Memory another owner lends, as a NumPy array's: words behind
/// `UnsafeCell`, since anydev may write them through a raw pointer. Held,
/// never read: dropping it frees the words.
struct Lent {
    _words: Box<[std::cell::UnsafeCell<f32>]>,
}

// SAFETY: the words are touched only by the test's ops on the cpu and sim
// devices, which run in program order with the reads that follow them.
unsafe impl Sync for Lent {}

#[test]
fn memory_a_device_will_not_import_is_copied() {
    let rt = runtime("unified-misaligned", r#"{"unified": true}"#, true);
    ad::with_runtime(rt, || {
        let values: Vec<f32> = (0..65).map(|i| i as f32).collect();
        let words: Box<[std::cell::UnsafeCell<f32>]> = values.iter().map(|&v| v.into()).collect();
        let first = std::ptr::NonNull::new(words[1].get().cast::<u8>()).unwrap();
        // SAFETY: the words live in the box, which moves into the owner
        // without moving them; 64 of them from the second are lent.
        let memory = unsafe { ForeignHost::new(first, 64 * 4, Box::new(Lent { _words: words })) };
        let x = Array::from_foreign_host(memory, DType::F32, &[64], &[1], 0).unwrap();
        // The simulator imports only 256-byte aligned memory; this starts
        // 4 bytes past an allocation's start.
        assert_ne!(first.as_ptr() as usize % 256, 0);
        let (on_sim, did) = moved(rt, &x, "sim:0");
        assert_eq!(did, copied(256), "refused in place, so copied");
        assert_eq!(on_sim.to_vec::<f32>().unwrap(), values[1..]);
        assert!(
            x.share_to(dev("sim:0")).is_err(),
            "share_to never copies, so it reports the refusal"
        );
    });
}

#[test]
fn the_host_waits_for_a_slow_device_before_reading_shared_memory() {
    // Every simulated op sleeps first, so a host read that did not wait for
    // the device's write would see the zeroed memory instead.
    let rt = runtime("unified-host-waits", r#"{"unified": true, "op_delay_us": 20000}"#, true);
    ad::with_runtime(rt, || {
        let x = Array::from_slice(&[1.0f32; 1000], &[1000], dev("sim:0")).unwrap();
        let y = x.multiply(3.0f32).unwrap();
        let (on_cpu, did) = moved(rt, &y, "cpu:0");
        assert_eq!(did, SHARED);
        // The CPU computes on the shared memory directly.
        let z = on_cpu.add(1.0f32).unwrap();
        assert!(z.to_vec::<f32>().unwrap().iter().all(|&v| v == 4.0));
    });
}

#[test]
fn freeing_host_memory_a_device_still_reads_is_safe() {
    let rt = runtime(
        "unified-free-in-use",
        r#"{"unified": true, "op_delay_us": 200000}"#,
        true,
    );
    ad::with_runtime(rt, || {
        let n = 1 << 20;
        let garbage = vec![-1.0f32; n];
        let x = Array::from_slice(&vec![2.0f32; n], &[n], dev("cpu:0")).unwrap();
        let on_sim = x.to_device(dev("sim:0")).unwrap();
        let y = on_sim.multiply(5.0f32).unwrap();
        // Both handles to the host memory go while the device's op sleeps;
        // the memory must outlive the op. Fresh host memory of the same
        // size reuses the block (the CPU caches freed blocks of 1 MiB and
        // more), so a premature free shows up as -5 below.
        drop((x, on_sim));
        let scribble = Array::from_slice(&garbage, &[n], dev("cpu:0")).unwrap();
        assert!(y.to_vec::<f32>().unwrap().iter().all(|&v| v == 10.0));
        drop(scribble);
    });
}

/// The accelerator cases (memory kinds per array, stats, events,
/// generators) on the simulator in unified mode, where it allocates
/// managed and pinned memory too; `tests/devices.rs` in anydev-testing
/// runs them on the discrete simulator.
#[test]
fn the_accelerator_cases_pass_in_unified_mode() {
    let rt = runtime("unified-accelerator", r#"{"unified": true}"#, false);
    run_sim_cases(rt, "accelerator::");
}
