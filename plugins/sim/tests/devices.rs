//! The simulator loaded through a manifest, used through the core's
//! backend interface: devices, separate memory, limits, refused dtypes,
//! peer access, and ops whose results match the host kernels.

mod support;

use anydev_core::backend::allocate;
use anydev_core::capability::keys;
use anydev_core::ops::{BinaryOp, Distribution, Op, Operand, ReduceOp, UnaryOp};
use anydev_core::{BackendStatus, Buffer, DType, Device, Error, MemoryKind, Runtime, Scalar, TensorRef};
use support::*;

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

/// A buffer holding `bytes` once this returns (the copy is waited for, so
/// that the test may use the buffer on any stream).
fn upload(rt: &Runtime, device: Device, bytes: &[u8]) -> Buffer {
    let backend = rt.backend(device).unwrap();
    let buffer = allocate(backend, device, bytes.len(), MemoryKind::Device).unwrap();
    let stream = backend.default_stream(device.index()).unwrap();
    backend.copy_from_host(&stream, bytes, &buffer, 0).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    buffer
}

fn download(buffer: &Buffer) -> Vec<u8> {
    let backend = buffer.backend();
    let mut out = vec![0u8; buffer.len()];
    let stream = backend.default_stream(buffer.device().index()).unwrap();
    backend.copy_to_host(&stream, buffer, 0, &mut out).unwrap();
    out
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_manifest_gives_two_sim_devices_by_default() {
    let rt = sim_runtime("default", "{}");
    assert_eq!(rt.backends()[0].status(), &BackendStatus::Available { devices: 2 });
    assert_eq!(rt.devices(), [dev("sim:0"), dev("sim:1")]);
    let caps = rt.capabilities(dev("sim:1")).unwrap();
    assert_eq!(caps.strings(keys::PEER_DEVICES), ["sim:0"]);
    assert!(caps.flag(keys::F64));
    assert_eq!(rt.properties(dev("sim:0")).unwrap().vendor, "anydev");
}

#[test]
fn the_device_count_and_options_come_from_the_manifest() {
    let rt = sim_runtime("four", r#"{"devices": 4, "refuse_dtypes": ["f64", "f16"]}"#);
    assert_eq!(rt.devices().len(), 4);
    let caps = rt.capabilities(dev("sim:3")).unwrap();
    assert!(!caps.flag(keys::F64) && !caps.flag(keys::F16) && caps.flag(keys::BF16));
    assert!(!caps.supports_dtype(DType::F64));
}

#[test]
fn bad_options_fail_the_plugin_with_a_reason() {
    let rt = sim_runtime("bad-options", r#"{"devices": "many"}"#);
    let err = rt.backend(dev("sim:0")).err().unwrap().to_string();
    assert!(err.contains("devices") && err.contains("sim.json"), "{err}");
}

#[test]
fn each_device_has_its_own_memory_and_accounting() {
    let rt = sim_runtime("memory", "{}");
    let a = upload(&rt, dev("sim:0"), &[1, 2, 3, 4]);
    let b = upload(&rt, dev("sim:1"), &[9; 300]);
    let backend = rt.backend(dev("sim:0")).unwrap();
    assert_eq!(backend.memory_stats(0).unwrap().in_use, 4);
    assert_eq!(backend.memory_stats(1).unwrap().in_use, 300);
    assert_eq!(download(&a), [1, 2, 3, 4]);
    // A peer copy between the two memory spaces.
    let stream = backend.default_stream(0).unwrap();
    backend.copy_between(&stream, &a, 0, &b, 100, 4).unwrap();
    // Streams run asynchronously and `download` reads on sim:1's stream:
    // at this level the caller orders the two.
    backend.synchronize_stream(&stream).unwrap();
    assert_eq!(&download(&b)[98..106], [9, 9, 1, 2, 3, 4, 9, 9]);
    drop((a, b));
    assert_eq!(backend.memory_stats(0).unwrap().in_use, 0);
    assert_eq!(backend.memory_stats(1).unwrap().allocations, 0);
}

#[test]
fn out_of_memory_is_an_error_that_spares_the_other_device() {
    let rt = sim_runtime("oom", r#"{"memory_limit": 4096}"#);
    let backend = rt.backend(dev("sim:0")).unwrap();
    let _full = allocate(backend, dev("sim:0"), 4096, MemoryKind::Device).unwrap();
    match allocate(backend, dev("sim:0"), 1, MemoryKind::Device) {
        Err(Error::OutOfMemory {
            device,
            requested,
            in_use,
            limit,
        }) => assert_eq!((device, requested, in_use, limit), (dev("sim:0"), 1, 4096, Some(4096))),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let other = upload(&rt, dev("sim:1"), &[7; 4096]);
    assert_eq!(download(&other), vec![7; 4096], "sim:1 is unaffected");
    assert_eq!(backend.memory_stats(0).unwrap().limit, Some(4096));
}

#[test]
fn an_allocation_the_host_refuses_leaves_the_peak() {
    let rt = sim_runtime("refused", "{}");
    let backend = rt.backend(dev("sim:0")).unwrap();
    let err = allocate(backend, dev("sim:0"), 1 << 50, MemoryKind::Device).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    let stats = backend.memory_stats(0).unwrap();
    assert_eq!((stats.in_use, stats.peak, stats.allocations), (0, 0, 0));
}

/// With a limit, the cache never takes `reserved` past it (`free` is what
/// is left), and a freed block is reused even when it fills the limit.
#[test]
fn the_cache_stays_within_the_limit_and_is_reused_at_it() {
    let rt = sim_runtime("cache-limit", r#"{"memory_limit": "1K"}"#);
    let backend = rt.backend(dev("sim:0")).unwrap();
    let fits = |what: &str| {
        let stats = backend.memory_stats(0).unwrap();
        let (reserved, free) = (stats.reserved, stats.free.unwrap());
        assert!(reserved <= 1024 && reserved + free == 1024, "{what}: {stats:?}");
    };
    let a = upload(&rt, dev("sim:0"), &[1; 600]);
    let b = upload(&rt, dev("sim:0"), &[2; 400]);
    drop(a);
    fits("after freeing 600 of 1000 bytes");
    let c = upload(&rt, dev("sim:0"), &[3; 24]);
    drop((b, c));
    fits("after freeing the rest");
    backend.empty_cache(0).unwrap();
    drop(upload(&rt, dev("sim:0"), &[5; 1000]));
    fits("with a 1 KiB block cached");
    let reused = allocate(backend, dev("sim:0"), 1000, MemoryKind::Device).unwrap();
    assert_eq!(download(&reused), [5; 1000], "the cached block, not a fresh zeroed one");
}

#[test]
fn refused_dtypes_are_unsupported() {
    let rt = sim_runtime("refuse", r#"{"refuse_dtypes": ["f64"]}"#);
    let backend = rt.backend(dev("sim:0")).unwrap();
    assert!(!backend.supports(0, anydev_core::ops::OpCode::Copy, DType::F64));
    let buffer = upload(&rt, dev("sim:0"), &[0; 16]);
    let shape = [2usize];
    let t = TensorRef {
        buffer: &buffer,
        offset: 0,
        dtype: DType::F64,
        shape: &shape,
        strides: &[1],
    };
    let op = Op::Fill {
        out: t,
        value: Scalar::F64(1.0),
    };
    let err = backend.execute(&backend.default_stream(0).unwrap(), &op).unwrap_err();
    assert!(matches!(err, Error::Unsupported { dtype: DType::F64, .. }), "{err:?}");
}

#[test]
fn without_peer_access_copies_are_staged_and_kernels_stay_on_their_device() {
    let rt = sim_runtime("no-peer", r#"{"peer_access": false}"#);
    let backend = rt.backend(dev("sim:0")).unwrap();
    assert!(rt
        .capabilities(dev("sim:0"))
        .unwrap()
        .strings(keys::PEER_DEVICES)
        .is_empty());
    let a = upload(&rt, dev("sim:0"), &f32_bytes(&[1.0, 2.0]));
    let b = upload(&rt, dev("sim:1"), &f32_bytes(&[0.0, 0.0]));
    let stream = backend.default_stream(0).unwrap();
    backend.copy_between(&stream, &a, 0, &b, 0, 8).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    assert_eq!(f32s(&download(&b)), [1.0, 2.0]);
    let shape = [2usize];
    let view = |buffer| TensorRef {
        buffer,
        offset: 0,
        dtype: DType::F32,
        shape: &shape,
        strides: &[1],
    };
    let op = Op::Copy {
        x: view(&b),
        out: view(&a),
    };
    let err = backend.execute(&stream, &op).unwrap_err();
    assert!(err.to_string().contains("peer access is off"), "{err}");
}

/// Runs `make(views)` on sim:0 and on host memory through the kernels
/// directly, and compares the output bytes.
fn same_as_host_kernels(rt: &Runtime, inputs: &[(&[u8], DType, &[usize])], out: (DType, &[usize]), make: OpMaker) {
    let strides: Vec<Vec<isize>> = inputs
        .iter()
        .map(|(_, _, s)| anydev_kernels::contiguous_strides(s))
        .collect();
    let out_strides = anydev_kernels::contiguous_strides(out.1);
    let out_len = out.1.iter().product::<usize>() * out.0.size();

    // On the simulator.
    let device = dev("sim:0");
    let backend = rt.backend(device).unwrap();
    let buffers: Vec<Buffer> = inputs.iter().map(|(b, _, _)| upload(rt, device, b)).collect();
    let out_buffer = upload(rt, device, &vec![0; out_len]);
    let refs: Vec<TensorRef> = inputs
        .iter()
        .zip(&buffers)
        .zip(&strides)
        .map(|(((_, dtype, shape), buffer), strides)| TensorRef {
            buffer,
            offset: 0,
            dtype: *dtype,
            shape,
            strides,
        })
        .collect();
    let out_ref = TensorRef {
        buffer: &out_buffer,
        offset: 0,
        dtype: out.0,
        shape: out.1,
        strides: &out_strides,
    };
    backend
        .execute(&backend.default_stream(0).unwrap(), &make(&refs, out_ref))
        .unwrap();
    let on_sim = download(&out_buffer);

    // On the host, through the kernels.
    let mut host_inputs: Vec<Vec<u8>> = inputs.iter().map(|(b, _, _)| b.to_vec()).collect();
    let mut host_out = vec![0u8; out_len];
    let host_refs: Vec<anydev_kernels::HostTensor> = inputs
        .iter()
        .zip(&mut host_inputs)
        .zip(&strides)
        .map(|(((_, dtype, shape), data), strides)| {
            anydev_kernels::HostTensor::new(data.as_mut_ptr(), *dtype, shape, strides)
        })
        .collect();
    let host_out_ref = anydev_kernels::HostTensor::new(host_out.as_mut_ptr(), out.0, out.1, &out_strides);
    let host_op = make_host(make, &refs, out_ref, &host_refs, host_out_ref);
    // SAFETY: every operand points into a live vector of exactly its size.
    unsafe { anydev_kernels::execute(&host_op) }.unwrap();
    assert_eq!(on_sim, host_out);
}

type OpMaker = for<'a> fn(&[TensorRef<'a>], TensorRef<'a>) -> Op<'static, TensorRef<'a>>;

/// The same op over host tensors: operands are swapped by position.
fn make_host<'a>(
    make: OpMaker,
    refs: &[TensorRef<'_>],
    out: TensorRef<'_>,
    host: &[anydev_kernels::HostTensor<'a>],
    host_out: anydev_kernels::HostTensor<'a>,
) -> Op<'static, anydev_kernels::HostTensor<'a>> {
    let op = make(refs, out);
    op.try_map(|t| {
        if std::ptr::eq(t.buffer, out.buffer) {
            return Ok::<_, ()>(host_out);
        }
        let i = refs.iter().position(|r| std::ptr::eq(r.buffer, t.buffer)).unwrap();
        Ok(host[i])
    })
    .unwrap()
}

#[test]
fn ops_on_the_sim_match_the_host_kernels() {
    let rt = sim_runtime("ops", "{}");
    let x = f32_bytes(&[3.0, -1.5, 0.25, 8.0, 2.0, -7.0]);
    let y = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let (f, s23, s32, s22) = (DType::F32, &[2usize, 3][..], &[3usize, 2][..], &[2usize, 2][..]);
    same_as_host_kernels(&rt, &[(&x, f, s23)], (f, s23), |r, out| Op::Unary {
        op: UnaryOp::Exp,
        x: r[0],
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23), (&y, f, s23)], (f, s23), |r, out| Op::Binary {
        op: BinaryOp::Multiply,
        lhs: Operand::Tensor(r[0]),
        rhs: Operand::Tensor(r[1]),
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23)], (DType::Bool, s23), |r, out| Op::Binary {
        op: BinaryOp::Greater,
        lhs: Operand::Tensor(r[0]),
        rhs: Operand::Scalar(Scalar::F32(1.0)),
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23)], (f, &[2, 1]), |r, out| Op::Reduce {
        op: ReduceOp::Sum,
        x: r[0],
        axes: &[1],
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23), (&y, f, s32)], (f, s22), |r, out| Op::Matmul {
        a: r[0],
        b: r[1],
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23)], (f, s23), |r, out| Op::Sort {
        x: r[0],
        axis: 1,
        descending: true,
        out,
    });
    same_as_host_kernels(&rt, &[(&x, f, s23)], (DType::I32, s23), |r, out| Op::Cast {
        x: r[0],
        out,
    });
    same_as_host_kernels(&rt, &[], (f, &[64]), |_, out| Op::Random {
        out,
        dist: Distribution::Normal { mean: 0.0, std: 1.0 },
        seed: 42,
        counter: 7,
    });
    same_as_host_kernels(&rt, &[], (DType::I64, &[5]), |_, out| Op::Arange {
        out,
        start: 3.0,
        step: -2.0,
    });
}
