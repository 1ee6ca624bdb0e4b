//! Collectives on anydev arrays across processes.
//!
//! One process per device, started by an MPI launcher (`mpirun`, `srun`).
//! [`init`] starts MPI, picks this rank's device from the launcher's
//! environment and makes it the default device; the returned
//! [`Communicator`] runs collectives on arrays of any device:
//!
//! ```no_run
//! use anydev_dist::ReduceOp;
//! # fn main() -> anydev_dist::Result<()> {
//! let world = anydev_dist::init()?;
//! let x = anydev::full(&[4], world.rank() as f64, anydev::DType::F32)?; // on this rank's device
//! let total = world.all_reduce(&x, ReduceOp::Sum)?;                       // on x's device
//! println!("{}", world.describe()); // e.g. rank 1 of 4 (...): sim:1 via mpi (host staging); ...
//! # let _ = total; Ok(()) }
//! ```
//!
//! Every collective first exchanges a small metadata record (call, shape,
//! dtype, device kind, reduce op, root, and whether the rank already
//! failed), so a rank that differs or failed makes every rank return the
//! same error naming it. Every wait is bounded by the communicator's
//! timeout (`ANYDEV_DIST_TIMEOUT`), after which a call fails with
//! [`DistError::Timeout`] instead of hanging on a dead peer.
//!
//! Arrays travel through an engine chosen per device kind by a readable,
//! overridable table ([`EngineTable`], `ANYDEV_DIST_BACKEND`): MPI, NCCL
//! for CUDA, or a plugin's own collectives. Through MPI, devices whose
//! memory the host cannot address go through host staging, and
//! [`Communicator::describe`] says so.
//! See `docs/distributed.md`.

mod comm;
mod engine;
mod error;
mod meta;
pub mod placement;
mod wait;

pub use comm::{init, timeout_from_env, Communicator, ReduceOp, DEFAULT_TIMEOUT, MAX_TAG, TIMEOUT_VAR};
pub use engine::{route, Engine, EngineTable, Route, BACKEND_VAR};
pub use error::{DistError, Result};
