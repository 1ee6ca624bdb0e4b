//! Host memory a case lends to anydev as another library would (a NumPy
//! array, a DLPack producer's tensor), and what its owner saw of it when
//! anydev gave it back.

use anydev_core::ForeignHost;
use std::cell::UnsafeCell;
use std::ptr::NonNull;
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
