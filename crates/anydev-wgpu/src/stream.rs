//! Streams and events over wgpu's single queue per device.
//!
//! A wgpu device has one queue, and work runs in submission order, so
//! every stream of a device is the same ordering domain: `create_stream`
//! returns a new handle, `wait_event` has nothing to do. An event is a
//! submission index plus a flag set by `on_submitted_work_done`; on
//! devices with timestamp queries it also writes the GPU's clock, so two
//! events time the work between them.

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
    /// Where the GPU wrote its clock at the event (8 bytes, mappable),
    /// when the device has timestamp queries.
    stamp: Option<wgpu::Buffer>,
}

/// Bytes of one resolved timestamp query.
const STAMP_BYTES: u64 = std::mem::size_of::<u64>() as u64;

impl GpuEvent {
    /// Marks the point after everything submitted so far on `queue`,
    /// stamping the GPU clock there when `timestamps` is true (the device
    /// was opened with `TIMESTAMP_QUERY`).
    pub fn record(device: usize, gpu: &wgpu::Device, queue: &wgpu::Queue, timestamps: bool) -> GpuEvent {
        let (index, stamp) = if timestamps {
            let (commands, stamp) = stamp_commands(gpu);
            (queue.submit([commands]), Some(stamp))
        } else {
            (queue.submit(std::iter::empty()), None)
        };
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        GpuEvent {
            device,
            index,
            done,
            stamp,
        }
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The GPU clock, in ticks, when the event's point was reached; `None`
    /// without timestamps. The event's submission must be complete.
    pub fn ticks(&self, gpu: &wgpu::Device) -> Result<Option<u64>, String> {
        let Some(stamp) = &self.stamp else { return Ok(None) };
        let slice = stamp.slice(..);
        let (sender, receiver) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
        gpu.poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("reading an event's timestamp: {e}"))?;
        receiver
            .recv()
            .map_err(|_| "the timestamp's mapping was dropped".to_string())?
            .map_err(|e| format!("mapping an event's timestamp: {e}"))?;
        let word = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| format!("reading an event's timestamp: {e}"))?;
            let mut word = [0u8; STAMP_BYTES as usize];
            word.copy_from_slice(&view);
            word
        };
        stamp.unmap();
        Ok(Some(u64::from_le_bytes(word)))
    }
}

/// Commands that write the GPU clock at the start of an empty compute pass
/// (which needs only `TIMESTAMP_QUERY`, not timestamps inside encoders)
/// and copy it to a buffer the host can map.
fn stamp_commands(gpu: &wgpu::Device) -> (wgpu::CommandBuffer, wgpu::Buffer) {
    let queries = gpu.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("anydev event"),
        ty: wgpu::QueryType::Timestamp,
        count: 1,
    });
    let resolved = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("anydev event resolve"),
        size: STAMP_BYTES,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let stamp = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("anydev event stamp"),
        size: STAMP_BYTES,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("anydev event"),
    });
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some("anydev event"),
        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
            query_set: &queries,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: None,
        }),
    });
    encoder.resolve_query_set(&queries, 0..1, &resolved, 0);
    encoder.copy_buffer_to_buffer(&resolved, 0, &stamp, 0, STAMP_BYTES);
    (encoder.finish(), stamp)
}
