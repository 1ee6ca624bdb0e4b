//! The accelerator API (`anydev::accelerator`) on every device: counts,
//! the current device, memory accounting with peak reset and cache
//! release, events and their timing, per-device random generators, and
//! memory another library owns used in place.

use crate::case::{check, check_eq, Case, CaseCtx, Failure, Need};
use crate::lent;
use crate::reference as r;
use anydev::accelerator::{self as acc, Event, RngState};
use anydev_array::{self as ad, Array, Spec};
use anydev_core::capability::keys;
use anydev_core::ops::{BinaryOp, OpCode};
use anydev_core::{with_device, DType, Device, DeviceKind, Error, MemoryAdvice, MemoryKind, MemoryStats};
use std::time::Instant;

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("accelerator::counts_and_availability", counts_and_availability),
        Case::new("accelerator::current_device_follows_the_scope", current_device),
        Case::new("accelerator::memory_stats_peak_and_reset", memory_stats_peak_and_reset),
        Case::new(
            "accelerator::a_refused_allocation_leaves_the_accounting",
            refused_allocation,
        ),
        Case::new(
            "accelerator::empty_cache_keeps_live_arrays",
            empty_cache_keeps_live_arrays,
        ),
        Case::new("accelerator::events_complete_and_time_work", events),
        Case::new("accelerator::generators_are_per_device_and_replay", generators)
            .needs(Need::Op(OpCode::Random, Some(DType::F32))),
        Case::new(
            "accelerator::generators_of_missing_devices_are_refused",
            missing_device_generator,
        ),
        Case::new("accelerator::arrays_in_every_memory_kind", memory_kinds)
            .needs(Need::Op(OpCode::Fill, Some(DType::F32))),
        Case::new("accelerator::a_kind_the_device_lacks_is_refused", missing_memory_kind),
        Case::new("accelerator::foreign_host_memory_in_place", foreign_host_memory)
            .op(OpCode::Binary(BinaryOp::Multiply))
            .op(OpCode::Copy),
        Case::new("accelerator::foreign_device_memory_in_place", foreign_device_memory)
            .op(OpCode::Binary(BinaryOp::Multiply))
            .op(OpCode::Copy),
    ]
}

/// Every memory kind the device allocates holds arrays made by creation
/// calls and `to_device_in`, which report it; prefetch and advice are
/// accepted whatever the kind.
fn memory_kinds(ctx: &CaseCtx) -> Result<(), Failure> {
    let values: Vec<f64> = (0..64).map(f64::from).collect();
    let source = r::array(&values, &[64], DType::F32, ctx.device)?;
    for kind in ctx.runtime.backend(ctx.device)?.memory_kinds(ctx.device.index()) {
        let spec = Spec::from((DType::F32, ctx.device)).in_memory(kind);
        let zeros = ad::zeros(&[64], spec)?;
        check_eq(format!("zeros in {kind}: memory kind"), kind, zeros.memory_kind())?;
        r::check_array(&format!("zeros in {kind}"), &[64], &[0.0; 64], &zeros)?;
        let uploaded = Array::from_slice(&[1.5f32, -2.0], &[2], spec)?;
        check_eq(
            format!("from_slice in {kind}: memory kind"),
            kind,
            uploaded.memory_kind(),
        )?;
        r::check_array(&format!("from_slice in {kind}"), &[2], &[1.5, -2.0], &uploaded)?;
        let moved = source.to_device_in(ctx.device, kind)?;
        check_eq(format!("to_device_in {kind}: memory kind"), kind, moved.memory_kind())?;
        r::check_array(&format!("to_device_in {kind}"), &[64], &values, &moved)?;
        moved.prefetch(ctx.device)?;
        moved.advise(MemoryAdvice::ReadMostly)?;
        moved.advise(MemoryAdvice::PreferredLocation(ctx.device))?;
        r::check_array(&format!("{kind} after prefetch and advice"), &[64], &values, &moved)?;
    }
    Ok(())
}

fn missing_memory_kind(ctx: &CaseCtx) -> Result<(), Failure> {
    let kinds = ctx.runtime.backend(ctx.device)?.memory_kinds(ctx.device.index());
    let all = [
        MemoryKind::Device,
        MemoryKind::HostPinned,
        MemoryKind::Managed,
        MemoryKind::System,
    ];
    // A device that allocates every kind has nothing to refuse.
    let Some(&lacking) = all.iter().find(|k| !kinds.contains(k)) else {
        return Ok(());
    };
    let source = r::array(&[1.0], &[1], DType::F32, ctx.device)?;
    let attempts = [
        (
            "zeros",
            ad::zeros(&[4], Spec::from(ctx.device).in_memory(lacking)).map(drop),
        ),
        ("to_device_in", source.to_device_in(ctx.device, lacking).map(drop)),
    ];
    for (what, result) in attempts {
        match result {
            Err(Error::InvalidArgument { message, .. })
                if message.contains(&lacking.to_string()) && message.contains(&kinds[0].to_string()) =>
            {
                continue
            }
            other => {
                return Err(Failure::new(
                    format!("{what} in {lacking} memory"),
                    "InvalidArgument naming the kind and the kinds the device allocates",
                    format!("{other:?}"),
                ))
            }
        }
    }
    Ok(())
}

