//! Collectives among processes (ABI 1.6) over POSIX shared memory.
//!
//! The ranks of a communicator are processes on one machine (one per MPI
//! rank), or threads of one process, each with its own sim device. They
//! meet in a file named by the communicator id, `/dev/shm/anydev-sim-<name>`
//! (the temporary directory where there is no `/dev/shm`), which every rank
//! maps (`shm.rs`); its name goes once every rank has joined.
//!
//! Every collective is messages on the file's channels, one per ordered
//! pair of ranks, each holding one chunk (256 KiB up to 8 ranks, less
//! beyond, so that the slots take at most 16 MiB). A collective moves one
//! message of the same length on each channel it uses, chunk by chunk: in
//! step k a rank sends chunk k of each of its outgoing messages, then
//! receives chunk k of each incoming one, then uses what it received
//! (reduces it, stores it). That needs no barrier and cannot deadlock when
//! every rank makes the same calls in the same order: a send of chunk k
//! waits only for the peer to have received chunk k - 1, which the peer
//! does in its step k - 1; a receive of chunk k waits only for the peer's
//! send of chunk k. By induction on the steps (and on the calls, whose
//! messages follow each other on a channel), every rank finishes every
//! step. A send and a recv of more than one chunk pair up as the receiver
//! goes, so two ranks that both send to each other before receiving must,
//! as with NCCL outside a group, not do so with messages over a chunk.
//!
//! Reductions combine the ranks' data in rank order on every rank, so all
//! ranks get the same bits (`reduce.rs`). A collective runs as a job on
//! the stream's worker, like an op; abort makes every wait of this rank
//! fail at once, and marks the file so that the peers' waits fail too,
//! naming the rank that aborted.

use crate::shm::{self, Layout, Segment};
use crate::{reduce, Sim, SimBuffer, SimStream};
use anydev_ops::DType;
use anydev_plugin::{
    CollectiveCall, CollectiveKind, Collectives, Comm, CommId, CommInit, PluginError, ReduceOp, Result,
};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The most bytes one chunk (a channel's slot) carries.
pub const CHUNK_BYTES: usize = 256 << 10;

/// The channels' slots take at most this much in all; with more than 8
/// ranks the chunks shrink to fit.
const CHANNEL_BUDGET: usize = 16 << 20;

/// The smallest chunk, reached at 64 ranks.
const MIN_CHUNK_BYTES: usize = 4 << 10;

/// More ranks than this on one machine is surely a mistake.
pub const MAX_RANKS: usize = 64;

/// The first bytes of every communicator id the simulator makes.
const ID_MAGIC: &[u8; 8] = b"adsimid1";

/// Hex digits of the name after the magic.
const NAME_LEN: usize = 32;

/// The chunk of a communicator of `nranks` ranks.
pub fn chunk_bytes(nranks: usize) -> usize {
    let share = CHANNEL_BUDGET / (nranks * nranks).max(1);
    share.clamp(MIN_CHUNK_BYTES, CHUNK_BYTES) / shm::LINE * shm::LINE
}

/// A name no other communicator has: 128 bits hashed from the time, the
/// process, a counter and std's randomly keyed hasher.
fn new_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let word = |i: u64| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(time);
        hasher.write_u32(std::process::id());
        hasher.write_u64(count);
        hasher.write_u64(i);
        hasher.finish()
    };
    format!("{:016x}{:016x}", word(0), word(1))
}

/// The name inside a simulator communicator id.
fn name_of(id: &CommId) -> Option<&str> {
    let name = id.get(ID_MAGIC.len()..ID_MAGIC.len() + NAME_LEN)?;
    let ok = id.starts_with(ID_MAGIC) && name.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    ok.then(|| std::str::from_utf8(name).expect("hex digits"))
}

/// The file through which the ranks of the communicator `id` join: in
/// `/dev/shm` (the temporary directory where there is none) while ranks
/// are joining, removed once all have (or joining failed). `None` when
/// `id` is not a simulator communicator id.
pub fn comm_path(id: &CommId) -> Option<PathBuf> {
    let shm = Path::new("/dev/shm");
    let dir = match shm.is_dir() {
        true => shm.to_path_buf(),
        false => std::env::temp_dir(),
    };
    name_of(id).map(|name| dir.join(format!("anydev-sim-{name}")))
}

