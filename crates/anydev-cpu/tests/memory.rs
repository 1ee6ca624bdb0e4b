//! Allocation, accounting, copies and fills on cpu:0.

use anydev_core::backend::{allocate, Backend};
use anydev_core::{Device, Error, MemoryKind};
use anydev_cpu::CpuBackend;
use std::sync::Arc;

fn backend() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::new())
}

#[test]
fn accounting_returns_to_zero_after_buffers_drop() {
    let cpu = backend();
    let before = cpu.memory_stats(0).unwrap();
    assert_eq!(before.in_use, 0);
    let buffers: Vec<_> = [1usize, 1000, 1 << 20]
        .iter()
        .map(|&n| allocate(&cpu, Device::cpu(), n, MemoryKind::System).unwrap())
        .collect();
    let during = cpu.memory_stats(0).unwrap();
    assert_eq!(during.in_use, 1 + 1000 + (1 << 20));
    assert_eq!(during.allocations, 3);
    for b in &buffers {
        assert_eq!(b.host_ptr().unwrap() as usize % 256, 0, "256-byte alignment");
        assert_eq!(b.kind(), MemoryKind::System);
        assert_eq!(b.allocator(), "cpu");
    }
    drop(buffers);
    let after = cpu.memory_stats(0).unwrap();
    assert_eq!(after.in_use, 0);
    assert_eq!(after.allocations, 0);
    assert_eq!(after.peak, during.in_use);
}

#[test]
fn impossible_allocations_are_out_of_memory_errors() {
    let cpu = backend();
    let err = cpu
        .allocate(0, usize::MAX / 2, MemoryKind::System)
        .err()
        .expect("must fail");
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert_eq!(
        cpu.memory_stats(0).unwrap().in_use,
        0,
        "a failed allocation reserves nothing"
    );
    assert!(cpu.allocate(0, 16, MemoryKind::Device).is_err());
    assert!(cpu.allocate(1, 16, MemoryKind::System).is_err());
}

#[test]
fn copies_and_fills_round_trip_and_check_ranges() {
    let cpu = backend();
    let stream = cpu.default_stream(0).unwrap();
    let a = allocate(&cpu, Device::cpu(), 16, MemoryKind::System).unwrap();
    let b = allocate(&cpu, Device::cpu(), 16, MemoryKind::System).unwrap();
    let data: Vec<u8> = (0..16).collect();
    cpu.copy_from_host(&stream, &data, &a, 0).unwrap();
    cpu.copy_between(&stream, &a, 4, &b, 0, 8).unwrap();
    cpu.fill(&stream, &b, 8, 8, &[0xab, 0xcd]).unwrap();
    let event = cpu.record_event(&stream).unwrap();
    cpu.synchronize_event(&event).unwrap();
    assert!(cpu.query_event(&event).unwrap());
    let mut back = vec![0u8; 16];
    cpu.copy_to_host(&stream, &b, 0, &mut back).unwrap();
    assert_eq!(&back[..8], &data[4..12]);
    assert_eq!(&back[8..], &[0xab, 0xcd, 0xab, 0xcd, 0xab, 0xcd, 0xab, 0xcd]);

    assert!(cpu.copy_from_host(&stream, &data, &a, 1).is_err());
    assert!(cpu.copy_to_host(&stream, &a, 9, &mut back[..8]).is_err());
    assert!(cpu.copy_between(&stream, &a, 0, &b, 12, 8).is_err());
    assert!(cpu.fill(&stream, &b, 0, 3, &[1, 2]).is_err());
}

#[test]
fn the_host_reads_and_writes_cpu_buffers_in_place_within_their_range() {
    let cpu = backend();
    let buffer = allocate(&cpu, Device::cpu(), 16, MemoryKind::System).unwrap();
    let written = buffer.write_on_host(4, 8, |bytes| bytes.copy_from_slice(&[7; 8]));
    assert_eq!(written.unwrap(), Some(()));
    let mut all = vec![0u8; 16];
    cpu.copy_to_host(&cpu.default_stream(0).unwrap(), &buffer, 0, &mut all)
        .unwrap();
    assert_eq!(&all[4..12], &[7; 8], "the write landed in the buffer");
    let read = buffer.read_on_host(2, 4, <[u8]>::to_vec).unwrap();
    assert_eq!(read, Some(all[2..6].to_vec()));
    for (offset, len) in [(12, 5), (17, 0), (usize::MAX, 2)] {
        let err = buffer.read_on_host(offset, len, |_| ()).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{offset}+{len}: {err}");
        assert!(err.to_string().contains("outside a buffer of 16 bytes"), "{err}");
        assert!(buffer.write_on_host(offset, len, |_| ()).is_err());
    }
}
