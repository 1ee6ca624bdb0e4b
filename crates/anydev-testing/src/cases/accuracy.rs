//! Accuracy of the float functions: the largest error, in units in the last
//! place of the result's dtype, of every transcendental and rounding-sensitive
//! unary and binary function over a dense sweep of inputs, and the bound each
//! backend promises ([`BOUNDS`]).
//!
//! The reference is std's f64 function of the exact input, rounded once to
//! the dtype: for f32 and narrower results that is the correctly rounded
//! value except within 2⁻²⁹ ulp of a tie. An error of 0 is correct rounding;
//! 1 is the neighbouring value. A NaN, an infinity or the sign of a zero that
//! does not match the reference is never within any bound.
//!
//! One implementation serves the device-generic case and `anydev accuracy`,
//! whose output is the measured table in `docs/accuracy.md`.

use crate::case::{Case, CaseCtx, Failure};
use crate::reference as r;
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, UnaryOp};
use anydev_core::{DType, Device, Runtime};
use std::f64::consts::{LN_2, PI};
use std::fmt;

/// The dtypes swept: f64 has no wider reference to be judged against.
pub const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16];

/// Which column of [`BOUNDS`] a device is held to: backends that compile
/// their own math have their own column; every other backend (cpu, the
/// simulator and any plugin built on the host kernels) promises the host
/// kernels' bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Host,
    Wgpu,
    Cuda,
}

impl Class {
    pub fn of(device: Device) -> Class {
        match device.kind().as_str() {
            "wgpu" => Class::Wgpu,
            "cuda" => Class::Cuda,
            _ => Class::Host,
        }
    }
}

/// One function, how to call it and its reference, and the bound in f32
/// ulps each class of backend promises.
pub struct Bound {
    pub op: OpCode,
    /// What every backend should reach.
    pub aim: u64,
    /// cpu, sim and every backend without a column of its own.
    pub host: u64,
    pub wgpu: u64,
    /// CUDA: the largest error measured on an H100 (NVRTC 13.0, libdevice),
    /// or the host bound where that is larger; NVIDIA documents looser
    /// maxima for some functions (`tanf` 4 ulps), which no sweep has hit.
    pub cuda: u64,
    /// wgpu's f32 max error on llvmpipe when the bound was last set; for the
    /// docs only, the case checks `wgpu`.
    pub measured: &'static str,
    call: Call,
}

impl Bound {
    /// The promised bound for a class and dtype. The 16-bit formats are
    /// computed in f32 and rounded once: where f32 is within
    /// [`NARROW_FROM`] ulps they promise [`NARROW_BOUND`] of their own,
    /// and nothing where f32 promises nothing that tight.
    pub fn ulps(&self, class: Class, dtype: DType) -> u64 {
        let f32_bound = match class {
            Class::Host => self.host,
            Class::Wgpu => self.wgpu,
            Class::Cuda => self.cuda,
        };
        match dtype {
            DType::F16 | DType::BF16 if f32_bound <= NARROW_FROM => NARROW_BOUND,
            DType::F16 | DType::BF16 => UNBOUNDED,
            _ => f32_bound,
        }
    }
}

/// A bound that promises nothing: the function is measured and documented
/// but not checked (it may even give the wrong NaN, infinity or zero sign).
pub const UNBOUNDED: u64 = u64::MAX;

/// The bound of every function on f16 and bf16, in their own ulps: an f32
/// result within a few f32 ulps rounds to the nearest 16-bit value or its
/// neighbour.
pub const NARROW_BOUND: u64 = 1;

/// The largest f32 bound under which the 16-bit formats promise
/// [`NARROW_BOUND`].
pub const NARROW_FROM: u64 = 2;

enum Call {
    Unary(fn(&Array) -> ad::Result<Array>, fn(f64) -> f64),
    Binary(fn(&Array, &Array) -> ad::Result<Array>, fn(f64, f64) -> f64),
}

macro_rules! unary {
    ($op:ident, $call:path, $reference:expr, $aim:expr, $host:expr, $wgpu:expr, $cuda:expr, $measured:expr) => {
        Bound {
            op: OpCode::Unary(UnaryOp::$op),
            aim: $aim,
            host: $host,
            wgpu: $wgpu,
            cuda: $cuda,
            measured: $measured,
            call: Call::Unary($call, $reference),
        }
    };
}