/// What one rank's communicator shares with the jobs that use it.
struct Shared {
    segment: Segment,
    rank: usize,
    nranks: usize,
    device: usize,
    /// The dtypes the device refuses (ANYDEV_SIM_REFUSE_DTYPES).
    refused: Vec<DType>,
    /// Set by this rank's `abort`.
    aborted: AtomicBool,
    /// Held by the collective that runs: a channel has one writer and one
    /// reader, so two streams of this rank never use the channels at once.
    turn: Mutex<()>,
}

/// One rank's membership of a communicator.
pub struct SimComm {
    shared: Arc<Shared>,
}

const OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max];
const KINDS: [&str; 6] = [
    "all_reduce",
    "broadcast",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "send/recv",
];

/// What a message's chunks carry besides their length, so that ranks whose
/// calls differ get an error instead of each other's bytes: the collective
/// (send and recv are one, as they pair up), its reduction or root, and
/// the dtype.
fn tag(kind: CollectiveKind, dtype: DType) -> u64 {
    let op = |op: ReduceOp| OPS.iter().position(|&o| o == op).unwrap_or(0) as u64;
    let (code, detail) = match kind {
        CollectiveKind::AllReduce(o) => (0, op(o)),
        CollectiveKind::Broadcast { root } => (1, root as u64),
        CollectiveKind::AllGather => (2, 0),
        CollectiveKind::ReduceScatter(o) => (3, op(o)),
        CollectiveKind::AllToAll => (4, 0),
        CollectiveKind::Send { .. } | CollectiveKind::Recv { .. } => (5, 0),
    };
    code | (detail << 8) | (u64::from(dtype.code()) << 40)
}

/// A tag in words, for errors.
fn describe(tag: u64) -> String {
    let kind = KINDS
        .get((tag & 0xff) as usize)
        .copied()
        .unwrap_or("an unknown collective");
    let detail = (tag >> 8) & 0xffff_ffff;
    let dtype = DType::from_code((tag >> 40) as u32).map_or_else(|| "an unknown dtype".to_owned(), |d| d.to_string());
    match tag & 0xff {
        0 | 3 => format!(
            "{kind}({:?}) of {dtype}",
            OPS.get(detail as usize).unwrap_or(&ReduceOp::Sum)
        ),
        1 => format!("{kind}(root {detail}) of {dtype}"),
        _ => format!("{kind} of {dtype}"),
    }
}

impl Shared {
    /// Fails once this rank or another has aborted the communicator.
    fn check(&self) -> Result<()> {
        if self.aborted.load(Ordering::Acquire) {
            return Err(PluginError::internal("the communicator was aborted"));
        }
        match self.segment.aborted_by() {
            None => Ok(()),
            Some(rank) if rank == self.rank => Err(PluginError::internal("the communicator was aborted")),
            Some(rank) => Err(PluginError::internal(format!(
                "the communicator was aborted by rank {rank}"
            ))),
        }
    }

    /// Moves one message of `len` bytes to each rank `p` with
    /// `outgoing.1[p] = Some(offset)` (read from `outgoing.0` at that byte
    /// offset) and from each rank with `incoming[p]`, chunk by chunk (module
    /// comment); after each step calls `step(at, size, inbox)`, where
    /// `inbox[p][..size]` holds bytes `at..at + size` of rank `p`'s message.
    fn exchange(
        &self,
        tag: u64,
        len: usize,
        outgoing: Option<(&SimBuffer, &[Option<usize>])>,
        incoming: &[bool],
        mut step: impl FnMut(usize, usize, &[Vec<u8>]) -> Result<()>,
    ) -> Result<()> {
        let (r, n) = (self.rank, self.nranks);
        let chunk = self.segment.layout().chunk.min(len);
        // Starting after this rank spreads the ranks over different peers.
        let peers: Vec<usize> = (1..n).map(|i| (r + i) % n).collect();
        let mut staging = vec![0u8; if outgoing.is_some() { chunk } else { 0 }];
        let mut inbox: Vec<Vec<u8>> = (0..n)
            .map(|p| vec![0u8; if incoming[p] && p != r { chunk } else { 0 }])
            .collect();
        let check = || self.check();
        let mut at = 0;
        while at < len {
            let size = chunk.min(len - at);
            if let Some((src, offsets)) = outgoing {
                for &p in &peers {
                    if let Some(offset) = offsets[p] {
                        src.read(offset + at, &mut staging[..size])?;
                        self.segment.channel(r, p).send(tag, &staging[..size], &check)?;
                    }
                }
            }
            for &p in peers.iter().filter(|&&p| incoming[p]) {
                let mismatch = |got: usize, got_tag: u64| {
                    PluginError::invalid_argument(format!(
                        "rank {p} sent {got} bytes of {} where rank {r} expected {size} bytes of {}: the ranks' \
                         collective calls differ (every rank makes the same calls in the same order)",
                        describe(got_tag),
                        describe(tag)
                    ))
                };
                self.segment
                    .channel(p, r)
                    .recv(tag, &mut inbox[p][..size], &check, &mismatch)?;
            }
            step(at, size, &inbox)?;
            at += size;
        }
        Ok(())
    }
}

