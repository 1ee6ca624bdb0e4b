//! Runs the generated elementwise kernels on the host and compares them
//! with the host kernels (anydev-kernels), element by element.
//!
//! The generated CUDA C is compiled as C++ by the system compiler with a
//! small shim for the CUDA built-ins (one thread, one block: the
//! grid-stride loops then visit every element). The math library is the
//! host's on both sides, so results must agree bit for bit (NaNs in any
//! payload), except for the functions the host kernels compute with
//! formulas of their own (within 2 ulps): this checks the op table, the integer and float rules, the
//! f16/bf16 conversions, every cast and the Philox port, though not the
//! device's own libm. Skips with a message when no C++ compiler is found.

use anydev_cuda::codegen::{self, ModuleKey};
use anydev_kernels::HostTensor;
use anydev_ops::{BinaryOp, DType, Distribution, Op, Operand, Scalar, UnaryOp};
use half::{bf16, f16};
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
/// infinities, NaN, subnormals.
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

fn bytes_of(vals: &[Scalar]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn ctype(d: DType) -> &'static str {
    codegen::ty::Ty::of(d).storage()
}

/// One kernel call to check.
struct Case {
    module: ModuleKey,
    kernel: String,
    /// Input dtypes and bytes (None: a scalar operand with these bits).
    inputs: Vec<(DType, Option<Vec<u8>>, u64)>,
    out: DType,
    n: usize,
    reference: Vec<u8>,
    label: String,
}

fn host_run(op: &Op<'_, HostTensor<'_>>) -> Option<()> {
    // SAFETY: every tensor points into a live, correctly sized Vec.
    unsafe { anydev_kernels::execute(op) }.ok()
}

fn tensor(data: &mut [u8], dtype: DType, n: usize) -> HostTensor<'static> {
    let shape: &'static [usize] = Box::leak(vec![n].into_boxed_slice());
    HostTensor {
        data: data.as_mut_ptr(),
        dtype,
        shape,
        strides: &[1],
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for d in codegen::dtypes() {
        let vals = values(d);
        // Unary.
        for &u in UnaryOp::ALL {
            if codegen::exprs::unary(u, codegen::ty::Ty::of(d)).is_none() {
                continue;
            }
            let out = if u.outputs_bool() { DType::Bool } else { d };
            let n = vals.len();
            let mut x = bytes_of(&vals);
            let mut o = vec![0u8; n * out.size()];
            let op = Op::Unary {
                op: u,
                x: tensor(&mut x, d, n),
                out: tensor(&mut o, out, n),
            };
            host_run(&op).expect("host unary");
            cases.push(Case {
                module: ModuleKey::Unary(d),
                kernel: codegen::unary_kernel(u),
                inputs: vec![(d, Some(bytes_of(&vals)), 0)],
                out,
                n,
                reference: o,
                label: format!("{u} {d}"),
            });
        }
        // Binary: every pair, and a scalar right operand.
        let (lhs, rhs): (Vec<Scalar>, Vec<Scalar>) =
            vals.iter().flat_map(|&a| vals.iter().map(move |&b| (a, b))).unzip();
        for &b in BinaryOp::ALL {
            if codegen::exprs::binary(b, codegen::ty::Ty::of(d)).is_none() {
                continue;
            }
            let out = if b.outputs_bool() { DType::Bool } else { d };
            let n = lhs.len();
            let (mut l, mut r) = (bytes_of(&lhs), bytes_of(&rhs));
            let mut o = vec![0u8; n * out.size()];
            let op = Op::Binary {
                op: b,
                lhs: Operand::Tensor(tensor(&mut l, d, n)),
                rhs: Operand::Tensor(tensor(&mut r, d, n)),
                out: tensor(&mut o, out, n),
            };
            host_run(&op).expect("host binary");
            cases.push(Case {
                module: ModuleKey::Binary(d),
                kernel: codegen::binary_kernel(b),
                inputs: vec![(d, Some(bytes_of(&lhs)), 0), (d, Some(bytes_of(&rhs)), 0)],
                out,
                n,
                reference: o,
                label: format!("{b} {d}"),
            });
            let s = vals[vals.len() / 2];
            let n = vals.len();
            let mut l = bytes_of(&vals);
            let mut o = vec![0u8; n * out.size()];
            let op = Op::Binary {
                op: b,
                lhs: Operand::Tensor(tensor(&mut l, d, n)),
                rhs: Operand::Scalar(s),
                out: tensor(&mut o, out, n),
            };
            host_run(&op).expect("host binary scalar");
            cases.push(Case {
                module: ModuleKey::Binary(d),
                kernel: codegen::binary_kernel(b),
                inputs: vec![(d, Some(bytes_of(&vals)), 0), (d, None, s.to_bits() as u64)],
                out,
                n,
                reference: o,
                label: format!("{b} {d} with scalar {s}"),
            });
        }
        // Casts to every other dtype.
        for to in codegen::dtypes() {
            if to == d {
                continue;
            }
            let n = vals.len();
            let mut x = bytes_of(&vals);
            let mut o = vec![0u8; n * to.size()];
            let op = Op::Cast {
                x: tensor(&mut x, d, n),
                out: tensor(&mut o, to, n),
            };
            host_run(&op).expect("host cast");
            cases.push(Case {
                module: ModuleKey::Cast(d),
                kernel: codegen::cast_kernel(to),
                inputs: vec![(d, Some(bytes_of(&vals)), 0)],
                out: to,
                n,
                reference: o,
                label: format!("astype {d} -> {to}"),
            });
        }
        // arange and random.
        if d != DType::Bool {
            let n = 40;
            let mut o = vec![0u8; n * d.size()];
            let (start, step) = (-3.25, 0.7);
            host_run(&Op::Arange {
                out: tensor(&mut o, d, n),
                start,
                step,
            })
            .expect("host arange");
            cases.push(Case {
                module: ModuleKey::Arange(d),
                kernel: "arange".into(),
                inputs: vec![
                    (DType::F64, None, f64::to_bits(start)),
                    (DType::F64, None, f64::to_bits(step)),
                ],
                out: d,
                n,
                reference: o,
                label: format!("arange {d}"),
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
                    out: tensor(&mut o, d, n),
                    dist,
                    seed,
                    counter,
                })
                .expect("host random");
                cases.push(Case {
                    module: ModuleKey::Random(d),
                    kernel: kernel.into(),
                    inputs: vec![
                        (DType::U64, None, seed),
                        (DType::U64, None, counter),
                        (DType::F64, None, f64::to_bits(p)),
                        (DType::F64, None, f64::to_bits(q)),
                    ],
                    out: d,
                    n,
                    reference: o,
                    label: format!("{kernel} {d}"),
                });
            }
        }
    }
    cases
}

