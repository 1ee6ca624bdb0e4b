//! The shared memory of one communicator: a file that every rank maps,
//! holding a header (who has joined, who aborted) and one single-producer
//! single-consumer channel per ordered pair of ranks.
//!
//! This is the only module of the collectives with raw memory. The mapping
//! is a [`MmapRaw`], which hands out raw pointers only; every word that
//! several ranks touch is read and written as an [`AtomicU64`], and a
//! channel's data slot is touched by one side at a time, as its two
//! counters say.
//!
//! Layout (every offset a multiple of [`LINE`]):
//!
//! ```text
//! header    magic, nranks, chunk, state, abort          (one line)
//!           joined flag of rank 0, 1, …, n - 1          (one u64 each)
//! channels  n * n of them, src * n + dst, each:
//!             line 0  written, len, tag   (the writer's)
//!             line 1  read                (the reader's)
//!             slot    chunk bytes
//! ```
//!
//! The file is made complete (sized, zero-filled so that a full tmpfs is
//! an error here and not a SIGBUS later, header written) under a temporary
//! name and then hard-linked to its real name, so a rank that opens the
//! real name always finds a whole file; the first link wins, the other
//! candidates are dropped. Once the file exists nobody resizes it.

use anydev_plugin::{PluginError, Result};
use memmap2::MmapRaw;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Alignment of every part of the mapping: a cache line, so that the two
/// sides of a channel never write the same line.
pub const LINE: usize = 64;

/// The first word of every communicator file ("adsimcc" and the layout's
/// version).
const MAGIC: u64 = u64::from_le_bytes(*b"adsimcc1");

// Header words, as byte offsets.
const MAGIC_WORD: usize = 0;
const NRANKS_WORD: usize = 8;
const CHUNK_WORD: usize = 16;
/// How joining goes: see [`JoinState`].
const STATE_WORD: usize = 24;
/// 0, or 1 + the rank that aborted the communicator first.
const ABORT_WORD: usize = 32;
/// The ranks' joined flags, one word each.
const RANKS: usize = LINE;

// Channel words and slot, as byte offsets from the channel's start.
const WRITTEN: usize = 0;
const LEN: usize = 8;
const TAG: usize = 16;
const READ: usize = LINE;
const SLOT: usize = 2 * LINE;

/// Where the parts of a communicator of `nranks` ranks lie; the same on
/// every rank, since it depends only on `nranks` and `chunk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nranks: usize,
    /// Bytes of one channel's slot: the most one message chunk carries. A
    /// multiple of [`LINE`], so of every element size.
    pub chunk: usize,
}

impl Layout {
    fn header_len(&self) -> usize {
        (RANKS + 8 * self.nranks).next_multiple_of(LINE)
    }

    fn channel_len(&self) -> usize {
        SLOT + self.chunk
    }

    /// The byte offset of the channel from `src` to `dst`.
    fn channel(&self, src: usize, dst: usize) -> usize {
        assert!(src < self.nranks && dst < self.nranks, "ranks checked by the caller");
        self.header_len() + (src * self.nranks + dst) * self.channel_len()
    }

    /// Bytes of the whole file.
    pub fn file_len(&self) -> usize {
        self.header_len() + self.nranks * self.nranks * self.channel_len()
    }
}

/// Why joining failed, as the state word records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// `rank` waited until its timeout.
    TimedOut,
    /// `rank` joined a second time.
    JoinedTwice,
    /// `rank` joined saying the communicator has `extra` ranks.
    WrongSize,
}

/// The state word: how many ranks have joined (bits 0..16) and, once
/// joining has failed, which rank made it fail (1 + rank, bits 16..32),
/// why (bits 32..40, 0 while it has not failed) and a detail (bits 40..56).
/// One word, so that "everyone joined" and "joining failed" exclude each
/// other: a compare-exchange decides which came first.
#[derive(Clone, Copy, Debug)]
struct JoinState(u64);

impl JoinState {
    fn joined(self) -> usize {
        (self.0 & 0xffff) as usize
    }

    fn failure(self) -> Option<(Failure, usize, usize)> {
        let who = ((self.0 >> 16) & 0xffff) as usize;
        let detail = ((self.0 >> 40) & 0xffff) as usize;
        let why = match (self.0 >> 32) & 0xff {
            0 => return None,
            1 => Failure::TimedOut,
            2 => Failure::JoinedTwice,
            _ => Failure::WrongSize,
        };
        Some((why, who.saturating_sub(1), detail))
    }

