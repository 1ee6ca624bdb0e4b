//! The library's conformance cases, as `anydev conformance` runs them for
//! a plugin, on every device this runtime sees. A test binary of its own:
//! the runner checks that a device holds no more memory after a case than
//! before, which other tests allocating at the same time would upset.

mod common;

use anydev_testing::runner::{Outcome, Plan};
use anydev_testing::KnownFailures;
use common::has_kernels;

/// The library's conformance cases on every selected device: bit for bit
/// against the scalar reference (codes, absmax, dequantized values) and
/// the product against f64. A device that runs the ops must pass every
/// instance; one without them must skip each, naming the op.
#[test]
fn the_conformance_cases_pass_on_every_device_that_runs_the_ops() {
    anydev_quant::conformance::register().unwrap();
    let plan = Plan {
        runtime: common::runtime(),
        devices: common::devices(),
        under_test: common::devices(),
        extra_known: KnownFailures::default(),
    };
    let cases = anydev_quant::conformance::cases();
    let mut ran = 0;
    for trial in plan.trials(&cases).unwrap() {
        match (plan.run(&trial), has_kernels(trial.device)) {
            (Outcome::Pass, true) => ran += 1,
            (Outcome::Skip(why), true) if why.starts_with("needs dtype") => {}
            (Outcome::Skip(why), false) => assert!(why.contains("needs extension op quant::"), "{why}"),
            (other, _) => panic!("{}: {other:?}", trial.name),
        }
    }
    assert!(
        ran >= 9 || !common::devices().contains(&anydev::Device::cpu()),
        "every case ran on cpu:0 in every dtype, got {ran} runs"
    );
}