/// A checked collective that owns what it touches, run later on a stream.
struct Job {
    kind: CollectiveKind,
    dtype: DType,
    send: Option<(SimBuffer, usize)>,
    recv: Option<(SimBuffer, usize)>,
    /// Bytes of one rank's message (`count` elements).
    block: usize,
}

impl Job {
    fn run(&self, shared: &Shared) -> Result<()> {
        let _turn = shared.turn.lock().unwrap_or_else(PoisonError::into_inner);
        shared.check()?;
        let (r, n, block, dtype) = (shared.rank, shared.nranks, self.block, self.dtype);
        let tag = tag(self.kind, dtype);
        let send = self.send.as_ref().map(|(b, offset)| (b, *offset));
        let recv = self.recv.as_ref().map(|(b, offset)| (b, *offset));
        let everyone = vec![true; n];
        let nobody = vec![false; n];
        let missing = || PluginError::internal("a collective lost a buffer it was checked to have");
        // Stores every peer's block `p` of the step in recv at block `p`.
        let gather = |at: usize, size: usize, inbox: &[Vec<u8>]| -> Result<()> {
            let (recv, offset) = recv.ok_or_else(missing)?;
            for p in (0..n).filter(|&p| p != r) {
                recv.write(offset + p * block + at, &inbox[p][..size])?;
            }
            Ok(())
        };
        match self.kind {
            CollectiveKind::AllReduce(op) | CollectiveKind::ReduceScatter(op) => {
                let ((send, send_offset), (recv, recv_offset)) = (send.ok_or_else(missing)?, recv.ok_or_else(missing)?);
                let scatter = matches!(self.kind, CollectiveKind::ReduceScatter(_));
                // All-reduce sends its whole buffer to everyone; reduce-
                // scatter sends block p to rank p and keeps block r.
                let to: Vec<Option<usize>> = (0..n)
                    .map(|p| Some(send_offset + if scatter { p * block } else { 0 }))
                    .collect();
                let own_offset = send_offset + if scatter { r * block } else { 0 };
                let mut own = vec![0u8; block.min(shared.segment.layout().chunk)];
                let mut out = own.clone();
                shared.exchange(tag, block, Some((send, &to)), &everyone, |at, size, inbox| {
                    send.read(own_offset + at, &mut own[..size])?;
                    let inputs: Vec<&[u8]> = (0..n)
                        .map(|p| if p == r { &own[..size] } else { &inbox[p][..size] })
                        .collect();
                    reduce::reduce(dtype, op, &inputs, &mut out[..size])?;
                    recv.write(recv_offset + at, &out[..size])
                })
            }
            CollectiveKind::Broadcast { root } if root == r => {
                let ((send, send_offset), (recv, recv_offset)) = (send.ok_or_else(missing)?, recv.ok_or_else(missing)?);
                SimBuffer::copy(send, send_offset, recv, recv_offset, block)?;
                let to = vec![Some(send_offset); n];
                shared.exchange(tag, block, Some((send, &to)), &nobody, |_, _, _| Ok(()))
            }
            CollectiveKind::Broadcast { root } => {
                let (recv, recv_offset) = recv.ok_or_else(missing)?;
                let mut from = nobody.clone();
                from[root] = true;
                shared.exchange(tag, block, None, &from, |at, size, inbox| {
                    recv.write(recv_offset + at, &inbox[root][..size])
                })
            }
            CollectiveKind::AllGather | CollectiveKind::AllToAll => {
                let ((send, send_offset), (recv, recv_offset)) = (send.ok_or_else(missing)?, recv.ok_or_else(missing)?);
                let blocks = matches!(self.kind, CollectiveKind::AllToAll);
                let block_of = |p: usize| if blocks { p * block } else { 0 };
                SimBuffer::copy(send, send_offset + block_of(r), recv, recv_offset + r * block, block)?;
                let to: Vec<Option<usize>> = (0..n).map(|p| Some(send_offset + block_of(p))).collect();
                shared.exchange(tag, block, Some((send, &to)), &everyone, gather)
            }
            CollectiveKind::Send { peer } => {
                let (send, send_offset) = send.ok_or_else(missing)?;
                let mut to = vec![None; n];
                to[peer] = Some(send_offset);
                shared.exchange(tag, block, Some((send, &to)), &nobody, |_, _, _| Ok(()))
            }
            CollectiveKind::Recv { peer } => {
                let (recv, recv_offset) = recv.ok_or_else(missing)?;
                let mut from = nobody.clone();
                from[peer] = true;
                shared.exchange(tag, block, None, &from, |at, size, inbox| {
                    recv.write(recv_offset + at, &inbox[peer][..size])
                })
            }
        }
    }
}

