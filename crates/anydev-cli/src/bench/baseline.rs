//! The bandwidth baseline of a device: a device-to-device copy of one large
//! buffer through the backend's own `copy_between`, which is the fastest
//! data movement the backend offers and needs no kernel of ours. Ops are
//! reported as a fraction of it, so a slow op stands out on any device.

use anydev::{Array, DType, Device, Result};
use anydev_core::{Backend, Stream};
use std::sync::Arc;

/// Two buffers of one size on a device, and the copy between them.
pub struct Baseline {
    src: Array,
    dst: Array,
    backend: Arc<dyn Backend>,
    stream: Stream,
}

impl Baseline {
    /// `elements` f32 values on `device`, both buffers written once so the
    /// copy never pays for first-touch page faults.
    pub fn new(device: Device, elements: usize) -> Result<Baseline> {
        let spec = (DType::F32, device);
        let src = anydev::ones(&[elements], spec)?;
        let dst = anydev::zeros(&[elements], spec)?;
        let backend = Arc::clone(src.buffer().backend());
        let stream = backend.default_stream(device.index())?;
        Ok(Baseline {
            src,
            dst,
            backend,
            stream,
        })
    }

    /// One copy of the whole buffer (queued; the caller synchronises).
    pub fn call(&self) -> Result<()> {
        let bytes = self.src.buffer().len().min(self.dst.buffer().len());
        self.backend
            .copy_between(&self.stream, self.src.buffer(), 0, self.dst.buffer(), 0, bytes)
    }
}