macro_rules! binary {
    ($op:ident, $call:path, $reference:expr, $aim:expr, $host:expr, $wgpu:expr, $cuda:expr, $measured:expr) => {
        Bound {
            op: OpCode::Binary(BinaryOp::$op),
            aim: $aim,
            host: $host,
            wgpu: $wgpu,
            cuda: $cuda,
            measured: $measured,
            call: Call::Binary(|a, b| $call(a, b), $reference),
        }
    };
}

/// Every function swept, with its bounds in f32 ulps. The aim is what std's
/// f32 functions (glibc's libm) achieve, and what every backend should
/// promise; the host, wgpu and cuda columns are what each promises today (and the
/// case checks): the aim, or [`UNBOUNDED`] until its kernels reach it.
/// "wgpu today" is the largest error measured on llvmpipe when the row was
/// last set, and the special values (NaN, inf, -0) it got wrong: for the
/// docs only.
#[rustfmt::skip]
pub const BOUNDS: &[Bound] = &[
    //     op           call             reference     aim host       wgpu       cuda       wgpu today
    unary!(Acos,        ad::acos,        f64::acos,     1, 1,         1,         1,         "1"),
    unary!(Acosh,       ad::acosh,       f64::acosh,    1, 1,         1,         2,         "0"),
    unary!(Asin,        ad::asin,        f64::asin,     1, 1,         1,         1,         "1"),
    unary!(Asinh,       ad::asinh,       f64::asinh,    1, 1,         1,         1,         "0"),
    unary!(Atan,        ad::atan,        f64::atan,     1, 1,         1,         1,         "1"),
    unary!(Atanh,       ad::atanh,       f64::atanh,    1, 1,         1,         2,         "0"),
    unary!(Cos,         ad::cos,         f64::cos,      1, 1,         1,         1,         "1"),
    unary!(Cosh,        ad::cosh,        f64::cosh,     1, 1,         1,         2,         "1"),
    unary!(Exp,         ad::exp,         f64::exp,      1, 1,         1,         2,         "1"),
    unary!(Expm1,       ad::expm1,       f64::exp_m1,   1, 1,         1,         1,         "1"),
    unary!(Log,         ad::log,         f64::ln,       1, 1,         1,         1,         "0"),
    unary!(Log1p,       ad::log1p,       f64::ln_1p,    1, 1,         1,         1,         "1"),
    unary!(Log2,        ad::log2,        f64::log2,     1, 1,         1,         1,         "0"),
    unary!(Log10,       ad::log10,       f64::log10,    2, 2,         2,         2,         "1"),
    unary!(Sin,         ad::sin,         f64::sin,      1, 1,         1,         1,         "1"),
    unary!(Sinh,        ad::sinh,        f64::sinh,     1, 1,         1,         2,         "1"),
    unary!(Tan,         ad::tan,         f64::tan,      1, 1,         2,         2,         "2"),
    unary!(Tanh,        ad::tanh,        f64::tanh,     2, 2,         2,         2,         "1"),
    unary!(Sqrt,        ad::sqrt,        f64::sqrt,     0, 0,         0,         0,         "0"),
    unary!(Reciprocal,  ad::reciprocal,  |x| 1.0 / x,   0, 0,         0,         0,         "0"),
    unary!(Square,      ad::square,      |x| x * x,     0, 0,         0,         0,         "0"),
    binary!(Divide,     ad::divide,      |a, b| a / b,  0, 0,         0,         0,         "0"),
    binary!(Atan2,      ad::atan2,       f64::atan2,    1, 1,         2,         2,         "2"),
    binary!(Hypot,      ad::hypot,       f64::hypot,    1, 1,         1,         1,         "1"),
    binary!(LogAddExp,  ad::logaddexp,   logaddexp,     1, 1,         UNBOUNDED, 1,         "44 (cancellation near 0)"),
    binary!(Pow,        ad::pow,         f64::powf,     1, 1,         1,         1,         "1"),
    binary!(Remainder,  ad::remainder,   remainder,     0, 0,         0,         0,         "0"),
];