/// Host memory another library lends (`from_foreign_host`) is used in
/// place on a device that reaches host memory (`share_to`): ops there read
/// it, writes there reach the owner, and the owner gets it back when the
/// last view goes. A device that cannot reach it refuses, pointing to
/// `to_device`, which copies it instead.
fn foreign_host_memory(ctx: &CaseCtx) -> Result<(), Failure> {
    let values: Vec<f32> = (0..100).map(|i| i as f32 - 50.5).collect();
    let expected: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
    let doubled: Vec<f64> = expected.iter().map(|v| 2.0 * v).collect();
    let (memory, returned) = lent::lend(&values);
    let host = Array::from_foreign_host(memory, DType::F32, &[100], &[1], 0)?;
    let reaches = ctx.runtime.capabilities(ctx.device)?.flag(keys::PAGEABLE_MEMORY_ACCESS);
    let written = match (reaches, host.share_to(ctx.device)) {
        (true, Ok(shared)) => {
            check_eq("the device of the shared array", ctx.device, shared.device())?;
            r::check_array("lent memory read on the device", &[100], &expected, &shared)?;
            shared.assign(&shared.multiply(2.0)?)?;
            r::check_array("the lent memory after a write on the device", &[100], &doubled, &host)?;
            doubled
        }
        (false, Err(Error::FeatureUnsupported { device, reason, .. }))
            if device == ctx.device && reason.contains("to_device") =>
        {
            let copy = host.to_device(ctx.device)?;
            copy.assign(&copy.multiply(2.0)?)?;
            r::check_array("a copy of the lent memory", &[100], &doubled, &copy)?;
            expected
        }
        (reaches, got) => {
            return Err(Failure::new(
                "share_to of lent host memory",
                format!(
                    "a view on the device when pageable_memory_access is true, FeatureUnsupported naming \
                     to_device when false (it is {reaches})"
                ),
                format!("{got:?}"),
            ))
        }
    };
    check_eq("the owner's memory while anydev holds it", None, returned.words())?;
    drop(host);
    acc::synchronize(ctx.device)?;
    let words = returned.words().ok_or_else(|| {
        Failure::new(
            "the owner's memory after the last view went",
            "given back",
            "still held",
        )
    })?;
    let seen: Vec<f64> = words[..100].iter().map(|&v| f64::from(v)).collect();
    check_eq("what the owner got back", written, seen)
}

/// Device memory another library of the platform lends by address (a
/// CUDA tensor through DLPack) is used in place where the device has
/// device addresses: a strided view of it reads the values, writes reach
/// the owner's memory, and the owner is dropped after the last view.
/// Backends check the address (a range past its allocation, address 0);
/// a device without device addresses refuses it, naming itself.
fn foreign_device_memory(ctx: &CaseCtx) -> Result<(), Failure> {
    let values: Vec<f64> = (0..100).map(|i| f64::from(i) - 50.5).collect();
    let source = r::array(&values, &[100], DType::F32, ctx.device)?;
    let refused = Array::from_foreign_device(ctx.device, lent::no_device_memory(), DType::F32, &[0], &[1], 0);
    let Some((memory, released)) = lent::lend_device(&source, 400) else {
        return match refused {
            Err(Error::FeatureUnsupported { device, .. }) if device == ctx.device => Ok(()),
            other => Err(Failure::new(
                "from_foreign_device on a device without device addresses",
                "FeatureUnsupported naming the device",
                format!("{other:?}"),
            )),
        };
    };
    if !matches!(refused, Err(Error::InvalidArgument { .. })) {
        return Err(Failure::new(
            "from_foreign_device of address 0",
            "InvalidArgument (the driver knows no memory there)",
            format!("{refused:?}"),
        ));
    }
    let view = Array::from_foreign_device(ctx.device, memory, DType::F32, &[50], &[2], 1)?;
    check_eq("the device of the adopted view", ctx.device, view.device())?;
    let odd: Vec<f64> = values.iter().skip(1).step_by(2).copied().collect();
    r::check_array("adopted memory read in place", &[50], &odd, &view)?;
    view.assign(&view.multiply(2.0)?)?;
    let written: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 2 == 1 { 2.0 * v } else { v })
        .collect();
    r::check_array(
        "the owner's memory after a write through the view",
        &[100],
        &written,
        &source,
    )?;
    check_eq("the owner dropped while a view uses the memory", false, released.yes())?;
    drop(view);
    check_eq("the owner dropped after the last view", true, released.yes())?;
    // A terabyte from the array's address runs past any allocation.
    let (past, _) = lent::lend_device(&source, 1 << 40).expect("the address was there a moment ago");
    match Array::from_foreign_device(ctx.device, past, DType::F32, &[100], &[1], 0) {
        Err(Error::InvalidArgument { message, .. }) if message.contains("past its end") => Ok(()),
        other => Err(Failure::new(
            "from_foreign_device of a range past the allocation",
            "InvalidArgument saying the range runs past its end",
            format!("{other:?}"),
        )),
    }
}

