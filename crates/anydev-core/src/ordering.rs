//! Per-buffer ordering: who last wrote a buffer, who is still reading it,
//! and what a new user must wait for (design section 4).
//!
//! Every op that touches a buffer calls [`Usage::before`] with the stream
//! it is about to run on and [`Usage::after`] once it is enqueued. Work on
//! one stream is ordered already, so only uses on *other* streams count:
//!
//! - a read waits for the last write; a write waits for the last write and
//!   for every read since (arrays are immutable, but the same memory can be
//!   reached through a zero-copy mapping or be recycled by an allocator);
//! - within one backend the wait is an event the new stream waits on, so
//!   the host never blocks; across backends (the host reading a buffer a
//!   device is still writing, through a zero-copy mapping) the host waits
//!   for the event, since one backend cannot wait on another's events;
//! - the host's own access ([`Usage::host_wait`]) waits for the write;
//! - freeing waits for every pending use (see `Buffer`'s drop).
//!
//! Events are recorded lazily, on the writer's stream when somebody first
//! needs one, so an op costs one event only when another stream or the
//! host actually depends on its result. Backends that complete work before
//! returning (the CPU) never leave a pending use, and a buffer nobody used
//! asynchronously costs one atomic load per access.

use crate::backend::Backend;
use crate::stream::{Event, Stream};
use crate::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How an op touches a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// One pending use: the stream it was enqueued on and, once somebody
/// needed it, an event recorded after it.
struct PendingUse {
    backend: Arc<dyn Backend>,
    stream: Stream,
    event: Option<Event>,
}

impl PendingUse {
    fn event(&mut self) -> Result<Event> {
        if let Some(event) = &self.event {
            return Ok(event.clone());
        }
        let event = self.backend.record_event(&self.stream)?;
        self.event = Some(event.clone());
        Ok(event)
    }

    fn same_backend(&self, backend: &Arc<dyn Backend>) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.backend), Arc::as_ptr(backend))
    }
}

#[derive(Default)]
struct Pending {
    write: Option<PendingUse>,
    reads: Vec<PendingUse>,
}

/// The ordering record of one piece of memory, shared by every buffer
/// handle that reaches it (its allocation and its zero-copy mappings).
///
/// Every buffer holds one, so it is small and free to create: the record of
/// pending uses is allocated only when an asynchronous backend first leaves
/// one.
#[derive(Default)]
pub struct Usage {
    /// Whether any use is pending: lets the common case skip the lock.
    tracked: AtomicBool,
    pending: Mutex<Option<Box<Pending>>>,
}

impl Usage {
    fn lock(&self) -> MutexGuard<'_, Option<Box<Pending>>> {
        // A panic while holding the lock leaves the record consistent (every
        // update is a single assignment), so poisoning is ignored.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Orders work about to be enqueued on `stream` of `backend` after the
    /// pending uses it conflicts with.
    #[inline]
    pub fn before(&self, backend: &Arc<dyn Backend>, stream: &Stream, access: Access) -> Result<()> {
        if !self.tracked.load(Ordering::Acquire) {
            return Ok(());
        }
        self.wait_conflicts(backend, stream, access)
    }

    fn wait_conflicts(&self, backend: &Arc<dyn Backend>, stream: &Stream, access: Access) -> Result<()> {
        let mut guard = self.lock();
        let Some(pending) = guard.as_deref_mut() else {
            return Ok(());
        };
        let Pending { write, reads } = pending;
        let conflicts = write
            .iter_mut()
            .chain(reads.iter_mut().filter(|_| access == Access::Write));
        for used in conflicts {
            if used.stream.same_as(stream) {
                continue;
            }
            let event = used.event()?;
            if used.same_backend(backend) {
                backend.wait_event(stream, &event)?;
            } else {
                used.backend.synchronize_event(&event)?;
            }
        }
        Ok(())
    }

    /// Records a use just enqueued on `stream`. Callers skip it for
    /// backends that finish work before returning: nothing is pending then.
    pub fn after(&self, backend: &Arc<dyn Backend>, stream: &Stream, access: Access) {
        let mut guard = self.lock();
        let pending = guard.get_or_insert_default();
        let used = PendingUse {
            backend: Arc::clone(backend),
            stream: stream.clone(),
            event: None,
        };
        match access {
            Access::Write => {
                pending.reads.clear();
                pending.write = Some(used);
            }
            Access::Read => {
                pending.reads.retain(|r| !r.stream.same_as(stream));
                pending.reads.push(used);
            }
        }
        self.tracked.store(true, Ordering::Release);
    }

    /// Blocks the host until it may access the memory directly: for a read
    /// until the last write completes, for a write until every use does.
    pub fn host_wait(&self, access: Access) -> Result<()> {
        if !self.tracked.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut guard = self.lock();
        let Some(pending) = guard.as_deref_mut() else {
            return Ok(());
        };
        if let Some(write) = pending.write.as_mut() {
            let event = write.event()?;
            write.backend.synchronize_event(&event)?;
            pending.write = None;
        }
        if access == Access::Write {
            for mut read in pending.reads.drain(..) {
                let event = read.event()?;
                read.backend.synchronize_event(&event)?;
            }
        }
        self.tracked
            .store(pending.write.is_some() || !pending.reads.is_empty(), Ordering::Release);
        Ok(())
    }

    /// Takes every pending use, each with an event after it, for a buffer
    /// being freed; uses by `owner` (the backend that frees the buffer) on
    /// a stream its free is already ordered after (`frees_after`) are
    /// dropped without one. Empty when nothing else is pending.
    #[inline]
    pub(crate) fn drain(
        &self,
        owner: &Arc<dyn Backend>,
        frees_after: impl Fn(&Stream) -> bool,
    ) -> Vec<(Arc<dyn Backend>, Result<Event>)> {
        if !self.tracked.load(Ordering::Acquire) {
            return Vec::new();
        }
        self.drain_pending(owner, frees_after)
    }

    fn drain_pending(
        &self,
        owner: &Arc<dyn Backend>,
        frees_after: impl Fn(&Stream) -> bool,
    ) -> Vec<(Arc<dyn Backend>, Result<Event>)> {
        let mut guard = self.lock();
        let Some(pending) = guard.as_deref_mut() else {
            return Vec::new();
        };
        let Pending { write, reads } = pending;
        let drained = write
            .take()
            .into_iter()
            .chain(reads.drain(..))
            .filter(|used| !(used.same_backend(owner) && frees_after(&used.stream)))
            .map(|mut used| {
                let event = used.event();
                (used.backend, event)
            })
            .collect();
        self.tracked.store(false, Ordering::Release);
        drained
    }
}