/// `log(exp(a) + exp(b))` without overflow; equal arguments (infinities
/// of one sign included) give `a + log 2`.
fn logaddexp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        a + LN_2
    } else {
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    }
}

/// NumPy's remainder: the result has the divisor's sign (`fmod` is exact,
/// and so is the correction for f32 operands in f64).
fn remainder(a: f64, b: f64) -> f64 {
    let m = a % b;
    if m == 0.0 {
        0.0f64.copysign(b)
    } else if (m < 0.0) != (b < 0.0) {
        m + b
    } else {
        m
    }
}

/// The largest error of one function on one device and dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub op: OpCode,
    pub dtype: DType,
    pub points: usize,
    /// The largest error where NaN, infinity and the sign of zero match.
    pub max_ulps: u64,
    /// Where it occurred (the first such input).
    pub worst: Point,
    /// Inputs whose NaN, infinity or zero sign differs from the reference.
    pub mismatches: usize,
    pub first_mismatch: Option<Point>,
    pub bound: u64,
}

impl Measured {
    pub fn within_bound(&self) -> bool {
        self.bound == UNBOUNDED || (self.mismatches == 0 && self.max_ulps <= self.bound)
    }
}

impl fmt::Display for Measured {
    /// `max ulps at worst point`, then the mismatches if any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ulps at {}", self.op, self.max_ulps, self.worst)?;
        if let Some(p) = &self.first_mismatch {
            write!(f, ", {} mismatches, first at {p}", self.mismatches)?;
        }
        Ok(())
    }
}

/// Stands for an error no ulp count describes: NaN, infinity or the sign of
/// zero where the reference has something else.
pub const MISMATCH: u64 = u64::MAX;

/// One input with the device's and the reference's results.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub dtype: DType,
    pub args: Vec<f64>,
    pub got: f64,
    pub want: f64,
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|&v| show(self.dtype, v)).collect();
        write!(
            f,
            "({}) gave {}, want {}",
            args.join(", "),
            show(self.dtype, self.got),
            show(self.dtype, self.want)
        )
    }
}

/// Shortest text that reads back as the same value of `dtype`.
fn show(dtype: DType, v: f64) -> String {
    match dtype {
        DType::F32 => format!("{:e}", v as f32),
        _ => format!("{v:e}"),
    }
}

/// Sweeps every function of [`BOUNDS`] that `device` implements for `dtype`.
pub fn sweep(runtime: &Runtime, device: Device, dtype: DType) -> anydev_core::Result<Vec<Measured>> {
    let backend = runtime.backend(device)?;
    let class = Class::of(device);
    let inputs = Inputs::new(dtype, device)?;
    let mut measured = Vec::new();
    for bound in BOUNDS {
        if !backend.supports(device.index(), bound.op, dtype) {
            continue;
        }
        let (args, got, want): (Vec<&[f64]>, Vec<f64>, Vec<f64>) = match bound.call {
            Call::Unary(call, reference) => (
                vec![&inputs.unary],
                call(&inputs.unary_array)?.to_f64_vec()?,
                inputs.unary.iter().map(|&x| r::round_to(dtype, reference(x))).collect(),
            ),
            Call::Binary(call, reference) => (
                vec![&inputs.lhs, &inputs.rhs],
                call(&inputs.lhs_array, &inputs.rhs_array)?.to_f64_vec()?,
                inputs
                    .lhs
                    .iter()
                    .zip(&inputs.rhs)
                    .map(|(&a, &b)| r::round_to(dtype, reference(a, b)))
                    .collect(),
            ),
        };
        let point = |i: usize| Point {
            dtype,
            args: args.iter().map(|a| a[i]).collect(),
            got: got[i],
            want: want[i],
        };
        let errors: Vec<u64> = (0..want.len()).map(|i| ulps(dtype, got[i], want[i])).collect();
        let (worst, max_ulps) = errors
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, e)| e != MISMATCH)
            .fold((0, 0), |best, e| if e.1 > best.1 { e } else { best });
        let mismatched: Vec<usize> = (0..errors.len()).filter(|&i| errors[i] == MISMATCH).collect();
        measured.push(Measured {
            op: bound.op,
            dtype,
            points: want.len(),
            max_ulps,
            worst: point(worst),
            mismatches: mismatched.len(),
            first_mismatch: mismatched.first().map(|&i| point(i)),
            bound: bound.ulps(class, dtype),
        });
    }
    Ok(measured)
}

