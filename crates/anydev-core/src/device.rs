use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

/// The kind of a device (`cpu`, `cuda`, `sim`, ...): an open set of names
/// that backends declare. Kinds are interned, so a `DeviceKind` is a
/// pointer-sized `Copy` value and comparing two is a string comparison only
/// when their pointers differ.
#[derive(Clone, Copy, Eq, PartialOrd, Ord)]
pub struct DeviceKind(&'static str);

impl DeviceKind {
    /// The CPU's kind, without the interning lock: `Device::cpu()` is on
    /// the path of every small op from Python, where the lock and the
    /// hash cost 20 ns, a thirtieth of a 100-element add.
    pub const CPU: DeviceKind = DeviceKind("cpu");

    /// Interns `name`. Names are lower-case ASCII letters, digits and `_`,
    /// starting with a letter (checked by [`DeviceKind::parse`]).
    pub fn new(name: &str) -> DeviceKind {
        if name == DeviceKind::CPU.0 {
            return DeviceKind::CPU;
        }
        static INTERNED: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut set = INTERNED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(existing) = set.get(name) {
            return DeviceKind(existing);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        set.insert(leaked);
        DeviceKind(leaked)
    }

    /// Validates and interns a kind name.
    pub fn parse(name: &str) -> Result<DeviceKind> {
        if is_valid_kind(name) {
            Ok(DeviceKind::new(name))
        } else {
            Err(invalid(
                name,
                "the kind must start with a lower-case letter and contain only a-z, 0-9 and _",
            ))
        }
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl PartialEq for DeviceKind {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0 == other.0
    }
}

impl std::hash::Hash for DeviceKind {
    /// Hashes the name, consistent with `eq` comparing names.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn is_valid_kind(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn invalid(input: &str, reason: &'static str) -> Error {
    Error::InvalidDevice {
        input: input.to_owned(),
        reason,
    }
}

/// One device: a kind and an index, written `kind:index` (`cpu:0`, `sim:1`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    kind: DeviceKind,
    index: usize,
}

impl Device {
    pub fn new(kind: DeviceKind, index: usize) -> Device {
        Device { kind, index }
    }

    /// The CPU, which is always present.
    pub fn cpu() -> Device {
        Device::new(DeviceKind::CPU, 0)
    }

    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    pub fn index(&self) -> usize {
        self.index
    }
}

impl FromStr for Device {
    type Err = Error;

    /// Parses `kind:index`. The index is a decimal number without sign.
    fn from_str(s: &str) -> Result<Device> {
        let Some((kind, index)) = s.split_once(':') else {
            return Err(invalid(s, "missing ':' between kind and index"));
        };
        if kind.is_empty() {
            return Err(invalid(s, "the kind before ':' is empty"));
        }
        let kind = DeviceKind::parse(kind).map_err(|_| {
            invalid(
                s,
                "the kind must start with a lower-case letter and contain only a-z, 0-9 and _",
            )
        })?;
        if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(s, "the index after ':' must be a non-negative whole number"));
        }
        let index = index
            .parse::<usize>()
            .map_err(|_| invalid(s, "the index is too large"))?;
        Ok(Device::new(kind, index))
    }
}

impl TryFrom<&str> for Device {
    type Error = Error;

    fn try_from(s: &str) -> Result<Device> {
        s.parse()
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.index)
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl serde::Serialize for Device {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_kind_is_one_value_however_it_is_made() {
        let parsed: Device = "cpu:0".parse().unwrap();
        assert_eq!(parsed, Device::cpu());
        // The same static string, so comparisons stop at the pointer.
        assert!(std::ptr::eq(parsed.kind().as_str(), DeviceKind::CPU.as_str()));
        assert!(std::ptr::eq(
            DeviceKind::new("cpu").as_str(),
            Device::cpu().kind().as_str()
        ));
        assert_ne!(DeviceKind::new("cpux"), DeviceKind::CPU);
    }

    #[test]
    fn text_round_trips() {
        for text in ["cpu:0", "cuda:1", "sim:3", "my_npu2:12"] {
            let device: Device = text.parse().unwrap();
            assert_eq!(device.to_string(), text);
        }
        let d: Device = "cuda:1".parse().unwrap();
        assert_eq!(d.kind().as_str(), "cuda");
        assert_eq!(d.index(), 1);
        assert_eq!(d, Device::new(DeviceKind::new("cuda"), 1));
    }

    #[test]
    fn malformed_text_is_an_error_that_quotes_the_input_and_shows_the_form() {
        for text in [
            "", "cuda", "cuda:x", ":1", "cpu:-1", "cpu:1:2", "CPU:0", "cpu:", "cpu: 1", "cpu:+1",
        ] {
            let err = text.parse::<Device>().expect_err(text);
            let message = err.to_string();
            assert!(message.contains(&format!("{text:?}")), "{message}");
            assert!(message.contains("kind:index"), "{message}");
        }
    }

    #[test]
    fn interned_kinds_compare_equal() {
        let a = DeviceKind::new("npu");
        let b = DeviceKind::parse("npu").unwrap();
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert!(DeviceKind::parse("1npu").is_err());
    }
}
