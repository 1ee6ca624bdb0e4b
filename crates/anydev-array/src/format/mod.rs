//! NumPy-style printing: `Display` like `str(a)` (`[[1. 2.]\n [3. 4.]]`),
//! `Debug` like `repr(a)` with the dtype and device, both as NumPy's
//! `array2string` writes them with its default options. Arrays of more
//! than [`SUMMARY_THRESHOLD`] elements show the first and last
//! [`EDGE_ITEMS`] entries of each axis, and the elements' style is chosen
//! from those shown; lines wrap at [`LINE_WIDTH`] characters.

use crate::array::Array;
use crate::shape::{Dims, Strides};
use anydev_core::Scalar;
use std::fmt;

/// Arrays with more elements than this are summarised.
pub const SUMMARY_THRESHOLD: usize = 1000;

/// Entries kept at each end of a summarised axis.
pub const EDGE_ITEMS: usize = 3;

/// Characters per line before a row of elements wraps.
pub const LINE_WIDTH: usize = 75;

mod float;

use float::{Float, FloatFormat};

/// The elements as NumPy writes them: floats in one style for the whole
/// array ([`float`]), complex numbers as `1.+2.j`, booleans as
/// `True`/`False`. A 0-d array's `True` has no room kept for `False`.
fn elements(values: Vec<Scalar>, zero_dim: bool) -> Vec<String> {
    let float = |s: &Scalar| match *s {
        Scalar::F16(v) => Some(Float::F16(v)),
        Scalar::BF16(v) => Some(Float::BF16(v)),
        Scalar::F32(v) => Some(Float::F32(v)),
        Scalar::F64(v) => Some(Float::F64(v)),
        _ => None,
    };
    let complex = |s: &Scalar| match *s {
        Scalar::C64(v) => Some((Float::F32(v.re), Float::F32(v.im))),
        Scalar::C128(v) => Some((Float::F64(v.re), Float::F64(v.im))),
        _ => None,
    };
    if let Some(floats) = values.iter().map(float).collect::<Option<Vec<_>>>() {
        let format = FloatFormat::new(&floats, false);
        return floats.into_iter().map(|x| format.write(x)).collect();
    }
    if let Some(pairs) = values.iter().map(complex).collect::<Option<Vec<_>>>() {
        let (re, im): (Vec<Float>, Vec<Float>) = pairs.iter().copied().unzip();
        let (re_format, im_format) = (FloatFormat::new(&re, false), FloatFormat::new(&im, true));
        return pairs
            .into_iter()
            .map(|(re, im)| {
                // The `j` goes before the imaginary part's padding.
                let im = im_format.write(im);
                let end = im.trim_end().len();
                format!("{}{}j{}", re_format.write(re), &im[..end], &im[end..])
            })
            .collect();
    }
    let items: Vec<String> = values
        .into_iter()
        .map(|s| match s {
            Scalar::Bool(true) if zero_dim => "True".to_owned(),
            Scalar::Bool(true) => " True".to_owned(),
            Scalar::Bool(false) => "False".to_owned(),
            s => s.to_string(),
        })
        .collect();
    let width = items.iter().map(String::len).max().unwrap_or(0);
    items.into_iter().map(|item| format!("{item:>width$}")).collect()
}

/// The elements a printout shows, as one view of `array`: all of them,
/// or when summarising, the first and last [`EDGE_ITEMS`] along each
/// longer axis. That axis becomes two, `[2, EDGE_ITEMS]`, whose outer
/// stride jumps from the head to the tail, so the view's row-major order
/// is the printout's. Only these elements travel to the host: printing a
/// large (or broadcast) device array reads back at most a few hundred.
fn shown(array: &Array, summarise: bool) -> Array {
    let mut shape = Dims::new();
    let mut strides = Strides::new();
    for (&n, &stride) in array.shape().iter().zip(array.strides()) {
        if summarise && n > 2 * EDGE_ITEMS {
            shape.extend([2, EDGE_ITEMS]);
            strides.extend([(n - EDGE_ITEMS) as isize * stride, stride]);
        } else {
            shape.push(n);
            strides.push(stride);
        }
    }
    array.view(shape, strides, array.offset())
}

/// The nested brackets around elements already written, in the order
/// [`shown`] gives: NumPy's `_formatArray`.
struct Layout<'a> {
    items: &'a [String],
    shape: &'a [usize],
    separator: &'a str,
    summarise: bool,
}

