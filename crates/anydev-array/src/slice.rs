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
            stop: Some(r.end() + 1),
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

/// Start, length and step of `arg` (a slice) over an axis of `n`, with
/// Python's clamping.
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
    let n = n as isize;
    let norm = |v: isize, lo: isize, hi: isize| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let (first, len) = if step > 0 {
        let a = start.map_or(0, |v| norm(v, 0, n));
        let b = stop.map_or(n, |v| norm(v, 0, n));
        (a, if b > a { (b - a + step - 1) / step } else { 0 })
    } else {
        let a = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let b = stop.map_or(-1, |v| norm(v, -1, n - 1));
        (a, if a > b { (a - b + (-step) - 1) / (-step) } else { 0 })
    };
    Ok((first, len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's `list(range(n))[start:stop:step]`, written out.
    fn python(n: isize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<isize> {
        let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let adj = |v: isize| (if v < 0 { v + n } else { v }).clamp(lo, hi);
        let mut i = start.map_or(if step > 0 { 0 } else { n - 1 }, adj);
        let end = stop.map_or(if step > 0 { n } else { -1 }, adj);
        let mut out = Vec::new();
        while (step > 0 && i < end) || (step < 0 && i > end) {
            out.push(i);
            i += step;
        }
        out
    }

    #[test]
    fn slices_match_python_semantics() {
        let opts = [None, Some(-7), Some(-3), Some(-1), Some(0), Some(1), Some(3), Some(7)];
        for n in 0..6 {
            for start in opts {
                for stop in opts {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let (first, len) = resolve("slice", start, stop, step, n as usize).unwrap();
                        let got: Vec<isize> = (0..len as isize).map(|k| first + k * step).collect();
                        assert_eq!(got, python(n, start, stop, step), "n={n} {start:?}:{stop:?}:{step}");
                    }
                }
            }
        }
        assert!(resolve("slice", None, None, 0, 3).is_err());
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
