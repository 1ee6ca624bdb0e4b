//! Streams and events: CUDA streams and events behind the core's handles.

use crate::device::Core;
use crate::driver::{bind, order_after, CUevent, CUstream, Raw};
use anydev_core::Result;
use cudarc::driver::sys;
use std::sync::Arc;

/// A CUDA stream of one device. The device's default stream is shared
/// (not owned); streams from `create_stream` are destroyed with their
/// last handle.
pub struct CudaStream {
    pub core: Arc<Core>,
    pub raw: Raw<CUstream>,
    owned: bool,
}

impl CudaStream {
    pub fn default_of(core: &Arc<Core>) -> CudaStream {
        CudaStream {
            core: Arc::clone(core),
            raw: core.stream,
            owned: false,
        }
    }

    pub fn owned(core: &Arc<Core>, raw: CUstream) -> CudaStream {
        CudaStream {
            core: Arc::clone(core),
            raw: Raw(raw),
            owned: true,
        }
    }

    pub fn device(&self) -> usize {
        self.core.index
    }

    /// Whether this is its device's default stream.
    pub fn is_default(&self) -> bool {
        self.raw == self.core.stream
    }
}

/// Runs `f` on `s` (its device's context bound), ordered with the
/// device's default stream when `s` is another stream: after everything
/// already on the default stream, and before anything later on it.
pub fn ordered<T>(s: &CudaStream, f: impl FnOnce(CUstream) -> Result<T>) -> Result<T> {
    let (ctx, default) = (s.core.ctx.0, s.core.stream.0);
    bind(ctx)?;
    if s.is_default() {
        return f(s.raw.0);
    }
    order_after(s.raw.0, ctx, default, ctx)?;
    let result = f(s.raw.0);
    order_after(default, ctx, s.raw.0, ctx)?;
    result
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        if self.owned && bind(self.core.ctx.0).is_ok() {
            // SAFETY: created by `create_stream` and destroyed once; work
            // still queued on it completes first (the driver defers it).
            unsafe { sys::cuStreamDestroy_v2(self.raw.0) };
        }
    }
}

/// A CUDA event recorded on a stream of one device.
pub struct CudaEvent {
    pub core: Arc<Core>,
    pub raw: Raw<CUevent>,
    /// Made with timing, so `cuEventElapsedTime` accepts it.
    pub timed: bool,
}

impl CudaEvent {
    pub fn device(&self) -> usize {
        self.core.index
    }
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if bind(self.core.ctx.0).is_ok() {
            // SAFETY: created by `record_event` and destroyed once.
            unsafe { sys::cuEventDestroy_v2(self.raw.0) };
        }
    }
}
