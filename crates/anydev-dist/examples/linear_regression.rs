//! Data-parallel linear regression with minibatch SGD, checked against the
//! same training run in one process.
//!
//! Every rank holds the whole (synthetic, deterministic) data set on the
//! host, trains on its shard of each global minibatch, and averages the
//! gradients with `all_reduce(Sum)`; then every rank trains alone on the
//! full minibatches, as a single-process run would, and compares. The two
//! differ only in the order the gradient's terms are added, so the weights
//! must agree to 1e-9 (relative, f64; 1e-4 when the device has no f64).
//!
//! `mpirun -n 4 target/debug/examples/linear_regression`

use anydev::{Array, DType, Device};
use anydev_dist::{Communicator, ReduceOp};
use std::process::ExitCode;

const SAMPLES: usize = 4096;
const FEATURES: usize = 8;
const BATCH: usize = 256;
const EPOCHS: usize = 3;
const LEARNING_RATE: f64 = 0.5;

/// A small deterministic generator (xorshift), the same on every rank.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

struct Data {
    x: Vec<f64>,
    y: Vec<f64>,
    true_w: Vec<f64>,
}

fn data() -> Data {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let true_w: Vec<f64> = (0..FEATURES).map(|j| (j as f64 - 3.5) / 2.0).collect();
    let x: Vec<f64> = (0..SAMPLES * FEATURES).map(|_| rng.uniform()).collect();
    let y = (0..SAMPLES)
        .map(|i| {
            let row = &x[i * FEATURES..(i + 1) * FEATURES];
            row.iter().zip(&true_w).map(|(a, b)| a * b).sum::<f64>() + 0.01 * rng.uniform()
        })
        .collect();
    Data { x, y, true_w }
}

/// The gradient of the summed squared error over `rows` (a range of
/// samples), `2 X^T (X w - y)`, computed on `device` in `dtype`.
fn grad_sum(d: &Data, rows: std::ops::Range<usize>, w: &Array, dtype: DType, device: Device) -> anydev::Result<Array> {
    let n = rows.len();
    let x = Array::from_slice(
        &d.x[rows.start * FEATURES..rows.end * FEATURES],
        &[n, FEATURES],
        (dtype, device),
    )?;
    let y = Array::from_slice(&d.y[rows], &[n, 1], (dtype, device))?;
    let residual = x.matmul(w)?.subtract(&y)?;
    x.matrix_transpose()?.matmul(&residual)?.multiply(2.0)
}

/// Minibatch SGD. With `world`, each rank computes its shard's gradient
/// and the shards are summed with all_reduce; without, one process
/// computes the whole batch's.
fn train(d: &Data, world: Option<&Communicator>, dtype: DType, device: Device) -> anydev_dist::Result<Vec<f64>> {
    let mut w = anydev::zeros(&[FEATURES, 1], (dtype, device))?;
    for _epoch in 0..EPOCHS {
        for batch in 0..SAMPLES / BATCH {
            let start = batch * BATCH;
            let grad = match world {
                Some(world) => {
                    let shard = BATCH / world.size();
                    let mine = start + world.rank() * shard;
                    let local = grad_sum(d, mine..mine + shard, &w, dtype, device)?;
                    world.all_reduce(&local, ReduceOp::Sum)?
                }
                None => grad_sum(d, start..start + BATCH, &w, dtype, device)?,
            };
            w = w.subtract(&grad.multiply(LEARNING_RATE / BATCH as f64)?)?;
        }
    }
    Ok(w.to_f64_vec()?)
}

fn run() -> anydev_dist::Result<bool> {
    let world = anydev_dist::init()?;
    if !BATCH.is_multiple_of(world.size()) {
        return Err(anydev_dist::DistError::Config(format!(
            "the batch of {BATCH} does not split over {} ranks",
            world.size()
        )));
    }
    let device = world.device();
    let has_f64 = anydev::runtime().capabilities(device)?.supports_dtype(DType::F64);
    let (dtype, tolerance) = if has_f64 {
        (DType::F64, 1e-9)
    } else {
        (DType::F32, 1e-4)
    };
    let d = data();
    let parallel = train(&d, Some(&world), dtype, device)?;
    let single = train(&d, None, dtype, device)?;
    let scale = single.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let diff = parallel
        .iter()
        .zip(&single)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
        / scale;
    let err_true = parallel
        .iter()
        .zip(&d.true_w)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let ok = diff <= tolerance && err_true < 0.05;
    // Each rank checks for itself; rank 0 reports.
    let all_ok = world
        .all_reduce(&Array::from_slice(&[u8::from(ok)], &[1], Device::cpu())?, ReduceOp::Min)?
        .to_scalar::<u8>()?
        == 1;
    if world.rank() == 0 {
        println!("{}", world.describe());
        println!(
            "linear regression, {SAMPLES} samples x {FEATURES} features, batch {BATCH}, {EPOCHS} epochs, {dtype}, {} ranks",
            world.size()
        );
        println!("max |w - w_true|                       = {err_true:.3e} (noise 1e-2; below 5e-2 expected)");
        println!("max |w_parallel - w_single| / max|w|   = {diff:.3e} (tolerance {tolerance:.0e})");
        println!(
            "{}",
            if all_ok {
                "parallel == single-process: ok"
            } else {
                "MISMATCH"
            }
        );
    }
    Ok(all_ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("linear_regression: {e}");
            ExitCode::FAILURE
        }
    }
}