/// Units in the last place of `dtype` between `got` and `want`, counting
/// subnormals in steps of the smallest one; [`MISMATCH`] when either is
/// NaN or infinite and they differ, or both are zeros of different signs.
pub fn ulps(dtype: DType, got: f64, want: f64) -> u64 {
    if got.is_nan() || want.is_nan() || got.is_infinite() || want.is_infinite() {
        let same = (got.is_nan() && want.is_nan()) || got == want;
        return if same { 0 } else { MISMATCH };
    }
    if got == 0.0 && want == 0.0 {
        return if got.is_sign_negative() == want.is_sign_negative() {
            0
        } else {
            MISMATCH
        };
    }
    ordinal(dtype, got).abs_diff(ordinal(dtype, want))
}

/// The position of finite `v` among the values of `dtype`, counted from
/// zero outwards, negative below zero: adjacent values differ by one.
fn ordinal(dtype: DType, v: f64) -> i64 {
    let (bits, sign) = match dtype {
        DType::F16 => (u64::from(anydev_core::ops::f16_from_f64(v).to_bits()), 1 << 15),
        DType::BF16 => (u64::from(anydev_core::ops::bf16_from_f64(v).to_bits()), 1 << 15),
        DType::F32 => (u64::from((v as f32).to_bits()), 1 << 31),
        _ => (v.to_bits(), 1 << 63),
    };
    let magnitude = (bits & !sign) as i64;
    if bits & sign == 0 {
        magnitude
    } else {
        -magnitude
    }
}

/// The swept inputs of one dtype, on the host and on the device.
struct Inputs {
    unary: Vec<f64>,
    unary_array: Array,
    lhs: Vec<f64>,
    rhs: Vec<f64>,
    lhs_array: Array,
    rhs_array: Array,
}

impl Inputs {
    fn new(dtype: DType, device: Device) -> anydev_core::Result<Inputs> {
        let unary = match dtype {
            DType::F16 => narrowed(
                dtype,
                (0..=u16::MAX).map(|b| half::f16::from_bits(b).to_f64()).collect(),
            ),
            DType::BF16 => narrowed(
                dtype,
                (0..=u16::MAX).map(|b| half::bf16::from_bits(b).to_f64()).collect(),
            ),
            _ => narrowed(dtype, points::unary()),
        };
        let (lhs, rhs): (Vec<f64>, Vec<f64>) = points::pairs()
            .into_iter()
            .map(|(a, b)| (r::round_to(dtype, a), r::round_to(dtype, b)))
            .unzip();
        Ok(Inputs {
            unary_array: r::array(&unary, &[unary.len()], dtype, device)?,
            lhs_array: r::array(&lhs, &[lhs.len()], dtype, device)?,
            rhs_array: r::array(&rhs, &[rhs.len()], dtype, device)?,
            unary,
            lhs,
            rhs,
        })
    }
}