    fn failed(self, why: Failure, rank: usize, detail: usize) -> JoinState {
        let code = match why {
            Failure::TimedOut => 1u64,
            Failure::JoinedTwice => 2,
            Failure::WrongSize => 3,
        };
        let detail = detail.min(0xffff) as u64;
        JoinState((self.0 & 0xffff) | ((rank as u64 + 1) << 16) | (code << 32) | (detail << 40))
    }
}

/// Waits politely: spins a little, then yields, then sleeps a little
/// longer each time up to a millisecond (ranks are often more threads and
/// processes than the machine has cores).
#[derive(Default)]
struct Backoff(u32);

impl Backoff {
    fn pause(&mut self) {
        self.0 = self.0.saturating_add(1);
        match self.0 {
            0..64 => std::hint::spin_loop(),
            64..128 => std::thread::yield_now(),
            n => std::thread::sleep(Duration::from_micros(u64::from((n - 127).min(100)) * 10)),
        }
    }
}

/// Polls `ready` until it holds; `check` is asked in between and ends the
/// wait with its error (an abort).
pub fn wait_until(mut ready: impl FnMut() -> bool, check: &dyn Fn() -> Result<()>) -> Result<()> {
    let mut backoff = Backoff::default();
    loop {
        if ready() {
            return Ok(());
        }
        check()?;
        backoff.pause();
    }
}

/// One rank's mapping of a communicator's file.
pub struct Segment {
    map: MmapRaw,
    layout: Layout,
    rank: usize,
}

fn io_error(what: &str, path: &Path, error: std::io::Error) -> PluginError {
    PluginError::internal(format!("sim: cannot {what} {}: {error}", path.display()))
}

/// A name for a candidate file next to `path`, unique in this process.
fn candidate_path(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    PathBuf::from(name)
}

