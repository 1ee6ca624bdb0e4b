//! What a backend promises the array layer, checked through the backend
//! interface itself: declared dtypes and ops agree with what executes,
//! undeclared ops are clean `Unsupported` errors, errors carry messages,
//! memory accounting returns to where it was, devices keep separate memory.
//! For plugins this is the ABI behaviour a vendor certifies.

use crate::case::{check, check_eq, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::Array;
use anydev_core::capability::keys;
use anydev_core::memory::MemoryKind;
use anydev_core::ops::{BinaryOp, Op, OpCode, Operand, UnaryOp};
use anydev_core::{DType, Error, TensorRef};

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("abi::declared_dtypes_hold_data", declared_dtypes).asks_support_itself(),
        Case::new("abi::declared_ops_run_and_others_are_unsupported", declared_ops)
            .dtypes(&[DType::Bool, DType::I32, DType::U8, DType::F16, DType::F32, DType::F64])
            .asks_support_itself(),
        Case::new("abi::errors_carry_messages", errors_carry_messages),
        Case::new("abi::memory_accounting_returns_to_zero", memory_accounting).needs(Need::DType(DType::F32)),
        Case::new("abi::devices_have_separate_memory", separate_memory)
            .needs(Need::SameKindDevices(2))
            .needs(Need::DType(DType::F32))
            .all_devices(),
        Case::new("abi::streams_and_events", streams_and_events),
        Case::new("abi::every_standard_capability_is_reported", standard_capabilities),
    ]
}

/// Every standard capability has a value, the plugin's or the default the
/// header states, so code can ask any device any of them.
fn standard_capabilities(ctx: &CaseCtx) -> Result<(), Failure> {
    let caps = ctx.runtime.capabilities(ctx.device)?;
    for key in keys::ALL {
        check(caps.get(key).is_some(), format!("capability {key}"), "a value", "none")?;
    }
    Ok(())
}

/// Declared ⇔ storable: a declared dtype supports copy and fill and its
/// values survive a round trip; an undeclared one supports neither.
fn declared_dtypes(ctx: &CaseCtx) -> Result<(), Failure> {
    let caps = ctx.runtime.capabilities(ctx.device)?;
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    for dtype in DType::ALL {
        let declared = caps.supports_dtype(dtype);
        for op in [OpCode::Copy, OpCode::Fill] {
            check_eq(
                format!("op_supported({}, {dtype}) agrees with the dtypes capability", op.name()),
                declared,
                backend.supports(index, op, dtype),
            )?;
        }
        if declared {
            let values = r::sample(dtype, 37, 4);
            check_array(
                &format!("{dtype} round trip"),
                &[37],
                &values,
                &r::array(&values, &[37], dtype, ctx.device)?,
            )?;
            let one = r::round_to(dtype, 1.0);
            check_array(
                &format!("{dtype} fill"),
                &[5],
                &[one; 5],
                &anydev_array::ones(&[5], (dtype, ctx.device))?,
            )?;
        }
    }
    Ok(())
}

/// Every unary and binary op for the instance's dtype, through
/// `Backend::execute`: declared ones run, the others fail as `Unsupported`
/// naming op, dtype and device.
fn declared_ops(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let caps = ctx.runtime.capabilities(ctx.device)?;
    if !caps.supports_dtype(dtype) {
        return Ok(()); // filtered by the runner; kept for direct calls
    }
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    let stream = backend.default_stream(index)?;
    let shape = [4usize];
    let strides = [1isize];
    let x = r::array(&[1.0, 2.0, 0.0, 1.0], &shape, dtype, ctx.device)?;
    let same = Array::clone(&x);
    let bool_out = caps.supports_dtype(DType::Bool);
    let out_same = anydev_array::zeros(&shape, (dtype, ctx.device))?;
    let out_bool = if bool_out {
        Some(anydev_array::zeros(&shape, (DType::Bool, ctx.device))?)
    } else {
        None
    };
    fn view<'a>(a: &'a Array, dtype: DType, shape: &'a [usize], strides: &'a [isize]) -> TensorRef<'a> {
        TensorRef {
            buffer: a.buffer(),
            offset: 0,
            dtype,
            shape,
            strides,
        }
    }
    let tensor = |a, dtype| view(a, dtype, &shape, &strides);
    let mut ops: Vec<(OpCode, bool)> = Vec::new();
    ops.extend(UnaryOp::ALL.iter().map(|&op| (OpCode::Unary(op), op.outputs_bool())));
    ops.extend(BinaryOp::ALL.iter().map(|&op| (OpCode::Binary(op), op.outputs_bool())));
    for (code, predicate) in ops {
        let out = match (predicate, &out_bool) {
            (true, Some(o)) => tensor(o, DType::Bool),
            (true, None) => continue, // no bool output to write to
            (false, _) => tensor(&out_same, dtype),
        };
        let op = match code {
            OpCode::Unary(op) => Op::Unary {
                op,
                x: tensor(&x, dtype),
                out,
            },
            OpCode::Binary(op) => Op::Binary {
                op,
                lhs: Operand::Tensor(tensor(&x, dtype)),
                rhs: Operand::Tensor(tensor(&same, dtype)),
                out,
            },
            _ => unreachable!("only unary and binary ops are listed"),
        };
        let declared = backend.supports(index, code, dtype);
        let result = backend
            .execute(&stream, &op)
            .and_then(|()| backend.synchronize_stream(&stream));
        match (declared, result) {
            (true, Ok(())) => {}
            (true, Err(e)) => {
                return Err(Failure::new(
                    format!("{} on {dtype}, which op_supported declares", code.name()),
                    "success",
                    format!("error: {e}"),
                ))
            }
            (false, Err(Error::Unsupported { op, dtype: d, device })) => {
                check_eq(
                    format!("Unsupported error of undeclared {}", code.name()),
                    (code.name().to_owned(), dtype, ctx.device),
                    (op, d, device),
                )?;
            }
            (false, other) => {
                return Err(Failure::new(
                    format!("{} on {dtype}, which op_supported does not declare", code.name()),
                    "an Unsupported error",
                    format!("{other:?}"),
                ))
            }
        }
    }
    Ok(())
}

