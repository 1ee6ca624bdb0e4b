//! Known failures that a backend or plugin ships with itself.
//!
//! Shared cases are never edited to skip a device. Instead the device's
//! side lists the cases it is known to fail, each with a reason; such a case
//! is reported as an expected failure, and if it passes, as an unexpected
//! pass (which fails the run, so stale entries get removed). Two places are
//! read, both owned by the backend:
//!
//! - the capability `conformance.expected_failures` (a string holding a JSON
//!   array), which any backend can report, built in or plugin;
//! - the `expected_failures` member of a plugin's manifest, next to its
//!   library, so a vendor can update the list without rebuilding.
//!
//! Each entry is `{"case": PATTERN, "reason": TEXT}`. `PATTERN` is matched
//! against the case name (`elementwise::add_broadcast`) and against the full
//! instance name (`elementwise::add_broadcast::ctest_0::f32`); `*` matches
//! any run of characters.

use anydev_core::Capabilities;
use serde::Deserialize;
use std::path::Path;

/// The capability key under which a backend lists its known failures.
pub const CAPABILITY: &str = "conformance.expected_failures";

/// The manifest member under which a plugin lists its known failures.
pub const MANIFEST_KEY: &str = "expected_failures";

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct KnownFailure {
    pub case: String,
    pub reason: String,
}

/// A list of known failures, from any number of sources.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KnownFailures(Vec<KnownFailure>);

impl KnownFailures {
    /// Parses a JSON array of `{"case", "reason"}` entries.
    pub fn parse(text: &str) -> Result<KnownFailures, String> {
        serde_json::from_str(text)
            .map(KnownFailures)
            .map_err(|e| format!("expected failures are not a JSON array of {{\"case\", \"reason\"}}: {e}"))
    }

    /// The list in a device's capabilities (empty when it has none).
    pub fn from_capabilities(caps: &Capabilities) -> Result<KnownFailures, String> {
        match caps.get(CAPABILITY) {
            None => Ok(KnownFailures::default()),
            Some(anydev_core::CapValue::Str(text)) => {
                KnownFailures::parse(text).map_err(|e| format!("capability {CAPABILITY}: {e}"))
            }
            Some(other) => Err(format!("capability {CAPABILITY} must be a string, not {other:?}")),
        }
    }

    /// The list in a plugin manifest (empty when it has none).
    pub fn from_manifest(path: &Path) -> Result<KnownFailures, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("malformed manifest {}: {e}", path.display()))?;
        match value.get(MANIFEST_KEY) {
            None => Ok(KnownFailures::default()),
            Some(list) => serde_json::from_value(list.clone())
                .map(KnownFailures)
                .map_err(|e| format!("manifest {}: {MANIFEST_KEY}: {e}", path.display())),
        }
    }

    pub fn extend(&mut self, other: KnownFailures) {
        self.0.extend(other.0);
    }

    /// The reason `case` (instance `instance`) is known to fail, if it is.
    pub fn reason(&self, case: &str, instance: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|k| glob(&k.case, case) || glob(&k.case, instance))
            .map(|k| k.reason.as_str())
    }
}

/// Whether `pattern` (with `*` wildcards) matches all of `text`.
pub fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("elementwise::*", "elementwise::add_broadcast"));
        assert!(glob("*::ctest_0::f32", "linalg::matmul::ctest_0::f32"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyycd"));
        assert!(!glob("elementwise", "elementwise::add"));
        assert!(glob("x", "x"));
        assert!(!glob("ab*ba", "aba"));
    }

    #[test]
    fn entries_match_case_or_instance_names() {
        let known = KnownFailures::parse(
            r#"[{"case": "linalg::*", "reason": "no fma"},
                                              {"case": "sort::*::x_1::*", "reason": "x_1 only"}]"#,
        )
        .unwrap();
        assert_eq!(
            known.reason("linalg::matmul", "linalg::matmul::x_0::f32"),
            Some("no fma")
        );
        assert_eq!(known.reason("sort::sort", "sort::sort::x_1::f32"), Some("x_1 only"));
        assert_eq!(known.reason("sort::sort", "sort::sort::x_0::f32"), None);
        assert!(KnownFailures::parse(r#"{"case": "x"}"#).is_err());
    }
}
