//! `anydev accuracy` end to end: the shape of its output and its exit
//! status, not the numbers (those are in docs/accuracy.md).

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
fn json_on_the_cpu_has_a_row_per_dtype_and_function() {
    let (_, stdout, stderr) = anydev(&["accuracy", "--json", "--device", "cpu:0"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    for dtype in ["f32", "f16", "bf16"] {
        for op in ["exp", "sin", "sqrt", "pow", "atan2"] {
            let row = rows
                .iter()
                .find(|r| r["dtype"] == dtype && r["op"] == op)
                .unwrap_or_else(|| panic!("no {dtype} {op} row"));
            assert_eq!(row["device"], "cpu:0");
            assert!(row["points"].as_u64().unwrap() > 10_000, "{row}");
            assert_eq!(row["within_bound"], true, "{row}");
        }
    }
}

#[test]
fn an_unknown_device_fails_with_its_name() {
    let (code, _, stderr) = anydev(&["accuracy", "--device", "cpu:7"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("cpu:7"), "{stderr}");
}