impl SimComm {
    /// Checks `call` for this rank and `stream` and returns the job that
    /// runs it.
    fn prepare(&self, stream: &SimStream, call: &CollectiveCall<'_, SimBuffer>) -> Result<Job> {
        let s = &self.shared;
        let (r, n, what) = (s.rank, s.nranks, call.kind.name());
        let invalid = |message: String| PluginError::invalid_argument(format!("{what} on rank {r}: {message}"));
        if stream.device() != s.device {
            return Err(invalid(format!(
                "the stream is on sim:{}, the communicator's device is sim:{}",
                stream.device(),
                s.device
            )));
        }
        if s.refused.contains(&call.dtype) {
            return Err(PluginError::unimplemented(format!(
                "sim:{} refuses dtype {} (ANYDEV_SIM_REFUSE_DTYPES)",
                s.device, call.dtype
            )));
        }
        let rank_ok = |p: usize, role: &str| match (role, p < n && p != r) {
            ("root", _) if p < n => Ok(()),
            ("root", _) => Err(invalid(format!(
                "root {p} is not a rank of this communicator of {n} ranks"
            ))),
            (_, true) => Ok(()),
            (_, false) => Err(invalid(format!(
                "{role} {p} is not another rank of this communicator of {n} ranks (this is rank {r})"
            ))),
        };
        // (send needed, recv needed, blocks of count on each side)
        let (send_needed, recv_needed, send_blocks, recv_blocks) = match call.kind {
            CollectiveKind::AllReduce(op) => {
                reduce::check(call.dtype, op)?;
                (true, true, 1, 1)
            }
            CollectiveKind::ReduceScatter(op) => {
                reduce::check(call.dtype, op)?;
                (true, true, n, 1)
            }
            CollectiveKind::Broadcast { root } => {
                rank_ok(root, "root")?;
                (root == r, true, 1, 1)
            }
            CollectiveKind::AllGather => (true, true, 1, n),
            CollectiveKind::AllToAll => (true, true, n, n),
            CollectiveKind::Send { peer } => {
                rank_ok(peer, "peer")?;
                (true, false, 1, 0)
            }
            CollectiveKind::Recv { peer } => {
                rank_ok(peer, "peer")?;
                (false, true, 0, 1)
            }
        };
        let bytes = |blocks: usize| call.count.checked_mul(call.dtype.size())?.checked_mul(blocks);
        let Some(block) = bytes(1) else {
            return Err(invalid(format!(
                "{} elements of {} are too many bytes",
                call.count, call.dtype
            )));
        };
        let side = |buffer: Option<(&SimBuffer, usize)>, needed: bool, blocks: usize, role: &str| match (buffer, needed)
        {
            (None, false) => Ok(None),
            (None, true) => Err(invalid(format!("it needs a {role} buffer"))),
            (Some(_), false) => Err(invalid(match call.kind {
                CollectiveKind::Broadcast { root } => {
                    format!("a {role} buffer is read on the root ({root}) only; pass none on other ranks")
                }
                _ => format!("it takes no {role} buffer"),
            })),
            (Some((buffer, offset)), true) => {
                if buffer.device() != s.device {
                    return Err(invalid(format!(
                        "the {role} buffer is on sim:{}, the communicator's device is sim:{}",
                        buffer.device(),
                        s.device
                    )));
                }
                let len = bytes(blocks)
                    .ok_or_else(|| invalid(format!("{} elements of {} are too many bytes", call.count, call.dtype)))?;
                buffer.check(&format!("{what} {role}"), offset, len)?;
                Ok(Some((buffer.clone(), offset)))
            }
        };
        Ok(Job {
            kind: call.kind,
            dtype: call.dtype,
            send: side(call.send, send_needed, send_blocks, "send")?,
            recv: side(call.recv, recv_needed, recv_blocks, "recv")?,
            block,
        })
    }
}

