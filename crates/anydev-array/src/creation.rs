//! Creation functions. Those without array inputs place their output on
//! the explicit device, else the scope's, else the default (placement rule
//! 1); those with one (`*_like`, `tril`, `triu`, `meshgrid`) inherit its
//! device unless given one (rule 6).

use crate::array::Array;
use crate::context::{creation_placement, DeviceCtx, MemoryGuard};
use crate::dispatch::{alloc, execute, same_device};
use crate::promote::{self, Weak};
use anydev_core::ops::Op;
use anydev_core::{DType, Device, Error, MemoryKind, Result, Scalar};
use std::sync::Arc;

/// The optional dtype, device and memory kind of a creation call.
/// Converts from `()` (none), a [`DType`], a [`Device`] or both as a
/// tuple; [`Spec::in_memory`] adds the memory kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    pub dtype: Option<DType>,
    pub device: Option<Device>,
    /// Where the array's memory lives (`Managed` for oversubscription,
    /// `HostPinned` for fast transfers); `None`: the device's own kind.
    /// A kind the device does not allocate is an error naming its kinds.
    pub memory: Option<MemoryKind>,
}

impl Spec {
    pub fn new(dtype: Option<DType>, device: Option<Device>) -> Spec {
        Spec {
            dtype,
            device,
            memory: None,
        }
    }

    /// The same spec, allocating in `kind`.
    pub fn in_memory(self, kind: MemoryKind) -> Spec {
        Spec {
            memory: Some(kind),
            ..self
        }
    }
}

impl From<MemoryKind> for Spec {
    fn from(kind: MemoryKind) -> Spec {
        Spec::default().in_memory(kind)
    }
}

impl From<()> for Spec {
    fn from(_: ()) -> Spec {
        Spec::default()
    }
}

impl From<DType> for Spec {
    fn from(dtype: DType) -> Spec {
        Spec::new(Some(dtype), None)
    }
}

impl From<Device> for Spec {
    fn from(device: Device) -> Spec {
        Spec::new(None, Some(device))
    }
}

impl From<(DType, Device)> for Spec {
    fn from((dtype, device): (DType, Device)) -> Spec {
        Spec::new(Some(dtype), Some(device))
    }
}

/// Context and dtype of a `*_like` call: the array's unless `spec` says,
/// with `spec`'s memory kind chosen while the guard lives.
fn like(x: &Array, spec: Spec) -> Result<(Arc<DeviceCtx>, DType, MemoryGuard)> {
    let ctx = match spec.device {
        Some(d) if d != x.device() => x.ctx().sibling(d)?,
        _ => Arc::clone(x.ctx()),
    };
    let guard = MemoryGuard::new("*_like", &ctx, spec.memory)?;
    Ok((ctx, spec.dtype.unwrap_or(x.dtype()), guard))
}

/// A new array of `shape` with every element `value`.
pub(crate) fn filled(ctx: &Arc<DeviceCtx>, dtype: DType, shape: &[usize], value: Scalar) -> Result<Array> {
    let out = alloc(ctx, dtype, shape)?;
    crate::dispatch::fill(ctx, &out, value)?;
    Ok(out)
}

/// `value` as a scalar of `dtype` for `full`: range-checked for integers,
/// floats truncated toward zero into them.
fn fill_value(value: Weak, dtype: DType) -> Result<Scalar> {
    match (value, dtype) {
        // Truncated toward zero, as NumPy's and PyTorch's `full` do. NaN,
        // the infinities and values beyond the dtype's range have no such
        // integer: they are refused as an integer that does not fit is,
        // rather than saturated.
        (Weak::Float(v), d) if d.is_integer() => {
            let whole = v.trunc();
            let exact = whole.is_finite().then(|| Weak::Int(whole as i128).to_scalar("full", d));
            exact
                .and_then(Result::ok)
                .map_or_else(|| value.to_scalar("full", d), Ok)
        }
        (Weak::Float(v), d) if !d.is_float() => Ok(promote::float_scalar(v, d)),
        (Weak::Int(v), DType::Bool) => Ok(Scalar::Bool(v != 0)),
        _ => value.to_scalar("full", dtype),
    }
}

/// An array of `shape` filled with `value`; without a dtype, the value's
/// own on the target device (`bool`, or the device's default integer or
/// float: [`crate::default_dtypes`]).
pub fn full(shape: &[usize], value: impl Into<Weak>, spec: impl Into<Spec>) -> Result<Array> {
    let (value, spec) = (value.into(), spec.into());
    let (ctx, _memory) = creation_placement("full", &spec)?;
    let dtype = spec.dtype.unwrap_or(ctx.natural_dtype(value));
    filled(&ctx, dtype, shape, fill_value(value, dtype)?)
}

/// Zeros (default dtype: the device's default float).
pub fn zeros(shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
    full(shape, 0.0, spec)
}

