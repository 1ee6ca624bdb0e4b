//! Streams and events over wgpu's single queue per device.
//!
//! A wgpu device has one queue, and work runs in submission order, so
//! every stream of a device is the same ordering domain: `create_stream`
//! returns a new handle, `wait_event` has nothing to do. An event is a
//! submission index plus a flag set by `on_submitted_work_done`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Handle behind a [`anydev_core::Stream`] of this backend.
pub struct GpuStream {
    pub device: usize,
}

/// Handle behind an [`anydev_core::Event`] of this backend.
pub struct GpuEvent {
    pub device: usize,
    pub index: wgpu::SubmissionIndex,
    done: Arc<AtomicBool>,
}

impl GpuEvent {
    /// Marks the point after everything submitted so far on `queue`.
    pub fn record(device: usize, queue: &wgpu::Queue) -> GpuEvent {
        let index = queue.submit(std::iter::empty());
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        GpuEvent { device, index, done }
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}
