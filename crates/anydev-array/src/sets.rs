//! Set functions: `unique_all`, `unique_counts`, `unique_inverse` and
//! `isin`, composed from a stable sort, comparisons, scans and gathers, so
//! every device that has those runs them, and nothing is moved to the host.
//!
//! As in the standard, every NaN is a distinct value (NaN != NaN), and
//! `-0.0` and `0.0` are one value.

use crate::array::Array;
use crate::creation::filled;
use crate::dispatch::same_device;
use crate::manipulation::{along, diff};
use crate::promote::result_type;
use crate::search::{argsort, nonzero, searchsorted, sort, take_checked, Order, Side};
use crate::slice::SliceArg;
use anydev_core::{DType, Result, Scalar};

/// The result of [`unique_all`]: the sorted distinct values of `x`
/// (flattened), the index of each one's first occurrence in flattened
/// `x`, for every element of `x` the index of its value in `values`
/// (shaped like `x`), and how often each value occurs. Indices and counts
/// are `i64`.
#[derive(Clone, Debug)]
pub struct Unique {
    pub values: Array,
    pub indices: Array,
    pub inverse_indices: Array,
    pub counts: Array,
}

/// The distinct values of `x` with first indices, inverse indices and
/// counts (the standard's `unique_all`).
pub fn unique_all(x: &Array) -> Result<Unique> {
    let flat = x.flatten()?;
    let n = flat.size();
    // A stable sort keeps equal values in input order, so the first of
    // each run is its first occurrence.
    let order = argsort(&flat, 0, Order::Ascending)?;
    let sorted = take_checked(&flat, &order, 0)?;
    let starts_run = if n <= 1 {
        filled(x.ctx(), DType::Bool, &[n], Scalar::Bool(true))?
    } else {
        let later = sorted.slice(&along(0, 1, SliceArg::from(1..)))?;
        let earlier = sorted.slice(&along(0, 1, SliceArg::from(..n as isize - 1)))?;
        let first = filled(x.ctx(), DType::Bool, &[1], Scalar::Bool(true))?;
        crate::concat(&[&first, &later.not_equal(&earlier)?], Some(0))?
    };
    let starts = nonzero(&starts_run)?.remove(0).as_contiguous()?;
    let end = filled(x.ctx(), DType::I64, &[1], Scalar::I64(n as i64))?;
    let bounds = crate::concat(&[&starts, &end], Some(0))?;
    let counts = diff(&bounds, 0, 1)?;
    // The run each sorted element belongs to, sent back to its position
    // in x through the inverse permutation.
    let run = crate::cumulative_sum(&starts_run.astype(DType::I64)?, Some(0), false)?.subtract(1)?;
    let back = argsort(&order, 0, Order::Ascending)?;
    let inverse_indices = take_checked(&run, &back, 0)?.reshape_to(x.shape())?;
    Ok(Unique {
        values: take_checked(&sorted, &starts, 0)?,
        indices: take_checked(&order, &starts, 0)?,
        inverse_indices,
        counts,
    })
}

/// The distinct values of `x` and how often each occurs.
pub fn unique_counts(x: &Array) -> Result<(Array, Array)> {
    let u = unique_all(x)?;
    Ok((u.values, u.counts))
}

/// The distinct values of `x` and, for every element of `x`, the index of
/// its value among them (shaped like `x`).
pub fn unique_inverse(x: &Array) -> Result<(Array, Array)> {
    let u = unique_all(x)?;
    Ok((u.values, u.inverse_indices))
}

/// Whether each element of `x1` occurs in `x2` (`bool`, shaped like
/// `x1`; the complement with `invert`). Both are compared in their
/// promoted dtype; NaN occurs nowhere.
pub fn isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    let ctx = same_device("isin", &[x1, x2])?;
    let dtype = result_type(x1.dtype(), x2.dtype());
    if x2.size() == 0 {
        return filled(ctx, DType::Bool, x1.shape(), Scalar::Bool(invert));
    }
    let haystack = sort(&x2.flatten()?.astype(dtype)?, 0, Order::Ascending)?;
    let needles = x1.flatten()?.astype(dtype)?;
    // The first position not below each needle holds it if anything does.
    let last = haystack.size() as i64 - 1;
    let at = searchsorted(&haystack, &needles, Side::Left)?.minimum(last)?;
    let candidates = take_checked(&haystack, &at.as_contiguous()?, 0)?;
    let found = if invert {
        candidates.not_equal(&needles)?
    } else {
        candidates.equal(&needles)?
    };
    found.reshape_to(x1.shape())
}
