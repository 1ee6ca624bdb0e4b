//! Collectives among processes: what one does and how it reduces. The
//! runtime's communicators (`anydev_core::collective`) and plugins written
//! with `anydev-plugin` share these names; the plugin ABI's
//! `ANYDEV_COLLECTIVE_*` and `ANYDEV_REDUCE_*` codes are their C form.

/// How all-reduce and reduce-scatter combine the ranks' elements. On bool,
/// `Sum` and `Max` are logical or, `Prod` and `Min` logical and; integers
/// wrap; f16 and bf16 accumulate in f32 and round once; `Min` and `Max`
/// propagate NaN and do not apply to complex dtypes. Ranks combine in rank
/// order, so every rank gets the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
}

/// What a collective does; ranks are indices in the communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    /// Every rank gets the reduction of every rank's `count` elements.
    AllReduce(ReduceOp),
    /// Every rank gets the root's `count` elements (only the root sends).
    Broadcast { root: usize },
    /// Every rank gets every rank's `count` elements, in rank order.
    AllGather,
    /// Rank `r` gets block `r` (of `count` elements) of the reduction.
    ReduceScatter(ReduceOp),
    /// Block `i` (of `count` elements) of rank `r`'s send goes to rank `i`,
    /// as its block `r`.
    AllToAll,
    /// `count` elements to rank `peer`.
    Send { peer: usize },
    /// `count` elements from rank `peer`.
    Recv { peer: usize },
}

impl CollectiveKind {
    /// The collective's name in errors (`all_reduce`, `send`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce(_) => "all_reduce",
            CollectiveKind::Broadcast { .. } => "broadcast",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter(_) => "reduce_scatter",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::Send { .. } => "send",
            CollectiveKind::Recv { .. } => "recv",
        }
    }
}
