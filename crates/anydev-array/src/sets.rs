//! Set functions: `unique_values`, `unique_all`, `unique_counts`,
//! `unique_inverse` and `isin`, composed from a stable sort, comparisons,
//! scans and gathers, so every device that has those runs them, and
//! nothing is moved to the host.
//!
//! As in the standard, every NaN is a distinct value (NaN != NaN), and
//! `-0.0` and `0.0` are one value. A complex value with a NaN component
//! is a NaN.

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

/// The permutation (`i64`) that sorts 1-D `x` stably in ascending order.
///
/// Complex numbers have no sort op (the standard leaves their order
/// undefined), so they are ordered as NumPy orders them: numbers first,
/// then those with a NaN imaginary part, a NaN real part, and both, each
/// group by real then imaginary part. Stable argsorts compose this from
/// the least significant key up, on any device that sorts real floats.
fn ascending(x: &Array) -> Result<Array> {
    if !x.dtype().is_complex() {
        return argsort(x, 0, Order::Ascending);
    }
    let then_by = |key: &Array, order: Array| {
        let within = argsort(&take_checked(key, &order, 0)?, 0, Order::Ascending)?;
        take_checked(&order, &within, 0)
    };
    let (re, im) = (x.real()?, x.imag()?);
    let is_nan = |part: &Array| part.isnan()?.astype(DType::I64);
    let nan_kind = is_nan(&re)?.multiply(2)?.add(&is_nan(&im)?)?;
    let order = then_by(&re, argsort(&im, 0, Order::Ascending)?)?;
    then_by(&nan_kind, order)
}

/// Whether each element of 1-D `sorted` differs from the one before it
/// (the first always does): the starts of its runs of equal values.
fn run_starts(sorted: &Array) -> Result<Array> {
    let n = sorted.size();
    if n <= 1 {
        return filled(sorted.ctx(), DType::Bool, &[n], Scalar::Bool(true));
    }
    let later = sorted.slice(&along(0, 1, SliceArg::from(1..)))?;
    let earlier = sorted.slice(&along(0, 1, SliceArg::from(..n as isize - 1)))?;
    let first = filled(sorted.ctx(), DType::Bool, &[1], Scalar::Bool(true))?;
    crate::concat(&[&first, &later.not_equal(&earlier)?], Some(0))
}

/// The distinct values of `x`, sorted, as a 1-D array.
pub fn unique_values(x: &Array) -> Result<Array> {
    let flat = x.flatten()?;
    let sorted = if flat.dtype().is_complex() {
        take_checked(&flat, &ascending(&flat)?, 0)?
    } else {
        sort(&flat, 0, Order::Ascending)?
    };
    let starts = nonzero(&run_starts(&sorted)?)?.remove(0);
    take_checked(&sorted, &starts.as_contiguous()?, 0)
}

/// The distinct values of `x` with first indices, inverse indices and
/// counts (the standard's `unique_all`).
pub fn unique_all(x: &Array) -> Result<Unique> {
    let flat = x.flatten()?;
    let n = flat.size();
    // A stable sort keeps equal values in input order, so the first of
    // each run is its first occurrence.
    let order = ascending(&flat)?;
    let sorted = take_checked(&flat, &order, 0)?;
    let starts_run = run_starts(&sorted)?;
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
    let (needles, haystack) = (x1.flatten()?.astype(dtype)?, x2.flatten()?.astype(dtype)?);
    if dtype.is_complex() {
        let found = isin_unordered(&haystack, &needles)?;
        let found = if invert { found.logical_not()? } else { found };
        return found.reshape_to(x1.shape());
    }
    let haystack = sort(&haystack, 0, Order::Ascending)?;
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

/// [`isin`] of 1-D `needles` in 1-D `haystack` of a complex dtype, which
/// has no sort op to search: both are ordered together as the `unique_*`
/// functions order them, and a needle is found when the run of equal
/// values it falls in is led by a value of `haystack`. The order is
/// stable and `haystack` comes first, so its values lead their runs.
fn isin_unordered(haystack: &Array, needles: &Array) -> Result<Array> {
    let combined = crate::concat(&[haystack, needles], Some(0))?;
    let order = ascending(&combined)?;
    let starts_run = run_starts(&take_checked(&combined, &order, 0)?)?;
    // For every sorted position, the combined index of its run's leader.
    let run = crate::cumulative_sum(&starts_run.astype(DType::I64)?, Some(0), false)?.subtract(1)?;
    let leaders = take_checked(&order, &nonzero(&starts_run)?.remove(0).as_contiguous()?, 0)?;
    let leader = take_checked(&leaders, &run, 0)?;
    // Where each needle went in the order.
    let h = haystack.size();
    let placed = argsort(&order, 0, Order::Ascending)?.slice(&along(0, 1, SliceArg::from(h as isize..)))?;
    take_checked(&leader, &placed.as_contiguous()?, 0)?.less(h as i64)
}