/// The C++ program: every module used, each in a namespace, and a main
/// that runs every case in the `_c`, `_v` and `_s` variants and prints the
/// output bytes in hex, one line per (case, variant).
fn program(cases: &[Case]) -> String {
    let mut modules: Vec<ModuleKey> = cases.iter().map(|c| c.module).collect();
    modules.sort();
    modules.dedup();
    let mut s = String::from(SHIM);
    for m in &modules {
        let src = codegen::source(*m).replace("extern \"C\" ", "");
        let _ = writeln!(s, "namespace {} {{\n{src}\n}}", m.name());
    }
    let _ = writeln!(
        s,
        "static void dump(int c, const char* v, const unsigned char* p, size_t n) {{ printf(\"%d %s \", c, v); for (size_t i = 0; i < n; ++i) printf(\"%02x\", p[i]); printf(\"\\n\"); }}"
    );
    s.push_str("int main() {\n");
    for (i, c) in cases.iter().enumerate() {
        let ns = c.module.name();
        let _ = writeln!(s, "  {{");
        let _ = writeln!(s, "    using namespace {ns};");
        let mut args = Vec::new();
        for (k, (d, data, bits)) in c.inputs.iter().enumerate() {
            let t = ctype(*d);
            match data {
                Some(bytes) => {
                    let list: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
                    let _ = writeln!(
                        s,
                        "    alignas(64) static const unsigned char in{k}[] = {{{}}};",
                        list.join(",")
                    );
                    args.push(format!("In<{t}>{{(const {t}*)in{k}, 0ull}}"));
                }
                None => args.push(format!("In<{t}>{{nullptr, {bits}ull}}")),
            }
        }
        let osize = c.n * c.out.size();
        let nops = c.inputs.len() + 1;
        let _ = writeln!(
            s,
            "    alignas(64) static unsigned char out[{osize}];\n    EwParams p; memset(&p, 0, sizeof p); p.n = {}; p.ndim = 1; p.shape[0] = {};\n    for (int k = 0; k < {nops}; ++k) p.st[k][0] = 1;",
            c.n, c.n
        );
        for v in ["c", "v", "s"] {
            let _ = writeln!(
                s,
                "    memset(out, 0xcd, sizeof out); {}_{v}(p, {}, ({}*)out); dump({i}, \"{v}\", out, {osize});",
                c.kernel,
                args.join(", "),
                ctype(c.out)
            );
        }
        let _ = writeln!(s, "  }}");
    }
    s.push_str("  return 0;\n}\n");
    s
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

#[test]
fn generated_elementwise_kernels_match_the_host_kernels() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (set CXX) to run the generated kernels on the host");
        return;
    };
    let cases = cases();
    let dir = std::env::temp_dir().join(format!("anydev-cuda-emulation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("kernels.cpp"), dir.join("kernels"));
    std::fs::write(&src, program(&cases)).unwrap();
    let build = Command::new(&cxx)
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
    assert!(run.status.success(), "emulated kernels crashed");
    let text = String::from_utf8_lossy(&run.stdout);
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for line in text.lines() {
        let mut parts = line.split(' ');
        let (Some(i), Some(variant), Some(hex)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let c = &cases[i.parse::<usize>().unwrap()];
        let got: Vec<u8> = (0..hex.len() / 2)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        let size = c.out.size();
        for e in 0..c.n {
            let (g, r) = (&got[e * size..(e + 1) * size], &c.reference[e * size..(e + 1) * size]);
            checked += 1;
            // The host kernels compute the inverse hyperbolic functions
            // with their own formulas, and exp, expm1, log, log1p and tanh
            // with their vectorised ones (anydev-kernels' `vmath`), rather
            // than libm's: those may differ in the last bits.
            let function = c.label.split(' ').next().unwrap_or_default();
            let inexact = ["acosh", "asinh", "atanh", "exp", "expm1", "log", "log1p", "tanh"].contains(&function);
            if g != r && !(is_nan(c.out, g) && is_nan(c.out, r)) && !(inexact && ulps(g, r) <= 2) {
                failures.push(format!(
                    "{} [{variant}] element {e}: kernel {g:02x?}, host {r:02x?}",
                    c.label
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{} cases, {checked} elements compared", cases.len());
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