impl Comm<SimBuffer, SimStream> for SimComm {
    fn enqueue(&self, stream: &SimStream, call: &CollectiveCall<'_, SimBuffer>) -> Result<()> {
        let job = self.prepare(stream, call)?;
        let shared = Arc::clone(&self.shared);
        stream.state.submit(call.kind.name(), move || job.run(&shared))
    }

    fn abort(&self) -> Result<()> {
        self.shared.aborted.store(true, Ordering::Release);
        self.shared.segment.abort();
        Ok(())
    }
}

impl Collectives<SimBuffer, SimStream> for Sim {
    fn comm_id(&self) -> Result<CommId> {
        let mut id = [0u8; anydev_plugin::abi::ANYDEV_COMM_ID_BYTES];
        id[..ID_MAGIC.len()].copy_from_slice(ID_MAGIC);
        id[ID_MAGIC.len()..ID_MAGIC.len() + NAME_LEN].copy_from_slice(new_name().as_bytes());
        Ok(id)
    }

    fn comm_init(&self, device: usize, init: &CommInit) -> Result<Box<dyn Comm<SimBuffer, SimStream>>> {
        let (n, r) = (init.nranks, init.rank);
        if device >= self.memories.len() {
            return Err(PluginError::invalid_argument(format!(
                "sim:{device} does not exist ({} devices)",
                self.memories.len()
            )));
        }
        if n == 0 || n > MAX_RANKS || r >= n {
            return Err(PluginError::invalid_argument(format!(
                "sim: rank {r} of a communicator of {n} ranks: the simulator's collectives take 1 to {MAX_RANKS} \
                 ranks, each below nranks"
            )));
        }
        let path = comm_path(&init.id).ok_or_else(|| {
            PluginError::invalid_argument("sim: the communicator id was not made by this simulator's comm_id")
        })?;
        let layout = Layout {
            nranks: n,
            chunk: chunk_bytes(n),
        };
        let segment = Segment::join(&path, layout, r, init.timeout)?;
        Ok(Box::new(SimComm {
            shared: Arc::new(Shared {
                segment,
                rank: r,
                nranks: n,
                device,
                refused: self.config.refused.clone(),
                aborted: AtomicBool::new(false),
                turn: Mutex::new(()),
            }),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_shrink_with_many_ranks_and_stay_aligned() {
        assert_eq!(chunk_bytes(1), CHUNK_BYTES);
        assert_eq!(chunk_bytes(8), CHUNK_BYTES);
        assert!(chunk_bytes(9) < CHUNK_BYTES && chunk_bytes(9).is_multiple_of(shm::LINE));
        assert_eq!(chunk_bytes(MAX_RANKS), MIN_CHUNK_BYTES);
    }

    #[test]
    fn ids_are_unique_and_name_a_file() {
        let sim = Sim::new(Default::default());
        let (a, b) = (sim.comm_id().unwrap(), sim.comm_id().unwrap());
        assert_ne!(a, b);
        let path = comm_path(&a).unwrap();
        assert!(path.file_name().unwrap().to_str().unwrap().starts_with("anydev-sim-"));
        let mut forged = a;
        forged[ID_MAGIC.len()] = b'/';
        assert_eq!(comm_path(&forged), None);
        assert_eq!(comm_path(&[0; 128]), None);
    }

    #[test]
    fn tags_describe_the_call() {
        let t = tag(CollectiveKind::AllReduce(ReduceOp::Max), DType::BF16);
        assert_eq!(describe(t), "all_reduce(Max) of bf16");
        let t = tag(CollectiveKind::Broadcast { root: 3 }, DType::F32);
        assert_eq!(describe(t), "broadcast(root 3) of f32");
        assert_eq!(
            tag(CollectiveKind::Send { peer: 1 }, DType::U8),
            tag(CollectiveKind::Recv { peer: 0 }, DType::U8)
        );
    }
}
