//! `anydev conformance` end to end on real plugin libraries: the simulator
//! and the C test plugin pass, a C plugin with a broken `add` fails naming
//! case, device, expected and got, and a manifest's expected failures turn
//! those into expected failures (and a stale entry into a failure).

use anydev_testing::conformance::{run, Report};
use anydev_testing::locate;
use std::path::{Path, PathBuf};

/// A scratch directory unique to this process.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("anydev-testing-conformance-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles `source` (relative to the workspace) into `dir/lib<name>.so`.
fn compile(source: &str, name: &str, dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(&format!("{}-unknown-linux-gnu", std::env::consts::ARCH))
        .host(&format!("{}-unknown-linux-gnu", std::env::consts::ARCH))
        .opt_level(0)
        .debug(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args([
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wpedantic",
        "-fPIC",
        "-shared",
    ])
    .arg("-I")
    .arg(root.join("crates/anydev-plugin-abi/include"))
    .arg("-I")
    .arg(root.join("crates/anydev-plugin-abi/tests/c_plugin"))
    .arg(root.join(source))
    .arg("-o")
    .arg(&out);
    let result = cmd.output().expect("run the C compiler");
    assert!(
        result.status.success(),
        "compiling {source} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

fn good_plugin(dir: &Path) -> PathBuf {
    compile("crates/anydev-plugin-abi/tests/c_plugin/test_plugin.c", "ctest", dir)
}

fn broken_plugin(dir: &Path) -> PathBuf {
    compile(
        "crates/anydev-testing/tests/c_plugin/broken_add.c",
        "ctest_broken_add",
        dir,
    )
}

/// The vendor starter kit, built as its Makefile builds it, beside its manifest.
fn template_manifest(dir: &Path) -> PathBuf {
    compile("plugins/c-template/template.c", "anydev_template", dir);
    let manifest = dir.join("template.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/c-template/template.json"),
        &manifest,
    )
    .unwrap();
    manifest
}

fn reasons(report: &Report, outcome: &str) -> Vec<String> {
    report
        .rows
        .iter()
        .filter(|r| r.outcome == outcome)
        .map(|r| format!("{}: {}", r.name, r.reason))
        .collect()
}

#[test]
fn the_simulator_passes_on_both_devices() {
    let report = run(&locate::sim_library(), None);
    assert!(report.success(), "{}", report.to_text());
    assert_eq!(report.devices, ["sim:0", "sim:1"]);
    assert!(report.summary.passed > 100, "{:?}", report.summary);
    assert!(report
        .rows
        .iter()
        .any(|r| r.case == "abi::devices_have_separate_memory" && r.outcome == "pass"));
}

#[test]
fn the_c_plugin_passes_and_reports_its_gaps_as_skips() {
    let report = run(&good_plugin(&scratch("good")), None);
    assert!(report.success(), "{}", report.to_text());
    assert!(
        report.summary.passed >= 10 && report.summary.skipped > 0,
        "{:?}",
        report.summary
    );
    let skips = reasons(&report, "skip");
    assert!(
        skips
            .iter()
            .any(|s| s.contains("needs op exp (ctest:0 does not implement exp for f32)")),
        "{skips:#?}"
    );
    let text = report.to_text();
    let summary = format!(
        "{} passed, {} failed, {} skipped",
        report.summary.passed, report.summary.failed, report.summary.skipped
    );
    assert_eq!(text.lines().last(), Some(summary.as_str()));
}

#[test]
fn a_broken_add_fails_naming_case_device_expected_and_got() {
    let report = run(&broken_plugin(&scratch("broken")), None);
    assert!(!report.success());
    let failures = reasons(&report, "fail");
    assert!(
        failures.iter().any(
            |f| f.contains("case elementwise::add_broadcast on ctest_broken_add:0 (f32)")
                && f.contains("expected 7.75, got 8.75")
        ),
        "{failures:#?}"
    );
}

#[test]
fn a_manifest_lists_known_failures_and_stale_entries_fail() {
    let dir = scratch("manifest");
    broken_plugin(&dir);
    let manifest = dir.join("ctest_broken_add.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c_plugin/ctest_broken_add.json"),
        &manifest,
    )
    .unwrap();
    let report = run(&manifest, None);
    assert!(report.success(), "{}", report.to_text());
    assert_eq!(report.summary.expected_failures, 5, "{}", report.to_text());
    assert!(reasons(&report, "xfail")[0].contains("deliberately"));

    // The same list against the good plugin: its adds pass, so the entries
    // are stale and the run fails.
    let good = good_plugin(&dir);
    let stale = dir.join("stale.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("libctest_broken_add.so", good.file_name().unwrap().to_str().unwrap());
    std::fs::write(&stale, text).unwrap();
    let report = run(&stale, Some("add_broadcast"));
    assert!(!report.success());
    assert!(
        reasons(&report, "xpass")[0].contains("remove the entry"),
        "{}",
        report.to_text()
    );
}

#[test]
fn the_memory_check_honours_known_failures_too() {
    let dir = scratch("memory-known");
    let good = good_plugin(&dir);
    let path = dir.join("listed.json");
    let text = format!(
        r#"{{"file_format_version": "1.0.0", "name": "ctest", "library_path": "{}",
            "expected_failures": [{{"case": "abi::memory_is_freed_after_the_run", "reason": "leaks"}}]}}"#,
        good.display()
    );
    std::fs::write(&path, text).unwrap();
    // The plugin frees everything, so the entry is stale.
    let report = run(&path, Some("add_broadcast"));
    assert!(!report.success());
    let stale = reasons(&report, "xpass");
    assert!(
        stale.iter().any(|r| r.contains("abi::memory_is_freed_after_the_run")),
        "{}",
        report.to_text()
    );
}

