//! Bounded waits on MPI requests.
//!
//! MPI waits forever for a peer that died, so every transfer is started as
//! a non-blocking request and polled until it completes or the deadline
//! passes. A request that times out can never be freed or cancelled safely
//! (MPI may still write into its buffers), so its buffers are leased: they
//! live on the heap outside Rust's ownership while MPI holds them, come
//! back as a `Vec` when the request completed, and are leaked, on purpose,
//! when it did not. This module is the crate's only `unsafe` code.

use mpi::request::{Request, StaticScope};
use std::time::{Duration, Instant};

/// A heap buffer lent to MPI for the length of one request.
pub(crate) struct Lease<T: 'static> {
    ptr: *mut [T],
}

/// Proof that the request using a lease has completed.
pub(crate) struct Completed(());

/// The request did not complete in time; it and its buffers are leaked.
pub(crate) struct Stalled;

/// Lends `data` to MPI: the lease, and the only reference to the buffer,
/// which must be given to exactly one request.
pub(crate) fn lease<T: 'static>(data: Vec<T>) -> (Lease<T>, &'static mut [T]) {
    let ptr = Box::into_raw(data.into_boxed_slice());
    // SAFETY: `ptr` comes from `Box::into_raw`, so it is valid, aligned and
    // not aliased. This is the only reference made from it; it is handed to
    // one MPI request, and the box is rebuilt only in `Lease::reclaim`, after
    // that request completed and dropped its reference.
    let buffer = unsafe { &mut *ptr };
    (Lease { ptr }, buffer)
}

impl<T: 'static> Lease<T> {
    /// The buffer back, once the request that used it completed.
    pub fn reclaim(self, _done: &Completed) -> Vec<T> {
        // SAFETY: `ptr` came from `Box::into_raw` in `lease` and is rebuilt
        // once (this consumes the lease). `Completed` exists only after the
        // request that held the buffer's reference completed (`test` returned
        // it) and was consumed, so neither MPI nor Rust refers to it now.
        unsafe { Box::from_raw(self.ptr) }.into_vec()
    }
}

/// Polls `request` until it completes or `timeout` passes.
pub(crate) fn complete<D: ?Sized>(
    request: Request<'static, D, StaticScope>,
    timeout: Duration,
) -> Result<Completed, Stalled> {
    let mut pending = Some(request);
    let done = poll_until(timeout, || match pending.take().map(Request::test) {
        Some(Ok(_)) | None => true,
        Some(Err(request)) => {
            pending = Some(request);
            false
        }
    });
    match pending {
        // The request may still touch its buffers: never complete, free or
        // drop it (dropping a pending request panics). Its scope is static
        // and its buffers are leased, so forgetting it is safe.
        Some(request) if !done => {
            std::mem::forget(request);
            Err(Stalled)
        }
        _ => Ok(Completed(())),
    }
}

/// Calls `ready` until it says yes (then true) or `timeout` passes (then
/// false). Spins briefly, then yields, then sleeps in short steps, so that
/// ranks sharing cores (oversubscribed runs) leave each other time to
/// progress.
pub(crate) fn poll_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut polls: u32 = 0;
    loop {
        if ready() {
            return true;
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return false;
        }
        polls = polls.saturating_add(1);
        if polls < 64 {
            std::hint::spin_loop();
        } else if waited < Duration::from_millis(20) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}
