//! The simulator's settings: manifest `options` first, then environment
//! variables, which win (they are the per-process knob).
//!
//! | option          | variable                   | meaning                                        |
//! |-----------------|----------------------------|------------------------------------------------|
//! | `devices`       | `ANYDEV_SIM_DEVICES`       | number of devices (default 2)                  |
//! | `memory_limit`  | `ANYDEV_SIM_MEMORY_LIMIT`  | bytes per device (`K`/`M`/`G` suffixes)        |
//! | `refuse_dtypes` | `ANYDEV_SIM_REFUSE_DTYPES` | dtypes the devices refuse (`f64,f16`)          |
//! | `refuse_ops`    | (manifest only)            | ops the devices refuse (`["divide"]`), extension ops included (`["quant::gemv_4bit"]`: not listed) |
//! | `peer_access`   | `ANYDEV_SIM_PEER_ACCESS`   | devices reach each other's memory (1/0)        |
//! | `unified`       | `ANYDEV_SIM_UNIFIED`       | reach host and managed memory (1/0, default 0) |
//! | `op_delay_us`   | `ANYDEV_SIM_OP_DELAY_US`   | µs each op/fill/copy sleeps first (default 0)  |

use anydev_ops::{DType, OpCode};
use anydev_plugin::{PluginError, Result};
use serde_json::Value;

/// Default number of simulated devices.
pub const DEFAULT_DEVICES: usize = 2;

/// More devices than this is surely a typo.
const MAX_DEVICES: usize = 1024;

/// A delay above a minute per job is surely a typo (or a unit mix-up).
const MAX_OP_DELAY_US: u64 = 60_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub devices: usize,
    /// Bytes each device may have allocated at once; `None` for no limit.
    pub memory_limit: Option<u64>,
    /// Dtypes the devices do not hold or compute with (as on GPUs without f64).
    pub refused: Vec<DType>,
    /// Ops the devices say they do not implement, for any dtype (a device
    /// with gaps, as conformance must handle).
    pub refused_ops: Vec<OpCode>,
    /// Extension ops the devices do not list (a plugin without a
    /// library's ops, whose callers must get `NoKernel`).
    pub refused_extensions: Vec<String>,
    /// Whether each device reaches the others' memory directly. Without it,
    /// copies between devices are staged through host memory.
    pub peer_access: bool,
    /// Unified mode: the devices reach pageable host memory and managed
    /// memory (like HMM/ATS); off, they are discrete and reach only device
    /// memory.
    pub unified: bool,
    /// Microseconds every piece of device work (op, fill, device-side copy)
    /// sleeps before it runs, so that missing ordering shows up as wrong
    /// results. 0 by default.
    pub op_delay_us: u64,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            devices: DEFAULT_DEVICES,
            memory_limit: None,
            refused: Vec::new(),
            refused_ops: Vec::new(),
            refused_extensions: Vec::new(),
            peer_access: true,
            unified: false,
            op_delay_us: 0,
        }
    }
}

fn invalid(what: &str, value: impl std::fmt::Display, expected: &str) -> PluginError {
    PluginError::invalid_argument(format!("sim: {what} = {value} is invalid: expected {expected}"))
}

/// `64`, `64K`, `16M`, `2G` (powers of 1024).
fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, scale) = match text.char_indices().last()? {
        (i, 'k' | 'K') => (&text[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&text[..i], 1 << 20),
        (i, 'g' | 'G') => (&text[..i], 1 << 30),
        _ => (text, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(scale)
}

/// What [`parse_bool`] reads, for error messages.
const BOOL_WORDS: &str = "1, true, on or yes; 0, false, off or no";

/// A device count from the setting `what` (`value` as written): a whole
/// number from 1 to [`MAX_DEVICES`].
fn device_count(what: &str, count: Option<u64>, value: impl std::fmt::Display) -> Result<usize> {
    count
        .filter(|n| (1..=MAX_DEVICES as u64).contains(n))
        .map(|n| n as usize)
        .ok_or_else(|| invalid(what, value, &format!("a whole number from 1 to {MAX_DEVICES}")))
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

fn parse_dtypes<'a>(names: impl IntoIterator<Item = &'a str>, what: &str) -> Result<Vec<DType>> {
    names
        .into_iter()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            n.parse::<DType>()
                .map_err(|e| PluginError::invalid_argument(format!("sim: {what}: {e}")))
        })
        .collect()
}

