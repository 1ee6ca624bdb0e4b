//! Indexing specs for [`crate::Array::slice`]: Python/NumPy basic indexing
//! (integers, `start:stop:step` with negative steps, new axes, ellipsis).

use anydev_core::{Error, Result};
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// One item of a basic index, per axis (except `NewAxis` and `Ellipsis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceArg {
    /// Selects one position and drops the axis; negative counts from the end.
    Index(isize),
    /// `start:stop:step` with Python's defaults and clamping; `step != 0`.
    Slice {
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    },
    /// Inserts an axis of length 1.
    NewAxis,
    /// Stands for as many full slices as the other items leave axes.
    Ellipsis,
}

impl SliceArg {
    /// The whole axis (`:`).
    pub const FULL: SliceArg = SliceArg::Slice {
        start: None,
        stop: None,
        step: 1,
    };

    /// The same slice with step `step` (`start:stop:step`); an index stays
    /// an index.
    pub fn step_by(self, step: isize) -> SliceArg {
        match self {
            SliceArg::Slice { start, stop, .. } => SliceArg::Slice { start, stop, step },
            other => other,
        }
    }
}

impl From<isize> for SliceArg {
    fn from(i: isize) -> SliceArg {
        SliceArg::Index(i)
    }
}

impl From<RangeFull> for SliceArg {
    fn from(_: RangeFull) -> SliceArg {
        SliceArg::FULL
    }
}

impl From<Range<isize>> for SliceArg {
    fn from(r: Range<isize>) -> SliceArg {
        SliceArg::Slice {
            start: Some(r.start),
            stop: Some(r.end),
            step: 1,
        }
    }
}

impl From<RangeFrom<isize>> for SliceArg {
    fn from(r: RangeFrom<isize>) -> SliceArg {
        SliceArg::Slice {
            start: Some(r.start),
            stop: None,
            step: 1,
        }
    }
}

impl From<RangeTo<isize>> for SliceArg {
    fn from(r: RangeTo<isize>) -> SliceArg {
        SliceArg::Slice {
            start: None,
            stop: Some(r.end),
            step: 1,
        }
    }
}

impl From<RangeInclusive<isize>> for SliceArg {
    /// `a..=b` is `a:b+1` (so a negative `b` counts from the end as usual,
    /// and `a..=-1` is empty: write `a..` for "to the end").
    fn from(r: RangeInclusive<isize>) -> SliceArg {
        SliceArg::Slice {
            start: Some(*r.start()),
            // `a..=isize::MAX` reaches past every axis, as `a..` does.
            stop: Some(r.end().saturating_add(1)),
            step: 1,
        }
    }
}

impl From<RangeToInclusive<isize>> for SliceArg {
    fn from(r: RangeToInclusive<isize>) -> SliceArg {
        SliceArg::from(0..=r.end)
    }
}

/// Builds a `[SliceArg; N]` from indices and ranges, with an optional step
/// after `;`: `s![1, .., 2..;-1]` is NumPy's `[1, :, 2::-1]`. Use
/// [`SliceArg::NewAxis`] and [`SliceArg::Ellipsis`] directly for those.
#[macro_export]
macro_rules! s {
    (@one $e:expr ; $step:expr) => { $crate::SliceArg::from($e).step_by($step) };
    (@one $e:expr) => { $crate::SliceArg::from($e) };
    ($($e:expr $(; $step:expr)?),* $(,)?) => { [$($crate::s!(@one $e $(; $step)?)),*] };
}