fn create_new(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

impl Segment {
    /// Joins rank `rank` of the communicator whose file is `path`: opens
    /// it (creating it when no rank has yet), checks that it was made for
    /// `layout`, and waits until every rank has joined or `timeout` passed.
    /// The last rank to join removes the file's name (the mappings stay);
    /// a rank that fails to join removes it too, so nothing is left behind.
    pub fn join(path: &Path, layout: Layout, rank: usize, timeout: Duration) -> Result<Segment> {
        assert!(rank < layout.nranks && layout.nranks <= 0xffff, "checked by the caller");
        let started = Instant::now();
        let deadline = started.checked_add(timeout);
        let joined = Segment::open_or_create(path, layout, deadline).and_then(|map| {
            let segment = Segment { map, layout, rank };
            segment.check_header(path)?;
            let last = segment.enter(started, timeout)?;
            Ok((segment, last))
        });
        match joined {
            Ok((segment, last)) => {
                if last {
                    let _ = std::fs::remove_file(path);
                }
                Ok(segment)
            }
            Err(error) => {
                let _ = std::fs::remove_file(path);
                Err(error)
            }
        }
    }

    /// Maps the file at `path`, first making it if it does not exist.
    fn open_or_create(path: &Path, layout: Layout, deadline: Option<Instant>) -> Result<MmapRaw> {
        loop {
            match OpenOptions::new().read(true).write(true).open(path) {
                Ok(file) => return MmapRaw::map_raw(&file).map_err(|e| io_error("map", path, e)),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("open", path, e)),
            }
            let candidate = candidate_path(path);
            let made = Segment::make(&candidate, layout).and_then(|map| match std::fs::hard_link(&candidate, path) {
                Ok(()) => Ok(Some(map)),
                // Another rank's file got there first: use that one.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(None),
                Err(e) => Err(io_error("link", path, e)),
            });
            let _ = std::fs::remove_file(&candidate);
            if let Some(map) = made? {
                return Ok(map);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(PluginError::internal(format!(
                    "sim: the communicator file {} keeps appearing and disappearing",
                    path.display()
                )));
            }
        }
    }

    /// A complete new file at `path` for `layout`, mapped.
    fn make(path: &Path, layout: Layout) -> Result<MmapRaw> {
        let mut file = create_new(path).map_err(|e| io_error("create", path, e))?;
        // Written rather than only sized, so that its pages exist now.
        let zeros = vec![0u8; layout.file_len().min(1 << 20)];
        let mut left = layout.file_len();
        while left > 0 {
            let n = left.min(zeros.len());
            file.write_all(&zeros[..n])
                .map_err(|e| io_error("fill (is the shared-memory file system full?)", path, e))?;
            left -= n;
        }
        let map = MmapRaw::map_raw(&file).map_err(|e| io_error("map", path, e))?;
        let segment = Segment { map, layout, rank: 0 };
        segment.word(NRANKS_WORD).store(layout.nranks as u64, Ordering::Relaxed);
        segment.word(CHUNK_WORD).store(layout.chunk as u64, Ordering::Relaxed);
        segment.word(MAGIC_WORD).store(MAGIC, Ordering::Release);
        Ok(segment.map)
    }

    /// The word at byte `offset`, shared with every rank.
    fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(
            offset.is_multiple_of(8) && offset + 8 <= self.map.len(),
            "word {offset} outside a {}-byte mapping",
            self.map.len()
        );
        // SAFETY: the mapping is page-aligned and `offset` a multiple of 8
        // inside it (asserted), so the address is valid and aligned for an
        // `AtomicU64`, which has u64's layout; the mapping lives as long as
        // `self`, which the reference borrows, and nobody shrinks the file
        // (module comment). Every rank touches these words only as atomics.
        unsafe { &*self.map.as_mut_ptr().add(offset).cast::<AtomicU64>() }
    }

    /// Checks that the file is a communicator of this layout; a size
    /// mismatch fails the join for every rank.
    fn check_header(&self, path: &Path) -> Result<()> {
        if self.map.len() < LINE || self.word(MAGIC_WORD).load(Ordering::Acquire) != MAGIC {
            return Err(PluginError::invalid_argument(format!(
                "sim: {} is not a communicator of this simulator version",
                path.display()
            )));
        }
        let nranks = self.word(NRANKS_WORD).load(Ordering::Acquire) as usize;
        if nranks != self.layout.nranks {
            self.fail(Failure::WrongSize, self.layout.nranks);
            return Err(PluginError::invalid_argument(format!(
                "sim: rank {} joined a communicator of {} ranks saying it has {}: every rank must pass the \
                 same nranks",
                self.rank, nranks, self.layout.nranks
            )));
        }
        let chunk = self.word(CHUNK_WORD).load(Ordering::Acquire) as usize;
        if chunk != self.layout.chunk || self.map.len() != self.layout.file_len() {
            return Err(PluginError::invalid_argument(format!(
                "sim: {} was made by another simulator version (chunk {chunk}, {} bytes)",
                path.display(),
                self.map.len()
            )));
        }
        Ok(())
    }

    fn state(&self) -> JoinState {
        JoinState(self.word(STATE_WORD).load(Ordering::Acquire))
    }

    /// Marks joining as failed by this rank, unless every rank has joined
    /// already or it failed before; returns the state after.
    fn fail(&self, why: Failure, detail: usize) -> JoinState {
        let word = self.word(STATE_WORD);
        let mut state = self.state();
        loop {
            if state.failure().is_some() || state.joined() >= self.layout.nranks {
                return state;
            }
            let failed = state.failed(why, self.rank, detail);
            match word.compare_exchange(state.0, failed.0, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return failed,
                Err(now) => state = JoinState(now),
            }
        }
    }

    /// The ranks that have not joined, as "1, 3".
    fn missing(&self) -> String {
        let missing: Vec<String> = (0..self.layout.nranks)
            .filter(|r| self.word(RANKS + 8 * r).load(Ordering::Acquire) == 0)
            .map(|r| r.to_string())
            .collect();
        missing.join(", ")
    }

    /// The error for a failed join as this rank sees it.
    fn join_error(&self, state: JoinState, timeout: Duration) -> PluginError {
        let n = self.layout.nranks;
        let message = match state.failure() {
            Some((Failure::TimedOut, who, _)) if who == self.rank => format!(
                "sim: rank {who} of a communicator of {n} ranks waited {} ms for rank(s) {} to join; they never \
                 called comm_init with this id",
                timeout.as_millis(),
                self.missing()
            ),
            Some((Failure::TimedOut, who, _)) => format!(
                "sim: rank {who} gave up waiting for rank(s) {} to join the communicator of {n} ranks; they never \
                 called comm_init with this id",
                self.missing()
            ),
            Some((Failure::JoinedTwice, who, _)) => {
                format!("sim: rank {who} joined the communicator of {n} ranks twice: each rank joins exactly once")
            }
            Some((Failure::WrongSize, who, size)) => format!(
                "sim: rank {who} joined the communicator of {n} ranks saying it has {size}: every rank must pass \
                 the same nranks"
            ),
            None => format!("sim: rank {} could not join the communicator of {n} ranks", self.rank),
        };
        PluginError::invalid_argument(message)
    }

    /// Counts this rank in and waits for the others; returns whether this
    /// rank was the last to join.
    fn enter(&self, started: Instant, timeout: Duration) -> Result<bool> {
        let n = self.layout.nranks;
        let flag = self.word(RANKS + 8 * self.rank);
        if flag
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            let state = self.fail(Failure::JoinedTwice, 0);
            let mut error = self.join_error(state, timeout);
            if state.failure().is_none() {
                error.message = format!(
                    "sim: rank {} joined the communicator of {n} ranks twice: each rank joins exactly once",
                    self.rank
                );
            }
            return Err(error);
        }
        let word = self.word(STATE_WORD);
        let mut state = self.state();
        loop {
            if state.failure().is_some() {
                return Err(self.join_error(state, timeout));
            }
            match word.compare_exchange_weak(state.0, state.0 + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => state = JoinState(now),
            }
        }
        if state.joined() + 1 == n {
            return Ok(true);
        }
        let mut backoff = Backoff::default();
        loop {
            let state = self.state();
            if state.failure().is_some() {
                return Err(self.join_error(state, timeout));
            }
            if state.joined() == n {
                return Ok(false);
            }
            if started.elapsed() >= timeout {
                let state = self.fail(Failure::TimedOut, 0);
                if state.failure().is_none() {
                    // Everyone joined just now.
                    return Ok(false);
                }
                return Err(self.join_error(state, timeout));
            }
            backoff.pause();
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Marks the communicator aborted by this rank, for every rank to see.
    pub fn abort(&self) {
        let _ = self
            .word(ABORT_WORD)
            .compare_exchange(0, self.rank as u64 + 1, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The rank that aborted the communicator first, if one has.
    pub fn aborted_by(&self) -> Option<usize> {
        match self.word(ABORT_WORD).load(Ordering::Acquire) {
            0 => None,
            rank => Some(rank as usize - 1),
        }
    }

    /// The channel that carries messages from `src` to `dst`.
    pub fn channel(&self, src: usize, dst: usize) -> Channel<'_> {
        Channel {
            segment: self,
            offset: self.layout.channel(src, dst),
        }
    }
}

/// One direction between two ranks: a slot of one chunk and two counters,
/// `written` (chunks the writer published) and `read` (chunks the reader
/// consumed). The slot belongs to the writer while `written == read` and to
/// the reader while `written == read + 1`; each side moves it to the other
/// with a release store that the other's acquire load sees, so the bytes
/// it copied are complete. Exactly one thread writes and one reads a
/// channel at a time (the communicator's turn lock in each process).
pub struct Channel<'a> {
    segment: &'a Segment,
    offset: usize,
}

