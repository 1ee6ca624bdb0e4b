//! Finding plugins: manifest directories and `ANYDEV_PLUGINS`.
//!
//! Directories are searched in order, and the `*.json` files of each in
//! sorted file-name order, so the outcome never depends on the file
//! system's listing order. Nothing is opened here except manifests:
//! libraries open when the runtime initialises the plugin.

use super::manifest::{Manifest, DEFAULT_PRIORITY};
use crate::DeviceKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where plugins are looked for. `Default` looks nowhere, which keeps
/// test runtimes independent of the machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PluginConfig {
    /// Manifest directories, in search order.
    pub search_dirs: Vec<PathBuf>,
    /// The text of `ANYDEV_PLUGINS`: `name:/path/lib.so,...`.
    pub direct: Option<String>,
}

impl PluginConfig {
    /// `ANYDEV_PLUGIN_PATH` (a `PATH`-style list), then
    /// `$XDG_DATA_HOME/anydev/plugins` (default `~/.local/share`), then
    /// `anydev/plugins` under each of `$XDG_DATA_DIRS` (default
    /// `/usr/local/share:/usr/share`); and `ANYDEV_PLUGINS`.
    pub fn from_env() -> PluginConfig {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let mut search_dirs: Vec<PathBuf> = var("ANYDEV_PLUGIN_PATH")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let data_home = var("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".local/share")));
        let data_dirs = var("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
        let sub = Path::new("anydev").join("plugins");
        search_dirs.extend(
            data_home
                .into_iter()
                .chain(std::env::split_paths(&data_dirs))
                .map(|d| d.join(&sub)),
        );
        PluginConfig {
            search_dirs,
            direct: std::env::var("ANYDEV_PLUGINS").ok().filter(|v| !v.trim().is_empty()),
        }
    }
}

/// A plugin to offer to the runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginSpec {
    /// Registered name and device kind.
    pub name: String,
    pub library: PathBuf,
    /// The manifest that named it; `None` for `ANYDEV_PLUGINS` entries.
    pub manifest: Option<PathBuf>,
    /// The ABI version the manifest declares, checked before loading.
    pub abi_version: Option<(u16, u16)>,
    /// The manifest's default-device priority; without one a plugin gets
    /// [`DEFAULT_PRIORITY`], or `SOFTWARE_PRIORITY` when its devices are
    /// all emulated in software (decided once it has loaded).
    pub priority: Option<i32>,
    pub options_json: String,
}

impl PluginSpec {
    /// Where the plugin came from, for messages.
    pub fn origin(&self) -> String {
        match &self.manifest {
            Some(m) => format!("manifest {}", m.display()),
            None => format!("ANYDEV_PLUGINS entry {}", self.library.display()),
        }
    }

    /// `reason` prefixed with the plugin's name, library and manifest.
    pub fn describe(&self, reason: impl std::fmt::Display) -> String {
        match &self.manifest {
            Some(m) => format!(
                "plugin {} (library {}, manifest {}): {reason}",
                self.name,
                self.library.display(),
                m.display()
            ),
            None => format!(
                "plugin {} (library {}, from ANYDEV_PLUGINS): {reason}",
                self.name,
                self.library.display()
            ),
        }
    }
}

/// One discovered name: a plugin to load, or one already known broken.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Plugin(PluginSpec),
    Broken {
        name: String,
        priority: i32,
        reason: String,
    },
}

impl Entry {
    fn name(&self) -> &str {
        match self {
            Entry::Plugin(spec) => &spec.name,
            Entry::Broken { name, .. } => name,
        }
    }

    fn priority(&self) -> i32 {
        match self {
            Entry::Plugin(spec) => spec.priority.unwrap_or(DEFAULT_PRIORITY),
            Entry::Broken { priority, .. } => *priority,
        }
    }

    fn origin(&self) -> String {
        match self {
            Entry::Plugin(spec) => spec.origin(),
            Entry::Broken { reason, .. } => reason.clone(),
        }
    }
}

/// What discovery found: entries in search order, and problems that have
/// no plugin name to hang on (for `anydev info`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Discovery {
    pub entries: Vec<Entry>,
    pub problems: Vec<String>,
}