fn counts_and_availability(ctx: &CaseCtx) -> Result<(), Failure> {
    let kind = ctx.device.kind();
    let count = acc::device_count(kind.as_str());
    check(
        count > ctx.device.index(),
        "device_count of the device's kind",
        format!("more than {}", ctx.device.index()),
        count,
    )?;
    check_eq(
        "is_available of the device's kind",
        true,
        acc::is_available(kind.as_str()),
    )?;
    check_eq(
        "device_count of a kind no backend has",
        0,
        acc::device_count("nosuchkind"),
    )?;
    check(
        acc::devices().contains(&ctx.device),
        "devices()",
        format!("a list with {}", ctx.device),
        format!("{:?}", acc::devices()),
    )?;
    Ok(acc::synchronize(ctx.device)?)
}

fn current_device(ctx: &CaseCtx) -> Result<(), Failure> {
    let inside = with_device(ctx.device, acc::current_device)?;
    check_eq("current_device() inside with_device", ctx.device, inside)
}

/// Allocations raise `in_use` and the peak; `reserved` covers `in_use`;
/// a reset brings the peak down to what is in use.
fn memory_stats_peak_and_reset(ctx: &CaseCtx) -> Result<(), Failure> {
    let bytes = 256 * 1024;
    acc::synchronize(ctx.device)?;
    let before = acc::memory_stats(ctx.device)?;
    let big = r::array(&vec![1.0; bytes / 4], &[bytes / 4], DType::F32, ctx.device)?;
    let during = acc::memory_stats(ctx.device)?;
    check(
        during.in_use >= before.in_use + bytes && during.allocations > before.allocations,
        "memory_stats while a 256 KiB array lives",
        format!(
            "in_use >= {} and more than {} allocations",
            before.in_use + bytes,
            before.allocations
        ),
        format!("{during:?}"),
    )?;
    check(
        during.peak >= during.in_use && during.reserved >= during.in_use,
        "peak and reserved against in_use",
        "peak >= in_use and reserved >= in_use",
        format!("{during:?}"),
    )?;
    if let (Some(free), Some(total)) = (during.free, during.total) {
        check(
            free <= total,
            "free against total",
            "free <= total",
            format!("{during:?}"),
        )?;
    }
    drop(big);
    acc::synchronize(ctx.device)?;
    match acc::reset_peak(ctx.device) {
        Ok(()) => {
            let after = acc::memory_stats(ctx.device)?;
            check_eq("peak after reset_peak with the array freed", after.in_use, after.peak)?;
            check(
                after.peak < during.peak,
                "peak after reset_peak",
                format!("below the {} bytes it was while the array lived", during.peak),
                after.peak,
            )
        }
        // A backend may keep its peak since start-up; it must say so.
        Err(Error::FeatureUnsupported { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// An allocation of a pebibyte, more than any device holds, is out of
/// memory and leaves `in_use`, the peak and the allocation count as they
/// were: the peak tells how much memory a program needed, and it never had
/// that one.
fn refused_allocation(ctx: &CaseCtx) -> Result<(), Failure> {
    acc::synchronize(ctx.device)?;
    let before = acc::memory_stats(ctx.device)?;
    match ad::empty(&[1 << 48], (DType::F32, ctx.device)) {
        Err(Error::OutOfMemory { device, .. }) if device == ctx.device => {}
        other => {
            return Err(Failure::new(
                "empty of 2^50 bytes",
                "OutOfMemory naming the device",
                format!("{:?}", other.map(|a| a.shape().to_vec())),
            ))
        }
    }
    let after = acc::memory_stats(ctx.device)?;
    let counts = |s: MemoryStats| (s.in_use, s.peak, s.allocations);
    check_eq(
        "in_use, peak and allocations after a refused allocation",
        counts(before),
        counts(after),
    )
}

/// `empty_cache` leaves nothing cached (`reserved == in_use`) and live
/// arrays intact.
fn empty_cache_keeps_live_arrays(ctx: &CaseCtx) -> Result<(), Failure> {
    let values: Vec<f64> = (0..1024).map(f64::from).collect();
    let live = r::array(&values, &[1024], DType::F32, ctx.device)?;
    // A freed block of 4 MiB is one the CPU's cache keeps; a device with
    // a smaller limit frees a quarter of it.
    let limit = acc::memory_stats(ctx.device)?.limit.unwrap_or(usize::MAX);
    let freed = (1 << 20).min(limit / 16);
    drop(r::array(&vec![0.0; freed], &[freed], DType::F32, ctx.device)?);
    acc::synchronize(ctx.device)?;
    acc::empty_cache(ctx.device)?;
    let stats = acc::memory_stats(ctx.device)?;
    check_eq("reserved after empty_cache", stats.in_use, stats.reserved)?;
    r::check_array("a live array after empty_cache", &[1024], &values, &live)
}

/// Events complete in order; on a device that times them, the time
/// between two is within the host's wall-clock time around them.
fn events(ctx: &CaseCtx) -> Result<(), Failure> {
    let wall = Instant::now();
    let start = Event::record(ctx.device)?;
    let work = r::array(&vec![2.0; 1 << 18], &[1 << 18], DType::F32, ctx.device)?;
    let end = Event::record(ctx.device)?;
    end.synchronize()?;
    let wall = wall.elapsed();
    check_eq("end.query() after end.synchronize()", true, end.query()?)?;
    check_eq("start.query() after end completed", true, start.query()?)?;
    check_eq("the event's device", ctx.device, end.device())?;
    drop(work);
    let caps = ctx.runtime.capabilities(ctx.device)?;
    match (caps.flag(keys::EVENT_TIMING), start.elapsed(&end)) {
        (true, Ok(elapsed)) => check(
            elapsed <= wall,
            "elapsed time between two events",
            format!("at most the {wall:?} the host waited around them"),
            format!("{elapsed:?}"),
        ),
        (false, Err(Error::FeatureUnsupported { .. })) => Ok(()),
        (timing, got) => Err(Failure::new(
            "elapsed time between two events",
            format!("a duration when event_timing is true, FeatureUnsupported when false (it is {timing})"),
            format!("{got:?}"),
        )),
    }
}

fn uniform(ctx: &CaseCtx) -> Result<Vec<f64>, Failure> {
    Ok(ad::random_uniform(&[64], 0.0, 1.0, (DType::F32, ctx.device))?.to_f64_vec()?)
}

/// Seeding one device restarts its generator alone; a saved state replays
/// the same numbers.
fn generators(ctx: &CaseCtx) -> Result<(), Failure> {
    acc::manual_seed_device(ctx.device, 11)?;
    check_eq(
        "rng_state after manual_seed_device",
        RngState { seed: 11, counter: 0 },
        acc::rng_state(ctx.device)?,
    )?;
    let first = uniform(ctx)?;
    check_eq(
        "rng_state after 64 draws",
        RngState { seed: 11, counter: 64 },
        acc::rng_state(ctx.device)?,
    )?;
    for peer in ctx.peers() {
        acc::manual_seed_device(peer, 99)?;
        check_eq(
            format!("{}'s rng_state after seeding {peer}", ctx.device),
            RngState { seed: 11, counter: 64 },
            acc::rng_state(ctx.device)?,
        )?;
    }
    let second = uniform(ctx)?;
    check(
        first != second,
        "a second draw",
        "numbers other than the first draw's",
        "the same numbers",
    )?;
    acc::set_rng_state(ctx.device, RngState { seed: 11, counter: 0 })?;
    check_eq("a draw after set_rng_state to the start", first, uniform(ctx)?)
}

/// Seeding, reading or setting the generator of a device the kind does
/// not have, or of a kind no backend has, is `DeviceUnavailable`, as
/// every other call about such a device is.
fn missing_device_generator(ctx: &CaseCtx) -> Result<(), Failure> {
    let kind = ctx.device.kind();
    let past_the_last = Device::new(kind, acc::device_count(kind.as_str()));
    let unknown_kind = Device::new(DeviceKind::new("nosuchkind"), 0);
    for missing in [past_the_last, unknown_kind] {
        let attempts = [
            ("manual_seed_device", acc::manual_seed_device(missing, 3)),
            ("rng_state", acc::rng_state(missing).map(drop)),
            (
                "set_rng_state",
                acc::set_rng_state(missing, RngState { seed: 3, counter: 0 }),
            ),
        ];
        for (what, result) in attempts {
            if !matches!(result, Err(Error::DeviceUnavailable { .. })) {
                return Err(Failure::new(
                    format!("{what} of {missing}"),
                    "DeviceUnavailable",
                    format!("{result:?}"),
                ));
            }
        }
    }
    Ok(())
}