/// `points` rounded to `dtype`, each value once (NaN included once).
fn narrowed(dtype: DType, points: Vec<f64>) -> Vec<f64> {
    let mut v: Vec<f64> = points.into_iter().map(|x| r::round_to(dtype, x)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    v
}

/// Where the inputs lie. Every value is an f32; narrower dtypes round them.
mod points {
    use super::PI;

    /// About 20,000 arguments: the whole finite range log-spaced, both
    /// signs; subnormals; and the neighbourhood of every landmark where
    /// implementations lose accuracy or switch formulas.
    pub fn unary() -> Vec<f64> {
        let mut p = Vec::new();
        // Every STRIDE-th bit pattern: evenly spaced in the exponent, so
        // log-spaced over the whole range, ~17 per binade.
        const STRIDE: usize = 0x7f80_0000 / 4096;
        for bits in (0..0x7f80_0000u32)
            .step_by(STRIDE)
            .chain((1..64).chain((64..0x80_0000).step_by(1 << 15)))
        {
            let v = f64::from(f32::from_bits(bits));
            p.extend([v, -v]);
        }
        for c in landmarks() {
            around(c, &mut p);
        }
        p.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
        p
    }

    /// Arguments where the functions' accuracy is hardest to keep.
    fn landmarks() -> Vec<f64> {
        let mut l = vec![
            1.0,
            0.5,
            2.0,
            f64::from(f32::MIN_POSITIVE),
            f64::from(f32::MAX),
            std::f64::consts::E,
            10.0,
            std::f64::consts::SQRT_2,
            std::f64::consts::LN_2 / 2.0,
            0.55,
            9.01,
            1e-4,
            1e-8,
            // exp overflows, leaves the normals, underflows to zero.
            88.722_839,
            87.336_544,
            103.972_08,
            // cosh and sinh overflow.
            89.415_985,
            // Huge arguments of the trigonometric functions.
            1e10,
            3.4e38,
            // Where f32 forms of cosh, sinh, acosh, asinh and atanh (glibc's,
            // or these computed in f32) missed by 2 ulps.
            89.182_357_788_085_94,
            89.240_760_803_222_66,
            0.706_039_726_734_161_4,
            89.361_053_466_796_88,
            1.007_143_616_676_330_6,
            1.106_969_833_374_023_4,
            0.516_634_821_891_784_7,
            0.232_466_146_349_906_92,
            0.121_801_719_069_480_9,
        ];
        l.extend((1..=32).map(|k| f64::from(k) * PI / 2.0));
        l.extend([1e3, 1e4, 1e5, 1e6, 1e7, 12_345_678.0, 1e9, 1e12].map(|k| k * PI));
        let negated: Vec<f64> = l.iter().map(|v| -v).collect();
        l.extend(negated);
        l
    }

    /// `c`'s 16 nearest f32 neighbours on each side and points closing in
    /// from further away.
    fn around(c: f64, p: &mut Vec<f64>) {
        let c = c as f32;
        let bits = c.to_bits();
        for step in 0..=16u32 {
            for b in [bits.wrapping_add(step), bits.wrapping_sub(step)] {
                let v = f32::from_bits(b);
                if v.is_finite() && v.is_sign_negative() == c.is_sign_negative() {
                    p.push(f64::from(v));
                }
            }
        }
        let scale = f64::from(c).abs().max(1.0);
        for k in 1..=24 {
            let d = scale * 2f64.powi(-k);
            p.extend([
                f64::from((f64::from(c) + d) as f32),
                f64::from((f64::from(c) - d) as f32),
            ]);
        }
    }

    /// About 20,000 argument pairs: every pair of a grid of special and
    /// typical values, pairs drawn from the whole range, and pairs of
    /// moderate values (where `pow` and `logaddexp` neither overflow nor
    /// saturate), half of them with integer exponents.
    pub fn pairs() -> Vec<(f64, f64)> {
        let grid = grid();
        let mut p: Vec<(f64, f64)> = grid.iter().flat_map(|&a| grid.iter().map(move |&b| (a, b))).collect();
        let wide = unary();
        let mut rng = Lcg(0x5eed);
        for _ in 0..8192 {
            p.push((wide[rng.below(wide.len())], wide[rng.below(wide.len())]));
        }
        for i in 0..8192 {
            let base = 10f64.powf(rng.uniform() * 6.0 - 3.0) * if rng.below(4) == 0 { -1.0 } else { 1.0 };
            let exponent = rng.uniform() * 100.0 - 50.0;
            let exponent = if i % 2 == 0 { exponent.round() } else { exponent };
            p.push((f64::from(base as f32), f64::from(exponent as f32)));
        }
        p
    }

    fn grid() -> Vec<f64> {
        let one = 1.0f32;
        let mut g: Vec<f64> = [
            f32::from_bits(1),
            f32::from_bits(3),
            1e-40,
            f32::MIN_POSITIVE,
            1e-30,
            1e-10,
            1e-4,
            0.1,
            0.5,
            f32::from_bits(one.to_bits() - 1),
            1.0,
            f32::from_bits(one.to_bits() + 1),
            1.5,
            2.0,
            std::f32::consts::E,
            3.0,
            std::f32::consts::PI,
            10.0,
            88.7,
            100.0,
            1e4,
            1e10,
            1e20,
            1e30,
            3.4e38,
            f32::MAX,
            f32::INFINITY,
        ]
        .iter()
        .map(|&v| f64::from(v))
        .collect();
        let negated: Vec<f64> = g.iter().map(|v| -v).collect();
        g.extend(negated);
        g.extend([0.0, -0.0, f64::NAN]);
        g
    }

    /// A small deterministic generator: the same points on every run.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// Uniform in [0, 1).
        fn uniform(&mut self) -> f64 {
            self.next() as f64 / (1u64 << 31) as f64
        }
    }
}