/// Ones (default dtype: the device's default float).
pub fn ones(shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
    full(shape, 1.0, spec)
}

/// An array whose contents are unspecified (default dtype: the device's
/// default float).
pub fn empty(shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
    let spec = spec.into();
    let (ctx, _memory) = creation_placement("empty", &spec)?;
    alloc(&ctx, spec.dtype.unwrap_or(ctx.default_float()), shape)
}

/// [`full`] with `x`'s shape, dtype and device unless `spec` overrides them.
pub fn full_like(x: &Array, value: impl Into<Weak>, spec: impl Into<Spec>) -> Result<Array> {
    let (ctx, dtype, _memory) = like(x, spec.into())?;
    filled(&ctx, dtype, x.shape(), fill_value(value.into(), dtype)?)
}

pub fn zeros_like(x: &Array, spec: impl Into<Spec>) -> Result<Array> {
    full_like(x, 0, spec)
}

pub fn ones_like(x: &Array, spec: impl Into<Spec>) -> Result<Array> {
    full_like(x, 1, spec)
}

pub fn empty_like(x: &Array, spec: impl Into<Spec>) -> Result<Array> {
    let (ctx, dtype, _memory) = like(x, spec.into())?;
    alloc(&ctx, dtype, x.shape())
}

/// `out[i] = start + i * step` on `ctx`'s device.
pub(crate) fn arange_on(ctx: &Arc<DeviceCtx>, dtype: DType, n: usize, start: f64, step: f64) -> Result<Array> {
    let out = alloc(ctx, dtype, &[n])?;
    execute(
        ctx,
        &Op::Arange {
            out: out.tensor_ref(),
            start,
            step,
        },
    )?;
    Ok(out)
}

/// Values from `start` up to (excluding) `stop` by `step`. Without a dtype,
/// the device's default integer when all three are integers, else its
/// default float. Integer bounds give exact integers in any integer dtype,
/// and a value outside the dtype's range is an error; a complex dtype
/// holds the real values. Complex bounds are an error: `arange` walks the
/// real line.
pub fn arange(
    start: impl Into<Weak>,
    stop: impl Into<Weak>,
    step: impl Into<Weak>,
    spec: impl Into<Spec>,
) -> Result<Array> {
    let (start, stop, step, spec) = (start.into(), stop.into(), step.into(), spec.into());
    if [start, stop, step].iter().any(|w| matches!(w, Weak::Complex(..))) {
        return Err(Error::invalid_argument(
            "arange",
            format!("start {start}, stop {stop} and step {step} must be real"),
        ));
    }
    let n = match (start, stop, step) {
        (Weak::Int(a), Weak::Int(b), Weak::Int(s)) if s != 0 => {
            let span = b - a;
            let len = if (span > 0) == (s > 0) && span != 0 {
                (span.abs() + s.abs() - 1) / s.abs()
            } else {
                0
            };
            len as f64
        }
        _ => {
            let (a, b, s) = (start.as_f64(), stop.as_f64(), step.as_f64());
            if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
                return Err(Error::invalid_argument(
                    "arange",
                    format!("start {start}, stop {stop} and step {step} must be finite and step non-zero"),
                ));
            }
            ((b - a) / s).ceil().max(0.0)
        }
    };
    if n >= usize::MAX as f64 {
        return Err(Error::invalid_argument("arange", format!("{n} elements are too many")));
    }
    let n = n as usize;
    let (ctx, _memory) = creation_placement("arange", &spec)?;
    let all_int = [start, stop, step].iter().all(|w| !matches!(w, Weak::Float(_)));
    let dtype = spec.dtype.unwrap_or(if all_int {
        ctx.default_int()
    } else {
        ctx.default_float()
    });
    if let (Weak::Int(first), Weak::Int(step), Some(limits)) = (start, step, promote::int_limits(dtype)) {
        if n > 0 {
            return int_arange(&ctx, dtype, limits, n, first, step);
        }
    }
    if dtype.is_complex() {
        return arange_on(&ctx, dtype.real_dtype(), n, start.as_f64(), step.as_f64())?.astype(dtype);
    }
    arange_on(&ctx, dtype, n, start.as_f64(), step.as_f64())
}

