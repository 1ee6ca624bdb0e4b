//! Streams own worker threads; none may outlive its stream or the plugin.
//! (Its own test binary with a single test, so that no other test starts
//! threads while this one counts them.)

use anydev_plugin::{MemoryKind, Plugin};
use anydev_sim::{Sim, SimConfig};

/// The threads of this process, from `/proc`.
#[cfg(target_os = "linux")]
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// The thread count once it reaches `expected` (a joined thread may stay
/// listed for a moment while the kernel releases it), or after a second.
#[cfg(target_os = "linux")]
fn threads_settling_to(expected: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let n = threads();
        if n == expected || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn destroyed_streams_and_a_dropped_plugin_leave_no_worker_threads() {
    let before = threads();
    let sim = Sim::new(SimConfig::from_sources(r#"{"op_delay_us": 5000}"#, |_| None).unwrap());
    let streams: Vec<_> = (0..6).map(|i| sim.create_stream(i % 2).unwrap()).collect();
    assert_eq!(threads(), before + 6, "one worker per stream");
    let x = sim.allocate(0, 64, MemoryKind::Device).unwrap();
    for stream in &streams {
        sim.fill(stream, &x, 0, 64, &[1]).unwrap();
    }
    let mut streams = streams.into_iter();
    drop(streams.next());
    drop(streams.next());
    assert_eq!(
        threads_settling_to(before + 4),
        before + 4,
        "a destroyed stream's worker is joined"
    );
    // Streams the host never destroys are stopped when the plugin goes.
    for stream in streams {
        std::mem::forget(stream);
    }
    drop(sim);
    assert_eq!(threads_settling_to(before), before);
}