pub fn cases() -> Vec<Case> {
    vec![Case::new("accuracy::ulp_bounds", ulp_bounds)
        .dtypes(DTYPES)
        .asks_support_itself()]
}

/// Every function the device implements is within its promised bound.
fn ulp_bounds(ctx: &CaseCtx) -> Result<(), Failure> {
    let over: Vec<String> = sweep(ctx.runtime, ctx.device, ctx.dtype())?
        .iter()
        .filter(|m| !m.within_bound())
        .map(Measured::to_string)
        .collect();
    if over.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(
            format!("max ulp error of {} functions", over.len()),
            format!("the {:?} bounds of BOUNDS (docs/accuracy.md)", Class::of(ctx.device)),
            over.join("; "),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_count_values_between_and_across_zero() {
        let next = |v: f32| f64::from(f32::from_bits(v.to_bits() + 1));
        assert_eq!(ulps(DType::F32, 1.0, 1.0), 0);
        assert_eq!(ulps(DType::F32, next(1.0), 1.0), 1);
        assert_eq!(
            ulps(DType::F32, f64::from(f32::MAX), f64::from(f32::from_bits(1))),
            0x7f7f_fffe
        );
        let tiny = f64::from(f32::from_bits(1));
        assert_eq!(ulps(DType::F32, -tiny, tiny), 2);
        assert_eq!(ulps(DType::F32, 0.0, tiny), 1);
        assert_eq!(ulps(DType::F16, 1.0, 1.0 + 2f64.powi(-10)), 1);
        assert_eq!(ulps(DType::BF16, 1.0, 1.0 + 2f64.powi(-7)), 1);
    }

    #[test]
    fn special_values_must_match() {
        assert_eq!(ulps(DType::F32, f64::NAN, f64::NAN), 0);
        assert_eq!(ulps(DType::F32, f64::INFINITY, f64::INFINITY), 0);
        assert_eq!(ulps(DType::F32, f64::from(f32::MAX), f64::INFINITY), MISMATCH);
        assert_eq!(ulps(DType::F32, 0.0, f64::NAN), MISMATCH);
        assert_eq!(ulps(DType::F32, -0.0, 0.0), MISMATCH);
    }

    #[test]
    fn references_follow_numpy_at_the_edges() {
        assert_eq!(remainder(-1.0, 3.0), 2.0);
        assert_eq!(remainder(1.0, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(remainder(-3.0, 3.0).is_sign_positive() && remainder(3.0, -3.0).is_sign_negative());
        assert_eq!(logaddexp(f64::NEG_INFINITY, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(logaddexp(1000.0, 0.0), 1000.0);
    }

    #[test]
    fn sweeps_cover_the_landmarks() {
        let unary = points::unary();
        let pairs = points::pairs();
        assert!((15_000..30_000).contains(&unary.len()), "{}", unary.len());
        assert!((15_000..30_000).contains(&pairs.len()), "{}", pairs.len());
        for v in [
            f64::from(f32::from_bits(1)),
            f64::from(88.722_84_f32),
            f64::from(1e10_f32),
            f64::from(f32::MAX),
        ] {
            assert!(unary.contains(&v) && unary.contains(&-v), "{v}");
        }
    }
}