impl SimConfig {
    /// Reads the manifest options (JSON text) and then `env` (a lookup of
    /// environment variables, so tests need not touch the process's).
    pub fn from_sources(options_json: &str, env: impl Fn(&str) -> Option<String>) -> Result<SimConfig> {
        let mut config = SimConfig::default();
        config.apply_options(options_json)?;
        config.apply_env(env)?;
        Ok(config)
    }

    fn apply_options(&mut self, options_json: &str) -> Result<()> {
        let options: Value = serde_json::from_str(options_json)
            .map_err(|e| PluginError::invalid_argument(format!("sim: options are not valid JSON: {e}")))?;
        let Value::Object(map) = options else {
            return Err(invalid("options", options_json, "a JSON object"));
        };
        for (key, value) in &map {
            match (key.as_str(), value) {
                ("devices", Value::Number(n)) => self.devices = device_count("devices", n.as_u64(), n)?,
                ("memory_limit", Value::Number(n)) => {
                    self.memory_limit = Some(n.as_u64().ok_or_else(|| invalid("memory_limit", n, "bytes"))?)
                }
                ("memory_limit", Value::String(s)) => {
                    self.memory_limit =
                        Some(parse_bytes(s).ok_or_else(|| invalid("memory_limit", s, "bytes like 64M"))?)
                }
                ("memory_limit", Value::Null) => self.memory_limit = None,
                ("refuse_dtypes", Value::Array(items)) => {
                    let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                    let names = names.ok_or_else(|| invalid("refuse_dtypes", value, "a list of dtype names"))?;
                    self.refused = parse_dtypes(names, "refuse_dtypes")?;
                }
                // The environment variable's spelling, `"f64,f16"`, as well.
                ("refuse_dtypes", Value::String(names)) => {
                    self.refused = parse_dtypes(names.split(','), "refuse_dtypes")?;
                }
                ("refuse_ops", Value::Array(items)) => {
                    let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                    let names = names.ok_or_else(|| invalid("refuse_ops", value, "a list of op names"))?;
                    let (extensions, built_in): (Vec<&str>, Vec<&str>) =
                        names.into_iter().partition(|n| n.contains("::"));
                    self.refused_ops = built_in
                        .into_iter()
                        .map(|name| {
                            OpCode::all().into_iter().find(|op| op.name() == name).ok_or_else(|| {
                                invalid("refuse_ops", name, "op names like \"divide\" or \"quant::gemv_4bit\"")
                            })
                        })
                        .collect::<Result<_>>()?;
                    self.refused_extensions = extensions
                        .into_iter()
                        .map(|name| match crate::extension::implemented().any(|op| op == name) {
                            true => Ok(name.to_owned()),
                            false => Err(invalid("refuse_ops", name, "an extension op the simulator implements")),
                        })
                        .collect::<Result<_>>()?;
                }
                ("peer_access", Value::Bool(b)) => self.peer_access = *b,
                ("unified", Value::Bool(b)) => self.unified = *b,
                ("op_delay_us", Value::Number(n)) => {
                    self.op_delay_us = n
                        .as_u64()
                        .filter(|&us| us <= MAX_OP_DELAY_US)
                        .ok_or_else(|| invalid("op_delay_us", n, &format!("microseconds up to {MAX_OP_DELAY_US}")))?
                }
                (key, value) => return Err(invalid(key, value, "a known option with a value of its type")),
            }
        }
        Ok(())
    }

    fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<()> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if let Some(v) = env("ANYDEV_SIM_DEVICES") {
            self.devices = device_count("ANYDEV_SIM_DEVICES", v.trim().parse().ok(), &v)?;
        }
        if let Some(v) = env("ANYDEV_SIM_MEMORY_LIMIT") {
            self.memory_limit = Some(
                parse_bytes(&v).ok_or_else(|| invalid("ANYDEV_SIM_MEMORY_LIMIT", &v, "bytes like 67108864 or 64M"))?,
            );
        }
        if let Some(v) = env("ANYDEV_SIM_REFUSE_DTYPES") {
            self.refused = parse_dtypes(v.split(','), "ANYDEV_SIM_REFUSE_DTYPES")?;
        }
        if let Some(v) = env("ANYDEV_SIM_PEER_ACCESS") {
            self.peer_access = parse_bool(&v).ok_or_else(|| invalid("ANYDEV_SIM_PEER_ACCESS", &v, BOOL_WORDS))?;
        }
        if let Some(v) = env("ANYDEV_SIM_UNIFIED") {
            self.unified = parse_bool(&v).ok_or_else(|| invalid("ANYDEV_SIM_UNIFIED", &v, BOOL_WORDS))?;
        }
        if let Some(v) = env("ANYDEV_SIM_OP_DELAY_US") {
            self.op_delay_us = v
                .trim()
                .parse()
                .ok()
                .filter(|&us| us <= MAX_OP_DELAY_US)
                .ok_or_else(|| {
                    invalid(
                        "ANYDEV_SIM_OP_DELAY_US",
                        &v,
                        &format!("microseconds up to {MAX_OP_DELAY_US}"),
                    )
                })?;
        }
        Ok(())
    }

    /// The dtypes the devices hold: the host kernels' less the refused ones.
    pub fn dtypes(&self) -> Vec<DType> {
        anydev_kernels::dtypes()
            .into_iter()
            .filter(|d| !self.refused.contains(d))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_options_and_environment_layer_in_that_order() {
        assert_eq!(SimConfig::from_sources("{}", no_env).unwrap(), SimConfig::default());
        let options = r#"{"devices": 4, "memory_limit": "1K", "refuse_dtypes": ["f64"], "peer_access": false}"#;
        let c = SimConfig::from_sources(options, no_env).unwrap();
        assert_eq!(
            (c.devices, c.memory_limit, c.refused.as_slice(), c.peer_access),
            (4, Some(1024), &[DType::F64][..], false)
        );
        let env = |name: &str| match name {
            "ANYDEV_SIM_DEVICES" => Some("3".to_owned()),
            "ANYDEV_SIM_REFUSE_DTYPES" => Some("f16, bf16".to_owned()),
            "ANYDEV_SIM_PEER_ACCESS" => Some("on".to_owned()),
            _ => None,
        };
        let c = SimConfig::from_sources(options, env).unwrap();
        assert_eq!((c.devices, c.memory_limit, c.peer_access), (3, Some(1024), true));
        assert_eq!(c.refused, [DType::F16, DType::BF16]);
        assert!(!c.dtypes().contains(&DType::F16) && c.dtypes().contains(&DType::F64));
    }

    #[test]
    fn refused_dtypes_are_a_list_or_a_comma_separated_string() {
        for options in [
            r#"{"refuse_dtypes": ["f64", "f16"]}"#,
            r#"{"refuse_dtypes": "f64, f16"}"#,
        ] {
            let c = SimConfig::from_sources(options, no_env).unwrap();
            assert_eq!(c.refused, [DType::F64, DType::F16], "{options}");
        }
        let err = SimConfig::from_sources(r#"{"refuse_dtypes": "f64,f65"}"#, no_env).unwrap_err();
        assert!(err.message.contains("f65"), "{err}");
    }

    #[test]
    fn bad_values_are_errors_that_name_the_setting() {
        for (options, needle) in [
            (r#"{"devices": 0}"#, "devices"),
            (r#"{"memory_limit": "lots"}"#, "memory_limit"),
            (r#"{"refuse_dtypes": ["f65"]}"#, "f65"),
            (r#"{"colour": "blue"}"#, "colour"),
            ("[1]", "options"),
            ("{", "not valid JSON"),
        ] {
            let err = SimConfig::from_sources(options, no_env).unwrap_err();
            assert!(err.message.contains(needle), "{options}: {err}");
        }
        for (variable, value) in [
            ("ANYDEV_SIM_MEMORY_LIMIT", "12Q"),
            ("ANYDEV_SIM_DEVICES", "0"),
            ("ANYDEV_SIM_DEVICES", "100000"),
            ("ANYDEV_SIM_UNIFIED", "maybe"),
        ] {
            let env = |name: &str| (name == variable).then(|| value.to_owned());
            let message = SimConfig::from_sources("{}", env).unwrap_err().message;
            assert!(message.contains(variable), "{variable}={value}: {message}");
        }
        let env = |name: &str| (name == "ANYDEV_SIM_PEER_ACCESS").then(|| "maybe".to_owned());
        let message = SimConfig::from_sources("{}", env).unwrap_err().message;
        assert!(message.contains("true") && message.contains("off"), "{message}");
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
    }

    #[test]
    fn unified_mode_and_the_op_delay_are_off_by_default_and_layer_like_the_rest() {
        let c = SimConfig::from_sources("{}", no_env).unwrap();
        assert_eq!((c.unified, c.op_delay_us), (false, 0));
        let options = r#"{"unified": true, "op_delay_us": 250}"#;
        let c = SimConfig::from_sources(options, no_env).unwrap();
        assert_eq!((c.unified, c.op_delay_us), (true, 250));
        let env = |name: &str| match name {
            "ANYDEV_SIM_UNIFIED" => Some("off".to_owned()),
            "ANYDEV_SIM_OP_DELAY_US" => Some(" 1000 ".to_owned()),
            _ => None,
        };
        let c = SimConfig::from_sources(options, env).unwrap();
        assert_eq!((c.unified, c.op_delay_us), (false, 1000));
        let env = |name: &str| (name == "ANYDEV_SIM_UNIFIED").then(|| "yes".to_owned());
        assert!(SimConfig::from_sources("{}", env).unwrap().unified);
        // An empty variable leaves the manifest's value.
        let env = |name: &str| (name == "ANYDEV_SIM_UNIFIED").then(String::new);
        assert!(SimConfig::from_sources(r#"{"unified": true}"#, env).unwrap().unified);
    }

    #[test]
    fn bad_unified_and_delay_values_name_the_setting() {
        for (options, needle) in [
            (r#"{"unified": "yes"}"#, "unified"),
            (r#"{"unified": 1}"#, "unified"),
            (r#"{"op_delay_us": -5}"#, "op_delay_us"),
            (r#"{"op_delay_us": 1.5}"#, "op_delay_us"),
            (r#"{"op_delay_us": "10"}"#, "op_delay_us"),
            (r#"{"op_delay_us": 60000001}"#, "op_delay_us"),
        ] {
            let err = SimConfig::from_sources(options, no_env).unwrap_err();
            assert!(err.message.contains(needle), "{options}: {err}");
        }
        for (name, value) in [
            ("ANYDEV_SIM_UNIFIED", "maybe"),
            ("ANYDEV_SIM_OP_DELAY_US", "10ms"),
            ("ANYDEV_SIM_OP_DELAY_US", "-1"),
        ] {
            let env = |n: &str| (n == name).then(|| value.to_owned());
            let err = SimConfig::from_sources("{}", env).unwrap_err();
            assert!(err.message.contains(name) && err.message.contains(value), "{err}");
        }
    }
}
