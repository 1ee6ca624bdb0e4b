//! Calls the header lets a plugin leave NULL mean what it says they mean:
//! a plugin without stream and event calls, or without
//! `copy_device_to_device`, still runs ops, copies between its devices and
//! gets every buffer back; a plugin that returns success without the
//! handle it was asked for, or an error without a message, is reported in
//! words.

mod support;

use anydev_array::{from_slice, Device, Runtime, RuntimeGuard};
use anydev_core::ops::{BinaryOp, OpCode};
use anydev_core::{BackendStatus, DType, Error};
use support::*;

fn device(text: &str) -> Device {
    text.parse().unwrap()
}

/// A runtime over the C test plugin built with `defines` and two devices,
/// named `name`, that lives for the rest of the process (array calls need
/// a `'static` runtime).
fn two_device_runtime(name: &str, defines: &[(&str, &str)]) -> &'static Runtime {
    let mut all = vec![("TEST_DEVICES", "2")];
    all.extend_from_slice(defines);
    let lib = c_plugin(name, &all);
    let rt = Box::leak(Box::new(runtime(&[], Some(&format!("{name}:{}", lib.display())))));
    assert_eq!(status(rt, name), BackendStatus::Available { devices: 2 });
    rt
}

/// Bytes the plugin holds for live buffers, on both devices.
fn in_use(rt: &Runtime, name: &str) -> usize {
    let backend = rt.backend(device(&format!("{name}:0"))).unwrap();
    (0..2).map(|index| backend.memory_stats(index).unwrap().in_use).sum()
}

/// Adds on device 0, moves the sum to device 1 and reads it back; then
/// every buffer must have gone back to the plugin.
fn add_move_and_free(name: &str, defines: &[(&str, &str)]) {
    let rt = two_device_runtime(name, defines);
    let _guard = RuntimeGuard::new(rt);
    {
        let (d0, d1) = (device(&format!("{name}:0")), device(&format!("{name}:1")));
        let a = from_slice(&[1.0f32, 2.0, 3.5], &[3], d0).unwrap();
        let sum = anydev_array::add(&a, &a).unwrap();
        let moved = sum.to_device(d1).unwrap();
        assert_eq!(moved.device(), d1);
        assert_eq!(moved.to_vec::<f32>().unwrap(), [2.0, 4.0, 7.0]);
        assert_eq!(sum.to_vec::<f32>().unwrap(), [2.0, 4.0, 7.0]);
        assert!(in_use(rt, name) > 0);
        let backend = rt.backend(d0).unwrap();
        backend.synchronize_stream(&backend.default_stream(0).unwrap()).unwrap();
    }
    assert_eq!(in_use(rt, name), 0, "every buffer went back to the plugin");
}

#[test]
fn a_synchronous_plugin_without_streams_runs_copies_and_frees() {
    add_move_and_free("nostreams", &[("TEST_NO_STREAMS", "1")]);
}

#[test]
fn an_asynchronous_plugin_without_streams_runs_copies_and_frees() {
    add_move_and_free("nostreams_async", &[("TEST_NO_STREAMS", "1"), ("TEST_ASYNC", "1")]);
}

