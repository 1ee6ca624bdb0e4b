//! Which memory a device can use directly: the table behind zero-copy
//! `to_device` and unified-memory allocation (design section 4).
//!
//! A device `T` may use a buffer of kind `K` owned by device `O` without a
//! copy when:
//!
//! | `K`          | `T` served by `O`'s backend        | `T` served by another backend            |
//! |--------------|------------------------------------|------------------------------------------|
//! | `System`     | `T` reaches pageable memory        | `T` reaches pageable memory              |
//! | `HostPinned` | always (pinned memory is mapped)   | `T` reaches pageable memory              |
//! | `Managed`    | `T` has managed memory             | `T` reaches pageable memory              |
//! | `Device`     | only `T == O`                      | `O`'s memory is host-accessible and `T` reaches pageable memory |
//!
//! "Reaches pageable memory" is the `pageable_memory_access` capability:
//! HMM or ATS on a GPU, and always for the host CPU, which is how the host
//! reads managed and pinned memory. Across backends the memory must also
//! have a host address ([`crate::Buffer::host_ptr`]), since a pointer is
//! the only thing two backends share. Device memory of a peer device is
//! deliberately absent: it is copied over the peer link instead, because
//! an array left in another GPU's memory would make every later op on it
//! read across that link.

use crate::capability::{keys, Capabilities};
use crate::memory::MemoryKind;

/// What one device can reach, read once from its capabilities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// `pageable_memory_access`: plain host memory (HMM/ATS, or the host).
    pub pageable: bool,
    /// `managed_memory`: managed memory of its backend's devices.
    pub managed: bool,
    /// `host_accessible_memory`: the host may dereference this device's
    /// own `Device` memory.
    pub host_accessible: bool,
}

impl Reach {
    pub fn from_capabilities(caps: &Capabilities) -> Reach {
        Reach {
            pageable: caps.flag(keys::PAGEABLE_MEMORY_ACCESS),
            managed: caps.flag(keys::MANAGED_MEMORY),
            host_accessible: caps.flag(keys::HOST_ACCESSIBLE_MEMORY),
        }
    }

    /// Whether a device with this reach can use memory of `kind` owned by
    /// another device whose reach is `owner`; `same_backend` says whether
    /// one backend serves both (the table in the module docs).
    pub fn can_use(&self, kind: MemoryKind, same_backend: bool, owner: &Reach) -> bool {
        match kind {
            MemoryKind::System => self.pageable,
            MemoryKind::HostPinned => same_backend || self.pageable,
            MemoryKind::Managed if same_backend => self.managed,
            MemoryKind::Managed => self.pageable,
            MemoryKind::Device => !same_backend && owner.host_accessible && self.pageable,
        }
    }

    /// The kind to allocate new arrays in when unified memory is on: of
    /// the device's `kinds`, the one the host reaches best (managed memory,
    /// which migrates to whoever uses it, then pinned, then system memory),
    /// or its device memory when the host can dereference that. `None`
    /// keeps the native kind.
    pub fn unified_kind(&self, kinds: &[MemoryKind]) -> Option<MemoryKind> {
        const PREFERENCE: [MemoryKind; 3] = [MemoryKind::Managed, MemoryKind::HostPinned, MemoryKind::System];
        PREFERENCE
            .into_iter()
            .find(|k| kinds.contains(k))
            .or_else(|| (self.host_accessible && kinds.contains(&MemoryKind::Device)).then_some(MemoryKind::Device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemoryKind::*;

    const HOST: Reach = Reach {
        pageable: true,
        managed: false,
        host_accessible: true,
    };
    const DISCRETE: Reach = Reach {
        pageable: false,
        managed: false,
        host_accessible: false,
    };
    const UNIFIED: Reach = Reach {
        pageable: true,
        managed: true,
        host_accessible: false,
    };

    #[test]
    fn the_host_reaches_every_host_addressable_kind_but_not_discrete_device_memory() {
        for kind in [System, HostPinned, Managed] {
            assert!(HOST.can_use(kind, false, &UNIFIED), "{kind}");
        }
        assert!(!HOST.can_use(Device, false, &UNIFIED));
        assert!(!HOST.can_use(Device, false, &DISCRETE));
    }

    #[test]
    fn a_discrete_device_reaches_only_pinned_and_managed_memory_of_its_own_backend() {
        assert!(!DISCRETE.can_use(System, false, &HOST));
        assert!(!DISCRETE.can_use(Managed, false, &UNIFIED));
        assert!(DISCRETE.can_use(HostPinned, true, &DISCRETE));
        assert!(!DISCRETE.can_use(Managed, true, &UNIFIED));
        assert!(!DISCRETE.can_use(Device, true, &DISCRETE));
    }

    #[test]
    fn a_unified_device_reaches_host_memory_and_managed_memory_of_its_peers() {
        assert!(UNIFIED.can_use(System, false, &HOST));
        assert!(UNIFIED.can_use(Managed, true, &UNIFIED));
        assert!(UNIFIED.can_use(HostPinned, false, &HOST));
        assert!(!UNIFIED.can_use(Device, true, &UNIFIED), "peer device memory is copied");
        assert!(UNIFIED.can_use(Device, false, &HOST), "host-accessible device memory");
    }

    #[test]
    fn unified_allocation_prefers_managed_then_pinned_then_system_memory() {
        assert_eq!(UNIFIED.unified_kind(&[Device, Managed, HostPinned]), Some(Managed));
        assert_eq!(
            UNIFIED.unified_kind(&[Device, HostPinned, Managed]),
            Some(Managed),
            "order-independent"
        );
        assert_eq!(DISCRETE.unified_kind(&[Device, HostPinned]), Some(HostPinned));
        assert_eq!(DISCRETE.unified_kind(&[Device]), None);
        assert_eq!(HOST.unified_kind(&[System]), Some(System));
        let integrated = Reach {
            host_accessible: true,
            ..DISCRETE
        };
        assert_eq!(integrated.unified_kind(&[Device]), Some(Device));
    }
}
