//! The host's side of plugin collectives (ABI 1.6): the runtime's plugin
//! adapter over the simulator, driven through `Backend::comm_id`,
//! `Backend::comm_init` and `DeviceComm::enqueue` with two threads as
//! ranks, and the checks the host makes before a call reaches the plugin.

mod support;

use anydev_core::backend::allocate;
use anydev_core::collective::{CollectiveCall, CollectiveKind, CommInit, DeviceComm, ReduceOp, Region};
use anydev_core::{Backend, Buffer, DType, Device, DeviceKind, MemoryKind, Runtime};
use std::sync::Arc;
use std::time::Duration;
use support::sim_runtime;

fn runtime() -> &'static Runtime {
    Box::leak(Box::new(sim_runtime("host-collectives", r#"{"devices": 2}"#)))
}

fn sim(index: usize) -> Device {
    Device::new(DeviceKind::parse("sim").unwrap(), index)
}

fn upload(backend: &Arc<dyn Backend>, device: Device, values: &[f32]) -> Buffer {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let buffer = allocate(backend, device, bytes.len(), MemoryKind::Device).unwrap();
    let stream = backend.default_stream(device.index()).unwrap();
    backend.copy_from_host(&stream, &bytes, &buffer, 0).unwrap();
    buffer
}

fn download(backend: &Arc<dyn Backend>, buffer: &Buffer) -> Vec<f32> {
    let mut bytes = vec![0u8; buffer.len()];
    let stream = backend.default_stream(buffer.device().index()).unwrap();
    backend.copy_to_host(&stream, buffer, 0, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Joins a communicator of two ranks (sim:0 and sim:1) on two threads and
/// runs `body(rank, comm)` on each.
fn on_two_ranks(rt: &'static Runtime, body: impl Fn(usize, &dyn DeviceComm) + Sync) {
    let backend = rt.backend(sim(0)).unwrap();
    assert!(backend.collectives().is_some(), "the simulator offers collectives");
    let id = backend.comm_id().unwrap();
    std::thread::scope(|s| {
        for rank in 0..2 {
            let (id, body, backend) = (&id, &body, backend.clone());
            s.spawn(move || {
                let init = CommInit {
                    id,
                    nranks: 2,
                    rank,
                    timeout: Duration::from_secs(30),
                };
                let comm = backend.comm_init(rank, &init).unwrap();
                assert_eq!((comm.rank(), comm.size(), comm.device()), (rank, 2, sim(rank)));
                body(rank, comm.as_ref());
            });
        }
    });
}

#[test]
fn an_all_reduce_through_the_adapter_sums_both_ranks() {
    let rt = runtime();
    on_two_ranks(rt, |rank, comm| {
        let backend = rt.backend(comm.device()).unwrap();
        let mine: Vec<f32> = (0..5).map(|i| (i * (rank + 1)) as f32 + 0.5).collect();
        let send = upload(backend, comm.device(), &mine);
        let recv = upload(backend, comm.device(), &[0.0; 5]);
        let call = CollectiveCall {
            kind: CollectiveKind::AllReduce(ReduceOp::Sum),
            dtype: DType::F32,
            count: 5,
            send: Some(Region {
                buffer: &send,
                offset: 0,
            }),
            recv: Some(Region {
                buffer: &recv,
                offset: 0,
            }),
        };
        let stream = backend.default_stream(comm.device().index()).unwrap();
        comm.enqueue(&stream, &call).unwrap();
        backend.synchronize_stream(&stream).unwrap();
        let want: Vec<f32> = (0..5).map(|i| (i + 2 * i) as f32 + 1.0).collect();
        assert_eq!(download(backend, &recv), want, "rank {rank}");
    });
}

#[test]
fn malformed_collectives_are_refused_before_the_plugin_sees_them() {
    let rt = runtime();
    on_two_ranks(rt, |rank, comm| {
        let backend = rt.backend(comm.device()).unwrap();
        let stream = backend.default_stream(comm.device().index()).unwrap();
        let a = upload(backend, comm.device(), &[1.0; 4]);
        let b = upload(backend, comm.device(), &[0.0; 4]);
        let other = 1 - rank;
        let elsewhere = upload(backend, sim(other), &[0.0; 4]);
        let region = |buffer, offset| Some(Region { buffer, offset });
        let call = |kind, send, recv, count| CollectiveCall {
            kind,
            dtype: DType::F32,
            count,
            send,
            recv,
        };
        let sum = CollectiveKind::AllReduce(ReduceOp::Sum);
        let cases = [
            (
                "outside",
                call(sum, region(&a, 0), region(&b, 8), 4),
                "outside a buffer",
            ),
            (
                "device",
                call(sum, region(&a, 0), region(&elsewhere, 0), 4),
                "communicator's device",
            ),
            ("overlap", call(sum, region(&a, 0), region(&a, 4), 2), "overlap"),
            ("no recv", call(sum, region(&a, 0), None, 4), "needs a recv buffer"),
            (
                "peer",
                call(CollectiveKind::Send { peer: rank }, region(&a, 0), None, 4),
                "not another rank",
            ),
            (
                "root",
                call(CollectiveKind::Broadcast { root: 2 }, region(&a, 0), region(&b, 0), 4),
                "not a rank",
            ),
            (
                "gathered",
                call(CollectiveKind::AllGather, region(&a, 0), region(&b, 0), 4),
                "outside a buffer",
            ),
        ];
        for (what, call, expected) in cases {
            let e = comm.enqueue(&stream, &call).unwrap_err().to_string();
            assert!(e.contains(expected), "{what}: {e}");
        }
        let complex_min = CollectiveCall {
            dtype: DType::C64,
            ..call(
                CollectiveKind::AllReduce(ReduceOp::Min),
                region(&a, 0),
                region(&b, 0),
                1,
            )
        };
        let e = comm.enqueue(&stream, &complex_min).unwrap_err().to_string();
        assert!(e.contains("not defined for c64"), "{e}");
        // Nothing reached the plugin, so the channels are still in step.
        backend.synchronize_stream(&stream).unwrap();
    });
}

#[test]
fn a_bad_join_is_an_error() {
    let rt = runtime();
    let backend = rt.backend(sim(0)).unwrap();
    let id = backend.comm_id().unwrap();
    let join = |id: &[u8], nranks, rank| {
        let init = CommInit {
            id,
            nranks,
            rank,
            timeout: Duration::from_millis(200),
        };
        backend.comm_init(0, &init).map(|_| ()).unwrap_err().to_string()
    };
    assert!(join(&id, 2, 2).contains("rank 2 of a communicator of 2"));
    assert!(join(&id[..10], 2, 0).contains("has 128 bytes"));
    // Rank 1 never comes: the join gives up and names it.
    let e = join(&id, 2, 0);
    assert!(e.contains('1') && e.contains("comm_init"), "{e}");
}
