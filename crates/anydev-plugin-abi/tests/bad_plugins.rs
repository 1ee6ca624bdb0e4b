//! The bad-plugin matrix: every way a plugin can be broken ends as a
//! status with a reason naming the file and the versions, never as a crash,
//! and never takes another plugin down.

mod support;

use anydev_core::ops::{BinaryOp, Op, Operand};
use anydev_core::{BackendStatus, Device, Error};
use anydev_plugin_abi::{AnydevPluginApi, ABI_VERSION_MAJOR, ABI_VERSION_MINOR};
use std::mem::offset_of;
use std::path::Path;
use support::*;

fn device(text: &str) -> Device {
    text.parse().unwrap()
}

/// Asking for the device of a failed plugin returns its reason.
fn assert_request_explains(rt: &anydev_core::Runtime, dev: &str, needles: &[&str]) {
    let err = rt.backend(device(dev)).err().expect("device must be unavailable");
    let text = err.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
}

#[test]
fn a_missing_library_file_fails_naming_the_file_and_the_manifest() {
    let dir = scratch("missing");
    let m = manifest(&dir, "gone.json", "gone", Path::new("libgone.so"), "");
    let rt = runtime(&[&dir], None);
    let reason = failure(&rt, "gone");
    let lib = dir.join("libgone.so");
    for needle in [lib.to_str().unwrap(), m.to_str().unwrap(), "does not exist"] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
    assert_request_explains(&rt, "gone:0", &["does not exist", "libgone.so"]);
}

#[test]
fn a_file_that_is_not_a_shared_library_fails() {
    let dir = scratch("junk");
    std::fs::write(dir.join("libjunk.so"), b"this is a text file, not an ELF object").unwrap();
    manifest(&dir, "junk.json", "junk", Path::new("libjunk.so"), "");
    let rt = runtime(&[&dir], None);
    let reason = failure(&rt, "junk");
    assert!(reason.contains("cannot be loaded as a shared library"), "{reason}");
    assert!(reason.contains("libjunk.so"), "{reason}");
}

