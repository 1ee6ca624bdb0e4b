//! The thread-local default device for creation calls (design section 2).

use crate::Device;
use std::cell::Cell;
use std::marker::PhantomData;

thread_local! {
    static SCOPED: Cell<Option<Device>> = const { Cell::new(None) };
}

/// The device set by the innermost [`with_device`] or [`DeviceGuard`] on
/// this thread, if any. Only creation functions consult it (placement rule 1).
pub fn scoped_device() -> Option<Device> {
    SCOPED.with(Cell::get)
}

/// Makes `device` the default for creation calls on this thread until the
/// guard drops; the previous default comes back then, also when a panic
/// unwinds through the scope. Guards nest. A guard is bound to the thread
/// that made it (it is neither `Send` nor `Sync`).
#[must_use = "the device is the default only while the guard lives"]
pub struct DeviceGuard {
    previous: Option<Device>,
    _not_send: PhantomData<*const ()>,
}

impl DeviceGuard {
    pub fn new(device: Device) -> DeviceGuard {
        let previous = SCOPED.with(|s| s.replace(Some(device)));
        DeviceGuard {
            previous,
            _not_send: PhantomData,
        }
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        SCOPED.with(|s| s.set(self.previous));
    }
}

/// Runs `f` with `device` as this thread's default for creation calls,
/// like `with cupy.cuda.Device(1):`.
pub fn with_device<R>(device: Device, f: impl FnOnce() -> R) -> R {
    let _guard = DeviceGuard::new(device);
    f()
}

/// The device a creation call without an explicit device uses on this
/// thread: the innermost scope, else `default`.
pub fn current_device(default: impl FnOnce() -> crate::Result<Device>) -> crate::Result<Device> {
    match scoped_device() {
        Some(device) => Ok(device),
        None => default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(s: &str) -> Device {
        s.parse().unwrap()
    }

    #[test]
    fn scopes_nest_and_restore() {
        assert_eq!(scoped_device(), None);
        with_device(dev("sim:0"), || {
            assert_eq!(scoped_device(), Some(dev("sim:0")));
            with_device(dev("sim:1"), || assert_eq!(scoped_device(), Some(dev("sim:1"))));
            assert_eq!(scoped_device(), Some(dev("sim:0")));
            let guard = DeviceGuard::new(dev("cpu:0"));
            assert_eq!(scoped_device(), Some(dev("cpu:0")));
            drop(guard);
            assert_eq!(scoped_device(), Some(dev("sim:0")));
        });
        assert_eq!(scoped_device(), None);
    }

    #[test]
    fn scope_is_restored_after_a_panic() {
        let result = std::panic::catch_unwind(|| {
            with_device(dev("sim:3"), || panic!("boom"));
        });
        assert!(result.is_err());
        assert_eq!(scoped_device(), None);
    }

    #[test]
    fn scopes_are_per_thread() {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    let d = Device::new(crate::DeviceKind::new("sim"), i);
                    with_device(d, || {
                        for _ in 0..1000 {
                            assert_eq!(scoped_device(), Some(d));
                            std::thread::yield_now();
                        }
                    });
                    scoped_device()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), None);
        }
    }
}
