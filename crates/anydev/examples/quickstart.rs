//! The README's example: one piece of array code, any device.
//!
//! `cargo run -p anydev --example quickstart` runs it on every device the
//! runtime finds (with `scripts/anydev`'s `ANYDEV_PLUGINS` setting, the
//! simulator's devices too).

use anydev::{DType, Error};

fn main() -> anydev::Result<()> {
    let runtime = anydev::runtime();
    for device in runtime.devices() {
        // Creation: explicit device here; without one, the scope or the default device.
        let x = anydev::arange(0, 6, 1, (DType::F32, device))?.reshape(&[2, 3])?;
        // Every other op runs where its inputs live; scalars take x's device and dtype.
        let y = x.multiply(0.5)?.exp()?;
        let total = anydev::sum(&y, anydev::ALL, false)?;
        println!("{device}: sum(exp(x / 2)) = {}", total.to_scalar::<f32>()?);

        // Arrays on two devices never meet implicitly.
        let on_cpu = x.to_device(anydev::Device::cpu())?;
        if device != anydev::Device::cpu() {
            match x.add(&on_cpu) {
                Err(e @ Error::DeviceMismatch { .. }) => println!("  as expected: {e}"),
                other => panic!("mixing devices must be an error, got {other:?}"),
            }
        }
    }
    Ok(())
}
