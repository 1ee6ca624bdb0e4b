//! The simulator through its `Plugin` implementation, with no host runtime:
//! asynchronous streams on worker threads, events across streams and
//! devices, errors in enqueued work, memory that outlives its handle while
//! jobs use it, and the discrete and unified memory modes.
//!
//! Ordering tests use `op_delay_us`, which makes every op, fill and
//! device-side copy sleep before it runs (reads back to the host do not),
//! so that a read not ordered after a write sees the old bytes; the test
//! `without_a_wait_a_reader_on_another_stream_sees_stale_data` shows that
//! this really happens, which is what makes the ordering tests able to fail.

use anydev_ops::{BinaryOp, DType, Op, Operand, Scalar};
use anydev_plugin::{AttrValue, ErrorCode, ForeignMemory, MemoryKind, Plugin, PluginError, PluginTensor};
use anydev_sim::{Sim, SimBuffer, SimConfig, SimStream};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

fn sim(options: &str) -> Sim {
    Sim::new(SimConfig::from_sources(options, |_| None).unwrap())
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

fn upload(sim: &Sim, stream: &SimStream, values: &[f32]) -> SimBuffer {
    let buffer = sim
        .allocate(stream.device(), values.len() * 4, MemoryKind::Device)
        .unwrap();
    sim.copy_from_host(stream, &f32_bytes(values), &buffer, 0).unwrap();
    buffer
}

fn download(sim: &Sim, stream: &SimStream, buffer: &SimBuffer) -> Result<Vec<f32>, PluginError> {
    let mut bytes = vec![0u8; buffer.len()];
    sim.copy_to_host(stream, buffer, 0, &mut bytes)?;
    Ok(f32s(&bytes))
}

fn fill(sim: &Sim, stream: &SimStream, buffer: &SimBuffer, value: f32) {
    sim.fill(stream, buffer, 0, buffer.len(), &value.to_le_bytes()).unwrap();
}

/// Enqueues `out = x <op> value` over whole f32 buffers of `n` elements.
fn scalar_op(
    sim: &Sim,
    stream: &SimStream,
    op: BinaryOp,
    x: &SimBuffer,
    value: f32,
    out: &SimBuffer,
) -> Result<(), PluginError> {
    let shape = [x.len() / 4];
    let t = |buffer| PluginTensor {
        buffer,
        byte_offset: 0,
        dtype: DType::F32,
        shape: &shape,
        strides: &[1],
    };
    let op = Op::Binary {
        op,
        lhs: Operand::Tensor(t(x)),
        rhs: Operand::Scalar(Scalar::F32(value)),
        out: t(out),
    };
    sim.execute(stream, &op)
}

/// Enqueues a matmul whose shapes do not agree: it passes every check made
/// at enqueue time (the operands lie inside their buffers) and fails in the
/// kernel, on the stream's worker.
fn bad_matmul(sim: &Sim, stream: &SimStream, buffer: &SimBuffer) {
    let t = |shape: &'static [usize], strides: &'static [isize]| PluginTensor {
        buffer,
        byte_offset: 0,
        dtype: DType::F32,
        shape,
        strides,
    };
    let op = Op::Matmul {
        a: t(&[2, 3], &[3, 1]),
        b: t(&[4, 2], &[2, 1]),
        out: t(&[2, 2], &[2, 1]),
    };
    sim.execute(stream, &op)
        .expect("the mismatch is found only when the job runs");
}

fn cap(sim: &Sim, device: usize, key: &str) -> AttrValue {
    let caps = sim.capabilities(device).unwrap();
    caps.into_iter().find(|(k, _)| k == key).map(|(_, v)| v).unwrap()
}

#[test]
fn work_on_a_stream_runs_after_the_call_returns_and_in_order() {
    let sim = sim(r#"{"op_delay_us": 20000}"#);
    let stream = sim.create_stream(0).unwrap();
    let x = sim.allocate(0, 256 * 4, MemoryKind::Device).unwrap();
    let mut src = f32_bytes(&[1.0; 256]);
    sim.copy_from_host(&stream, &src, &x, 0).unwrap();
    // The source may be reused as soon as the call returns.
    src.fill(0xff);
    let started = Instant::now();
    for _ in 0..5 {
        scalar_op(&sim, &stream, BinaryOp::Multiply, &x, 2.0, &x).unwrap();
    }
    scalar_op(&sim, &stream, BinaryOp::Add, &x, 1.0, &x).unwrap();
    let done = sim.record_event(&stream).unwrap();
    assert!(
        !sim.query_event(&done).unwrap(),
        "seven delayed jobs cannot have run already"
    );
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "enqueueing does not wait"
    );
    // In order, (1 * 2^5) + 1; any other order gives another number.
    assert_eq!(download(&sim, &stream, &x).unwrap(), [33.0; 256]);
    assert!(sim.query_event(&done).unwrap(), "copy_to_host waited for earlier work");
    assert!(started.elapsed() >= Duration::from_millis(120));
}

#[test]
fn an_event_waited_on_another_stream_orders_the_reader_after_the_writer() {
    let sim = sim(r#"{"op_delay_us": 50000}"#);
    let (writer, reader) = (sim.create_stream(0).unwrap(), sim.create_stream(0).unwrap());
    let other_device = sim.create_stream(1).unwrap();
    let x = sim.allocate(0, 64 * 4, MemoryKind::Device).unwrap();

    fill(&sim, &writer, &x, 3.0);
    let written = sim.record_event(&writer).unwrap();
    sim.wait_event(&reader, &written).unwrap();
    assert_eq!(download(&sim, &reader, &x).unwrap(), [3.0; 64]);

    // An event of sim:0 orders a peer copy enqueued on sim:1.
    fill(&sim, &writer, &x, 4.0);
    let written = sim.record_event(&writer).unwrap();
    let y = sim.allocate(1, 64 * 4, MemoryKind::Device).unwrap();
    sim.wait_event(&other_device, &written).unwrap();
    sim.copy_between(&other_device, &x, 0, &y, 0, x.len()).unwrap();
    assert_eq!(download(&sim, &other_device, &y).unwrap(), [4.0; 64]);
}

#[test]
fn without_a_wait_a_reader_on_another_stream_sees_stale_data() {
    let sim = sim(r#"{"op_delay_us": 200000}"#);
    let (writer, reader) = (sim.create_stream(0).unwrap(), sim.create_stream(0).unwrap());
    let x = sim.allocate(0, 64 * 4, MemoryKind::Device).unwrap();
    fill(&sim, &writer, &x, 3.0);
    assert_eq!(
        download(&sim, &reader, &x).unwrap(),
        [0.0; 64],
        "the reader did not wait, so it ran before the delayed write"
    );
    sim.synchronize_stream(&writer).unwrap();
    assert_eq!(download(&sim, &reader, &x).unwrap(), [3.0; 64]);
}

#[test]
fn synchronizing_a_device_waits_for_all_its_streams_and_only_its_own() {
    let sim = sim(r#"{"op_delay_us": 50000}"#);
    let streams: Vec<SimStream> = (0..3).map(|_| sim.create_stream(0).unwrap()).collect();
    let slow = sim.create_stream(1).unwrap();
    let events: Vec<_> = streams
        .iter()
        .map(|s| {
            let x = sim.allocate(0, 1024, MemoryKind::Device).unwrap();
            fill(&sim, s, &x, 1.0);
            sim.record_event(s).unwrap()
        })
        .collect();
    let y = sim.allocate(1, 1024, MemoryKind::Device).unwrap();
    for _ in 0..6 {
        fill(&sim, &slow, &y, 2.0);
    }
    let slow_done = sim.record_event(&slow).unwrap();
    assert!(events.iter().all(|e| !sim.query_event(e).unwrap()));
    sim.synchronize(0).unwrap();
    assert!(
        events.iter().all(|e| sim.query_event(e).unwrap()),
        "every stream of sim:0"
    );
    assert!(!sim.query_event(&slow_done).unwrap(), "sim:1 is not waited for");
    sim.synchronize(1).unwrap();
    assert!(sim.query_event(&slow_done).unwrap());
}

#[test]
fn dropping_a_stream_finishes_its_queued_work_first() {
    let sim = sim(r#"{"op_delay_us": 20000}"#);
    let stream = sim.create_stream(0).unwrap();
    let x = upload(&sim, &stream, &[1.0; 128]);
    for _ in 0..5 {
        scalar_op(&sim, &stream, BinaryOp::Multiply, &x, 2.0, &x).unwrap();
    }
    let done = sim.record_event(&stream).unwrap();
    drop(stream);
    assert!(sim.query_event(&done).unwrap(), "the drop waited for the queue");
    let other = sim.create_stream(0).unwrap();
    assert_eq!(download(&sim, &other, &x).unwrap(), [32.0; 128]);
}

#[test]
fn a_plugin_dropped_with_a_stream_left_alive_finishes_and_stops_its_worker() {
    let sim = sim(r#"{"op_delay_us": 20000}"#);
    let stream = sim.create_stream(1).unwrap();
    let x = sim.allocate(1, 64, MemoryKind::Device).unwrap();
    for value in [1.0f32, 2.0, 5.0] {
        fill(&sim, &stream, &x, value);
    }
    // A stream the host never destroys must not keep its worker (or the
    // plugin's shutdown) hanging.
    std::mem::forget(stream);
    drop(sim);
    let mut bytes = [0u8; 64];
    x.read(0, &mut bytes).unwrap();
    assert_eq!(f32s(&bytes), [5.0; 16], "the queued work ran before shutdown returned");
}

#[test]
fn a_buffer_freed_while_a_job_uses_it_lives_until_the_job_is_done() {
    let sim = sim(r#"{"op_delay_us": 50000}"#);
    let stream = sim.create_stream(0).unwrap();
    let x = upload(&sim, &stream, &[3.0; 1024]);
    let y = sim.allocate(0, 4096, MemoryKind::Device).unwrap();
    scalar_op(&sim, &stream, BinaryOp::Multiply, &x, 2.0, &y).unwrap();
    // The host lets go of `x` while the upload and the op that read it are
    // still queued: the jobs' references keep the block (and its bytes in
    // the accounting) until they have run.
    drop(x);
    let stats = sim.memory_stats(0).unwrap();
    assert_eq!((stats.in_use, stats.allocations), (8192, 2));
    // Fresh blocks of the same size cannot be the one the op still reads.
    let scribbles: Vec<SimBuffer> = (0..4)
        .map(|_| {
            let s = sim.allocate(0, 4096, MemoryKind::Device).unwrap();
            s.fill(0, 4096, &(-1.0f32).to_le_bytes()).unwrap();
            s
        })
        .collect();
    assert_eq!(download(&sim, &stream, &y).unwrap(), [6.0; 1024]);
    drop(scribbles);
    let stats = sim.memory_stats(0).unwrap();
    assert_eq!(
        (stats.in_use, stats.allocations),
        (4096, 1),
        "the last job released `x`"
    );
}

#[test]
fn callers_on_several_threads_may_share_one_stream() {
    let sim = sim("{}");
    let stream = sim.create_stream(0).unwrap();
    let x = sim.allocate(0, 16 * 4, MemoryKind::Device).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..50 {
                    scalar_op(&sim, &stream, BinaryOp::Add, &x, 1.0, &x).unwrap();
                }
            });
        }
    });
    assert_eq!(download(&sim, &stream, &x).unwrap(), [200.0; 16]);
}

#[test]
fn bad_calls_fail_when_they_are_enqueued() {
    let sim = sim(r#"{"refuse_dtypes": ["f64"], "peer_access": false}"#);
    let stream = sim.create_stream(0).unwrap();
    let x = sim.allocate(0, 64, MemoryKind::Device).unwrap();
    let small = sim.allocate(0, 32, MemoryKind::Device).unwrap();
    let remote = sim.allocate(1, 64, MemoryKind::Device).unwrap();

    let err = scalar_op(&sim, &stream, BinaryOp::Add, &x, 1.0, &small).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(err.message.contains("outside a 32-byte buffer"), "{err}");
    let err = scalar_op(&sim, &stream, BinaryOp::Add, &x, 1.0, &remote).unwrap_err();
    assert!(err.message.contains("peer access is off"), "{err}");
    let err = scalar_op(&sim, &stream, BinaryOp::BitwiseAnd, &x, 1.0, &x).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unimplemented, "{err}");
    let shape = [8];
    let f64s = PluginTensor {
        buffer: &x,
        byte_offset: 0,
        dtype: DType::F64,
        shape: &shape,
        strides: &[1],
    };
    let op = Op::Fill {
        out: f64s,
        value: Scalar::F64(1.0),
    };
    let err = sim.execute(&stream, &op).unwrap_err();
    assert!(err.code == ErrorCode::Unimplemented && err.message.contains("refuses dtype f64"));

    assert!(sim.fill(&stream, &x, 0, 6, &[1, 2, 3, 4]).is_err());
    assert!(sim.fill(&stream, &x, 32, 64, &[0]).is_err());
    assert!(sim.copy_from_host(&stream, &[0; 8], &x, 60).is_err());
    assert!(sim.copy_between(&stream, &x, 0, &small, 0, 64).is_err());
    assert!(sim.copy_to_host(&stream, &x, 1, &mut [0; 64]).is_err());
    // Nothing was enqueued, so nothing failed later.
    sim.synchronize_stream(&stream).unwrap();
}

#[test]
fn a_failure_inside_a_job_is_kept_until_a_waiting_call_reports_it() {
    let sim = sim("{}");
    let stream = sim.create_stream(0).unwrap();
    let x = sim.allocate(0, 64, MemoryKind::Device).unwrap();

    // Reported by synchronize_stream, once; later work still runs.
    bad_matmul(&sim, &stream, &x);
    fill(&sim, &stream, &x, 7.0);
    let err = sim.synchronize_stream(&stream).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(
        err.message.contains("sim:0") && err.message.contains("enqueued execute failed"),
        "{err}"
    );
    sim.synchronize_stream(&stream).unwrap();
    assert_eq!(download(&sim, &stream, &x).unwrap(), [7.0; 16]);

    // Reported by copy_to_host, which then reads nothing; the next one works.
    bad_matmul(&sim, &stream, &x);
    let err = download(&sim, &stream, &x).unwrap_err();
    assert!(err.message.contains("enqueued execute failed"), "{err}");
    assert_eq!(download(&sim, &stream, &x).unwrap(), [7.0; 16]);

    // An event reports failures up to its own point only.
    let before = sim.record_event(&stream).unwrap();
    bad_matmul(&sim, &stream, &x);
    let after = sim.record_event(&stream).unwrap();
    sim.synchronize_event(&before).unwrap();
    assert!(sim.synchronize_event(&after).is_err());
    sim.synchronize_event(&after).unwrap();

    // Reported by synchronize(device), whichever of its streams failed.
    let other = sim.create_stream(0).unwrap();
    bad_matmul(&sim, &other, &x);
    assert!(sim
        .synchronize(0)
        .unwrap_err()
        .message
        .contains("enqueued execute failed"));
    sim.synchronize(0).unwrap();
}

#[test]
fn discrete_mode_keeps_memory_on_the_device() {
    let sim = sim("{}");
    for key in [
        "pageable_memory_access",
        "managed_memory",
        "concurrent_managed_access",
        "host_accessible_memory",
        "sim.unified",
    ] {
        assert_eq!(cap(&sim, 0, key), AttrValue::Bool(false), "{key}");
    }
    assert_eq!(cap(&sim, 1, "async_execution"), AttrValue::Bool(true));
    assert_eq!(sim.memory_kinds(0), [MemoryKind::Device]);
    let x = sim.allocate(0, 256, MemoryKind::Device).unwrap();
    assert_eq!(sim.host_pointer(&x), None);
    let err = sim.allocate(0, 256, MemoryKind::Managed).err().unwrap();
    assert!(err.message.contains("discrete mode"), "{err}");
    let mut host = vec![Aligned([0; 256])];
    let err = sim.import(0, foreign(&mut host), MemoryKind::System).err().unwrap();
    assert_eq!(err.code, ErrorCode::Unimplemented);
    assert!(err.message.contains("discrete mode"), "{err}");
}

/// Host memory aligned as the ABI requires of imported memory.
#[repr(align(256))]
struct Aligned([u8; 256]);

fn foreign(host: &mut [Aligned]) -> ForeignMemory {
    let ptr = NonNull::new(host.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: the tests keep `host` alive, and do not touch it through the
    // slice, while buffers made from the memory are used.
    unsafe { ForeignMemory::new(ptr, host.len() * 256) }
}

#[test]
fn unified_mode_reaches_host_memory_and_managed_memory_from_every_device() {
    let sim = sim(r#"{"unified": true, "peer_access": false}"#);
    for key in [
        "pageable_memory_access",
        "managed_memory",
        "concurrent_managed_access",
        "sim.unified",
    ] {
        assert_eq!(cap(&sim, 0, key), AttrValue::Bool(true), "{key}");
    }
    assert_eq!(cap(&sim, 0, "host_accessible_memory"), AttrValue::Bool(false));
    assert_eq!(
        sim.memory_kinds(1),
        [MemoryKind::Device, MemoryKind::Managed, MemoryKind::HostPinned]
    );
    assert!(sim.allocate(0, 256, MemoryKind::System).is_err());

    // Managed and pinned memory is accounted on its device and has a host
    // address; device memory has none.
    let device = sim.allocate(0, 1024, MemoryKind::Device).unwrap();
    let managed = sim.allocate(0, 1024, MemoryKind::Managed).unwrap();
    let pinned = sim.allocate(0, 512, MemoryKind::HostPinned).unwrap();
    assert_eq!(sim.memory_stats(0).unwrap().in_use, 2560);
    assert_eq!(sim.host_pointer(&device), None);
    assert_eq!(sim.host_pointer(&managed), Some(managed.address()));
    assert_eq!(sim.host_pointer(&pinned).unwrap().as_ptr() as usize % 256, 0);

    // Imported host memory: no accounting, the host's own address, and
    // usable by ops on any device; sim:0's managed memory is reachable from
    // sim:1 even without peer access, its device memory is not.
    let mut host: Vec<Aligned> = (0..4).map(|_| Aligned([0; 256])).collect();
    let imported = sim.import(0, foreign(&mut host), MemoryKind::System).unwrap();
    assert_eq!(sim.memory_stats(0).unwrap().in_use, 2560);
    assert_eq!(
        sim.host_pointer(&imported),
        Some(NonNull::new(host.as_mut_ptr().cast()).unwrap())
    );
    let s1 = sim.create_stream(1).unwrap();
    fill(&sim, &s1, &managed, 1.5);
    scalar_op(&sim, &s1, BinaryOp::Multiply, &managed, 2.0, &imported).unwrap();
    assert!(scalar_op(&sim, &s1, BinaryOp::Multiply, &device, 2.0, &imported).is_err());
    sim.synchronize_stream(&s1).unwrap();
    let written: Vec<u8> = host.iter().flat_map(|a| a.0).collect();
    assert_eq!(
        f32s(&written),
        [3.0; 256],
        "the device wrote the host's memory in place"
    );
    let back = sim.allocate(0, 1024, MemoryKind::Device).unwrap();
    sim.copy_between(&s1, &imported, 0, &back, 0, 1024).unwrap();
    assert_eq!(download(&sim, &s1, &back).unwrap(), [3.0; 256]);
    drop(imported);
    assert_eq!(host[0].0[..4], 3.0f32.to_le_bytes(), "dropping an import frees nothing");

    // Managed and pinned memory of another allocator imports too; device
    // memory does not; an empty import needs no alignment.
    let managed_elsewhere = sim.import(1, foreign(&mut host), MemoryKind::Managed).unwrap();
    assert_eq!(sim.host_pointer(&managed_elsewhere), Some(managed_elsewhere.address()));
    assert!(sim.import(1, foreign(&mut host), MemoryKind::HostPinned).is_ok());
    let err = sim.import(1, foreign(&mut host), MemoryKind::Device).err().unwrap();
    assert_eq!(err.code, ErrorCode::Unimplemented);
    let odd = NonNull::new(host.as_mut_ptr().cast::<u8>().wrapping_add(3)).unwrap();
    // SAFETY: zero bytes at `odd`, which is never dereferenced.
    let empty = sim
        .import(0, unsafe { ForeignMemory::new(odd, 0) }, MemoryKind::System)
        .unwrap();
    assert!(empty.is_empty());
    sim.copy_from_host(&s1, &[], &empty, 0).unwrap();
    sim.synchronize_stream(&s1).unwrap();
    // SAFETY: three bytes into a live allocation, of non-zero length.
    let misaligned = unsafe { ForeignMemory::new(odd, 8) };
    assert!(sim.import(0, misaligned, MemoryKind::System).is_err());
}