/// The `n` integers `first + i * step` in the integer `dtype`, exactly.
/// Backends compute `arange` in f64, which holds every integer only up to
/// 2^53: past that, 64-bit values are built as `i * step + first` in the
/// dtype itself, whose arithmetic wraps modulo 2^64 and so lands on each
/// value exactly once the range check has passed.
fn int_arange(
    ctx: &Arc<DeviceCtx>,
    dtype: DType,
    (lo, hi): (i128, i128),
    n: usize,
    first: i128,
    step: i128,
) -> Result<Array> {
    let last = first + (n as i128 - 1) * step;
    if let Some(bad) = [first, last].into_iter().find(|v| !(lo..=hi).contains(v)) {
        return Err(Error::invalid_argument(
            "arange",
            format!("{bad} does not fit in {dtype} (range {lo} to {hi})"),
        ));
    }
    const F64_EXACT: i128 = 1 << 53;
    if first.abs() <= F64_EXACT && last.abs() <= F64_EXACT {
        return arange_on(ctx, dtype, n, first as f64, step as f64);
    }
    // The same residue modulo 2^64, within the dtype's range.
    let wrap = |v: i128| {
        let r = v.rem_euclid(1 << 64);
        if r > hi {
            r - (1 << 64)
        } else {
            r
        }
    };
    let index = arange_on(ctx, dtype, n, 0.0, 1.0)?;
    let scaled = crate::multiply(crate::Arg::Array(&index), crate::Arg::Scalar(Weak::Int(wrap(step))))?;
    crate::add(crate::Arg::Array(&scaled), crate::Arg::Scalar(Weak::Int(wrap(first))))
}

/// `num` evenly spaced values from `start` to `stop` (included when
/// `endpoint`; then the last value is exactly `stop`). Default dtype: the
/// device's default float.
///
/// With an integer dtype the values are computed in the device's default
/// float and floored, as NumPy does; a value outside the dtype's range is
/// an error rather than NumPy's silent wrap-around (`docs/semantics.md`).
///
/// Complex `start` or `stop` give the device's default complex dtype (a
/// real one is then an error): the real and imaginary parts are spaced
/// apart, as NumPy does.
pub fn linspace(
    start: impl Into<Weak>,
    stop: impl Into<Weak>,
    num: usize,
    endpoint: bool,
    spec: impl Into<Spec>,
) -> Result<Array> {
    let (start, stop, spec) = (start.into(), stop.into(), spec.into());
    let (ctx, _memory) = creation_placement("linspace", &spec)?;
    let complex_bounds = [start, stop].iter().any(|w| matches!(w, Weak::Complex(..)));
    let default = if complex_bounds {
        ctx.default_complex()
    } else {
        ctx.default_float()
    };
    let dtype = spec.dtype.unwrap_or(default);
    if dtype.is_complex() {
        return complex_linspace(&ctx, dtype, [start, stop], num, endpoint);
    }
    if complex_bounds {
        return Err(Error::invalid_argument(
            "linspace",
            format!("complex start {start} or stop {stop} need a complex dtype, not {dtype}"),
        ));
    }
    let (start, stop) = (start.as_f64(), stop.as_f64());
    if dtype.is_integer() {
        // The values run monotonically from start towards stop: checking
        // both ends (floored) checks them all.
        let (lo, hi) = (promote::dtype_limit(dtype, false), promote::dtype_limit(dtype, true));
        if let Some(bad) = [start, stop].into_iter().find(|v| !(lo..=hi).contains(&v.floor())) {
            return Err(Error::invalid_argument(
                "linspace",
                format!("{bad} does not fit in {dtype} (range {lo} to {hi})"),
            ));
        }
        let float = Spec::new(Some(ctx.default_float()), Some(ctx.device));
        return linspace(start, stop, num, endpoint, float)?.floor()?.astype(dtype);
    }
    let intervals = if endpoint { num.saturating_sub(1) } else { num };
    let step = if intervals == 0 {
        0.0
    } else {
        (stop - start) / intervals as f64
    };
    let out = arange_on(&ctx, dtype, num, start, step)?;
    if endpoint && num > 1 {
        let last = out.slice(&[crate::SliceArg::from((num - 1) as isize..)])?;
        crate::dispatch::fill(&ctx, &last, promote::float_scalar(stop, dtype))?;
    }
    Ok(out)
}

/// `linspace` in a complex `dtype`: the real parts and the imaginary parts
/// each spaced in the component dtype, then joined as `re + im * 1j`.
fn complex_linspace(
    ctx: &Arc<DeviceCtx>,
    dtype: DType,
    bounds: [Weak; 2],
    num: usize,
    endpoint: bool,
) -> Result<Array> {
    let [(re0, im0), (re1, im1)] = bounds.map(|w| match w {
        Weak::Complex(re, im) => (re, im),
        real => (real.as_f64(), 0.0),
    });
    let part = Spec::new(Some(dtype.real_dtype()), Some(ctx.device));
    let re = linspace(re0, re1, num, endpoint, part)?.astype(dtype)?;
    let im = linspace(im0, im1, num, endpoint, part)?.astype(dtype)?;
    let im = crate::multiply(crate::Arg::Array(&im), crate::Arg::Scalar(Weak::Complex(0.0, 1.0)))?;
    crate::add(crate::Arg::Array(&re), crate::Arg::Array(&im))
}

