//! `anydev info` end to end, as a newcomer runs it.

use std::process::Command;

fn anydev(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_anydev"));
    cmd.args(args).env_remove("ANYDEV_DEVICE").env_remove("ANYDEV_BACKENDS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn json_lists_cpu_0_as_available() {
    let (code, stdout) = anydev(&["info", "--json"], &[]);
    assert_eq!(code, 0, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let cpu = json["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "cpu")
        .expect("a cpu backend");
    assert_eq!(cpu["status"], "available");
    assert_eq!(cpu["devices"][0]["device"], "cpu:0");
    assert!(json["default_device"].is_string());
}

#[test]
fn an_unavailable_anydev_device_fails_with_the_reason() {
    let (code, stdout) = anydev(&["info"], &[("ANYDEV_DEVICE", "cpu:5")]);
    assert_eq!(code, 1);
    assert!(stdout.contains("cpu:5") && stdout.contains("has 1 device"), "{stdout}");
    let (code, stdout) = anydev(&["info", "--json"], &[("ANYDEV_DEVICE", "cpu")]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(json["default_device_error"].as_str().unwrap().contains("kind:index"));
}

#[test]
fn anydev_backends_disables_the_rest() {
    let (code, stdout) = anydev(&["info", "--json"], &[("ANYDEV_BACKENDS", "nothing")]);
    assert_eq!(code, 1, "no backend left means no default device");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let cpu = json["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "cpu")
        .unwrap();
    assert_eq!(cpu["status"], "disabled");
    assert!(json["problems"][0].as_str().unwrap().contains("nothing"));
}

/// `anydev info | head -1` and the like: a reader that has gone away ends
/// the command quietly and successfully, not with a panic.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    for args in [&["info"][..], &["info", "--json"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_anydev"))
            .args(args)
            .env_remove("ANYDEV_DEVICE")
            .stdout(writer.try_clone().expect("clone the pipe's end"))
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
