//! Allocation, accounting, host transfers, copies, fills and events.

mod common;

use anydev_core::backend::allocate;
use anydev_core::capability::keys;
use anydev_core::{Error, MemoryKind};

#[test]
fn round_trips_at_every_alignment() {
    let g = gpu_or_skip!();
    let data: Vec<u8> = (0..103u32).map(|i| (i * 37 + 11) as u8).collect();
    let b = g.alloc(128);
    g.backend.fill(&g.stream, &b, 0, 128, &[0]).unwrap();
    for offset in [0usize, 1, 2, 3, 5, 8, 13, 25] {
        g.backend.copy_from_host(&g.stream, &data, &b, offset).unwrap();
        for (start, len) in [(offset, data.len()), (offset + 1, 7), (offset + 3, 1), (offset, 0)] {
            let mut back = vec![0u8; len];
            g.backend.copy_to_host(&g.stream, &b, start, &mut back).unwrap();
            let from = start - offset;
            assert_eq!(back, &data[from..from + len], "offset {offset}, read {start}+{len}");
        }
        let mut before = vec![1u8; offset];
        g.backend.copy_to_host(&g.stream, &b, 0, &mut before).unwrap();
        g.backend.fill(&g.stream, &b, 0, 128, &[0]).unwrap();
        assert!(offset < 25 || before[..offset - 25].iter().all(|&x| x == 0));
    }
    // An unaligned write leaves its neighbours alone.
    let c = g.upload(&[9u8; 12]);
    g.backend.copy_from_host(&g.stream, &[1, 2, 3], &c, 5).unwrap();
    assert_eq!(g.download(&c), vec![9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 9]);
}

#[test]
fn copies_and_fills_on_the_device() {
    let g = gpu_or_skip!();
    let a = g.upload(&(0u8..64).collect::<Vec<_>>());
    let b = g.alloc(64);
    g.backend.fill(&g.stream, &b, 0, 64, &[0xab, 0xcd]).unwrap();
    g.backend.copy_between(&g.stream, &a, 8, &b, 16, 16).unwrap();
    g.backend.copy_between(&g.stream, &a, 1, &b, 3, 5).unwrap();
    let back = g.download(&b);
    assert_eq!(&back[16..32], &(8u8..24).collect::<Vec<_>>()[..]);
    assert_eq!(&back[3..8], &[1, 2, 3, 4, 5]);
    assert_eq!(&back[0..3], &[0xab, 0xcd, 0xab]);
    assert_eq!(&back[8..16], &[0xab, 0xcd, 0xab, 0xcd, 0xab, 0xcd, 0xab, 0xcd]);
    // Within one buffer, overlapping.
    g.backend.copy_between(&g.stream, &a, 0, &a, 4, 32).unwrap();
    let back = g.download(&a);
    assert_eq!(&back[4..36], &(0u8..32).collect::<Vec<_>>()[..]);
    // Three-byte pattern at an odd offset.
    g.backend.fill(&g.stream, &b, 1, 9, &[1, 2, 3]).unwrap();
    assert_eq!(&g.download(&b)[..11], &[0xab, 1, 2, 3, 1, 2, 3, 1, 2, 3, 0xab]);
    // Bad ranges are errors.
    assert!(g.backend.copy_between(&g.stream, &a, 60, &b, 0, 8).is_err());
    assert!(g.backend.copy_to_host(&g.stream, &a, 63, &mut [0u8; 2]).is_err());
    assert!(g.backend.copy_from_host(&g.stream, &[0u8; 2], &a, 63).is_err());
    assert!(g.backend.fill(&g.stream, &b, 0, 5, &[1, 2]).is_err());
}

