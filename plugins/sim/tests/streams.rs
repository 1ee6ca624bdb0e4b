//! Ordering across streams: each buffer records its last write, and work on
//! another stream (or the host) waits for it. The simulator runs every
//! stream on its own worker thread and delays each op, so a missing wait
//! shows up as wrong numbers (tests/plugin_api.rs shows that without the
//! wait a reader on another stream does read stale data).

mod support;

use anydev_array::{self as ad, Array};
use anydev_core::{DType, Device, Runtime};
use support::runtime_with;

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

fn runtime(test: &str, options: &str) -> &'static Runtime {
    Box::leak(Box::new(runtime_with(test, options, vec![anydev_cpu::provider()])))
}

#[test]
fn data_written_on_one_stream_is_right_on_another_under_stress() {
    let rt = runtime("streams-stress", r#"{"op_delay_us": 300}"#);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                ad::with_runtime(rt, || {
                    let device = dev(if t % 2 == 0 { "sim:0" } else { "sim:1" });
                    let writer = ad::new_stream(device).unwrap();
                    let reader = ad::new_stream(device).unwrap();
                    for i in 0..40 {
                        let value = (t * 1000 + i) as f32;
                        let written = ad::with_stream(&writer, || {
                            let x = ad::full(&[512], value, (DType::F32, device)).unwrap();
                            x.multiply(2.0f32).unwrap()
                        });
                        let read = ad::with_stream(&reader, || written.add(1.0f32).unwrap());
                        let expected = 2.0 * value + 1.0;
                        let got = read.to_vec::<f32>().unwrap();
                        assert!(
                            got.iter().all(|&v| v == expected),
                            "thread {t} iteration {i}: expected {expected}, got {:?}",
                            &got[..4]
                        );
                    }
                })
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Writes into existing arrays (`assign`) are ordered like any output: a
/// write on one stream waits for a slow read of the old values on another
/// (write after read), and later reads see the new values.
#[test]
fn in_place_writes_wait_for_readers_on_other_streams() {
    let rt = runtime("streams-writes", r#"{"op_delay_us": 2000}"#);
    ad::with_runtime(rt, || {
        let device = dev("sim:0");
        let reader = ad::new_stream(device).unwrap();
        let writer = ad::new_stream(device).unwrap();
        for i in 0..10 {
            let value = i as f32;
            let x = ad::with_stream(&reader, || ad::full(&[256], value, (DType::F32, device)).unwrap());
            let before = ad::with_stream(&reader, || x.multiply(2.0f32).unwrap());
            ad::with_stream(&writer, || x.assign(-1.0f32).unwrap());
            let after = ad::with_stream(&reader, || x.add(0.5f32).unwrap());
            let (before, after) = (before.to_vec::<f32>().unwrap(), after.to_vec::<f32>().unwrap());
            assert!(
                before.iter().all(|&v| v == 2.0 * value),
                "iteration {i}: read the write early: {:?}",
                &before[..4]
            );
            assert!(
                after.iter().all(|&v| v == -0.5),
                "iteration {i}: missed the write: {:?}",
                &after[..4]
            );
        }
    });
}

#[test]
fn a_copy_to_another_device_waits_for_the_write_and_orders_the_reader() {
    let rt = runtime("streams-peer", r#"{"op_delay_us": 2000}"#);
    ad::with_runtime(rt, || {
        let writer = ad::new_stream(dev("sim:0")).unwrap();
        let reader = ad::new_stream(dev("sim:1")).unwrap();
        for i in 0..10 {
            let written = ad::with_stream(&writer, || {
                ad::full(&[64, 64], i as f64, dev("sim:0")).unwrap().sqrt().unwrap()
            });
            let moved = ad::with_stream(&writer, || written.to_device(dev("sim:1")).unwrap());
            let squared = ad::with_stream(&reader, || moved.multiply(&moved).unwrap());
            let got = squared.to_vec::<f64>().unwrap();
            assert!(
                got.iter().all(|&v| (v - i as f64).abs() < 1e-9),
                "iteration {i}: {:?}",
                &got[..2]
            );
        }
    });
}

#[test]
fn an_array_dropped_while_a_stream_still_reads_it_stays_valid() {
    let rt = runtime("streams-free-in-use", r#"{"op_delay_us": 20000}"#);
    ad::with_runtime(rt, || {
        let device = dev("sim:0");
        let stream = ad::new_stream(device).unwrap();
        let before = rt.backend(device).unwrap().memory_stats(0).unwrap().in_use;
        let out = ad::with_stream(&stream, || {
            let x = Array::from_slice(&[3.0f32; 4096], &[4096], device).unwrap();
            // `x` is dropped as the closure returns, while the op sleeps.
            x.multiply(2.0f32).unwrap()
        });
        // New arrays must not get the memory the pending op still reads.
        let others: Vec<Array> = (0..8).map(|_| ad::full(&[4096], -7.0f32, device).unwrap()).collect();
        assert!(out.to_vec::<f32>().unwrap().iter().all(|&v| v == 6.0));
        drop((out, others));
        let after = rt.backend(device).unwrap().memory_stats(0).unwrap().in_use;
        assert_eq!(after, before, "every deferred free has happened");
    });
}

#[test]
fn the_peak_restarts_from_memory_as_it_is_after_pending_frees() {
    let rt = runtime("streams-reset-peak", r#"{"op_delay_us": 20000}"#);
    ad::with_runtime(rt, || {
        let device = dev("sim:0");
        let backend = rt.backend(device).unwrap();
        let x = ad::full(&[1 << 16], 1.0f32, (DType::F32, device)).unwrap();
        // Queued behind the fill; `x` is freed once it has run.
        let y = x.add(1.0f32).unwrap();
        drop(x);
        backend.reset_peak(0).unwrap();
        let stats = backend.memory_stats(0).unwrap();
        assert_eq!(stats.in_use, 4 << 16, "only y is left: {stats:?}");
        assert_eq!(stats.peak, stats.in_use, "{stats:?}");
        drop(y);
    });
}
