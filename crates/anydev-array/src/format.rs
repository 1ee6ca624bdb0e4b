//! NumPy-style printing: `Display` like `str(a)` (`[[1. 2.]\n [3. 4.]]`),
//! `Debug` like `repr(a)` with the dtype and device. Arrays of more than
//! [`SUMMARY_THRESHOLD`] elements show the first and last
//! [`EDGE_ITEMS`] entries of each axis.

use crate::array::Array;
use anydev_core::Scalar;
use std::fmt;

/// Arrays with more elements than this are summarised.
pub const SUMMARY_THRESHOLD: usize = 1000;

/// Entries kept at each end of a summarised axis.
pub const EDGE_ITEMS: usize = 3;

/// One element as NumPy writes it: floats with a trailing `.` when
/// integral, `nan`/`inf` in lower case.
fn element(s: Scalar) -> String {
    let text = s.to_string();
    if !s.dtype().is_float() {
        return text;
    }
    match text.as_str() {
        "NaN" | "-NaN" => "nan".into(),
        "inf" | "-inf" => text,
        _ if text.contains(['.', 'e', 'E']) => text,
        _ => text + ".",
    }
}

/// The nested-bracket body of an array with its elements already written.
struct Nested<'a> {
    items: &'a [String],
    shape: &'a [usize],
    width: usize,
    /// Between elements of the last axis: `", "` (repr) or `" "` (str).
    sep: &'a str,
    /// Columns before the outermost `[` (for aligning continuation lines).
    indent: usize,
    summarise: bool,
}

impl Nested<'_> {
    fn write(&self, f: &mut fmt::Formatter<'_>, depth: usize, base: usize) -> fmt::Result {
        if self.shape.is_empty() {
            return write!(f, "{}", self.items[0]);
        }
        let n = self.shape[depth];
        let stride: usize = self.shape[depth + 1..].iter().product();
        let last = depth + 1 == self.shape.len();
        let between = if last {
            self.sep.to_owned()
        } else {
            let blank_lines = "\n".repeat(self.shape.len() - depth - 1);
            format!(
                "{}{blank_lines}{}",
                self.sep.trim_end(),
                " ".repeat(self.indent + depth + 1)
            )
        };
        f.write_str("[")?;
        let elide = self.summarise && n > 2 * EDGE_ITEMS;
        let mut first = true;
        for i in 0..n {
            if elide && i >= EDGE_ITEMS && i < n - EDGE_ITEMS {
                if i == EDGE_ITEMS {
                    write!(f, "{between}...")?;
                }
                continue;
            }
            if !first {
                f.write_str(&between)?;
            }
            first = false;
            if last {
                write!(f, "{:>w$}", self.items[base + i * stride], w = self.width)?;
            } else {
                self.write(f, depth + 1, base + i * stride)?;
            }
        }
        f.write_str("]")
    }
}

/// Writes `array`'s values, or the reason they could not be read.
fn write_values(f: &mut fmt::Formatter<'_>, array: &Array, sep: &str, indent: usize) -> fmt::Result {
    let values = match array.to_scalars() {
        Ok(v) => v,
        Err(e) => return write!(f, "<unreadable: {e}>"),
    };
    let items: Vec<String> = values.into_iter().map(element).collect();
    let width = items.iter().map(String::len).max().unwrap_or(0);
    Nested {
        items: &items,
        shape: array.shape(),
        width,
        sep,
        indent,
        summarise: array.size() > SUMMARY_THRESHOLD,
    }
    .write(f, 0, 0)
}

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_values(f, self, " ", 0)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("array(")?;
        write_values(f, self, ", ", "array(".len())?;
        write!(f, ", dtype={}, device={})", self.dtype(), self.device())
    }
}
