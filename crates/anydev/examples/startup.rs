//! What starting only the used backend saves: the time to a program's
//! first `cpu:0` array, then the time to start every other backend
//! (`devices()` asks what exists). Run with
//! `cargo run --release -p anydev --example startup`.

use anydev::{accelerator, DType, Device};
use std::time::Instant;

fn main() -> anydev::Result<()> {
    let start = Instant::now();
    let x = anydev::ones(&[1024], (DType::F32, Device::cpu()))?;
    let total: f32 = anydev::sum(&x, anydev::ALL, false)?.to_scalar()?;
    let first_array = start.elapsed();
    assert_eq!(total, 1024.0);

    let start = Instant::now();
    let devices = accelerator::devices();
    let the_rest = start.elapsed();

    println!("first cpu:0 array (only the cpu backend started): {first_array:?}");
    println!(
        "starting every other backend ({} devices in all): {the_rest:?}",
        devices.len()
    );
    println!(
        "a cpu-only program starts {:.0}x faster than one that starts everything",
        (first_array + the_rest).as_secs_f64() / first_array.as_secs_f64()
    );
    anydev::shutdown()
}
