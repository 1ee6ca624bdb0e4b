//! A plugin's `op_supported` answers, asked once per device, op and dtype.
//!
//! The array layer asks whether a device supports an op before every
//! dispatch, and the adapter asks again before it hands the op to the
//! plugin. Answers may not change while the plugin is loaded (the header
//! says so), so each is asked through the ABI once and kept here, and a
//! small op pays for no call into the plugin to learn what it already knew.

use anydev_ops::{DType, OpCode};
use std::sync::atomic::{AtomicU8, Ordering};

/// Op families (the high byte of a code) and ops per family with a slot;
/// a code outside them is asked every time.
const FAMILIES: usize = 8;
const OPS_PER_FAMILY: usize = 64;
/// Dtype codes with a slot.
const DTYPES: usize = 16;

const UNKNOWN: u8 = 0;
const NO: u8 = 1;
const YES: u8 = 2;

/// One device's remembered answers.
pub(super) struct SupportCache {
    answers: Box<[AtomicU8]>,
}

impl SupportCache {
    pub(super) fn new() -> SupportCache {
        SupportCache {
            answers: (0..FAMILIES * OPS_PER_FAMILY * DTYPES)
                .map(|_| AtomicU8::new(UNKNOWN))
                .collect(),
        }
    }

    /// The answer for `op` on `dtype`: remembered, or from `ask`, which is
    /// remembered when it succeeds (`None`: the call failed, and is made
    /// again next time).
    pub(super) fn get(&self, op: OpCode, dtype: DType, ask: impl FnOnce() -> Option<bool>) -> bool {
        let Some(slot) = slot(op, dtype).map(|i| &self.answers[i]) else {
            return ask().unwrap_or(false);
        };
        match slot.load(Ordering::Relaxed) {
            YES => true,
            NO => false,
            _ => {
                let Some(answer) = ask() else {
                    return false;
                };
                slot.store(if answer { YES } else { NO }, Ordering::Relaxed);
                answer
            }
        }
    }
}

fn slot(op: OpCode, dtype: DType) -> Option<usize> {
    let code = op.code() as usize;
    let (family, op) = (code >> 8, code & 0xff);
    let dtype = dtype.code() as usize;
    (family < FAMILIES && op < OPS_PER_FAMILY && dtype < DTYPES)
        .then(|| (family * OPS_PER_FAMILY + op) * DTYPES + dtype)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn every_op_and_dtype_has_its_own_slot() {
        let mut seen = std::collections::HashSet::new();
        for op in OpCode::all() {
            for dtype in DType::ALL {
                let slot = slot(op, dtype).unwrap_or_else(|| panic!("{op} on {dtype} has no slot"));
                assert!(seen.insert(slot), "{op} on {dtype} shares a slot");
            }
        }
    }

    #[test]
    fn answers_are_asked_once_and_failures_again() {
        let cache = SupportCache::new();
        let asked = Cell::new(0);
        let ask = |answer| {
            asked.set(asked.get() + 1);
            answer
        };
        let add = OpCode::all()[0];
        assert!(cache.get(add, DType::F32, || ask(Some(true))));
        assert!(cache.get(add, DType::F32, || ask(Some(false))));
        assert!(!cache.get(add, DType::F64, || ask(Some(false))));
        assert!(!cache.get(add, DType::F64, || ask(Some(true))));
        assert_eq!(asked.get(), 2);
        assert!(!cache.get(add, DType::I8, || ask(None)));
        assert!(cache.get(add, DType::I8, || ask(Some(true))));
        assert_eq!(asked.get(), 4);
    }
}