/// A failing call returns an error with a message, and the device keeps
/// working: an allocation of a memory kind the device does not list.
fn errors_carry_messages(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    let listed = backend.memory_kinds(index);
    check(!listed.is_empty(), "memory_kinds", "at least one kind", "none")?;
    let unlisted = [
        MemoryKind::Device,
        MemoryKind::HostPinned,
        MemoryKind::Managed,
        MemoryKind::System,
    ]
    .into_iter()
    .find(|k| !listed.contains(k));
    if let Some(kind) = unlisted {
        match backend.allocate(index, 256, kind) {
            Ok(_) => {
                return Err(Failure::new(
                    format!("allocating {kind} memory, which memory_kinds does not list ({listed:?})"),
                    "an error",
                    "success",
                ))
            }
            Err(e) => check(
                e.to_string().trim().len() > 10,
                format!("the error of allocating {kind} memory has a message"),
                "a message",
                format!("{e:?}"),
            )?,
        }
    }
    let stats = backend.memory_stats(index)?;
    check(
        stats.in_use <= stats.peak,
        "memory_stats after a failed allocation",
        "in_use <= peak",
        format!("{stats:?}"),
    )
}

/// In-use bytes grow while arrays live and return when they drop.
fn memory_accounting(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    let before = backend.memory_stats(index)?.in_use;
    let arrays: Vec<Array> = (0..4)
        .map(|i| r::array(&vec![i as f64; 1024], &[1024], DType::F32, ctx.device))
        .collect::<Result<_, _>>()?;
    let during = backend.memory_stats(index)?.in_use;
    check(
        during >= before + 4 * 4096,
        "memory_stats while four 4 KiB arrays live",
        format!("in_use >= {}", before + 4 * 4096),
        during,
    )?;
    drop(arrays);
    backend.synchronize(index)?;
    check_eq(
        "in_use after the arrays drop",
        before,
        backend.memory_stats(index)?.in_use,
    )
}

/// Allocating on one device does not show up in a sibling's accounting,
/// and values written to one are not seen by the other.
fn separate_memory(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    for peer in ctx.peers() {
        let peer_before = backend.memory_stats(peer.index())?.in_use;
        let mine = r::array(&[1.0; 1024], &[1024], DType::F32, ctx.device)?;
        check_eq(
            format!("{peer}'s in_use after allocating 4 KiB on {}", ctx.device),
            peer_before,
            backend.memory_stats(peer.index())?.in_use,
        )?;
        let theirs = r::array(&[2.0; 1024], &[1024], DType::F32, peer)?;
        check_array(
            &format!("values on {} after writing {peer}", ctx.device),
            &[1024],
            &[1.0; 1024],
            &mine,
        )?;
        check_array(&format!("values on {peer}"), &[1024], &[2.0; 1024], &theirs)?;
    }
    Ok(())
}

fn streams_and_events(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    let stream = backend.create_stream(index)?;
    check_eq("device of a new stream", ctx.device, stream.device())?;
    let event = backend.record_event(&stream)?;
    backend.wait_event(&backend.default_stream(index)?, &event)?;
    backend.synchronize_event(&event)?;
    check_eq("query after synchronize_event", true, backend.query_event(&event)?)?;
    backend.synchronize_stream(&stream)?;
    backend.synchronize(index)?;
    Ok(())
}
