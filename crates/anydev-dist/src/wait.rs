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

/// A heap buffer lent to MPI for the length of one request: the parts of
/// the `Vec` it came from.
pub(crate) struct Lease<T: 'static> {
    ptr: *mut T,
    len: usize,
    capacity: usize,
}

/// Proof that the request using a lease has completed.
pub(crate) struct Completed(());

/// The request did not complete in time; it and its buffers are leaked.
pub(crate) struct Stalled;

/// Lends `data` to MPI: the lease, and the only reference to the buffer,
/// which must be given to exactly one request.
///
/// Every buffer, empty ones too, is a real allocation: an empty `Vec<u8>`'s
/// address is 1, which Open MPI reads as `MPI_IN_PLACE`, so an empty
/// message of bytes would abort the job.
pub(crate) fn lease<T: 'static>(data: Vec<T>) -> (Lease<T>, &'static mut [T]) {
    let mut data = std::mem::ManuallyDrop::new(data);
    if data.capacity() == 0 {
        data.reserve(1);
    }
    let (ptr, len, capacity) = (data.as_mut_ptr(), data.len(), data.capacity());
    // SAFETY: `ptr`, `len` and `capacity` are the parts of a `Vec` that is
    // never dropped (`ManuallyDrop`), so the `len` initialised elements at
    // `ptr` stay valid and are not aliased. This is the only reference made
    // from them; it is handed to one MPI request, and the `Vec` is rebuilt
    // only in `Lease::reclaim`, after that request completed and dropped
    // its reference.
    let buffer = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
    (Lease { ptr, len, capacity }, buffer)
}

impl<T: 'static> Lease<T> {
    /// The buffer back, once the request that used it completed.
    pub fn reclaim(self, _done: &Completed) -> Vec<T> {
        // SAFETY: the parts came from a `Vec<T>` in `lease`, which was never
        // dropped, and it is rebuilt once (this consumes the lease).
        // `Completed` exists only after the request that held the buffer's
        // reference completed (`test` returned it) and was consumed, so
        // neither MPI nor Rust refers to it now.
        unsafe { Vec::from_raw_parts(self.ptr, self.len, self.capacity) }
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