#[test]
fn accounting_follows_the_buffers() {
    let g = gpu_or_skip!();
    // A backend of its own: the other tests allocate concurrently on the shared one.
    let backend = anydev_wgpu::init(&anydev_wgpu::InitOptions::from_env().unwrap()).unwrap();
    let g = common::Gpu {
        stream: backend.default_stream(0).unwrap(),
        backend,
        device: g.device,
    };
    let before = g.backend.memory_stats(0).unwrap();
    assert_eq!((before.in_use, before.allocations), (0, 0));
    let bufs: Vec<_> = [1usize, 1000, 1 << 20].iter().map(|&n| g.alloc(n)).collect();
    let during = g.backend.memory_stats(0).unwrap();
    assert_eq!(during.in_use - before.in_use, 1 + 1000 + (1 << 20));
    assert_eq!(during.allocations - before.allocations, 3);
    assert!(bufs
        .iter()
        .all(|b| b.kind() == MemoryKind::Device && b.allocator() == "wgpu"));
    drop(bufs);
    let after = g.backend.memory_stats(0).unwrap();
    assert_eq!(after.in_use, before.in_use);
    // Freed buffers are cached: reserved, not in use. The 1000-byte
    // buffer holds 1008 bytes, its size rounded to 16.
    let cached = 16 + 1008 + (1 << 20);
    assert_eq!(after.reserved, cached);
    // An allocation of a cached size reuses that buffer; one of another
    // size does not.
    let reused = g.alloc(1 << 20);
    let other = g.alloc(2000);
    let stats = g.backend.memory_stats(0).unwrap();
    assert_eq!(stats.in_use, (1 << 20) + 2000);
    assert_eq!(stats.reserved, cached + 2000);
    // A reused buffer works like a new one.
    g.backend.copy_from_host(&g.stream, &[7u8; 64], &reused, 64).unwrap();
    assert_eq!(g.download(&reused)[64..128], [7u8; 64]);
    drop((reused, other));
    g.backend.empty_cache(0).unwrap();
    assert_eq!(g.backend.memory_stats(0).unwrap().reserved, 0);
    assert!(g.backend.allocate(0, 16, MemoryKind::System).is_err());
    assert!(g.backend.allocate(7, 16, MemoryKind::Device).is_err());
}

#[test]
fn a_buffer_larger_than_the_adapter_allows_is_an_error() {
    let g = gpu_or_skip!();
    let max = g.backend.capabilities(0).unwrap().int("max_allocation_bytes").unwrap() as usize;
    for bytes in [max + 1, usize::MAX / 2] {
        let err = allocate(&g.backend, g.device, bytes, MemoryKind::Device).expect_err("must fail");
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        assert!(err.to_string().contains(&bytes.to_string()), "{err}");
    }
    // The backend still works afterwards.
    let b = g.upload(&[1, 2, 3, 4]);
    assert_eq!(g.download(&b), vec![1, 2, 3, 4]);
}

#[test]
fn events_complete_in_submission_order() {
    let g = gpu_or_skip!();
    let other = g.backend.create_stream(0).unwrap();
    let b = g.alloc(1 << 16);
    g.backend.fill(&other, &b, 0, 1 << 16, &[5, 6, 7, 8]).unwrap();
    let event = g.backend.record_event(&other).unwrap();
    g.backend.wait_event(&g.stream, &event).unwrap();
    g.backend.synchronize_event(&event).unwrap();
    assert!(g.backend.query_event(&event).unwrap());
    let later = g.backend.record_event(&g.stream).unwrap();
    g.backend.synchronize_stream(&g.stream).unwrap();
    g.backend.synchronize(0).unwrap();
    assert!(g.backend.query_event(&later).unwrap());
    assert_eq!(&g.download(&b)[..8], &[5, 6, 7, 8, 5, 6, 7, 8]);
}

#[test]
fn events_time_the_work_between_them() {
    let g = gpu_or_skip!();
    let bytes = 64 << 20;
    let b = g.alloc(bytes);
    let wall = std::time::Instant::now();
    let start = g.backend.record_timed_event(&g.stream).unwrap();
    g.backend.fill(&g.stream, &b, 0, bytes, &[1, 2, 3, 4]).unwrap();
    let end = g.backend.record_timed_event(&g.stream).unwrap();
    g.backend.synchronize_event(&end).unwrap();
    let wall = wall.elapsed();
    let timing = g.backend.capabilities(0).unwrap().flag(keys::EVENT_TIMING);
    match g.backend.event_elapsed(&start, &end) {
        // The GPU clock advanced across a 64 MiB fill, by no more than the
        // host waited for it.
        Ok(elapsed) if timing => assert!(
            elapsed > std::time::Duration::ZERO && elapsed <= wall,
            "{elapsed:?} against {wall:?} on the host"
        ),
        Err(Error::FeatureUnsupported { .. }) if !timing => {}
        other => panic!("event_timing is {timing}, event_elapsed gave {other:?}"),
    }
    // The ordering rules' plain events carry no timestamp, and say so.
    let plain = g.backend.record_event(&g.stream).unwrap();
    g.backend.synchronize_event(&plain).unwrap();
    let refused = g.backend.event_elapsed(&start, &plain).unwrap_err().to_string();
    let expected = if timing { "record_timed_event" } else { "event_timing" };
    assert!(refused.contains(expected), "{refused}");
}
