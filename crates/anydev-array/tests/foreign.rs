//! Arrays over host memory another owner lends (`Array::from_foreign_host`):
//! the elements are read and written in place, views keep the owner alive,
//! the owner is dropped exactly once when the last user goes, and layouts
//! that leave the memory or misalign an element are refused.

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, s, Array, DType, Error, ForeignHost};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Memory a test lends: `f32` words behind `UnsafeCell` (anydev writes
/// them through a raw pointer), and what the owner saw when it was dropped.
struct Lent {
    words: Box<[UnsafeCell<f32>]>,
    drops: Arc<AtomicUsize>,
    last_seen: Arc<Mutex<Vec<f32>>>,
}

// SAFETY: the words are touched by one thread at a time: anydev's ops (in
// program order on the cpu device) and then this owner's `drop`.
unsafe impl Sync for Lent {}

impl Drop for Lent {
    fn drop(&mut self) {
        let seen = self.words.iter_mut().map(|w| *w.get_mut()).collect();
        *self.last_seen.lock().unwrap() = seen;
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

struct Probe {
    drops: Arc<AtomicUsize>,
    last_seen: Arc<Mutex<Vec<f32>>>,
}

/// Lends `values` as memory, starting `skip_bytes` into it (to misalign).
fn lend(values: &[f32], skip_bytes: usize) -> (ForeignHost, Probe) {
    let words: Box<[UnsafeCell<f32>]> = values.iter().map(|&v| UnsafeCell::new(v)).collect();
    let base = words.as_ptr() as *mut u8;
    let len = std::mem::size_of_val(values) - skip_bytes;
    let probe = Probe {
        drops: Arc::new(AtomicUsize::new(0)),
        last_seen: Arc::new(Mutex::new(Vec::new())),
    };
    let owner = Lent {
        words,
        drops: Arc::clone(&probe.drops),
        last_seen: Arc::clone(&probe.last_seen),
    };
    // SAFETY: the boxed words do not move when the box moves into the
    // owner, live as long as it, and are writable (UnsafeCell).
    let memory = unsafe {
        let ptr = NonNull::new(base.add(skip_bytes)).expect("a box's address is not null");
        ForeignHost::new(ptr, len, Box::new(owner))
    };
    (memory, probe)
}

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn reads_the_lent_elements_in_place_with_any_strides() {
    let (memory, _probe) = lend(&values(12), 0);
    let x = Array::from_foreign_host(memory, DType::F32, &[3, 4], &[4, 1], 0).unwrap();
    assert_eq!(x.device(), ad::Device::cpu());
    assert_eq!(x.to_vec::<f32>().unwrap(), values(12));
    assert_eq!(
        ad::sum(&x, None::<isize>, false).unwrap().to_scalar::<f32>().unwrap(),
        66.0
    );

    // Transposed, reversed and offset layouts over the same memory.
    let (memory, _probe) = lend(&values(12), 0);
    let t = Array::from_foreign_host(memory, DType::F32, &[4, 3], &[1, 4], 0).unwrap();
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    );
    let (memory, _probe) = lend(&values(12), 0);
    let r = Array::from_foreign_host(memory, DType::F32, &[3], &[-2], 10).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![10., 8., 6.]);
    let (memory, _probe) = lend(&values(12), 0);
    let e = Array::from_foreign_host(memory, DType::F32, &[0, 5], &[5, 1], 0).unwrap();
    assert_eq!(e.size(), 0);
}

#[test]
fn writes_reach_the_owner_and_the_owner_goes_with_the_last_view() {
    let (memory, probe) = lend(&values(6), 0);
    let x = Array::from_foreign_host(memory, DType::F32, &[2, 3], &[3, 1], 0).unwrap();
    let row = x.slice(&s![1]).unwrap();
    drop(x);
    assert_eq!(probe.drops.load(Ordering::SeqCst), 0, "a view keeps the memory lent");
    row.assign(&Array::from_slice(&[7.0f32, 8.0, 9.0], &[3], ()).unwrap())
        .unwrap();
    drop(row);
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    assert_eq!(*probe.last_seen.lock().unwrap(), vec![0., 1., 2., 7., 8., 9.]);
}

#[test]
fn results_of_ops_are_anydevs_own_memory() {
    let (memory, probe) = lend(&values(4), 0);
    let x = Array::from_foreign_host(memory, DType::F32, &[4], &[1], 0).unwrap();
    let y = ad::add(&x, 1.0f32).unwrap();
    drop(x);
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4.]);
}

#[test]
fn layouts_outside_the_memory_or_misaligned_are_refused() {
    let invalid = |r: ad::Result<Array>, what: &str| match r {
        Err(Error::InvalidArgument { message, .. }) => assert!(message.contains(what), "{message}"),
        Err(other) => panic!("expected InvalidArgument ({what}), got {other:?}"),
        Ok(_) => panic!("expected InvalidArgument ({what}), got an array"),
    };
    let (memory, probe) = lend(&values(6), 0);
    invalid(Array::from_foreign_host(memory, DType::F32, &[7], &[1], 0), "outside");
    assert_eq!(
        probe.drops.load(Ordering::SeqCst),
        1,
        "a refused loan gives the memory back"
    );
    let (memory, _) = lend(&values(6), 0);
    invalid(Array::from_foreign_host(memory, DType::F32, &[3], &[-1], 1), "outside");
    let (memory, _) = lend(&values(6), 0);
    invalid(Array::from_foreign_host(memory, DType::F64, &[3], &[1], 1), "outside");
    let (memory, _) = lend(&values(6), 0);
    invalid(
        Array::from_foreign_host(memory, DType::F32, &[2, 3], &[3], 0),
        "strides",
    );
    let (memory, _) = lend(&values(6), 2);
    invalid(Array::from_foreign_host(memory, DType::F32, &[2], &[1], 0), "aligned");
    let (memory, _) = lend(&values(6), 0);
    invalid(
        Array::from_foreign_host(memory, DType::F32, &[2], &[isize::MAX], 0),
        "outside",
    );
}
