//! `anydev bench` end to end: the shape of its output, never its timings
//! (those are measured and written down in docs/performance.md).

use std::process::Command;

fn anydev(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_anydev"))
        .args(args)
        .env_remove("ANYDEV_DEVICE")
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn quick_json_on_the_cpu_has_every_op_and_the_memcpy_baseline() {
    let (code, stdout, stderr) = anydev(&["bench", "--quick", "--json", "--devices", "cpu:0"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    assert_eq!(json["devices"][0]["device"], "cpu:0");
    assert!(json["devices"][0]["memcpy_gb_per_s"].as_f64().unwrap() > 0.0);
    let rows = json["rows"].as_array().unwrap();
    for op in ["memcpy", "add", "multiply", "divide", "exp", "sum", "matmul"] {
        let row = rows
            .iter()
            .find(|r| r["op"] == op)
            .unwrap_or_else(|| panic!("no {op} row"));
        assert!(row["seconds"].as_f64().unwrap() > 0.0, "{row}");
    }
    // cpu:0 is the host: transfers to and from it are no-ops, not measured.
    assert!(rows.iter().all(|r| !r["op"].as_str().unwrap().starts_with("to_device")));
    let matmul = rows.iter().find(|r| r["op"] == "matmul").unwrap();
    assert!(matmul["gflop_per_s"].is_number() && matmul["memcpy_fraction"].is_null());
}

#[test]
fn an_unknown_device_is_an_error_before_anything_runs() {
    let (code, stdout, stderr) = anydev(&["bench", "--devices", "cpu:7"]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("cpu:7"), "{stderr}");
}