impl Layout<'_> {
    /// The sub-array at `depth` whose first shown element is
    /// `items[*next]`, each line after the first starting with `hanging`,
    /// lines kept within `width`.
    fn nest(&self, depth: usize, next: &mut usize, hanging: &str, width: usize) -> String {
        if depth == self.shape.len() {
            *next += 1;
            return self.items[*next - 1].clone();
        }
        let inner_hanging = format!("{hanging} ");
        let inner_width = width.saturating_sub(1);
        let n = self.shape[depth];
        let summary = self.summarise && n > 2 * EDGE_ITEMS;
        let shown = if summary { 2 * EDGE_ITEMS } else { n };
        let mut text = String::new();
        if depth + 1 == self.shape.len() {
            let room = width.saturating_sub(self.separator.trim_end().len().max(1));
            let mut line = hanging.to_owned();
            for k in 0..shown {
                if summary && k == EDGE_ITEMS {
                    extend_line(&mut text, &mut line, "...", room, hanging);
                    line.push_str(self.separator);
                }
                let word = self.nest(depth + 1, next, &inner_hanging, inner_width);
                extend_line(&mut text, &mut line, &word, room, hanging);
                if k + 1 < shown {
                    line.push_str(self.separator);
                }
            }
            text.push_str(&line);
        } else {
            let line_break = format!(
                "{}{}",
                self.separator.trim_end(),
                "\n".repeat(self.shape.len() - depth - 1)
            );
            for k in 0..shown {
                if summary && k == EDGE_ITEMS {
                    text.push_str(hanging);
                    text.push_str("...");
                    text.push_str(&line_break);
                }
                text.push_str(hanging);
                text.push_str(&self.nest(depth + 1, next, &inner_hanging, inner_width));
                if k + 1 < shown {
                    text.push_str(&line_break);
                }
            }
        }
        format!("[{}]", &text[hanging.len()..])
    }
}

/// Appends `word` to `line`, first moving `line` into `text` when the
/// word would pass `width` and a new line would help.
fn extend_line(text: &mut String, line: &mut String, word: &str, width: usize, hanging: &str) {
    if line.len() + word.len() > width && line.len() > hanging.len() {
        text.push_str(line.trim_end());
        text.push('\n');
        *line = hanging.to_owned();
    }
    line.push_str(word);
}

/// `array`'s values as NumPy's `array2string(a, separator=separator,
/// prefix=prefix, suffix=suffix)` writes them: lines after the first are
/// indented past `prefix`, and every line leaves room for `suffix`. An
/// array whose values cannot be read back says why instead.
pub fn array_to_string(array: &Array, separator: &str, prefix: &str, suffix: &str) -> String {
    if array.size() == 0 {
        return "[]".to_owned();
    }
    let summarise = array.size() > SUMMARY_THRESHOLD;
    let values = match shown(array, summarise).to_scalars() {
        Ok(v) => v,
        Err(e) => return format!("<unreadable: {e}>"),
    };
    let items = elements(values, array.ndim() == 0);
    let layout = Layout {
        items: &items,
        shape: array.shape(),
        separator,
        summarise,
    };
    let hanging = " ".repeat(1 + prefix.len());
    layout.nest(0, &mut 0, &hanging, LINE_WIDTH.saturating_sub(suffix.len()))
}

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&array_to_string(self, " ", "", ""))
    }
}

/// `array` as NumPy's `repr` writes it: `{prefix}{values}, {extras})`,
/// the values as [`array_to_string`] writes them with `", "`, the extras
/// the shape where the values do not show it (an empty array that is not
/// 1-d, a summarised one) followed by `keywords`. The extras move to a new
/// line, indented past `prefix`, when they would pass [`LINE_WIDTH`].
pub fn array_repr(array: &Array, prefix: &str, keywords: &[String]) -> String {
    let mut extras = Vec::with_capacity(keywords.len() + 1);
    let empty_not_flat = array.size() == 0 && array.shape() != [0];
    if empty_not_flat || array.size() > SUMMARY_THRESHOLD {
        extras.push(format!("shape={}", python_tuple(array.shape())));
    }
    extras.extend(keywords.iter().cloned());
    let values = array_to_string(array, ", ", prefix, ")");
    let text = format!("{prefix}{values},");
    let extras = format!("{})", extras.join(", "));
    let last_line = text.len() - text.rfind('\n').map_or(0, |at| at + 1);
    let spacer = if last_line + 1 + extras.len() > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_owned()
    };
    format!("{text}{spacer}{extras}")
}

/// A shape as Python writes a tuple: `()`, `(5,)`, `(2, 3)` (for `repr`s
/// of arrays and of the types bindings build on them).
pub fn python_tuple(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keywords = [format!("dtype={}", self.dtype()), format!("device={}", self.device())];
        f.write_str(&array_repr(self, "array(", &keywords))
    }
}
