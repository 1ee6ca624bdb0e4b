//! Collectives among processes (ABI 1.6) in Rust terms.
//!
//! A plugin that moves its devices' memory between processes itself (its
//! vendor's collective library, or the simulator's shared-memory
//! transport) returns a [`Collectives`] from [`crate::Plugin::collectives`]
//! and sets [`crate::Plugin::COLLECTIVES`]; the export then fills the
//! table's five collective calls. The header (`anydev_plugin.h`,
//! "collectives") is the contract: who calls what, and what each
//! collective reads and writes.

use crate::Result;
use anydev_ops::DType;
use anydev_plugin_abi::ANYDEV_COMM_ID_BYTES;
use std::time::Duration;

/// The opaque bytes one rank makes with [`Collectives::comm_id`] and the
/// host copies to every other rank.
pub type CommId = [u8; ANYDEV_COMM_ID_BYTES];

pub use anydev_ops::collective::{CollectiveKind, ReduceOp};

/// One collective on buffers of the communicator's device. `send` and
/// `recv` are a buffer and a byte offset; `count` is per rank, as the
/// header's table says. Decoded from the ABI with every code checked; the
/// ranges were checked by the host (a plugin may check them again).
#[derive(Clone, Copy, Debug)]
pub struct CollectiveCall<'a, B> {
    pub kind: CollectiveKind,
    pub dtype: DType,
    pub send: Option<(&'a B, usize)>,
    pub recv: Option<(&'a B, usize)>,
    pub count: usize,
}

/// What `comm_init` asks for.
#[derive(Clone, Copy, Debug)]
pub struct CommInit {
    pub id: CommId,
    pub nranks: usize,
    pub rank: usize,
    /// How long to wait for every rank to join.
    pub timeout: Duration,
}

/// A plugin's collectives: making ids and joining communicators.
pub trait Collectives<B, S>: Send + Sync {
    /// The id of a new communicator.
    fn comm_id(&self) -> Result<CommId>;

    /// Joins `init.rank` of the communicator `init.id` names, on `device`;
    /// returns once every rank has joined, or fails after `init.timeout`
    /// naming the ranks that did not come.
    fn comm_init(&self, device: usize, init: &CommInit) -> Result<Box<dyn Comm<B, S>>>;
}

/// One rank's membership of a communicator. Dropped by `comm_destroy`.
pub trait Comm<B, S>: Send + Sync {
    /// Enqueues `call` on `stream`, in stream order.
    fn enqueue(&self, stream: &S, call: &CollectiveCall<'_, B>) -> Result<()>;

    /// Makes pending and later collectives fail soon, without waiting for
    /// the peers; called while another thread may be blocked in one.
    fn abort(&self) -> Result<()>;
}