#[test]
fn a_missing_plugin_is_an_error_not_an_empty_pass() {
    let report = run(Path::new("/nonexistent/libnothing.so"), None);
    assert!(!report.success());
    assert!(report
        .error
        .as_deref()
        .unwrap_or("")
        .contains("/nonexistent/libnothing.so"));
    // The report still says which plugin it is about.
    assert_eq!(report.plugin, "nothing");
    assert!(report
        .to_text()
        .starts_with("plugin nothing (library /nonexistent/libnothing.so)"));
}

/// Writes `dir/<name>.json`, a manifest for `library` with `options`.
fn manifest(dir: &Path, name: &str, library: &Path, options: &str) -> PathBuf {
    let path = dir.join(format!("{name}.json"));
    let text = format!(
        r#"{{"file_format_version": "1.0.0", "name": "{name}", "library_path": "{}", "options": {options}}}"#,
        library.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_plugin_named_like_a_built_in_is_refused_not_certified_as_the_built_in() {
    let dir = scratch("built-in-names");
    for name in ["cpu", "cuda", "wgpu"] {
        let report = run(&manifest(&dir, name, &good_plugin(&dir), "{}"), None);
        assert!(!report.success(), "{}", report.to_text());
        assert_eq!(report.summary.passed, 0, "{}", report.to_text());
        let error = report.error.clone().unwrap_or_default();
        assert!(error.contains("built-in backend"), "{error}");
    }
    // A library file named like a built-in is refused the same way.
    let lib = dir.join(format!(
        "{}cpu{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    std::fs::copy(good_plugin(&dir), &lib).unwrap();
    let report = run(&lib, None);
    assert!(!report.success() && report.summary.passed == 0, "{}", report.to_text());
}

#[test]
fn a_plugin_that_does_not_load_is_a_counted_failure() {
    let dir = scratch("unloadable");
    let junk = dir.join("libjunk.so");
    std::fs::write(&junk, b"not a shared library").unwrap();
    let report = run(&junk, None);
    assert!(!report.success());
    assert_eq!(report.summary.failed, 1, "{}", report.to_text());
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["summary"]["failed"], 1);
    let text = report.to_text();
    assert!(text.contains("cannot be loaded as a shared library"), "{text}");
    assert!(text.lines().any(|l| l == "0 passed, 1 failed, 0 skipped"), "{text}");
}

#[test]
fn a_device_without_divide_or_bool_skips_the_cases_that_need_them() {
    let dir = scratch("gaps");
    let sim = locate::sim_library();
    for (name, options, needle) in [
        ("nodivide", r#"{"refuse_ops": ["divide"]}"#, "needs op divide"),
        ("nobool", r#"{"refuse_dtypes": ["bool"]}"#, "needs"),
    ] {
        let m = manifest(&dir, name, &sim, options);
        for filter in ["reductions::", "placement::"] {
            let report = run(&m, Some(filter));
            assert!(report.success(), "{}", report.to_text());
            assert!(report.summary.passed > 0, "{}", report.to_text());
            if name == "nodivide" && filter == "reductions::" {
                let skips = reasons(&report, "skip");
                assert!(
                    skips.iter().any(|s| s.contains("mean_axes") && s.contains(needle)),
                    "{skips:#?}"
                );
            }
        }
    }
}

#[test]
fn the_c_template_passes_and_reports_its_gaps_as_skips() {
    let report = run(&template_manifest(&scratch("template")), None);
    assert!(report.success(), "{}", report.to_text());
    assert_eq!(report.devices, ["template:0"]);
    assert!(
        report.summary.passed >= 10 && report.summary.skipped > 0,
        "{:?}",
        report.summary
    );
}
