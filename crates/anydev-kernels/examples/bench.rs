//! Rough timings of representative kernels (run with `--release`):
//! `cargo run --release -p anydev-kernels --example bench`.

use anydev_kernels::{contiguous_strides, execute, HostTensor};
use anydev_ops::{BinaryOp, DType, Op, Operand, ReduceOp, UnaryOp};
use std::time::Instant;

fn view<T>(v: &mut [T], dtype: DType, shape: &'static [usize], strides: &'static [isize]) -> HostTensor<'static> {
    HostTensor::new(v.as_mut_ptr() as *mut u8, dtype, shape, strides)
}

/// Median seconds per call of `f` over `reps` calls.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn main() {
    for &n in &[100usize, 10_000, 1_000_000, 10_000_000] {
        let shape = leak(vec![n]);
        let strides = leak(contiguous_strides(shape));
        let (mut a, mut b, mut o) = (vec![1.5f32; n], vec![2.5f32; n], vec![0f32; n]);
        let (a, b, o) = (
            view(&mut a, DType::F32, shape, strides),
            view(&mut b, DType::F32, shape, strides),
            view(&mut o, DType::F32, shape, strides),
        );
        let reps = if n <= 10_000 { 10_000 } else { 20 };
        let add = Op::Binary {
            op: BinaryOp::Add,
            lhs: Operand::Tensor(a),
            rhs: Operand::Tensor(b),
            out: o,
        };
        // SAFETY: the views point at live vectors of n elements.
        let t = time(reps, || unsafe { execute(&add).unwrap() });
        println!(
            "add f32 n={n:>9}: {:>10.3} us  {:>6.2} GB/s",
            t * 1e6,
            12.0 * n as f64 / t / 1e9
        );
        let exp = Op::Unary {
            op: UnaryOp::Exp,
            x: a,
            out: o,
        };
        // SAFETY: as above.
        let t = time(reps, || unsafe { execute(&exp).unwrap() });
        println!("exp f32 n={n:>9}: {:>10.3} us", t * 1e6);
        let one = leak(vec![1usize]);
        let sum = Op::Reduce {
            op: ReduceOp::Sum,
            x: a,
            axes: &[0],
            out: HostTensor {
                shape: one,
                strides: leak(vec![1]),
                ..o
            },
        };
        // SAFETY: as above; the output is the first element of `o`.
        let t = time(reps, || unsafe { execute(&sum).unwrap() });
        println!(
            "sum f32 n={n:>9}: {:>10.3} us  {:>6.2} GB/s",
            t * 1e6,
            4.0 * n as f64 / t / 1e9
        );
    }
    let side = 1000usize;
    let shape = leak(vec![side, side]);
    let strides = leak(contiguous_strides(shape));
    let (mut a, mut o) = (vec![1.0f32; side * side], vec![0f32; side]);
    let a = view(&mut a, DType::F32, shape, strides);
    let oshape = leak(vec![1, side]);
    let o = view(&mut o, DType::F32, oshape, leak(contiguous_strides(oshape)));
    let sum0 = Op::Reduce {
        op: ReduceOp::Sum,
        x: a,
        axes: &[0],
        out: o,
    };
    // SAFETY: as above.
    let t = time(20, || unsafe { execute(&sum0).unwrap() });
    println!("sum axis 0 f32 1000x1000: {:.3} us", t * 1e6);
    for &m in &[64usize, 512, 1024] {
        let shape = leak(vec![m, m]);
        let strides = leak(contiguous_strides(shape));
        let (mut x, mut y, mut z) = (vec![1.0f32; m * m], vec![1.0f32; m * m], vec![0f32; m * m]);
        let mm = Op::Matmul {
            a: view(&mut x, DType::F32, shape, strides),
            b: view(&mut y, DType::F32, shape, strides),
            out: view(&mut z, DType::F32, shape, strides),
        };
        // SAFETY: as above.
        let t = time(5, || unsafe { execute(&mm).unwrap() });
        println!(
            "matmul f32 {m}^3: {:.3} ms  {:.1} GFLOP/s",
            t * 1e3,
            2.0 * (m * m * m) as f64 / t / 1e9
        );
    }
}
