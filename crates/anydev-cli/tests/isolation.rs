//! `anydev conformance` runs the plugin in a child process: a plugin that
//! crashes in `initialize` is a failed run naming the call and the signal,
//! and one that crashes in an op fails the cases that run it, naming case,
//! op and signal, while the run goes on to the end. `anydev info
//! --probe-plugins` names the plugin that dies.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The C test plugin compiled with `define` (`NAME` or `NAME=value`), as
/// `lib<name>.so` in a scratch directory.
fn c_plugin(name: &str, define: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let abi = root.join("crates/anydev-plugin-abi");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("anydev-cli-isolation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("lib{name}.so"));
    let status = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared"])
        .arg(format!("-D{define}"))
        .arg("-I")
        .arg(abi.join("include"))
        .arg(abi.join("tests/c_plugin/test_plugin.c"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run cc");
    assert!(status.success(), "compiling the C test plugin with {define} failed");
    out
}

fn conformance(plugin: &Path) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_anydev"))
        .arg("conformance")
        .arg(plugin)
        .output()
        .expect("run anydev conformance");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (output, text)
}

#[test]
fn a_crash_in_initialize_fails_the_run_naming_the_call_and_signal() {
    let (output, text) = conformance(&c_plugin("crash_init", "TEST_INIT_CRASHES=1"));
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("crashed the process while loading")
            && text.contains("SIGSEGV")
            && text.contains("plugin call initialize"),
        "{text}"
    );
    assert!(text.lines().any(|l| l == "0 passed, 1 failed, 0 skipped"), "{text}");
}

#[test]
fn a_crash_in_an_op_fails_that_case_and_the_run_goes_on() {
    let (output, text) = conformance(&c_plugin("crash_add", "TEST_ADD_CRASHES=1"));
    assert_eq!(output.status.code(), Some(1), "{text}");
    let crashed = text
        .lines()
        .find(|l| l.starts_with("elementwise::add_broadcast") && l.contains(" fail "))
        .unwrap_or_else(|| panic!("no failed add_broadcast row:\n{text}"));
    assert!(
        crashed.contains("killed by signal 11 (SIGSEGV) in plugin call execute of op add"),
        "{crashed}"
    );
    // Cases after the crash still ran: the memory check comes last.
    assert!(
        text.lines()
            .any(|l| l.starts_with("abi::memory_is_freed_after_the_run") && l.contains(" pass")),
        "{text}"
    );
}

/// `anydev info <args>` with only the plugins of `plugins`
/// (`ANYDEV_PLUGINS`), run in `dir`: its exit code and output.
fn info_with_plugins(args: &[&str], plugins: &str, dir: &Path) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_anydev"))
        .arg("info")
        .args(args)
        .current_dir(dir)
        .env("ANYDEV_PLUGINS", plugins)
        .env("ANYDEV_PLUGIN_PATH", "")
        .env("XDG_DATA_HOME", "/nonexistent")
        .env("XDG_DATA_DIRS", "/nonexistent")
        .output()
        .expect("run anydev info");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The line of `text` that starts with `name`.
fn line_of(text: &str, name: &str) -> String {
    text.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no line for {name}:\n{text}"))
        .to_owned()
}

#[test]
fn info_probe_plugins_names_the_plugin_that_dies() {
    let crashy = c_plugin("crash_init_probe", "TEST_INIT_CRASHES=1");
    let quitter = c_plugin("exit_init_probe", "TEST_INIT_EXITS=1");
    let fine = c_plugin("fine", "TEST_MINOR=1");
    let plugins = format!(
        "crashy:{},quitter:{},fine:{}",
        crashy.display(),
        quitter.display(),
        fine.display()
    );
    let (code, text) = info_with_plugins(&["--probe-plugins"], &plugins, Path::new("."));
    assert_eq!(code, Some(1), "{text}");
    let crashy_line = line_of(&text, "crashy");
    assert!(
        crashy_line.contains("DIED") && crashy_line.contains("SIGSEGV") && crashy_line.contains("crash_init_probe"),
        "{crashy_line}"
    );
    // exit(0) inside the plugin ends the probe before it reports.
    let quitter_line = line_of(&text, "quitter");
    assert!(
        quitter_line.contains("DIED") && quitter_line.contains("exit status: 0"),
        "{quitter_line}"
    );
    assert!(line_of(&text, "fine").contains("available"), "{text}");
}

#[test]
fn a_library_path_without_a_directory_is_the_file_in_the_working_directory() {
    // Given to the dynamic loader as it is, a bare file name is searched
    // for on the system's library path instead.
    let fine = c_plugin("bare_name", "TEST_MINOR=1");
    let dir = fine.parent().unwrap();
    let name = fine.file_name().unwrap().to_str().unwrap();
    let (code, text) = info_with_plugins(&[], &format!("bare:{name}"), dir);
    assert_eq!(code, Some(0), "{text}");
    let status: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>())
        .find(|words| words.first() == Some(&"bare"))
        .unwrap_or_else(|| panic!("no line for bare:\n{text}"));
    assert_eq!(status, ["bare", "available"], "{text}");
}
