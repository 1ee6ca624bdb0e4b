//! Test helpers: owned strided arrays in many layouts, viewed as
//! `HostTensor`s, and plain reference helpers.
#![allow(dead_code)]

use anydev_kernels::{execute, HostTensor, KernelError};
use anydev_ops::{DType, Op};
use half::{bf16, f16};

/// Rust type of a dtype, for building test data.
pub trait Dt: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const DT: DType;
    fn f(self) -> f64;
}

macro_rules! dt {
    ($($t:ty => $d:ident, |$v:ident| $f:expr;)*) => {$(
        impl Dt for $t {
            const DT: DType = DType::$d;
            fn f(self) -> f64 { let $v = self; $f }
        }
    )*};
}

dt! {
    bool => Bool, |v| v as u8 as f64;
    i8 => I8, |v| v as f64; i16 => I16, |v| v as f64; i32 => I32, |v| v as f64; i64 => I64, |v| v as f64;
    u8 => U8, |v| v as f64; u16 => U16, |v| v as f64; u32 => U32, |v| v as f64; u64 => U64, |v| v as f64;
    f16 => F16, |v| v.to_f64(); bf16 => BF16, |v| v.to_f64(); f32 => F32, |v| v as f64; f64 => F64, |v| v;
}

// Complex: `f` is the real part (tests compare components themselves).
dt! {
    num_complex::Complex32 => C64, |v| v.re as f64; num_complex::Complex64 => C128, |v| v.re;
}

/// How an array's elements are laid out in its buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    /// Row-major.
    C,
    /// Column-major.
    F,
    /// Row-major but every axis reversed (all strides negative).
    Reversed,
    /// Row-major with every element followed by a gap (stride 2x).
    Gapped,
}

pub const LAYOUTS: [Layout; 4] = [Layout::C, Layout::F, Layout::Reversed, Layout::Gapped];

/// An owned strided array.
#[derive(Clone, Debug)]
pub struct Arr<T> {
    pub data: Vec<T>,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    anydev_kernels::contiguous_strides(shape)
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major multi-index of linear index `i`.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

impl<T: Dt> Arr<T> {
    /// Row-major values in the given layout.
    pub fn with_layout(vals: &[T], shape: &[usize], layout: Layout) -> Self {
        let n = numel(shape);
        assert_eq!(vals.len(), n);
        let nd = shape.len();
        let mut strides = vec![0isize; nd];
        let mut acc = 1isize;
        let order: Vec<usize> = match layout {
            Layout::F => (0..nd).collect(),
            _ => (0..nd).rev().collect(),
        };
        for &d in &order {
            strides[d] = acc;
            acc *= shape[d].max(1) as isize;
        }
        let mut offset = 0usize;
        let mut cap = n.max(1);
        match layout {
            Layout::Reversed => {
                for d in 0..nd {
                    if shape[d] > 0 {
                        offset += (shape[d] - 1) * strides[d] as usize;
                    }
                    strides[d] = -strides[d];
                }
            }
            Layout::Gapped => {
                strides.iter_mut().for_each(|s| *s *= 2);
                cap = 2 * n.max(1);
            }
            _ => {}
        }
        let mut a = Arr {
            data: vec![T::default(); cap],
            shape: shape.to_vec(),
            strides,
            offset,
        };
        for (i, &v) in vals.iter().enumerate() {
            let off = a.offset_of(&unravel(i, shape));
            a.data[off] = v;
        }
        a
    }

    pub fn new(vals: Vec<T>, shape: &[usize]) -> Self {
        assert_eq!(vals.len(), numel(shape));
        Arr {
            data: vals,
            shape: shape.to_vec(),
            strides: c_strides(shape),
            offset: 0,
        }
    }

    pub fn zeros(shape: &[usize]) -> Self {
        Arr::new(vec![T::default(); numel(shape)], shape)
    }

    /// A view of `vals` (of shape `small`, broadcastable) at `shape`, with
    /// zero strides on the broadcast axes: nothing is materialised.
    pub fn broadcast(vals: Vec<T>, small: &[usize], shape: &[usize]) -> Self {
        let st = c_strides(small);
        let lead = shape.len() - small.len();
        let strides = (0..shape.len())
            .map(|d| {
                if d < lead || small[d - lead] == 1 {
                    0
                } else {
                    st[d - lead]
                }
            })
            .collect();
        Arr {
            data: vals,
            shape: shape.to_vec(),
            strides,
            offset: 0,
        }
    }

    pub fn offset_of(&self, idx: &[usize]) -> usize {
        let mut off = self.offset as isize;
        for (i, s) in idx.iter().zip(&self.strides) {
            off += *i as isize * s;
        }
        off as usize
    }

    pub fn get(&self, idx: &[usize]) -> T {
        self.data[self.offset_of(idx)]
    }

    /// Logical values in row-major order.
    pub fn values(&self) -> Vec<T> {
        (0..numel(&self.shape))
            .map(|i| self.get(&unravel(i, &self.shape)))
            .collect()
    }

    /// Read-only view.
    pub fn view(&self) -> HostTensor<'_> {
        HostTensor {
            data: self.data.as_ptr().wrapping_add(self.offset) as *mut u8,
            dtype: T::DT,
            shape: &self.shape,
            strides: &self.strides,
        }
    }

    /// Writable view.
    pub fn view_mut(&mut self) -> HostTensor<'_> {
        HostTensor {
            data: self.data.as_mut_ptr().wrapping_add(self.offset) as *mut u8,
            dtype: T::DT,
            shape: &self.shape,
            strides: &self.strides,
        }
    }
}

/// Runs an op built from views; the views only live for the call.
pub fn run(op: Op<'_, HostTensor<'_>>) -> Result<(), KernelError> {
    // SAFETY: every test builds its views from live, correctly sized
    // `Arr` buffers that outlive the call.
    unsafe { execute(&op) }
}

/// A deterministic pseudo-random sequence for test data (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [lo, hi).
    pub fn float(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}

/// `a` and `b` are equal, both NaN, or within `tol` relative error.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Bit-identical floats or equal values (for exact checks incl. NaN).
pub fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b
}
