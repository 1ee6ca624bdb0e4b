//! Runs the `anydev-dist` binary under `mpirun` (which scripts/test-dist.sh
//! installs) with one misbehaving rank, and checks that the others fail
//! with the right error within a bounded time instead of hanging.

use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One job at a time: the timings are checked, and the machine may have
/// fewer cores than the jobs have ranks.
static ONE_JOB: Mutex<()> = Mutex::new(());

const TIMEOUT_S: &str = "2";

fn mpirun(ranks: usize, args: &[&str]) -> (Output, Duration) {
    mpirun_with(&["-x", "ANYDEV_DIST_KIND=cpu"], ranks, args)
}

/// The simulator plugin, built next to the binary (scripts/test-dist.sh
/// builds it before the tests).
fn sim_plugin() -> String {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_anydev-dist"));
    let lib = bin.with_file_name("libanydev_sim.so");
    assert!(
        lib.exists(),
        "{} is missing: build it with cargo build -p anydev-sim",
        lib.display()
    );
    format!("ANYDEV_PLUGINS=sim:{}", lib.display())
}

/// Three ranks, each on its own simulated device through the simulator's
/// collectives, with the launcher options `extra`.
fn on_three_sim_ranks(extra: &[&str], args: &[&str]) -> (Output, Duration) {
    let plugin = sim_plugin();
    let mut launcher = vec![
        "-x",
        &plugin,
        "-x",
        "ANYDEV_SIM_DEVICES=3",
        "-x",
        "ANYDEV_DIST_KIND=sim",
    ];
    launcher.extend_from_slice(extra);
    mpirun_with(&launcher, 3, args)
}

fn mpirun_with(launcher: &[&str], ranks: usize, args: &[&str]) -> (Output, Duration) {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", &ranks.to_string()])
        .args(launcher)
        .args(["-x", &format!("ANYDEV_DIST_TIMEOUT={TIMEOUT_S}")])
        .args(["-x", "RAYON_NUM_THREADS=1"])
        .arg(env!("CARGO_BIN_EXE_anydev-dist"))
        .args(args)
        .output()
        .expect("mpirun runs (scripts/ensure-mpi.sh installs Open MPI)");
    (out, start.elapsed())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `ok` lines of the ranks in `ranks`, checked to exist.
fn ok_lines(all: &str, scenario: &str, ranks: &[usize]) -> Vec<String> {
    ranks
        .iter()
        .map(|r| {
            let prefix = format!("drill {scenario} rank {r}: ");
            let line = all
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no line from rank {r}:\n{all}"));
            assert!(line[prefix.len()..].starts_with("ok"), "rank {r}: {line}\n{all}");
            line.to_owned()
        })
        .collect()
}

#[test]
fn a_stalled_rank_makes_the_others_time_out() {
    let (out, took) = mpirun(3, &["drill", "stall"]);
    let all = text(&out);
    for line in ok_lines(&all, "stall", &[0, 2]) {
        assert!(line.contains("no progress for 2s"), "{line}");
        let secs: f64 = line
            .split(" after ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((2.0..5.0).contains(&secs), "timed out after {secs} s: {line}");
    }
    // Rank 1 sleeps for 8 s; the job must end long before.
    assert!(took < Duration::from_secs(20), "the job took {took:?}:\n{all}");
}

#[test]
fn a_stall_inside_a_plugin_collective_is_aborted_at_the_timeout() {
    // Every simulated op takes 0.25 s, so rank 1's queue of work outlasts
    // the 2 s timeout by 2 s.
    let (out, took) = on_three_sim_ranks(&["-x", "ANYDEV_SIM_OP_DELAY_US=250000"], &["drill", "device-stall"]);
    // Ranks that timed out leave without MPI_Finalize, so the launcher
    // reports the job as failed; what counts is each rank's verdict.
    let all = text(&out);
    let lines = ok_lines(&all, "device-stall", &[0, 1, 2]);
    // Ranks 0 and 2 wait inside the plugin's collective for rank 1, whose
    // device is busy; at least one of them times out there and aborts it
    // (a peer may see the abort before its own timeout).
    assert!(
        lines[0..1]
            .iter()
            .chain(&lines[2..])
            .any(|l| l.contains("no progress for 2s while moving data through the device's collectives")),
        "{all}"
    );
    assert!(took < Duration::from_secs(20), "the job took {took:?}:\n{all}");
}

#[test]
fn a_rank_routing_a_kind_differently_is_named_at_once() {
    let (out, took) = on_three_sim_ranks(&[], &["drill", "engine"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    for line in ok_lines(&all, "engine", &[0, 1, 2]) {
        assert!(line.contains("rank 1 has engine mpi but rank 0 has plugin"), "{line}");
    }
    // Before the engine was in the metadata, the ranks waited in two
    // libraries until the timeout.
    assert!(took < Duration::from_secs(15), "took {took:?}:\n{all}");
}

#[test]
fn a_rank_that_exits_ends_the_job_within_the_timeout() {
    let (out, took) = mpirun(3, &["drill", "exit"]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("drill exit rank 1: leaving now"), "{all}");
    // Either the survivors' timeout fired, or the launcher ended them
    // first; both within a bounded time, neither hangs.
    for r in [0, 2] {
        let prefix = format!("drill exit rank {r}: ");
        if let Some(line) = all.lines().find(|l| l.starts_with(&prefix)) {
            assert!(line.contains(": ok after") && line.contains("no progress"), "{line}");
        }
    }
    assert!(took < Duration::from_secs(20), "the job took {took:?}:\n{all}");
}

#[test]
fn a_rank_that_exits_makes_the_others_time_out_when_the_launcher_waits() {
    // Open MPI 4's mpirun otherwise ends the job itself when a rank exits
    // with an error status; here the survivors must notice on their own.
    let launcher = [
        "--mca",
        "orte_abort_on_non_zero_status",
        "0",
        "-x",
        "ANYDEV_DIST_KIND=cpu",
    ];
    let (out, took) = mpirun_with(&launcher, 3, &["drill", "exit"]);
    let all = text(&out);
    for line in ok_lines(&all, "exit", &[0, 2]) {
        assert!(line.contains("no progress for 2s"), "{line}");
    }
    assert!(took < Duration::from_secs(20), "the job took {took:?}:\n{all}");
}

#[test]
fn a_rank_with_bad_input_fails_every_rank_at_once() {
    let (out, took) = mpirun(3, &["drill", "error"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    ok_lines(&all, "error", &[1]);
    for line in ok_lines(&all, "error", &[0, 2]) {
        assert!(
            line.contains("rank 1 failed: broadcast: root 8 is not a rank"),
            "{line}"
        );
    }
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_differing_shape_names_the_rank() {
    let (out, _) = mpirun(4, &["drill", "mismatch"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    for line in ok_lines(&all, "mismatch", &[0, 1, 2, 3]) {
        assert!(line.contains("rank 1 has shape [9] but rank 0 has [8]"), "{line}");
    }
}

#[test]
fn check_passes_on_two_cpu_ranks() {
    let (out, _) = mpirun(2, &["check"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let last = all.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{all}");
}