/// A library for another processor: the system loader's message names no
/// architecture (glibc says the file does not exist), so the reason does.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
#[test]
fn a_library_for_another_processor_fails_naming_both_architectures() {
    let dir = scratch("wrong-arch");
    let mut elf = std::fs::read(good_plugin()).unwrap();
    // e_machine, little-endian on both hosts: AArch64 on x86-64 and back.
    let (other, here, theirs) = if cfg!(target_arch = "x86_64") {
        (183u16, "x86-64", "AArch64")
    } else {
        (62u16, "AArch64", "x86-64")
    };
    elf[18..20].copy_from_slice(&other.to_le_bytes());
    std::fs::write(dir.join("libforeign.so"), elf).unwrap();
    manifest(&dir, "foreign.json", "foreign", Path::new("libforeign.so"), "");
    let rt = runtime(&[&dir], None);
    let reason = failure(&rt, "foreign");
    for needle in [
        "cannot be loaded as a shared library",
        "built for",
        theirs,
        here,
        "libforeign.so",
    ] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

#[test]
fn a_library_without_the_entry_symbol_fails() {
    let lib = c_plugin("no_entry", &[("TEST_NO_ENTRY", "1")]);
    let rt = runtime(&[], Some(&format!("noentry:{}", lib.display())));
    let reason = failure(&rt, "noentry");
    assert!(reason.contains("does not export anydev_plugin_get_api"), "{reason}");
    assert!(reason.contains(lib.to_str().unwrap()), "{reason}");
}

#[test]
fn another_major_version_fails_naming_both_versions() {
    let lib = c_plugin("major2", &[("TEST_MAJOR", "2"), ("TEST_MINOR", "3")]);
    let rt = runtime(&[], Some(&format!("major:{}", lib.display())));
    let reason = failure(&rt, "major");
    let host = format!("ABI {ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR}");
    for needle in ["ABI 2.3", &host, "major versions differ", lib.to_str().unwrap()] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

#[test]
fn a_manifest_declaring_another_major_version_is_refused_before_loading() {
    let dir = scratch("manifest-major");
    manifest(&dir, "m.json", "declared", &good_plugin(), r#""abi_version": "3.1""#);
    let rt = runtime(&[&dir], None);
    let reason = failure(&rt, "declared");
    assert!(reason.contains("ABI 3.1") && reason.contains("m.json"), "{reason}");
}

#[test]
fn a_newer_minor_version_is_accepted() {
    let lib = c_plugin("minor7", &[("TEST_MINOR", "7")]);
    let rt = runtime(&[], Some(&format!("newer:{}", lib.display())));
    assert_eq!(status(&rt, "newer"), BackendStatus::Available { devices: 1 });
    let caps = rt.capabilities(device("newer:0")).unwrap();
    assert_eq!(
        caps.get("plugin.abi_version").map(|v| v.to_string()).as_deref(),
        Some("1.7")
    );
}

#[test]
fn an_older_smaller_table_reports_the_newer_calls_unimplemented() {
    // The table ends right before `fill` and sits against an inaccessible
    // page: reading one byte past it would crash this test.
    older_table_without_fill("older", offset_of!(AnydevPluginApi, fill));
}

#[test]
fn a_table_size_ending_inside_a_pointer_leaves_that_call_out() {
    // Half of `fill`'s pointer is inside the declared size: copied, it
    // would look present and crash when called.
    older_table_without_fill("ragged", offset_of!(AnydevPluginApi, fill) + 4);
}

/// Loads the C test plugin with its table cut to `size` bytes, which ends
/// before `fill` is whole, and checks that `fill` is unimplemented while
/// the calls before it work.
fn older_table_without_fill(name: &str, size: usize) {
    let lib = c_plugin(name, &[("TEST_TABLE_SIZE", &size.to_string())]);
    let rt = runtime(&[], Some(&format!("{name}:{}", lib.display())));
    assert_eq!(status(&rt, name), BackendStatus::Available { devices: 1 });
    let dev = device(&format!("{name}:0"));
    let backend = rt.backend(dev).unwrap();
    let stream = backend.default_stream(0).unwrap();
    let a = upload(&rt, dev, &[1.0, 2.0]);
    assert_eq!(download(&a), [1.0, 2.0], "calls inside the table still work");

    match backend.fill(&stream, &a, 0, 8, &[0; 4]) {
        Err(Error::Plugin {
            name: plugin, message, ..
        }) => {
            assert_eq!(plugin, name);
            assert!(message.contains("does not implement fill"), "{message}");
            assert!(message.contains(&format!("{size} bytes")), "{message}");
        }
        other => panic!("expected a plugin error, got {other:?}"),
    }
    let shape = [2usize];
    let out = upload(&rt, dev, &[0.0, 0.0]);
    let add = Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(vector(&a, &shape)),
        rhs: Operand::Tensor(vector(&a, &shape)),
        out: vector(&out, &shape),
    };
    assert!(matches!(backend.execute(&stream, &add), Err(Error::Unsupported { .. })));
}

#[test]
fn an_initialisation_error_fails_with_the_plugins_message() {
    let lib = c_plugin("init_fails", &[("TEST_INIT_FAILS", "1")]);
    let good = good_plugin();
    let rt = runtime(&[], Some(&format!("broken:{},fine:{}", lib.display(), good.display())));
    let reason = failure(&rt, "broken");
    let built_for = format!("ABI {ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR}");
    for needle in [
        "initialize failed",
        "simulated driver failure",
        &built_for,
        lib.to_str().unwrap(),
    ] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
    assert_eq!(
        status(&rt, "fine"),
        BackendStatus::Available { devices: 1 },
        "one broken plugin spoils nothing else"
    );
    assert_request_explains(&rt, "broken:0", &["simulated driver failure"]);
}

#[test]
fn duplicate_names_are_rejected_naming_both_manifests() {
    let (a, b) = (scratch("dup-a"), scratch("dup-b"));
    let first = manifest(&a, "ctest.json", "twin", &good_plugin(), "");
    let second = manifest(&b, "other.json", "twin", &good_plugin(), "");
    let rt = runtime(&[&a, &b], None);
    let reason = failure(&rt, "twin");
    for needle in [first.to_str().unwrap(), second.to_str().unwrap(), "more than once"] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

#[test]
fn malformed_manifest_json_names_the_file_and_position() {
    let dir = scratch("malformed");
    let path = dir.join("broken.json");
    std::fs::write(
        &path,
        "{\n  \"file_format_version\": \"1.0.0\",\n  \"name\": \"broken\"\n  \"library_path\": \"x.so\"\n}\n",
    )
    .unwrap();
    manifest(&dir, "good.json", "good", &good_plugin(), "");
    let rt = runtime(&[&dir], None);
    let reason = failure(&rt, "broken");
    assert!(reason.contains(&format!("{}:4:3", path.display())), "{reason}");
    assert_request_explains(&rt, "broken:0", &["broken.json:4:3"]);
    assert_eq!(status(&rt, "good"), BackendStatus::Available { devices: 1 });
}

#[test]
fn manifests_are_read_in_sorted_order() {
    let dir = scratch("sorted");
    for name in ["zeta", "alpha", "mid"] {
        manifest(&dir, &format!("{name}.json"), name, &good_plugin(), "");
    }
    let rt = runtime(&[&dir], None);
    let names: Vec<&str> = rt.backends().iter().map(|b| b.name()).collect();
    assert_eq!(names, ["alpha", "mid", "zeta"]);
}

#[test]
fn a_plugin_named_like_a_built_in_is_refused_with_its_origin() {
    let dir = scratch("built-in-name");
    let m = manifest(&dir, "cpu.json", "cpu", &good_plugin(), "");
    let config = anydev_core::RuntimeConfig {
        plugins: anydev_core::plugin::PluginConfig {
            search_dirs: vec![dir.clone()],
            direct: None,
        },
        ..Default::default()
    };
    // A stand-in for the built-in CPU: the name is what counts.
    let built_in = anydev_core::BackendProvider::new("cpu", 0, || {
        Err(anydev_core::InitError::Unavailable("a stand-in".into()))
    });
    let rt = anydev_core::Runtime::with_plugins(vec![built_in], config);
    assert_eq!(rt.backends().len(), 1, "only the built-in is registered");
    let problem = rt.problems().join("\n");
    assert!(
        problem.contains("built-in backend") && problem.contains(m.to_str().unwrap()),
        "{problem}"
    );
}

#[test]
fn an_unresolved_symbol_is_a_load_failure_naming_the_symbol() {
    let lib = c_plugin("unresolved", &[("TEST_UNRESOLVED", "1")]);
    let rt = runtime(&[], Some(&format!("unresolved:{}", lib.display())));
    let reason = failure(&rt, "unresolved");
    for needle in [
        "cannot be loaded as a shared library",
        "anydev_test_no_library_defines_this",
        lib.to_str().unwrap(),
    ] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

#[test]
fn a_missing_dependency_is_named_in_the_loaders_words() {
    let dir = scratch("dependency");
    c_library(&dir, "anydev_test_dep", "void anydev_test_dependency(void) {}\n");
    let link = [
        std::ffi::OsString::from("-L"),
        dir.clone().into_os_string(),
        "-lanydev_test_dep".into(),
    ];
    let link: Vec<&std::ffi::OsStr> = link.iter().map(|a| a.as_os_str()).collect();
    let lib = c_plugin_with("dependency", &[("TEST_DEPENDENCY", "1")], &link);
    std::fs::remove_file(dir.join("libanydev_test_dep.so")).unwrap();
    let rt = runtime(&[], Some(&format!("dependent:{}", lib.display())));
    let reason = failure(&rt, "dependent");
    assert!(reason.contains("libanydev_test_dep.so"), "{reason}");
}

#[test]
fn a_plugin_with_no_devices_is_unavailable_naming_plugin_library_and_manifest() {
    let dir = scratch("no-devices");
    let lib = c_plugin("zero", &[("TEST_DEVICES", "0")]);
    let m = manifest(&dir, "empty.json", "empty", &lib, "");
    let rt = runtime(&[&dir], None);
    let BackendStatus::Unavailable { reason } = status(&rt, "empty") else {
        panic!("{:?}", status(&rt, "empty"))
    };
    for needle in ["plugin empty", lib.to_str().unwrap(), m.to_str().unwrap(), "0 devices"] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

#[test]
fn missing_required_calls_are_listed_at_load() {
    let lib = c_plugin("no_caps", &[("TEST_NO_CAPABILITIES", "1")]);
    let rt = runtime(&[], Some(&format!("nocaps:{}", lib.display())));
    let reason = failure(&rt, "nocaps");
    assert!(reason.contains("lacks required calls: device_capabilities"), "{reason}");
    // Every defect of the table is named at once, not the first only.
    let lib = c_plugin(
        "no_caps_no_events",
        &[("TEST_NO_CAPABILITIES", "1"), ("TEST_NO_EVENTS", "1")],
    );
    let rt = runtime(&[], Some(&format!("twogaps:{}", lib.display())));
    let reason = failure(&rt, "twogaps");
    for needle in [
        "lacks required calls: device_capabilities",
        "lacks event_record",
        "all eight or none",
    ] {
        assert!(reason.contains(needle), "{needle:?} missing from: {reason}");
    }
}

/// Runs `lhs + lhs` on device `dev` of `rt`.
fn add_twice(rt: &anydev_core::Runtime, dev: Device, lhs: &[f32]) -> anydev_core::Result<Vec<f32>> {
    let backend = rt.backend(dev).unwrap();
    let stream = backend.default_stream(dev.index()).unwrap();
    let a = upload(rt, dev, lhs);
    let out = upload(rt, dev, &vec![0.0; lhs.len()]);
    let shape = [lhs.len()];
    let add = Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(vector(&a, &shape)),
        rhs: Operand::Tensor(vector(&a, &shape)),
        out: vector(&out, &shape),
    };
    backend.execute(&stream, &add)?;
    Ok(download(&out))
}

#[test]
fn tables_of_abi_1_0_to_1_3_still_load_and_run() {
    for (minor, end) in [
        ("0", offset_of!(AnydevPluginApi, buffer_host_pointer)),
        ("1", offset_of!(AnydevPluginApi, op_supported_signature)),
        ("3", offset_of!(AnydevPluginApi, extension_ops)),
    ] {
        let size = end.to_string();
        let lib = c_plugin(
            &format!("abi1_{minor}"),
            &[("TEST_MINOR", minor), ("TEST_TABLE_SIZE", &size)],
        );
        let name = format!("old{minor}");
        let rt = runtime(&[], Some(&format!("{name}:{}", lib.display())));
        assert_eq!(status(&rt, &name), BackendStatus::Available { devices: 1 });
        let dev = device(&format!("{name}:0"));
        assert_eq!(add_twice(&rt, dev, &[1.0, 2.5]).unwrap(), [2.0, 5.0]);
        // The extension-op calls of ABI 1.4 lie beyond the table (on a
        // page the host would crash reading): the device implements none.
        assert!(rt.backend(dev).unwrap().extension_ops(0).is_empty());
    }
}

#[test]
fn a_signature_the_plugin_refuses_is_unsupported_and_never_executed() {
    let lib = c_plugin("signature", &[("TEST_SIGNATURE_NO_ADD", "1")]);
    let rt = runtime(&[], Some(&format!("sig:{}", lib.display())));
    let dev = device("sig:0");
    assert!(rt.backend(dev).unwrap().supports(
        0,
        anydev_core::ops::OpCode::Binary(BinaryOp::Add),
        anydev_core::DType::F32
    ));
    match add_twice(&rt, dev, &[1.0]) {
        Err(Error::Unsupported { op, .. }) => assert_eq!(op, "add"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn dropping_the_runtime_destroys_streams_and_buffers_then_shuts_the_plugin_down() {
    let lib = c_plugin("shutdown", &[("TEST_REPORT_SHUTDOWN", "1")]);
    let report = scratch("shutdown").join("report.txt");
    // Only this test's plugin reads the variable.
    std::env::set_var("ANYDEV_TEST_SHUTDOWN_FILE", &report);
    {
        let rt = runtime(&[], Some(&format!("down:{}", lib.display())));
        let dev = device("down:0");
        let extra = rt.backend(dev).unwrap().create_stream(0).unwrap();
        assert_eq!(add_twice(&rt, dev, &[1.0]).unwrap(), [2.0]);
        drop(extra);
    }
    let text = std::fs::read_to_string(&report).expect("shutdown ran and wrote its report");
    assert_eq!(text.trim(), "shutdown with 0 streams and 0 buffers live");

    // A runtime that is never dropped (the process-wide one) shuts its
    // plugins down on request, with a buffer and the default stream still
    // live: the plugin releases them, and nothing reaches it afterwards.
    std::fs::remove_file(&report).unwrap();
    let rt: &'static anydev_core::Runtime = Box::leak(Box::new(runtime(&[], Some(&format!("down:{}", lib.display())))));
    let dev = device("down:0");
    let live = upload(rt, dev, &[1.0, 2.0]);
    rt.shutdown().unwrap();
    let text = std::fs::read_to_string(&report).expect("shutdown ran and wrote its report");
    assert_eq!(text.trim(), "shutdown with 1 streams and 1 buffers live");
    let backend = rt.backend(dev).unwrap();
    for (call, result) in [
        ("synchronize", backend.synchronize(0).map(drop)),
        (
            "allocate",
            anydev_core::backend::allocate(backend, dev, 64, anydev_core::MemoryKind::Device).map(drop),
        ),
    ] {
        let err = result.expect_err(call);
        assert!(err.to_string().contains("shut down"), "{call} after shutdown: {err}");
    }
    // Letting go of the buffer after shutdown does not reach the plugin.
    drop(live);
    rt.shutdown().unwrap();
}
