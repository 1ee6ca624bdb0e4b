//! Device-generic tests for anydev (design section 8).
//!
//! A [`Case`] is written once, against the array API, and instantiated for
//! every device a runtime sees (and every dtype it is parametrised over that
//! the device declares). What a case needs is stated as capabilities
//! ([`Need`]), never as device names, so a new accelerator runs every case it
//! can and reports the rest as skipped with the unmet requirement.
//!
//! The same cases serve two runners:
//! - the `devices` test target (`cargo test -p anydev-testing`), one libtest
//!   line per case, device and dtype (`elementwise::add_broadcast::sim_1::f32`);
//! - [`conformance`], which points them at one plugin library and adds the
//!   ABI checks a vendor certifies against (`anydev conformance`).
//!
//! Backends and plugins list their own known failures ([`known`]) without
//! editing the shared cases.

pub mod case;
pub mod cases;
pub mod conformance;
pub mod isolated;
pub mod known;
pub mod lent;
pub mod locate;
pub mod philox;
pub mod reference;
pub mod runner;
pub mod select;

pub use case::{Case, CaseCtx, Failure, Need, Scope};
pub use known::KnownFailures;
pub use runner::{Outcome, Trial};
