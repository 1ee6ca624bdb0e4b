//! Memory a case lends to anydev as another library would (a NumPy
//! array, a DLPack producer's tensor, on the host or on a device), and
//! what its owner saw of it when anydev gave it back.

use anydev_array::Array;
use anydev_core::{ForeignDevice, ForeignHost};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// 64 `f32` words at a 256-byte boundary, the alignment the plugin ABI
/// asks of memory a device imports.
#[repr(C, align(256))]
struct Block([UnsafeCell<f32>; 64]);

/// The lent memory itself: anydev writes its words through a raw pointer,
/// hence `UnsafeCell`.
struct Owner {
    blocks: Box<[Block]>,
    returned: Arc<Mutex<Option<Vec<f32>>>>,
}

// SAFETY: the words are used by one party at a time: anydev's work (ordered
// by the runtime like any buffer's) while it holds the memory, then the
// owner's `drop`, which runs after anydev's last use.
unsafe impl Sync for Owner {}

impl Drop for Owner {
    fn drop(&mut self) {
        let words = self
            .blocks
            .iter_mut()
            .flat_map(|b| b.0.iter_mut().map(|w| *w.get_mut()));
        *self.returned.lock().unwrap_or_else(|p| p.into_inner()) = Some(words.collect());
    }
}

/// What the owner saw when anydev dropped the memory: `None` while anydev
/// still holds it.
#[derive(Clone)]
pub struct Returned(Arc<Mutex<Option<Vec<f32>>>>);

impl Returned {
    pub fn words(&self) -> Option<Vec<f32>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Lends `values` (padded with zeros to whole 64-word blocks) as memory
/// that anydev may read and write in place.
pub fn lend(values: &[f32]) -> (ForeignHost, Returned) {
    let blocks: Box<[Block]> = values
        .chunks(64)
        .map(|chunk| {
            Block(std::array::from_fn(|i| {
                UnsafeCell::new(chunk.get(i).copied().unwrap_or(0.0))
            }))
        })
        .collect();
    let len = std::mem::size_of_val(&*blocks);
    let base = blocks.as_ptr() as *mut u8;
    let returned = Arc::new(Mutex::new(None));
    let owner = Owner {
        blocks,
        returned: Arc::clone(&returned),
    };
    let ptr = NonNull::new(base).expect("a boxed slice's address is not null");
    // SAFETY: the boxed blocks do not move when the box moves into the
    // owner, live as long as it, and are writable through their cells;
    // the owner touches them only in `drop`, after anydev's last use.
    let memory = unsafe { ForeignHost::new(ptr, len, Box::new(owner)) };
    (memory, Returned(returned))
}

/// Whether anydev has dropped the owner of lent device memory.
#[derive(Clone)]
pub struct Released(Arc<AtomicBool>);

impl Released {
    pub fn yes(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Sets the flag when dropped.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Lends the first `len` bytes of `array`'s device memory as another
/// library of the device's platform would lend a tensor's (by its device
/// address), with an owner that keeps `array` alive; `None` where the
/// device has no device addresses. `len` may run past the allocation, for
/// cases that check the backend refuses it.
pub fn lend_device(array: &Array, len: usize) -> Option<(ForeignDevice, Released)> {
    let address = array.buffer().device_address()?;
    let released = Arc::new(AtomicBool::new(false));
    let owner = (array.clone(), Flag(Arc::clone(&released)));
    // SAFETY: the owner holds the array, so its allocation stays live for
    // as long as the owner; a `len` beyond it is refused by the backend,
    // which asks the driver for the allocation's range before any use.
    let memory = unsafe { ForeignDevice::new(address, len, Box::new(owner)) };
    Some((memory, Released(released)))
}

/// An empty range at address 0: memory no backend can adopt, to check how
/// each refuses it.
pub fn no_device_memory() -> ForeignDevice {
    // SAFETY: zero bytes need nothing kept alive.
    unsafe { ForeignDevice::new(0, 0, Box::new(())) }
}
