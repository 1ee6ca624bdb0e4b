//! Typed device capabilities (design section 5).
//!
//! Code that must treat a device specially asks a capability, never the
//! device's name. Keys are either one of the standard keys in [`keys`],
//! which every backend reports with the documented type, or namespaced
//! vendor keys of the form `vendor.key` (`nvidia.sm_count`).

use serde::Serialize;
use std::collections::BTreeMap;

/// The standard capability keys and the type of their values.
pub mod keys {
    /// `StrList`: names of the dtypes the device can hold and compute with (`"f32"`, ...).
    pub const DTYPES: &str = "dtypes";
    /// `Bool`: 64-bit floats are supported.
    pub const F64: &str = "f64";
    /// `Bool`: 16-bit IEEE floats are supported.
    pub const F16: &str = "f16";
    /// `Bool`: bfloat16 is supported.
    pub const BF16: &str = "bf16";
    /// `I64`: the largest single allocation in bytes.
    pub const MAX_ALLOCATION_BYTES: &str = "max_allocation_bytes";
    /// `I64`: compute units (cores, SMs, execution units).
    pub const COMPUTE_UNITS: &str = "compute_units";
    /// `Bool`: the device can read and write plain pageable host memory
    /// (HMM or ATS), so `System` memory is reachable without copies.
    pub const PAGEABLE_MEMORY_ACCESS: &str = "pageable_memory_access";
    /// `Bool`: the device can allocate managed (migrating) memory.
    pub const MANAGED_MEMORY: &str = "managed_memory";
    /// `Bool`: managed memory may be used by the host and the device at once.
    pub const CONCURRENT_MANAGED_ACCESS: &str = "concurrent_managed_access";
    /// `Bool`: the host can dereference the device's `Device` memory directly.
    pub const HOST_ACCESSIBLE_MEMORY: &str = "host_accessible_memory";
    /// `StrList`: devices (`kind:index`) whose memory this device reaches directly.
    pub const PEER_DEVICES: &str = "peer_devices";
    /// `Bool`: work is queued and runs asynchronously to the host.
    pub const ASYNC_EXECUTION: &str = "async_execution";
    /// `Bool`: the device is emulated in software on the host's cores (a
    /// simulator, a software renderer such as llvmpipe), not hardware of
    /// its own. Backends whose devices all are rank below the CPU when the
    /// default device is picked ([`crate::backend::SOFTWARE_PRIORITY`]).
    pub const SOFTWARE: &str = "software";
    /// `Bool`: [`crate::Backend::prefetch`] and [`crate::Backend::advise`]
    /// take effect on the device's managed memory; without it they are
    /// accepted and do nothing.
    pub const MANAGED_PREFETCH: &str = "managed_prefetch";
    /// `Bool`: events recorded on the device measure the time between
    /// them ([`crate::Backend::event_elapsed`]).
    pub const EVENT_TIMING: &str = "event_timing";
    /// `Bool`: the device may be handed the free of a buffer that queued
    /// work still uses, and keeps the memory until that work is done (a
    /// stream-ordered allocator), so the host frees at once instead of
    /// recording events and holding the buffer until they complete.
    pub const STREAM_ORDERED_FREE: &str = "stream_ordered_free";

    /// Every standard key, for documentation and validation.
    pub const ALL: &[&str] = &[
        DTYPES,
        F64,
        F16,
        BF16,
        MAX_ALLOCATION_BYTES,
        COMPUTE_UNITS,
        PAGEABLE_MEMORY_ACCESS,
        MANAGED_MEMORY,
        CONCURRENT_MANAGED_ACCESS,
        HOST_ACCESSIBLE_MEMORY,
        PEER_DEVICES,
        ASYNC_EXECUTION,
        SOFTWARE,
        EVENT_TIMING,
        STREAM_ORDERED_FREE,
        MANAGED_PREFETCH,
    ];
}

/// One capability value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CapValue {
    Bool(bool),
    I64(i64),
    F64(f64),
    Str(String),
    IntList(Vec<i64>),
    StrList(Vec<String>),
}

impl std::fmt::Display for CapValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CapValue::Bool(v) => write!(f, "{v}"),
            CapValue::I64(v) => write!(f, "{v}"),
            CapValue::F64(v) => write!(f, "{v}"),
            CapValue::Str(v) => f.write_str(v),
            CapValue::IntList(v) => write!(f, "{v:?}"),
            CapValue::StrList(v) => f.write_str(&v.join(",")),
        }
    }
}

/// The capabilities of one device: an ordered map from key to value.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Capabilities(BTreeMap<String, CapValue>);

impl Capabilities {
    pub fn new() -> Capabilities {
        Capabilities::default()
    }

    /// Sets `key`, replacing an earlier value.
    pub fn set(&mut self, key: impl Into<String>, value: CapValue) -> &mut Self {
        self.0.insert(key.into(), value);
        self
    }

    pub fn get(&self, key: &str) -> Option<&CapValue> {
        self.0.get(key)
    }

    /// A boolean capability; absent or non-boolean reads as `false`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.0.get(key), Some(CapValue::Bool(true)))
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.0.get(key) {
            Some(CapValue::I64(v)) => Some(*v),
            _ => None,
        }
    }

    /// The string list under `key`, empty when absent.
    pub fn strings(&self, key: &str) -> &[String] {
        match self.0.get(key) {
            Some(CapValue::StrList(v)) => v,
            _ => &[],
        }
    }

    /// Whether the device declares `dtype` in its `dtypes` capability.
    pub fn supports_dtype(&self, dtype: crate::DType) -> bool {
        self.strings(keys::DTYPES).iter().any(|d| d == dtype.name())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &CapValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Sets the dtype list and the `f64`/`f16`/`bf16` flags derived from it.
    pub fn set_dtypes(&mut self, dtypes: &[crate::DType]) -> &mut Self {
        use crate::DType;
        let has = |d: DType| CapValue::Bool(dtypes.contains(&d));
        self.set(keys::F64, has(DType::F64));
        self.set(keys::F16, has(DType::F16));
        self.set(keys::BF16, has(DType::BF16));
        self.set(
            keys::DTYPES,
            CapValue::StrList(dtypes.iter().map(|d| d.name().to_owned()).collect()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn dtype_list_drives_the_derived_flags() {
        let mut caps = Capabilities::new();
        caps.set_dtypes(&[DType::F32, DType::F16]);
        assert!(caps.supports_dtype(DType::F32));
        assert!(!caps.supports_dtype(DType::F64));
        assert!(caps.flag(keys::F16));
        assert!(!caps.flag(keys::F64));
        assert!(!caps.flag("no.such_key"));
    }
}