impl Channel<'_> {
    fn word(&self, at: usize) -> &AtomicU64 {
        self.segment.word(self.offset + at)
    }

    /// The slot's address; `len` bytes of it are inside the mapping.
    fn slot(&self, len: usize) -> *mut u8 {
        let start = self.offset + SLOT;
        assert!(
            len <= self.segment.layout.chunk && start + len <= self.segment.map.len(),
            "a chunk of {len} bytes does not fit the slot"
        );
        // SAFETY: `start` lies inside the mapping (asserted), so the
        // address is in bounds of the same allocation.
        unsafe { self.segment.map.as_mut_ptr().add(start) }
    }

    /// Sends one chunk (at most the layout's chunk) labelled `tag`, once
    /// the reader has consumed the previous one.
    pub fn send(&self, tag: u64, bytes: &[u8], check: &dyn Fn() -> Result<()>) -> Result<()> {
        let slot = self.slot(bytes.len());
        let (written, read) = (self.word(WRITTEN), self.word(READ));
        let sent = written.load(Ordering::Acquire);
        wait_until(|| read.load(Ordering::Acquire) == sent, check)?;
        // SAFETY: `slot` has room for `bytes` inside the mapping (checked by
        // `slot`), which cannot overlap the caller's slice (it is not Rust
        // memory handed out anywhere). `read == written`: the reader has
        // consumed the last chunk (its release store, our acquire load), so
        // the slot is ours until we publish below.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), slot, bytes.len()) };
        self.word(LEN).store(bytes.len() as u64, Ordering::Relaxed);
        self.word(TAG).store(tag, Ordering::Relaxed);
        written.store(sent + 1, Ordering::Release);
        Ok(())
    }

    /// Receives one chunk into `out`, which must be exactly the chunk the
    /// writer sent with `tag`; otherwise the error from `mismatch(len, tag)`
    /// (the ranks disagree about what they are doing), and nothing is
    /// consumed.
    pub fn recv(
        &self,
        tag: u64,
        out: &mut [u8],
        check: &dyn Fn() -> Result<()>,
        mismatch: &dyn Fn(usize, u64) -> PluginError,
    ) -> Result<()> {
        let (written, read) = (self.word(WRITTEN), self.word(READ));
        let consumed = read.load(Ordering::Acquire);
        wait_until(|| written.load(Ordering::Acquire) > consumed, check)?;
        let (len, got) = (
            self.word(LEN).load(Ordering::Relaxed) as usize,
            self.word(TAG).load(Ordering::Relaxed),
        );
        if len != out.len() || got != tag {
            return Err(mismatch(len, got));
        }
        let slot = self.slot(len);
        // SAFETY: `slot` holds `len == out.len()` bytes inside the mapping
        // (checked by `slot`); `out` is exclusive Rust memory. `written >
        // read`: the writer published the chunk (its release store, our
        // acquire load) and leaves the slot alone until we consume it below.
        unsafe { std::ptr::copy_nonoverlapping(slot, out.as_mut_ptr(), len) };
        read.store(consumed + 1, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("anydev-sim-shm-test-{}-{name}", std::process::id()))
    }

    #[test]
    fn a_layout_keeps_every_part_on_its_own_lines() {
        let layout = Layout { nranks: 3, chunk: 4096 };
        assert_eq!(layout.header_len(), 128);
        assert_eq!(layout.channel(0, 0), 128);
        assert_eq!(layout.channel(1, 2) - layout.channel(1, 1), SLOT + 4096);
        assert_eq!(layout.file_len(), 128 + 9 * (SLOT + 4096));
    }

    #[test]
    fn a_join_state_records_the_first_failure() {
        let state = JoinState(2).failed(Failure::WrongSize, 5, 7);
        assert_eq!(state.joined(), 2);
        assert_eq!(state.failure(), Some((Failure::WrongSize, 5, 7)));
        assert_eq!(JoinState(3).failure(), None);
    }

    #[test]
    fn one_rank_joins_alone_and_leaves_no_file() {
        let path = path("alone");
        let layout = Layout { nranks: 1, chunk: 128 };
        let segment = Segment::join(&path, layout, 0, Duration::ZERO).unwrap();
        assert!(!path.exists());
        // A message to itself goes through its own channel.
        let ok = || Ok(());
        segment.channel(0, 0).send(9, &[1, 2, 3], &ok).unwrap();
        let mut out = [0u8; 3];
        let mismatch = |len, tag| PluginError::internal(format!("{len} {tag}"));
        segment.channel(0, 0).recv(9, &mut out, &ok, &mismatch).unwrap();
        assert_eq!(out, [1, 2, 3]);
        segment.channel(0, 0).send(9, &[4], &ok).unwrap();
        let err = segment
            .channel(0, 0)
            .recv(8, &mut out[..1], &ok, &mismatch)
            .unwrap_err();
        assert_eq!(err.message, "1 9");
    }

    #[test]
    fn a_file_of_another_size_fails_the_join_for_everyone() {
        let path = path("size");
        let two = Layout { nranks: 2, chunk: 128 };
        let three = Layout { nranks: 3, chunk: 128 };
        let first = std::thread::spawn({
            let path = path.clone();
            move || Segment::join(&path, two, 0, Duration::from_secs(20)).err().unwrap()
        });
        while !path.exists() && !first.is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let second = Segment::join(&path, three, 1, Duration::from_secs(20)).err().unwrap();
        assert!(second.message.contains("saying it has 3"), "{second}");
        let first = first.join().unwrap();
        assert!(
            first
                .message
                .contains("rank 1 joined the communicator of 2 ranks saying it has 3"),
            "{first}"
        );
        assert!(!path.exists());
    }
}