/// Finds the plugins `config` names. `reserved` are the built-in backend
/// names, which a plugin may not take.
pub fn discover(config: &PluginConfig, reserved: &[String]) -> Discovery {
    let mut found = Discovery::default();
    for dir in &config.search_dirs {
        scan_dir(dir, &mut found);
    }
    if let Some(text) = &config.direct {
        parse_direct(text, &mut found);
    }
    let mut by_name: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    let mut order = Vec::new();
    for entry in std::mem::take(&mut found.entries) {
        let name = entry.name().to_owned();
        if DeviceKind::parse(&name).is_err() {
            found.problems.push(format!(
                "plugin name {name:?} ({}) is not a valid device kind: use lower-case letters, digits and _, starting with a letter",
                entry.origin()
            ));
        } else if reserved.contains(&name) {
            found.problems.push(format!(
                "plugin {name:?} ({}) was skipped: a built-in backend already has that name; rename the plugin",
                entry.origin()
            ));
        } else {
            if !by_name.contains_key(&name) {
                order.push(name.clone());
            }
            by_name.entry(name).or_default().push(entry);
        }
    }
    for name in order {
        let mut group = by_name.remove(&name).unwrap_or_default();
        if group.len() == 1 {
            found.entries.extend(group.pop());
            continue;
        }
        let origins: Vec<String> = group.iter().map(Entry::origin).collect();
        found.entries.push(Entry::Broken {
            priority: group[0].priority(),
            reason: format!(
                "plugin name {name:?} is declared more than once, by {}; remove or rename all but one",
                origins.join(" and by ")
            ),
            name,
        });
    }
    found
}

/// Adds the manifests of one directory, in sorted file-name order. A
/// directory that does not exist is not a problem (most XDG ones don't).
fn scan_dir(dir: &Path, found: &mut Discovery) {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            found
                .problems
                .push(format!("cannot list plugin directory {}: {e}", dir.display()));
            return;
        }
    };
    let mut manifests: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    manifests.sort();
    for path in manifests {
        match Manifest::read(&path) {
            Ok(m) => found.entries.push(Entry::Plugin(PluginSpec {
                name: m.name,
                library: m.library,
                manifest: Some(m.path),
                abi_version: m.abi_version,
                priority: m.priority,
                options_json: m.options_json,
            })),
            // The name is unknown; the file stem stands in for it, so that
            // asking for `stem:0` shows this reason.
            Err(reason) => match path.file_stem().and_then(|s| s.to_str()) {
                Some(stem) if DeviceKind::parse(stem).is_ok() => found.entries.push(Entry::Broken {
                    name: stem.to_owned(),
                    priority: DEFAULT_PRIORITY,
                    reason,
                }),
                _ => found.problems.push(reason),
            },
        }
    }
}

/// Adds the entries of `ANYDEV_PLUGINS=name:/path/lib.so,...`.
fn parse_direct(text: &str, found: &mut Discovery) {
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once(':') {
            Some((name, path)) if !name.trim().is_empty() && !path.trim().is_empty() => {
                found.entries.push(Entry::Plugin(PluginSpec {
                    name: name.trim().to_owned(),
                    library: PathBuf::from(path.trim()),
                    manifest: None,
                    abi_version: None,
                    priority: None,
                    options_json: "{}".to_owned(),
                }))
            }
            _ => found.problems.push(format!(
                "ANYDEV_PLUGINS entry {item:?} is not of the form name:/path/to/library"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(text: &str) -> PluginConfig {
        PluginConfig {
            search_dirs: Vec::new(),
            direct: Some(text.to_owned()),
        }
    }

    #[test]
    fn direct_entries_parse_and_bad_ones_become_problems() {
        let d = discover(&direct("sim:/opt/libsim.so, npu:/x/libnpu.so,junk"), &[]);
        let names: Vec<_> = d.entries.iter().map(Entry::name).collect();
        assert_eq!(names, ["sim", "npu"]);
        assert_eq!(d.problems.len(), 1);
        assert!(d.problems[0].contains("\"junk\""), "{:?}", d.problems);
    }

    #[test]
    fn duplicate_names_become_one_broken_entry_naming_both_origins() {
        let d = discover(&direct("sim:/a/libsim.so,sim:/b/libsim.so"), &[]);
        assert_eq!(d.entries.len(), 1);
        let Entry::Broken { name, reason, .. } = &d.entries[0] else {
            panic!("{:?}", d.entries)
        };
        assert_eq!(name, "sim");
        assert!(reason.contains("more than once"), "{reason}");
        assert!(
            reason.contains("/a/libsim.so") && reason.contains("/b/libsim.so"),
            "{reason}"
        );
    }

    #[test]
    fn built_in_and_invalid_names_are_refused() {
        let d = discover(&direct("cpu:/x.so,Bad:/y.so"), &["cpu".to_owned()]);
        assert!(d.entries.is_empty());
        assert_eq!(d.problems.len(), 2, "{:?}", d.problems);
    }
}
