//! Placement rules (design section 3) on real devices: outputs stay on the
//! inputs' device, mixed devices are `DeviceMismatch`, data moves only with
//! `to_device`, and round trips between every pair of devices keep values.

use crate::case::{check, check_eq, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, Array, SliceArg};
use anydev_core::ops::{BinaryOp, OpCode};
use anydev_core::{capability::keys, DType, Device, Error};

pub fn cases() -> Vec<Case> {
    vec![
        // `zeros` in a partner's scope fills on that partner.
        Case::new("placement::outputs_stay_on_the_input_device", outputs_stay)
            .op(OpCode::Binary(BinaryOp::Add))
            .op(OpCode::Fill)
            .needs(Need::Devices(2))
            .all_devices(),
        // The condition of `where` is a bool array on the partner device,
        // written from the host so it needs no op there; partners that
        // hold no bool are left out.
        Case::new("placement::mixed_devices_are_an_error", mixed_devices)
            .op(OpCode::Binary(BinaryOp::Add))
            .needs(Need::Devices(2))
            .all_devices(),
        Case::new("placement::same_kind_devices_do_not_mix", same_kind_mismatch)
            .op(OpCode::Binary(BinaryOp::Add))
            .needs(Need::SameKindDevices(2))
            .all_devices(),
        Case::new("placement::to_device_round_trips", round_trips)
            .dtypes(&[DType::F32, DType::I64, DType::U8])
            .needs(Need::Op(OpCode::Copy, None))
            .all_devices(),
        Case::new("placement::large_transfers_keep_every_element", large_transfers)
            .dtypes(&[DType::F32])
            .op(OpCode::Copy)
            .needs(Need::MemoryBytes(32 << 20))
            // It stages through cpu:0, whose memory the runner checks too.
            .all_devices(),
        Case::new("placement::peer_transfers_respect_declared_peers", peer_transfers)
            .needs(Need::SameKindDevices(2))
            .all_devices(),
    ]
}

/// The devices this case may pair with the device under test that hold
/// every one of `dtypes`.
fn partners(ctx: &CaseCtx, dtypes: &[DType]) -> Vec<Device> {
    ctx.others()
        .into_iter()
        .filter(|d| {
            ctx.runtime
                .capabilities(*d)
                .is_ok_and(|c| dtypes.iter().all(|&t| c.supports_dtype(t)))
        })
        .collect()
}

fn outputs_stay(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, 2.0], &[2], DType::F32, ctx.device)?;
    for other in partners(ctx, &[DType::F32]) {
        // The scope names another device; the output still follows x.
        let y = anydev_core::with_device(other, || x.add(1.0))?;
        check_eq(
            format!("device of x + 1 inside a scope of {other}"),
            ctx.device,
            y.device(),
        )?;
        check_array("x + 1", &[2], &[2.0, 3.0], &y)?;
        // Creation inside the scope goes to the scope's device.
        let z = anydev_core::with_device(other, || ad::zeros(&[1], DType::F32))?;
        check_eq("device of zeros() inside the scope", other, z.device())?;
    }
    Ok(())
}

fn expect_mismatch(what: &str, result: ad::Result<Array>, a: Device, b: Device) -> Result<(), Failure> {
    let e = expect_err(what, "DeviceMismatch", result, |e| {
        matches!(e, Error::DeviceMismatch { .. })
    })?;
    let text = e.to_string();
    check(
        text.contains(&a.to_string()) && text.contains(&b.to_string()) && text.contains("to_device"),
        format!("{what}: the message names both devices and to_device"),
        format!("{a}, {b} and to_device"),
        text,
    )
}

fn mixed_devices(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, 2.0], &[2], DType::F32, ctx.device)?;
    for other in partners(ctx, &[DType::F32, DType::Bool]) {
        let y = r::array(&[3.0, 4.0], &[2], DType::F32, other)?;
        expect_mismatch(&format!("{} + {other}", ctx.device), x.add(&y), ctx.device, other)?;
        expect_mismatch(&format!("{other} * {}", ctx.device), y.multiply(&x), other, ctx.device)?;
        expect_mismatch("concat across devices", ad::concat(&[&x, &y], None), ctx.device, other)?;
        let cond = r::array(&[1.0, 1.0], &[2], DType::Bool, other)?;
        expect_mismatch("where across devices", ad::where_(&cond, &x, 0.0), other, ctx.device)?;
    }
    Ok(())
}

