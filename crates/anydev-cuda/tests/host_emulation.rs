//! Runs the generated kernels on the host and compares them with the host
//! kernels (anydev-kernels), element by element.
//!
//! The generated CUDA C is compiled as C++ by the system compiler with a
//! small shim for the CUDA built-ins (one thread, one block: the
//! grid-stride loops then visit every element). The math library is the
//! host's on both sides, so results must agree bit for bit (NaNs in any
//! payload), except for the real functions the host kernels compute with
//! formulas of their own (within 2 ulps). Complex functions have no such
//! allowance: the prelude ports the host's formulas, and Rust's own
//! `asinh` with them. This checks the op table, the integer, float and
//! complex rules, the f16/bf16 conversions, every cast and the Philox
//! port, though not the device's own libm.
//!
//! Covered: every unary, binary (tensor and scalar operands) and cast
//! kernel, arange, random, and copy, fill and where for the complex
//! element sizes, each in its vectorised, contiguous and strided variants;
//! take for the complex element sizes; the one-thread-per-output kernels
//! of every reduction (whole and split along the reduced dim, with the
//! kernel combining the splits) and scan, and a long column sum against
//! the exact sum (within 4 ulps); the matmul kernel for complex dtypes.
//! The warp- and block-wide reductions and scans, sorts and `nonzero` rely
//! on warp shuffles and more than one thread, which the shim does not
//! model.
//! Skips with a message when no C++ compiler is found.

use anydev_cuda::codegen::{self, ModuleKey};
use anydev_kernels::{contiguous_strides, HostTensor};
use anydev_ops::{BinaryOp, DType, Distribution, Op, Operand, ReduceOp, Scalar, ScanOp, UnaryOp};
use half::{bf16, f16};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;

