//! Per-thread choices made for one device at a time by guards that nest
//! (the stream `with_stream` picks, the memory kind a creation call asks
//! for), found by the ops that run meanwhile.
//!
//! A process-wide count of live guards lets a lookup return after one
//! atomic load while no thread has chosen anything, which is the common
//! case on the hot path.

use anydev_core::Device;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::LocalKey;

/// The choices of one kind: each thread's stack of (device, value).
pub(crate) struct DeviceChoices<T: 'static> {
    stack: &'static LocalKey<RefCell<Vec<(Device, T)>>>,
    /// Live guards in all threads. A guard of this thread is counted
    /// before its ops run, so zero means this thread has chosen nothing.
    live: AtomicUsize,
}

impl<T: Clone> DeviceChoices<T> {
    pub const fn new(stack: &'static LocalKey<RefCell<Vec<(Device, T)>>>) -> DeviceChoices<T> {
        DeviceChoices {
            stack,
            live: AtomicUsize::new(0),
        }
    }

    /// Chooses `value` for `device` on this thread until the guard drops.
    pub fn choose(&'static self, device: Device, value: T) -> ChoiceGuard<T> {
        self.stack.with(|s| s.borrow_mut().push((device, value)));
        self.live.fetch_add(1, Ordering::Relaxed);
        ChoiceGuard {
            choices: self,
            _not_send: PhantomData,
        }
    }

    /// This thread's innermost choice for `device`, if any.
    #[inline]
    pub fn chosen(&self, device: Device) -> Option<T> {
        if self.live.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.stack.with(|s| {
            s.borrow()
                .iter()
                .rev()
                .find(|(d, _)| *d == device)
                .map(|(_, v)| v.clone())
        })
    }
}

/// Undoes one choice when dropped, also during a panic; guards nest.
pub(crate) struct ChoiceGuard<T: 'static> {
    choices: &'static DeviceChoices<T>,
    _not_send: PhantomData<*const ()>,
}

impl<T: 'static> Drop for ChoiceGuard<T> {
    fn drop(&mut self) {
        self.choices.stack.with(|s| s.borrow_mut().pop());
        self.choices.live.fetch_sub(1, Ordering::Relaxed);
    }
}
