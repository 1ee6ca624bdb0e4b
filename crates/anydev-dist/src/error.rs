//! The crate's one error type.

use std::time::Duration;

/// What went wrong in a distributed call, and what to do about it.
///
/// Every collective exchanges its metadata first, so a rank that passes a
/// different shape, dtype, device kind, op or root, or that failed before
/// the exchange, makes every rank return the same error naming that rank.
/// A rank that never arrives makes the others return [`DistError::Timeout`]
/// after the communicator's timeout instead of waiting forever.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// MPI could not be started, or was started twice.
    #[error("MPI could not be initialised: {0}")]
    Init(String),

    /// A setting (environment variable or API call) is not understood.
    #[error("distributed configuration: {0}")]
    Config(String),

    /// This rank's device could not be chosen.
    #[error("choosing this rank's device: {0}")]
    Placement(String),

    /// A rank passed something that differs from rank `reference`.
    #[error(
        "{}: rank {rank} has {field} {found} but rank {reference} has {expected}; \
         every rank must call the same collective with the same {field}",
        Numbered(op, *seq)
    )]
    Mismatch {
        op: String,
        seq: u64,
        rank: usize,
        reference: usize,
        field: &'static str,
        found: String,
        expected: String,
    },

    /// Another rank failed this call before the data moved; it returned its
    /// own error, and this one names it.
    #[error("{}: rank {rank} failed: {message}", Numbered(op, *seq))]
    PeerFailed {
        op: String,
        seq: u64,
        rank: usize,
        message: String,
    },

    /// No progress within the timeout: a rank has died, returned early, or
    /// is stuck. The communicator cannot be used again.
    #[error(
        "{} on rank {rank}: no progress for {timeout:?} while {phase}; another rank has \
         probably died, returned early or is stuck (ANYDEV_DIST_TIMEOUT sets the limit, in seconds). \
         The communicator cannot be used again: end the job (Communicator::abort)",
        Numbered(op, *seq)
    )]
    Timeout {
        op: String,
        seq: u64,
        rank: usize,
        phase: &'static str,
        timeout: Duration,
    },

    /// A call on a communicator that an earlier timeout left unusable.
    #[error("the communicator cannot be used after an earlier failure: {0}")]
    Broken(String),

    /// Bad input to one call (rank out of range, shape not divisible, ...).
    #[error("{op}: {message}")]
    InvalidInput { op: String, message: String },

    /// The op is not defined for this dtype (`mean` of integers, ...).
    #[error("{op}: {dtype} is not supported: {reason}")]
    Unsupported {
        op: String,
        dtype: anydev::DType,
        reason: String,
    },

    /// An array operation (staging to or from the host, a cast) failed.
    #[error(transparent)]
    Array(#[from] anydev::Error),
}

pub type Result<T, E = DistError> = std::result::Result<T, E>;

impl DistError {
    pub(crate) fn invalid(op: &str, message: impl Into<String>) -> DistError {
        DistError::InvalidInput {
            op: op.to_owned(),
            message: message.into(),
        }
    }
}

/// `op (collective #seq)`, which tells the ranks' reports of one call
/// apart; `send` and `recv` are not collectives and are not numbered.
struct Numbered<'a>(&'a str, u64);

impl std::fmt::Display for Numbered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            "send" | "recv" => f.write_str(self.0),
            op => write!(f, "{op} (collective #{})", self.1),
        }
    }
}