const SHIM: &str = r#"
#include <cstdint>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <math.h>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __restrict__
#define __shared__ static
struct Dim3 { unsigned x, y, z; };
static Dim3 blockIdx{0, 0, 0}, threadIdx{0, 0, 0}, blockDim{1, 1, 1}, gridDim{1, 1, 1};
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
inline long long __double_as_longlong(double d) { long long u; memcpy(&u, &d, 8); return u; }
inline double __longlong_as_double(long long u) { double d; memcpy(&d, &u, 8); return d; }
inline float __double2float_rn(double d) { return (float)d; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
template <class T> T __shfl_down_sync(unsigned, T v, int) { return v; }
template <class T> T __shfl_up_sync(unsigned, T v, int) { return v; }
inline void __syncthreads() {}
"#;

fn compiler() -> Option<String> {
    for cxx in [
        std::env::var("CXX").unwrap_or_default().as_str(),
        "c++",
        "g++",
        "clang++",
    ] {
        if !cxx.is_empty()
            && Command::new(cxx)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        {
            return Some(cxx.to_owned());
        }
    }
    None
}

/// Test values of a dtype: zeros, signs, rounding ties, limits,
/// infinities, NaN, subnormals; for complex dtypes every combination of
/// such components.
fn values(d: DType) -> Vec<Scalar> {
    let floats = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        1.5,
        3.7,
        -7.25,
        1e-3,
        100.0,
        65504.0,
        1e30,
        6e-8,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        2.0,
        -0.3,
        255.5,
    ];
    let ints: [i128; 16] = [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 64, 9, 8, 127, -128, 1000];
    match d {
        DType::Bool => vec![Scalar::Bool(false), Scalar::Bool(true)],
        DType::F16 => floats.iter().map(|&v| Scalar::F16(f16::from_f64(v))).collect(),
        DType::BF16 => floats.iter().map(|&v| Scalar::BF16(bf16::from_f64(v))).collect(),
        DType::F32 => floats.iter().map(|&v| Scalar::F32(v as f32)).collect(),
        DType::F64 => floats.iter().map(|&v| Scalar::F64(v)).collect(),
        DType::C64 | DType::C128 => {
            let (huge, tiny) = if d == DType::C64 {
                (1e30, 1e-40)
            } else {
                (1e300, 1e-310)
            };
            // 25 and -710 reach the scaled paths of exp, sinh, cosh and tanh.
            complex_grid(
                d,
                &[
                    0.0,
                    -0.0,
                    1.0,
                    -1.5,
                    0.5,
                    3.7,
                    -1e-3,
                    25.0,
                    -710.0,
                    huge,
                    tiny,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                ],
            )
        }
        _ => {
            let bits = d.size() * 8;
            let (min, max): (i128, i128) = if d.is_signed() {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            let mut v: Vec<i128> = ints.to_vec();
            v.extend([min, max, min + 1, max - 1]);
            v.into_iter()
                .map(|x| Scalar::from_bits(d, x.rem_euclid(1i128 << bits) as u128))
                .collect()
        }
    }
}

/// The operands of binary ops, paired each with each: [`values`], or for
/// complex dtypes a smaller grid (with the integer exponents of `pow`).
fn binary_values(d: DType) -> Vec<Scalar> {
    if !d.is_complex() {
        return values(d);
    }
    let huge = if d == DType::C64 { 1e30 } else { 1e300 };
    complex_grid(
        d,
        &[
            0.0,
            -0.0,
            1.0,
            2.0,
            -3.0,
            0.5,
            huge,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ],
    )
}

/// Every complex number whose components are both in `parts`.
fn complex_grid(d: DType, parts: &[f64]) -> Vec<Scalar> {
    parts
        .iter()
        .flat_map(|&re| parts.iter().map(move |&im| complex(d, re, im)))
        .collect()
}

/// `re + im i` as a scalar of complex `d` (components rounded to f32 for c64).
fn complex(d: DType, re: f64, im: f64) -> Scalar {
    let bits = match d {
        DType::C64 => (re as f32).to_bits() as u128 | ((im as f32).to_bits() as u128) << 32,
        _ => re.to_bits() as u128 | (im.to_bits() as u128) << 64,
    };
    Scalar::from_bits(d, bits)
}

fn bytes_of(vals: &[Scalar]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn ctype(d: DType) -> &'static str {
    codegen::ty::Ty::of(d).storage()
}

/// How a case's kernel is called.
enum Launch {
    /// An elementwise kernel (named without its variant) over `n`
    /// elements, run in its `_c`, `_v` and `_s` variants. Per input: its
    /// C type and its data, or (None) a scalar operand with these bits.
    Elementwise {
        kernel: String,
        inputs: Vec<(&'static str, Option<Vec<u8>>, u64)>,
        /// The C type of the output.
        output: &'static str,
    },
    /// One call of a kernel with a parameter block of its own: C++
    /// statements that declare and fill `p`, then the call, which reads
    /// the inputs `in0`, `in1`, ... and writes `out`.
    Direct {
        inputs: Vec<Vec<u8>>,
        setup: String,
        call: String,
    },
}

/// One kernel call to check.
struct Case {
    module: ModuleKey,
    launch: Launch,
    out: DType,
    n: usize,
    reference: Vec<u8>,
    label: String,
    /// Units in the last place the kernel may differ from the host by.
    ulps: u64,
}

fn host_run(op: &Op<'_, HostTensor<'_>>) -> Option<()> {
    // SAFETY: every tensor points into a live, correctly sized Vec.
    unsafe { anydev_kernels::execute(op) }.ok()
}

/// A contiguous host tensor over `data`.
fn tensor(data: &mut [u8], dtype: DType, shape: &[usize]) -> HostTensor<'static> {
    let strides: &'static [isize] = Box::leak(contiguous_strides(shape).into_boxed_slice());
    let shape: &'static [usize] = Box::leak(shape.to_vec().into_boxed_slice());
    HostTensor {
        data: data.as_mut_ptr(),
        dtype,
        shape,
        strides,
    }
}

/// The real functions the host kernels compute with formulas of their
/// own: the inverse hyperbolic functions (Rust's), cosh and sinh (in f64
/// for f32), and exp, expm1, log, log1p and tanh (the vectorised ones of
/// anydev-kernels' `vmath`) rather than libm's: those may differ in the
/// last bits.
fn own_formula(op: UnaryOp, d: DType) -> bool {
    use UnaryOp::*;
    d.is_float()
        && matches!(
            op,
            Acosh | Asinh | Atanh | Cosh | Sinh | Exp | Expm1 | Log | Log1p | Tanh
        )
}

fn elementwise_cases(d: DType, cases: &mut Vec<Case>) {
    let t = codegen::ty::Ty::of(d);
    let vals = values(d);
    // Unary.
    for &u in UnaryOp::ALL {
        if codegen::exprs::unary(u, t).is_none() {
            continue;
        }
        let out = u.output_dtype(d);
        let n = vals.len();
        let mut x = bytes_of(&vals);
        let mut o = vec![0u8; n * out.size()];
        let op = Op::Unary {
            op: u,
            x: tensor(&mut x, d, &[n]),
            out: tensor(&mut o, out, &[n]),
        };
        host_run(&op).expect("host unary");
        cases.push(Case {
            module: ModuleKey::Unary(d),
            launch: Launch::Elementwise {
                kernel: codegen::unary_kernel(u),
                output: ctype(out),
                inputs: vec![(ctype(d), Some(bytes_of(&vals)), 0)],
            },
            out,
            n,
            reference: o,
            label: format!("{u} {d}"),
            ulps: if own_formula(u, d) { 2 } else { 0 },
        });
    }
    // Binary: every pair, and a scalar right operand (never c128: the
    // array layer passes those as arrays).
    let bvals = binary_values(d);
    let (lhs, rhs): (Vec<Scalar>, Vec<Scalar>) = bvals.iter().flat_map(|&a| bvals.iter().map(move |&b| (a, b))).unzip();
    for &b in BinaryOp::ALL {
        if codegen::exprs::binary(b, t).is_none() {
            continue;
        }
        let out = if b.outputs_bool() { DType::Bool } else { d };
        let n = lhs.len();
        let (mut l, mut r) = (bytes_of(&lhs), bytes_of(&rhs));
        let mut o = vec![0u8; n * out.size()];
        let op = Op::Binary {
            op: b,
            lhs: Operand::Tensor(tensor(&mut l, d, &[n])),
            rhs: Operand::Tensor(tensor(&mut r, d, &[n])),
            out: tensor(&mut o, out, &[n]),
        };
        host_run(&op).expect("host binary");
        cases.push(Case {
            module: ModuleKey::Binary(d),
            launch: Launch::Elementwise {
                kernel: codegen::binary_kernel(b),
                output: ctype(out),
                inputs: vec![(ctype(d), Some(bytes_of(&lhs)), 0), (ctype(d), Some(bytes_of(&rhs)), 0)],
            },
            out,
            n,
            reference: o,
            label: format!("{b} {d}"),
            ulps: 0,
        });
        if d == DType::C128 {
            continue;
        }
        let s = vals[vals.len() / 2];
        let n = vals.len();
        let mut l = bytes_of(&vals);
        let mut o = vec![0u8; n * out.size()];
        let op = Op::Binary {
            op: b,
            lhs: Operand::Tensor(tensor(&mut l, d, &[n])),
            rhs: Operand::Scalar(s),
            out: tensor(&mut o, out, &[n]),
        };
        host_run(&op).expect("host binary scalar");
        cases.push(Case {
            module: ModuleKey::Binary(d),
            launch: Launch::Elementwise {
                kernel: codegen::binary_kernel(b),
                output: ctype(out),
                inputs: vec![
                    (ctype(d), Some(bytes_of(&vals)), 0),
                    (ctype(d), None, s.to_bits() as u64),
                ],
            },
            out,
            n,
            reference: o,
            label: format!("{b} {d} with scalar {s}"),
            ulps: 0,
        });
    }
    // Casts to every other dtype.
    for to in DType::ALL {
        if to == d {
            continue;
        }
        let n = vals.len();
        let mut x = bytes_of(&vals);
        let mut o = vec![0u8; n * to.size()];
        let op = Op::Cast {
            x: tensor(&mut x, d, &[n]),
            out: tensor(&mut o, to, &[n]),
        };
        host_run(&op).expect("host cast");
        cases.push(Case {
            module: ModuleKey::Cast(d),
            launch: Launch::Elementwise {
                kernel: codegen::cast_kernel(to),
                output: ctype(to),
                inputs: vec![(ctype(d), Some(bytes_of(&vals)), 0)],
            },
            out: to,
            n,
            reference: o,
            label: format!("astype {d} -> {to}"),
            ulps: 0,
        });
    }
}

fn creation_cases(d: DType, cases: &mut Vec<Case>) {
    if d != DType::Bool && !d.is_complex() {
        let n = 40;
        let mut o = vec![0u8; n * d.size()];
        let (start, step) = (-3.25, 0.7);
        host_run(&Op::Arange {
            out: tensor(&mut o, d, &[n]),
            start,
            step,
        })
        .expect("host arange");
        cases.push(Case {
            module: ModuleKey::Arange(d),
            launch: Launch::Elementwise {
                kernel: "arange".into(),
                output: ctype(d),
                inputs: vec![
                    ("double", None, f64::to_bits(start)),
                    ("double", None, f64::to_bits(step)),
                ],
            },
            out: d,
            n,
            reference: o,
            label: format!("arange {d}"),
            ulps: 0,
        });
    }
    if d.is_float() {
        for (kernel, dist, p, q) in [
            ("uniform", Distribution::Uniform { low: -2.0, high: 3.0 }, -2.0, 3.0),
            ("normal", Distribution::Normal { mean: 1.0, std: 2.0 }, 1.0, 2.0),
        ] {
            let n = 64;
            let mut o = vec![0u8; n * d.size()];
            let (seed, counter) = (0x1234_5678_9abc_def0u64, 77u64);
            host_run(&Op::Random {
                out: tensor(&mut o, d, &[n]),
                dist,
                seed,
                counter,
            })
            .expect("host random");
            cases.push(Case {
                module: ModuleKey::Random(d),
                launch: Launch::Elementwise {
                    kernel: kernel.into(),
                    output: ctype(d),
                    inputs: vec![
                        ("u64", None, seed),
                        ("u64", None, counter),
                        ("double", None, f64::to_bits(p)),
                        ("double", None, f64::to_bits(q)),
                    ],
                },
                out: d,
                n,
                reference: o,
                label: format!("{kernel} {d}"),
                ulps: 0,
            });
        }
    }
}

/// copy, fill, where and take of the byte movers for `d`'s element size.
fn byte_mover_cases(d: DType, cases: &mut Vec<Case>) {
    let size = d.size();
    let vals = values(d);
    let n = vals.len();
    let (x, y): (Vec<Scalar>, Vec<Scalar>) = (vals.clone(), vals.iter().rev().copied().collect());
    let cond: Vec<Scalar> = (0..n).map(|i| Scalar::Bool(i % 3 != 1)).collect();
    let (mut xb, mut yb, mut cb) = (bytes_of(&x), bytes_of(&y), bytes_of(&cond));
    // The byte movers see elements as unsigned integers (`b128` for 16 bytes).
    let b = codegen::ty::bits_type(size);
    let bits = |v: &[u8]| (b, Some(v.to_vec()), 0u64);
    let mut push =
        |kernel: &str, inputs: Vec<(&'static str, Option<Vec<u8>>, u64)>, reference: Vec<u8>, label: String| {
            cases.push(Case {
                module: ModuleKey::Bytes(size),
                launch: Launch::Elementwise {
                    kernel: kernel.into(),
                    output: b,
                    inputs,
                },
                out: d,
                n,
                reference,
                label,
                ulps: 0,
            })
        };
    let mut o = vec![0u8; n * size];
    host_run(&Op::Copy {
        x: tensor(&mut xb, d, &[n]),
        out: tensor(&mut o, d, &[n]),
    })
    .expect("host copy");
    push("copy", vec![bits(&xb)], o, format!("copy {d}"));
    let mut o = vec![0u8; n * size];
    host_run(&Op::Where {
        cond: tensor(&mut cb, DType::Bool, &[n]),
        x: Operand::Tensor(tensor(&mut xb, d, &[n])),
        y: Operand::Tensor(tensor(&mut yb, d, &[n])),
        out: tensor(&mut o, d, &[n]),
    })
    .expect("host where");
    push(
        "where",
        vec![("u8", Some(cb.clone()), 0), bits(&xb), bits(&yb)],
        o,
        format!("where {d}"),
    );
    // A c128 fill value never reaches a kernel but as the zero fill of an
    // empty matmul.
    let value = if d == DType::C128 {
        Scalar::from_bits(d, 0)
    } else {
        vals[n / 2]
    };
    let mut o = vec![0u8; n * size];
    host_run(&Op::Fill {
        out: tensor(&mut o, d, &[n]),
        value,
    })
    .expect("host fill");
    push(
        "fill",
        vec![(b, None, value.to_bits() as u64)],
        o,
        format!("fill {d} with {value}"),
    );
    // take along the only axis, with negative indices.
    let len = n as i64;
    let idx: Vec<i64> = vec![0, 3, -1, len - 2, -len, 5, 5, 1];
    let mut ib: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
    let m = idx.len();
    let mut o = vec![0u8; m * size];
    host_run(&Op::Take {
        x: tensor(&mut xb, d, &[n]),
        indices: tensor(&mut ib, DType::I64, &[m]),
        axis: 0,
        out: tensor(&mut o, d, &[m]),
    })
    .expect("host take");
    cases.push(Case {
        module: ModuleKey::Take(size),
        launch: Launch::Direct {
            inputs: vec![ib, xb],
            setup: format!(
                "EwParams p; memset(&p, 0, sizeof p); p.n = {m}; p.ndim = 1; p.shape[0] = {m}; p.st[0][0] = 1; p.st[2][0] = 1;"
            ),
            call: format!("take_s(p, (const i64*)in0, (const {b}*)in1, ({b}*)out, 1, {len})"),
        },
        out: d,
        n: m,
        reference: o,
        label: format!("take {d}"),
        ulps: 0,
    });
}

/// Every reduction and scan over axis 0 of a `[3, n]` matrix, on their
/// one-thread-per-output kernels, and for complex dtypes a small matmul.
/// The host folds such columns element by element from the identity, as
/// those kernels do, so even special values must give the same bits.
fn fold_cases(d: DType, cases: &mut Vec<Case>) {
    let vals = values(d);
    let n = vals.len();
    let rows: Vec<Scalar> = [0, 1, 7]
        .iter()
        .flat_map(|&k| vals.iter().cycle().skip(k).take(n).copied())
        .collect();
    let st = ctype(d);
    for &r in ReduceOp::ALL {
        if !codegen::reduce_supported(r, d) {
            continue;
        }
        let out = match r {
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            ReduceOp::ArgMin | ReduceOp::ArgMax => DType::I64,
            _ => d,
        };
        let mut x = bytes_of(&rows);
        let mut o = vec![0u8; n * out.size()];
        host_run(&Op::Reduce {
            op: r,
            x: tensor(&mut x, d, &[3, n]),
            axes: &[0],
            out: tensor(&mut o, out, &[1, n]),
        })
        .expect("host reduce");
        // Whole columns in one pass, and split in two (rows 0-1 and 2, the
        // splits' partials combined by the second kernel). Complex products
        // are left whole: multiplication is not associative where
        // infinities and signed zeros meet, so a split changes those bits.
        let ways: &[usize] = if r == ReduceOp::Prod && d.is_complex() {
            &[1]
        } else {
            &[1, 2]
        };
        for &splits in ways {
            let chunk = 3usize.div_ceil(splits);
            cases.push(Case {
                module: ModuleKey::Reduce(d),
                launch: Launch::Direct {
                    inputs: vec![x.clone()],
                    setup: format!(
                        "RedParams p; memset(&p, 0, sizeof p); p.n_out = {n}; p.n_red = 3; p.chunk = {chunk}; p.splits = {splits}; p.kdim = 1; p.rdim = 1; p.kshape[0] = {n}; p.kst_x[0] = 1; p.kst_o[0] = 1; p.rshape[0] = 3; p.rst[0] = {n};"
                    ),
                    call: split_columns_call(r, &format!("(const {st}*)in0"), &format!("({}*)out", ctype(out)), n, splits),
                },
                out,
                n,
                reference: o.clone(),
                label: format!("{r} {d} in {splits} splits"),
                ulps: 0,
            });
        }
    }
    for &s in ScanOp::ALL {
        if d == DType::Bool {
            break;
        }
        let mut x = bytes_of(&rows);
        let mut o = vec![0u8; 3 * n * d.size()];
        host_run(&Op::Scan {
            op: s,
            x: tensor(&mut x, d, &[3, n]),
            axis: 0,
            out: tensor(&mut o, d, &[3, n]),
        })
        .expect("host scan");
        cases.push(Case {
            module: ModuleKey::Scan(d),
            launch: Launch::Direct {
                inputs: vec![x],
                setup: format!(
                    "LineParams p; memset(&p, 0, sizeof p); p.lines = {n}; p.len = 3; p.ldim = 1; p.lshape[0] = {n}; p.lst_x[0] = 1; p.lst_o[0] = 1; p.ax_x = {n}; p.ax_o = {n};"
                ),
                call: format!(
                    "{}(p, (const {st}*)in0, ({st}*)out)",
                    codegen::scan_kernel(s, "thread")
                ),
            },
            out: d,
            n: 3 * n,
            reference: o,
            label: format!("{s} {d}"),
            ulps: 0,
        });
    }
    if !d.is_complex() {
        return;
    }
    // Matmul of small Gaussian integers: exact in any order, so the host's
    // gemm (its own order, fused multiply-adds) must agree bit for bit.
    let (m, k, nn) = (3usize, 4usize, 5usize);
    let gauss = |count: usize, seed: i32| -> Vec<Scalar> {
        let parts: Vec<f64> = (0..2 * count as i32)
            .map(|i| f64::from((i * 7 + seed) % 9 - 4) * 0.5)
            .collect();
        parts.chunks(2).map(|c| complex(d, c[0], c[1])).collect()
    };
    let (a, b) = (gauss(m * k, 1), gauss(k * nn, 5));
    let (mut ab, mut bb) = (bytes_of(&a), bytes_of(&b));
    let mut o = vec![0u8; m * nn * d.size()];
    host_run(&Op::Matmul {
        a: tensor(&mut ab, d, &[m, k]),
        b: tensor(&mut bb, d, &[k, nn]),
        out: tensor(&mut o, d, &[m, nn]),
    })
    .expect("host matmul");
    cases.push(Case {
        module: ModuleKey::Matmul(d),
        launch: Launch::Direct {
            inputs: vec![ab, bb],
            setup: format!(
                "MmParams p; memset(&p, 0, sizeof p); p.batch = 1; p.bdim = 0; p.m = {m}; p.n = {nn}; p.k = {k}; p.ars = {k}; p.acs = 1; p.brs = {nn}; p.bcs = 1; p.ors = {nn}; p.ocs = 1;"
            ),
            call: format!("matmul(p, (const {st}*)in0, (const {st}*)in1, ({st}*)out)"),
        },
        out: d,
        n: m * nn,
        reference: o,
        label: format!("matmul {d}"),
        ulps: 0,
    });
}

/// A long column sum on the one-thread-per-output kernel: 0.1f32 times
/// the column's number, 20,000 rows, against the exact sum rounded to f32.
/// Added one after another the columns drift by hundreds of ulps; the
/// kernel's tiers keep them within a few.
fn long_column_sum_case(cases: &mut Vec<Case>) {
    let (rows, columns) = (20_000usize, 4usize);
    let value = |c: usize| 0.1f32 * (c + 1) as f32;
    let x: Vec<u8> = (0..rows * columns)
        .flat_map(|i| value(i % columns).to_le_bytes())
        .collect();
    let reference: Vec<u8> = (0..columns)
        .flat_map(|c| ((value(c) as f64 * rows as f64) as f32).to_le_bytes())
        .collect();
    cases.push(Case {
        module: ModuleKey::Reduce(DType::F32),
        launch: Launch::Direct {
            inputs: vec![x.clone()],
            setup: format!(
                "RedParams p; memset(&p, 0, sizeof p); p.n_out = {columns}; p.n_red = {rows}; p.chunk = {rows}; p.splits = 1; p.kdim = 1; p.rdim = 1; p.kshape[0] = {columns}; p.kst_x[0] = 1; p.kst_o[0] = 1; p.rshape[0] = {rows}; p.rst[0] = {columns};"
            ),
            call: split_columns_call(ReduceOp::Sum, "(const float*)in0", "(float*)out", columns, 1),
        },
        out: DType::F32,
        n: columns,
        reference: reference.clone(),
        label: "long column sum f32".into(),
        ulps: 4,
    });
    // The same columns in 7 splits of 2,858 rows (the last shorter), as the
    // backend splits long columns: the partials combine in the same tiers.
    let chunk = rows.div_ceil(7);
    cases.push(Case {
        module: ModuleKey::Reduce(DType::F32),
        launch: Launch::Direct {
            inputs: vec![x],
            setup: format!(
                "RedParams p; memset(&p, 0, sizeof p); p.n_out = {columns}; p.n_red = {rows}; p.chunk = {chunk}; p.splits = 7; p.kdim = 1; p.rdim = 1; p.kshape[0] = {columns}; p.kst_x[0] = 1; p.kst_o[0] = 1; p.rshape[0] = {rows}; p.rst[0] = {columns};"
            ),
            call: split_columns_call(ReduceOp::Sum, "(const float*)in0", "(float*)out", columns, 7),
        },
        out: DType::F32,
        n: columns,
        reference,
        label: "long column sum f32 in 7 splits".into(),
        ulps: 4,
    });
}

/// The C++ statements running the one-thread-per-output reduction kernel
/// over `splits` splits of its rows (`blockIdx.y`, the partials in a
/// scratch array) and, when split, the kernel that combines them.
fn split_columns_call(r: ReduceOp, x: &str, out: &str, n_out: usize, splits: usize) -> String {
    let thread = codegen::reduce_kernel(r, "thread");
    if splits == 1 {
        return format!("{thread}(p, {x}, {out}, nullptr)");
    }
    let columns = codegen::reduce_kernel(r, "columns");
    format!(
        "static R_{}::Acc ws[{}]; for (blockIdx.y = 0; blockIdx.y < {splits}; ++blockIdx.y) {thread}(p, {x}, {out}, ws); blockIdx.y = 0; {columns}(p, ws, {out})",
        r.name(),
        n_out * splits,
    )
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for d in DType::ALL {
        elementwise_cases(d, &mut cases);
        creation_cases(d, &mut cases);
        fold_cases(d, &mut cases);
    }
    for d in [DType::C64, DType::C128] {
        byte_mover_cases(d, &mut cases);
    }
    long_column_sum_case(&mut cases);
    cases
}

/// The C++ program for some of the cases (indices into `cases`): the
/// modules they use, each in a namespace, every input array once, a
/// function per case that runs it (elementwise ones in their `_c`, `_v` and
/// `_s` variants) and prints the output bytes in hex, one line per (case
/// index, variant), and a main that calls them all. A function per case
/// keeps the optimiser's work linear in the number of cases.
fn program(cases: &[Case], chunk: &[usize]) -> String {
    let mut modules: Vec<ModuleKey> = chunk.iter().map(|&i| cases[i].module).collect();
    modules.sort();
    modules.dedup();
    let mut s = String::from(SHIM);
    for m in &modules {
        let src = codegen::source(*m).replace("extern \"C\" ", "");
        let _ = writeln!(s, "namespace {} {{\n{src}\n}}", m.name());
    }
    let mut arrays = Arrays::default();
    let mut body = String::new();
    for &i in chunk {
        let c = &cases[i];
        let osize = c.n * c.out.size();
        let _ = writeln!(
            body,
            "static void case_{i}() {{\n    using namespace {};\n    alignas(64) static unsigned char out[{osize}];",
            c.module.name()
        );
        match &c.launch {
            Launch::Elementwise { kernel, inputs, output } => {
                let mut args = Vec::new();
                for (t, data, bits) in inputs {
                    match data {
                        Some(bytes) => {
                            let name = arrays.name(bytes);
                            args.push(format!("In<{t}>{{(const {t}*){name}, 0ull}}"));
                        }
                        None => args.push(format!("In<{t}>{{nullptr, {bits}ull}}")),
                    }
                }
                let nops = inputs.len() + 1;
                let _ = writeln!(
                    body,
                    "    EwParams p; memset(&p, 0, sizeof p); p.n = {}; p.ndim = 1; p.shape[0] = {};\n    for (int k = 0; k < {nops}; ++k) p.st[k][0] = 1;",
                    c.n, c.n
                );
                for v in ["c", "v", "s"] {
                    let _ = writeln!(
                        body,
                        "    memset(out, 0xcd, sizeof out); {kernel}_{v}(p, {}, ({output}*)out); dump({i}, \"{v}\", out, {osize});",
                        args.join(", "),
                    );
                }
            }
            Launch::Direct { inputs, setup, call } => {
                for (k, bytes) in inputs.iter().enumerate() {
                    let name = arrays.name(bytes);
                    let _ = writeln!(body, "    const unsigned char* in{k} = {name};");
                }
                let _ = writeln!(
                    body,
                    "    {setup}\n    memset(out, 0xcd, sizeof out); {call}; dump({i}, \"-\", out, {osize});"
                );
            }
        }
        let _ = writeln!(body, "}}");
    }
    s.push_str(&arrays.decls);
    let _ = writeln!(
        s,
        "static void dump(int c, const char* v, const unsigned char* p, size_t n) {{ printf(\"%d %s \", c, v); for (size_t i = 0; i < n; ++i) printf(\"%02x\", p[i]); printf(\"\\n\"); }}"
    );
    s.push_str(&body);
    s.push_str("int main() {\n");
    for &i in chunk {
        let _ = writeln!(s, "  case_{i}();");
    }
    s.push_str("  return 0;\n}\n");
    s
}

/// The cases split into `parts` groups of about equal size, every case of
/// a module in one group, so that each module is compiled once.
fn partition(cases: &[Case], parts: usize) -> Vec<Vec<usize>> {
    let mut by_module: HashMap<ModuleKey, Vec<usize>> = HashMap::new();
    for (i, c) in cases.iter().enumerate() {
        by_module.entry(c.module).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = by_module.into_values().collect();
    groups.sort_by_key(|g| (std::cmp::Reverse(g.len()), g[0]));
    let mut chunks = vec![Vec::new(); parts];
    for group in groups {
        let lightest = chunks.iter_mut().min_by_key(|c| c.len()).expect("at least one part");
        lightest.extend(group);
    }
    chunks.retain(|c| !c.is_empty());
    chunks
}

/// Compiles and runs one part's program in `dir`; returns its output.
fn build_and_run(cxx: &str, dir: &std::path::Path, part: usize, source: &str) -> String {
    let (src, exe) = (
        dir.join(format!("kernels{part}.cpp")),
        dir.join(format!("kernels{part}")),
    );
    std::fs::write(&src, source).unwrap();
    let build = Command::new(cxx)
        .args(["-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run the C++ compiler");
    assert!(
        build.status.success(),
        "the generated kernels do not compile as C++ ({}):\n{}",
        src.display(),
        String::from_utf8_lossy(&build.stderr)
            .chars()
            .take(4000)
            .collect::<String>()
    );
    let run = Command::new(&exe).output().expect("run the emulated kernels");
    assert!(run.status.success(), "emulated kernels crashed ({})", exe.display());
    String::from_utf8_lossy(&run.stdout).into_owned()
}

/// The input arrays of the program, each distinct one declared once.
#[derive(Default)]
struct Arrays<'a> {
    ids: HashMap<&'a [u8], usize>,
    decls: String,
}

impl<'a> Arrays<'a> {
    /// The C name of an array holding `bytes`.
    fn name(&mut self, bytes: &'a [u8]) -> String {
        let next = self.ids.len();
        let id = *self.ids.entry(bytes).or_insert(next);
        if id == next {
            let list: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
            let _ = writeln!(
                self.decls,
                "alignas(64) static const unsigned char data{id}[] = {{{}}};",
                list.join(",")
            );
        }
        format!("data{id}")
    }
}

fn is_nan(d: DType, b: &[u8]) -> bool {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let bits = u64::from_le_bytes(w);
    match d {
        DType::F16 => f16::from_bits(bits as u16).is_nan(),
        DType::BF16 => bf16::from_bits(bits as u16).is_nan(),
        DType::F32 => f32::from_bits(bits as u32).is_nan(),
        DType::F64 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

/// Distance in units in the last place between two floats of one sign.
fn ulps(a: &[u8], b: &[u8]) -> u64 {
    let word = |x: &[u8]| {
        let mut w = [0u8; 8];
        w[..x.len()].copy_from_slice(x);
        u64::from_le_bytes(w) as i128
    };
    (word(a) - word(b)).unsigned_abs() as u64
}

/// Whether the kernel's element `got` of dtype `d` matches the host's
/// `want`: the same bits, NaN for NaN, or within `allowed` ulps; complex
/// elements component by component.
fn matches(d: DType, got: &[u8], want: &[u8], allowed: u64) -> bool {
    if d.is_complex() {
        let (h, c) = (d.size() / 2, d.real_dtype());
        return matches(c, &got[..h], &want[..h], allowed) && matches(c, &got[h..], &want[h..], allowed);
    }
    got == want || (is_nan(d, got) && is_nan(d, want)) || (allowed > 0 && ulps(got, want) <= allowed)
}

#[test]
fn generated_kernels_match_the_host_kernels() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (set CXX) to run the generated kernels on the host");
        return;
    };
    let cases = cases();
    let dir = std::env::temp_dir().join(format!("anydev-cuda-emulation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One program per core: the C++ compiler is most of this test's time.
    let parts = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks = partition(&cases, parts);
    let text: String = std::thread::scope(|scope| {
        let runs: Vec<_> = chunks
            .iter()
            .enumerate()
            .map(|(part, chunk)| {
                let (cxx, dir, source) = (&cxx, &dir, program(&cases, chunk));
                scope.spawn(move || build_and_run(cxx, dir, part, &source))
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("a part of the program failed"))
            .collect()
    });
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut runs = vec![0usize; cases.len()];
    for line in text.lines() {
        let mut parts = line.split(' ');
        let (Some(i), Some(variant), Some(hex)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let i = i.parse::<usize>().unwrap();
        let c = &cases[i];
        runs[i] += 1;
        let got: Vec<u8> = (0..hex.len() / 2)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        let size = c.out.size();
        for e in 0..c.n {
            let (g, r) = (&got[e * size..(e + 1) * size], &c.reference[e * size..(e + 1) * size]);
            checked += 1;
            if !matches(c.out, g, r, c.ulps) {
                failures.push(format!(
                    "{} [{variant}] element {e}: kernel {g:02x?}, host {r:02x?}",
                    c.label
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{} cases, {checked} elements compared", cases.len());
    let missing: Vec<&str> = cases
        .iter()
        .zip(&runs)
        .filter(|(_, &n)| n == 0)
        .map(|(c, _)| c.label.as_str())
        .collect();
    assert!(missing.is_empty(), "cases that produced no output: {missing:?}");
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