fn same_kind_mismatch(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, 2.0], &[2], DType::F32, ctx.device)?;
    for peer in ctx.peers() {
        let y = r::array(&[3.0, 4.0], &[2], DType::F32, peer)?;
        expect_mismatch(&format!("{} + {peer}", ctx.device), x.add(&y), ctx.device, peer)?;
    }
    Ok(())
}

fn round_trips(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let values = r::sample(dtype, 300, 9);
    let x = r::array(&values, &[3, 100], dtype, ctx.device)?;
    const LONG: usize = 20_000;
    let long = r::sample(dtype, 4 * LONG, 10);
    let x_long = r::array(&long, &[4, LONG], dtype, ctx.device)?;
    let same = x.to_device(ctx.device)?;
    check_eq(
        "to_device to its own device shares the buffer",
        true,
        same.shares_buffer(&x),
    )?;
    for other in ctx.others() {
        if !ctx.runtime.capabilities(other).is_ok_and(|c| c.supports_dtype(dtype)) {
            continue;
        }
        let there = x.to_device(other)?;
        check_eq(format!("device after to_device({other})"), other, there.device())?;
        check_array(&format!("values on {other}"), &[3, 100], &values, &there)?;
        // A strided view travels as its values.
        let view = x.matrix_transpose()?.flip(0isize)?.to_device(other)?;
        let want: Vec<f64> = r::indices(&[100, 3])
            .iter()
            .map(|i| values[i[1] * 100 + (99 - i[0])])
            .collect();
        check_array(&format!("strided view on {other}"), &[100, 3], &want, &view)?;
        let back = there.to_device(ctx.device)?;
        check_array(&format!("values back from {other}"), &[3, 100], &values, &back)?;
        // A contiguous view that starts inside its buffer, over 64 KiB for
        // the wider dtypes, so backends copy straight from and into the
        // host's memory rather than staging it.
        let rows = x_long.slice(&[SliceArg::from(1..)])?;
        let there = rows.to_device(other)?;
        check_array(&format!("rows 1.. on {other}"), &[3, LONG], &long[LONG..], &there)?;
        let back = there.slice(&[SliceArg::from(1..)])?.to_device(ctx.device)?;
        check_array(
            &format!("rows 2.. back from {other}"),
            &[2, LONG],
            &long[2 * LONG..],
            &back,
        )?;
    }
    Ok(())
}

/// 21 MB to the device and back, each way from an element past the start
/// of its buffer: backends that cut large host copies into chunks (CUDA's
/// staging buffers) cross several chunk boundaries and end on a partial
/// chunk, and every element must come back where it was.
fn large_transfers(ctx: &CaseCtx) -> Result<(), Failure> {
    const N: usize = 5_300_001;
    // Each element its own index, exact in f32 (below 2^24), so a chunk
    // moved to the wrong place or dropped shows.
    let host = Array::from_vec((0..N).map(|i| i as f32).collect::<Vec<_>>(), &[N], Device::cpu())?;
    let there = host.slice(&[SliceArg::from(1..)])?.to_device(ctx.device)?;
    let back = there
        .slice(&[SliceArg::from(1..)])?
        .to_device(Device::cpu())?
        .to_vec::<f32>()?;
    match back.iter().enumerate().find(|&(i, &v)| v != (i + 2) as f32) {
        None if back.len() == N - 2 => Ok(()),
        None => Err(Failure::new("elements back from the device", N - 2, back.len())),
        Some((i, v)) => Err(Failure::new(format!("element {i} back from the device"), i + 2, v)),
    }
}

fn peer_transfers(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, 2.0, 3.0], &[3], DType::F32, ctx.device)?;
    for peer in ctx.peers() {
        let y = x.to_device(peer)?;
        check_array(&format!("values on {peer}"), &[3], &[1.0, 2.0, 3.0], &y)?;
        let declared = ctx
            .runtime
            .capabilities(peer)?
            .strings(keys::PEER_DEVICES)
            .contains(&ctx.device.to_string());
        check(
            declared || !y.shares_buffer(&x),
            format!("{peer} shares {}'s buffer", ctx.device),
            format!("{peer} to list {} in peer_devices", ctx.device),
            "a shared buffer without a declared peer",
        )?;
    }
    Ok(())
}