/// The `n_rows x n_cols` matrix with ones on diagonal `k` (default dtype:
/// the device's default float).
pub fn eye(n_rows: usize, n_cols: Option<usize>, k: isize, spec: impl Into<Spec>) -> Result<Array> {
    let spec = spec.into();
    let (ctx, _memory) = creation_placement("eye", &spec)?;
    let offsets = DiagonalOffsets::new("eye", &ctx, n_rows, n_cols.unwrap_or(n_rows))?;
    let mask = offsets.values.equal(offsets.clamp(k))?;
    mask.astype(spec.dtype.unwrap_or(ctx.default_float()))
}

/// The `rows x cols` matrix of `j - i`, from which triangle and diagonal
/// masks are one comparison. It is in the device's default integer dtype,
/// so that a device without `i64` still builds float masks.
struct DiagonalOffsets {
    values: Array,
    rows: usize,
    cols: usize,
}

impl DiagonalOffsets {
    fn new(op: &'static str, ctx: &Arc<DeviceCtx>, rows: usize, cols: usize) -> Result<Self> {
        let dtype = ctx.default_int();
        let limit = promote::dtype_limit(dtype, true);
        if rows.max(cols) as f64 > limit {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "{rows} x {cols} needs offsets beyond {dtype}, the widest integer {} holds",
                    ctx.device
                ),
            ));
        }
        let i = arange_on(ctx, dtype, rows, 0.0, 1.0)?.reshape_to(&[rows, 1])?;
        let j = arange_on(ctx, dtype, cols, 0.0, 1.0)?.reshape_to(&[1, cols])?;
        let values = crate::subtract(&j, &i)?;
        Ok(Self { values, rows, cols })
    }

    /// `k` moved into `-rows..=cols`, where every comparison with the
    /// offsets (all in `1 - rows..cols`) gives what `k` itself would, and
    /// which the offsets' dtype holds.
    fn clamp(&self, k: isize) -> i64 {
        (k as i64).clamp(-(self.rows as i64), self.cols as i64)
    }
}

/// Which triangle `tril`/`triu` keep.
#[derive(Clone, Copy)]
enum Triangle {
    Lower,
    Upper,
}

fn triangle(x: &Array, k: isize, which: Triangle) -> Result<Array> {
    let op = match which {
        Triangle::Lower => "tril",
        Triangle::Upper => "triu",
    };
    let n = x.ndim();
    if n < 2 {
        return Err(Error::invalid_argument(
            op,
            format!("needs at least 2 dimensions, got shape {:?}", x.shape()),
        ));
    }
    let offsets = DiagonalOffsets::new(op, x.ctx(), x.shape()[n - 2], x.shape()[n - 1])?;
    let k = offsets.clamp(k);
    let keep = match which {
        Triangle::Lower => offsets.values.less_equal(k)?,
        Triangle::Upper => offsets.values.greater_equal(k)?,
    };
    crate::where_(&keep, x, Weak::Bool(false))
}

/// The lower triangle of the last two axes (elements with `j - i <= k`),
/// zeros elsewhere; on `x`'s device.
pub fn tril(x: &Array, k: isize) -> Result<Array> {
    triangle(x, k, Triangle::Lower)
}

/// The upper triangle of the last two axes (elements with `j - i >= k`).
pub fn triu(x: &Array, k: isize) -> Result<Array> {
    triangle(x, k, Triangle::Upper)
}

/// How `meshgrid` orders its first two output axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Indexing {
    /// Cartesian: the first two axes are swapped.
    #[default]
    Xy,
    /// Matrix: output axis `i` follows input `i`.
    Ij,
}

/// Coordinate grids from 1-D arrays (broadcast views; all on one device,
/// promoted to one dtype).
pub fn meshgrid(arrays: &[&Array], indexing: Indexing) -> Result<Vec<Array>> {
    if arrays.is_empty() {
        return Ok(Vec::new());
    }
    same_device("meshgrid", arrays)?;
    if let Some(a) = arrays.iter().find(|a| a.ndim() != 1) {
        return Err(Error::invalid_argument(
            "meshgrid",
            format!("inputs must be 1-D, got shape {:?}", a.shape()),
        ));
    }
    let dtype = promote::result_type_all(arrays.iter().map(|a| a.dtype())).expect("non-empty");
    let mut shape: Vec<usize> = arrays.iter().map(|a| a.shape()[0]).collect();
    let swap = indexing == Indexing::Xy && arrays.len() >= 2;
    if swap {
        shape.swap(0, 1);
    }
    arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let pos = if swap && i < 2 { 1 - i } else { i };
            let mut view = vec![1isize; shape.len()];
            view[pos] = -1;
            a.astype(dtype)?.reshape(&view)?.broadcast_to(&shape)
        })
        .collect()
}