#[test]
fn without_execute_the_device_supports_no_op_whatever_op_supported_says() {
    let rt = two_device_runtime("noexec", &[("TEST_NO_EXECUTE", "1")]);
    let _guard = RuntimeGuard::new(rt);
    let dev = device("noexec:0");
    let backend = rt.backend(dev).unwrap();
    for op in [OpCode::Binary(BinaryOp::Add), OpCode::Copy, OpCode::Fill] {
        assert!(!backend.supports(0, op, DType::F32), "{op:?}");
    }
    // Data still moves through the copy calls; ops are refused up front.
    let a = from_slice(&[1.0f32, 2.0], &[2], dev).unwrap();
    assert_eq!(
        a.to_device(device("noexec:1")).unwrap().to_vec::<f32>().unwrap(),
        [1.0, 2.0]
    );
    let err = anydev_array::add(&a, &a).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

/// Copies the first half of a buffer over its second half, on one device.
fn copy_within_one_device(name: &str, defines: &[(&str, &str)]) {
    let rt = two_device_runtime(name, defines);
    let dev = device(&format!("{name}:0"));
    let backend = rt.backend(dev).unwrap();
    let buffer = upload(rt, dev, &[1.0, 2.0, 3.0, 4.0]);
    let stream = backend.default_stream(0).unwrap();
    backend.copy_between(&stream, &buffer, 0, &buffer, 8, 8).unwrap();
    assert_eq!(download(&buffer), [1.0, 2.0, 1.0, 2.0]);
}

#[test]
fn without_copy_device_to_device_copies_within_a_device_go_through_the_host() {
    copy_within_one_device("nod2d_within", &[("TEST_NO_D2D", "1")]);
    copy_within_one_device(
        "nod2d_within_nostreams",
        &[("TEST_NO_D2D", "1"), ("TEST_NO_STREAMS", "1")],
    );
}

#[test]
fn without_copy_device_to_device_copies_between_devices_go_through_the_host() {
    add_move_and_free("nod2d", &[("TEST_NO_D2D", "1")]);
    add_move_and_free("nod2d_async", &[("TEST_NO_D2D", "1"), ("TEST_ASYNC", "1")]);
    add_move_and_free(
        "nod2d_nostreams",
        &[("TEST_NO_D2D", "1"), ("TEST_NO_STREAMS", "1"), ("TEST_ASYNC", "1")],
    );
}

/// On a plugin without streams, an event is complete once recorded: it
/// can be asked, waited for and waited on, though not timed; synchronizing
/// a stream synchronizes its device.
fn events_complete_when_recorded(name: &str, defines: &[(&str, &str)]) {
    let rt = two_device_runtime(name, defines);
    let backend = rt.backend(device(&format!("{name}:1"))).unwrap();
    let stream = backend.create_stream(1).unwrap();
    let event = backend.record_event(&stream).unwrap();
    assert!(backend.query_event(&event).unwrap());
    backend.synchronize_event(&event).unwrap();
    backend.wait_event(&backend.default_stream(1).unwrap(), &event).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    let timed = backend.event_elapsed(&event, &event).unwrap_err().to_string();
    assert!(timed.contains("event timing"), "{timed}");
}

#[test]
fn without_streams_events_are_complete_when_recorded() {
    events_complete_when_recorded("events", &[("TEST_NO_STREAMS", "1")]);
    events_complete_when_recorded("events_async", &[("TEST_NO_STREAMS", "1"), ("TEST_ASYNC", "1")]);
}

#[test]
fn a_table_with_some_stream_and_event_calls_is_refused_naming_the_missing_ones() {
    let lib = c_plugin("no_events", &[("TEST_NO_EVENTS", "1")]);
    let rt = runtime(&[], Some(&format!("noevents:{}", lib.display())));
    let reason = failure(&rt, "noevents");
    assert!(
        reason.contains("event_record, event_wait, event_query, event_synchronize, event_destroy"),
        "{reason}"
    );
    assert!(!reason.contains("stream_create"), "{reason}");
}

/// The failure reason of the C test plugin built with `defines`, loaded as
/// `name`; it must name the plugin once.
fn load_failure(name: &str, defines: &[(&str, &str)]) -> String {
    let lib = c_plugin(name, defines);
    let rt = runtime(&[], Some(&format!("{name}:{}", lib.display())));
    let reason = failure(&rt, name);
    assert_eq!(reason.matches(&format!("plugin {name}")).count(), 1, "{reason}");
    assert_eq!(reason.matches(lib.to_str().unwrap()).count(), 1, "{reason}");
    reason
}

#[test]
fn a_null_device_after_success_fails_the_load() {
    let reason = load_failure("nulldevice", &[("TEST_NULL_DEVICE", "1")]);
    assert!(
        reason.contains("get_device") && reason.contains("no device"),
        "{reason}"
    );
}

#[test]
fn a_null_stream_after_success_fails_the_load() {
    let reason = load_failure("nullstream", &[("TEST_NULL_STREAM", "1")]);
    assert!(
        reason.contains("stream_create") && reason.contains("no stream"),
        "{reason}"
    );
}

#[test]
fn a_null_event_after_success_is_an_error() {
    let lib = c_plugin("null_event", &[("TEST_NULL_EVENT", "1")]);
    let rt = runtime(&[], Some(&format!("nullevent:{}", lib.display())));
    let backend = rt.backend(device("nullevent:0")).unwrap();
    let stream = backend.default_stream(0).unwrap();
    let err = backend.record_event(&stream).unwrap_err().to_string();
    assert!(err.contains("event_record") && err.contains("no event"), "{err}");
}

#[test]
fn a_failure_while_loading_names_the_plugin_once() {
    let reason = load_failure("extfails", &[("TEST_EXTENSION_OPS_FAILS", "1")]);
    assert!(reason.contains("simulated extension registry failure"), "{reason}");
}

#[test]
fn an_error_without_a_message_says_so() {
    let reason = load_failure("nomessage", &[("TEST_INIT_FAILS", "1"), ("TEST_NO_MESSAGE", "1")]);
    assert!(reason.contains("initialize failed"), "{reason}");
    assert!(reason.contains("(the plugin gave no message)"), "{reason}");
}