/// First position and length of `start:stop:step` over an axis of `n`:
/// Python's `slice.indices` followed by `len(range(...))`.
///
/// Computed in `i128`, where `start + n`, `stop - start` and the rounding
/// up of the quotient cannot overflow for any `isize` bounds and step
/// (`x[::isize::MIN]` is one element, not an overflowed empty slice).
pub(crate) fn resolve(
    op: &str,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
    n: usize,
) -> Result<(isize, usize)> {
    if step == 0 {
        return Err(Error::invalid_argument(op, "slice step cannot be zero"));
    }
    let (n, step) = (n as i128, step as i128);
    // Bounds are clamped into [lo, hi]: [0, n] going forward, [-1, n - 1]
    // going backward (-1 is "before the first element").
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clamp = |v: isize| {
        let v = v as i128;
        (if v < 0 { v + n } else { v }).clamp(lo, hi)
    };
    let first = start.map_or(if step > 0 { lo } else { hi }, clamp);
    let last = stop.map_or(if step > 0 { hi } else { lo }, clamp);
    let (span, stride) = if step > 0 {
        (last - first, step)
    } else {
        (first - last, -step)
    };
    let len = if span > 0 { (span - 1) / stride + 1 } else { 0 };
    // Both lie in [-1, n], and an axis is never longer than isize::MAX.
    Ok((first as isize, len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Python's `slice(start, stop, step).indices(n)` and the length of the
    /// resulting `range`, transcribed from CPython's `PySlice_Unpack`,
    /// `PySlice_AdjustIndices` (in i128, which holds every intermediate).
    fn python(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> (i128, i128) {
        let (n, step) = (n as i128, step as i128);
        let adjust = |v: Option<isize>, default: i128| -> i128 {
            let Some(v) = v else { return default };
            let mut v = v as i128;
            if v < 0 {
                v += n;
                if v < 0 {
                    v = if step < 0 { -1 } else { 0 };
                }
            } else if v >= n {
                v = if step < 0 { n - 1 } else { n };
            }
            v
        };
        let start = adjust(start, if step < 0 { n - 1 } else { 0 });
        let stop = adjust(stop, if step < 0 { -1 } else { n });
        let len = if step < 0 {
            if stop < start {
                (start - stop - 1) / (-step) + 1
            } else {
                0
            }
        } else if start < stop {
            (stop - start - 1) / step + 1
        } else {
            0
        };
        (start, len)
    }

    fn check(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) {
        let (first, len) = resolve("slice", start, stop, step, n).unwrap();
        let (want_first, want_len) = python(n, start, stop, step);
        assert_eq!(len as i128, want_len, "n={n} {start:?}:{stop:?}:{step}");
        if len > 0 {
            assert_eq!(first as i128, want_first, "n={n} {start:?}:{stop:?}:{step}");
        }
    }

    #[test]
    fn slices_match_python_semantics() {
        let opts = [None, Some(-7), Some(-3), Some(-1), Some(0), Some(1), Some(3), Some(7)];
        for n in 0..6 {
            for start in opts {
                for stop in opts {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        check(n, start, stop, step);
                    }
                }
            }
        }
        assert!(resolve("slice", None, None, 0, 3).is_err());
    }

    #[test]
    fn extreme_steps_and_bounds_do_not_overflow() {
        let (min, max) = (isize::MIN, isize::MAX);
        assert_eq!(resolve("slice", None, None, min, 20).unwrap(), (19, 1));
        assert_eq!(resolve("slice", None, None, max, 20).unwrap(), (0, 1));
        assert_eq!(resolve("slice", Some(1), None, min, 20).unwrap(), (1, 1));
        assert_eq!(resolve("slice", Some(3), None, max, 20).unwrap(), (3, 1));
        assert_eq!(resolve("slice", Some(min), Some(max), max, 20).unwrap(), (0, 1));
        assert_eq!(resolve("slice", Some(max), Some(min), min, 20).unwrap(), (19, 1));
        assert_eq!(resolve("slice", Some(max), Some(min), -1, 20).unwrap(), (19, 20));
        assert_eq!(resolve("slice", Some(min), None, 1, 0).unwrap().1, 0);
        assert_eq!(SliceArg::from(2..=max), SliceArg::from(2..max));
    }

    /// Bounds and steps drawn from the whole `isize` range and from near
    /// the axis, where the clamping edges are.
    fn bound() -> impl Strategy<Value = Option<isize>> {
        prop_oneof![
            Just(None),
            (-40isize..40).prop_map(Some),
            any::<isize>().prop_map(Some),
            prop_oneof![
                Just(isize::MIN),
                Just(isize::MAX),
                Just(isize::MIN + 1),
                Just(isize::MAX - 1)
            ]
            .prop_map(Some),
        ]
    }

    fn step() -> impl Strategy<Value = isize> {
        prop_oneof![
            (1isize..25),
            (-25isize..0),
            any::<isize>().prop_filter("nonzero", |s| *s != 0),
            prop_oneof![Just(isize::MIN), Just(isize::MAX), Just(isize::MIN + 1)],
        ]
    }

    proptest! {
        #[test]
        fn resolve_is_python_slice_indices(n in 0usize..40, start in bound(), stop in bound(), step in step()) {
            check(n, start, stop, step);
        }
    }

    #[test]
    fn macro_builds_specs() {
        let spec = s![1, .., 2..;-1, ..3];
        assert_eq!(spec[0], SliceArg::Index(1));
        assert_eq!(spec[1], SliceArg::FULL);
        assert_eq!(
            spec[2],
            SliceArg::Slice {
                start: Some(2),
                stop: None,
                step: -1
            }
        );
        assert_eq!(
            spec[3],
            SliceArg::Slice {
                start: None,
                stop: Some(3),
                step: 1
            }
        );
        assert_eq!(
            SliceArg::from(1..=2),
            SliceArg::Slice {
                start: Some(1),
                stop: Some(3),
                step: 1
            }
        );
    }
}
