//! Plugin manifests: small JSON files that name a plugin library.
//!
//! ```json
//! {
//!   "file_format_version": "1.0.0",
//!   "name": "sim",
//!   "library_path": "libanydev_sim.so",
//!   "abi_version": "1.0",
//!   "priority": 10,
//!   "options": { "devices": 4 }
//! }
//! ```
//!
//! `library_path` is relative to the manifest's directory unless absolute.
//! `abi_version`, `priority` (default [`DEFAULT_PRIORITY`]) and `options`
//! (passed to the plugin's `initialize` as JSON text) are optional.
//! Unknown fields are ignored, so later format versions can add some.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Priority of a plugin whose manifest gives none: above the CPU (0), as
/// for accelerators.
pub const DEFAULT_PRIORITY: i32 = 10;

/// The manifest format major version this loader reads.
pub const FILE_FORMAT_MAJOR: u32 = 1;

#[derive(Deserialize)]
struct RawManifest {
    file_format_version: String,
    name: String,
    library_path: PathBuf,
    abi_version: Option<String>,
    priority: Option<i32>,
    options: Option<serde_json::Value>,
}

/// A manifest, checked and with `library_path` resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub name: String,
    pub library: PathBuf,
    /// The ABI `(major, minor)` the manifest declares, if it does.
    pub abi_version: Option<(u16, u16)>,
    /// The default-device priority, when the manifest sets one.
    pub priority: Option<i32>,
    /// `options` as JSON text (`{}` when absent).
    pub options_json: String,
}

/// Parses a `major.minor` ABI version.
pub fn parse_abi_version(text: &str) -> Option<(u16, u16)> {
    let (major, minor) = text.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

impl Manifest {
    /// Reads and checks the manifest at `path`. Errors name the file, and
    /// for malformed JSON the line and column.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read plugin manifest {}: {e}", path.display()))?;
        Manifest::parse(path, &text)
    }

    /// Parses manifest `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, String> {
        let raw: RawManifest = serde_json::from_str(text).map_err(|e| {
            format!(
                "malformed plugin manifest {}:{}:{}: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        let bad = |what: String| format!("plugin manifest {}: {what}", path.display());
        let format_major = raw
            .file_format_version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok());
        if format_major != Some(FILE_FORMAT_MAJOR) {
            return Err(bad(format!(
                "file_format_version {:?} is not supported; this anydev reads {FILE_FORMAT_MAJOR}.x",
                raw.file_format_version
            )));
        }
        let abi_version = match &raw.abi_version {
            None => None,
            Some(text) => Some(
                parse_abi_version(text)
                    .ok_or_else(|| bad(format!("abi_version {text:?} is not of the form major.minor")))?,
            ),
        };
        if raw.library_path.as_os_str().is_empty() {
            return Err(bad("library_path is empty".into()));
        }
        let library = if raw.library_path.is_absolute() {
            raw.library_path
        } else {
            path.parent().unwrap_or(Path::new(".")).join(raw.library_path)
        };
        Ok(Manifest {
            path: path.to_owned(),
            name: raw.name,
            library,
            abi_version,
            priority: raw.priority,
            options_json: raw.options.map_or_else(|| "{}".to_owned(), |v| v.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_library_paths_resolve_against_the_manifest_directory() {
        let text = r#"{"file_format_version": "1.0.0", "name": "sim", "library_path": "lib/libsim.so",
                       "abi_version": "1.3", "options": {"devices": 4}}"#;
        let m = Manifest::parse(Path::new("/etc/anydev/plugins/sim.json"), text).unwrap();
        assert_eq!(m.library, Path::new("/etc/anydev/plugins/lib/libsim.so"));
        assert_eq!(m.abi_version, Some((1, 3)));
        assert_eq!(m.priority, None);
        assert_eq!(m.options_json, r#"{"devices":4}"#);
        let abs = r#"{"file_format_version": "1.0.0", "name": "x", "library_path": "/opt/x.so", "priority": -1}"#;
        let m = Manifest::parse(Path::new("x.json"), abs).unwrap();
        assert_eq!((m.library.as_path(), m.priority), (Path::new("/opt/x.so"), Some(-1)));
    }

    #[test]
    fn malformed_json_names_the_file_line_and_column() {
        let err = Manifest::parse(Path::new("/p/bad.json"), "{\n  \"name\": \"sim\",\n  oops\n}").unwrap_err();
        assert!(err.contains("/p/bad.json:3:3"), "{err}");
    }

    #[test]
    fn unsupported_versions_and_missing_fields_are_errors() {
        let v2 = r#"{"file_format_version": "2.0.0", "name": "x", "library_path": "x.so"}"#;
        assert!(Manifest::parse(Path::new("m.json"), v2).unwrap_err().contains("2.0.0"));
        let abi = r#"{"file_format_version": "1.0.0", "name": "x", "library_path": "x.so", "abi_version": "one"}"#;
        assert!(Manifest::parse(Path::new("m.json"), abi)
            .unwrap_err()
            .contains("major.minor"));
        let missing = r#"{"file_format_version": "1.0.0", "name": "x"}"#;
        assert!(Manifest::parse(Path::new("m.json"), missing)
            .unwrap_err()
            .contains("library_path"));
    }
}
