//! Floats as NumPy prints them with its default options (precision 8,
//! `floatmode="maxprec"`, no suppression): one style for the whole array,
//! chosen from its finite non-zero magnitudes, so that a column of
//! numbers lines up and `1e-10` is not printed as `0.0000000001`.
//!
//! Each value gets the fewest digits that read back as the same value of
//! its own dtype (an f16 `0.1` prints `0.1`, not its f32 widening
//! `0.099975586`), rounded to at most 8 digits after the point.

/// Digits after the point NumPy keeps by default.
const PRECISION: usize = 8;

/// One float and the dtype whose shortest round-trip digits it prints
/// with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Float {
    F16(half::f16),
    BF16(half::bf16),
    F32(f32),
    F64(f64),
}

impl Float {
    fn value(self) -> f64 {
        match self {
            Float::F16(v) => v.to_f64(),
            Float::BF16(v) => v.to_f64(),
            Float::F32(v) => v as f64,
            Float::F64(v) => v,
        }
    }

    /// `v` rounded to this value's dtype: NumPy compares magnitudes with
    /// its style thresholds in the array's own dtype (a float32 `1e-4` is
    /// not below `1e-4` there).
    fn round_like(self, v: f64) -> f64 {
        match self {
            Float::F16(_) => half::f16::from_f64(v).to_f64(),
            Float::BF16(_) => half::bf16::from_f64(v).to_f64(),
            Float::F32(_) => v as f32 as f64,
            Float::F64(_) => v,
        }
    }

    /// Magnitudes from which NumPy 2.2 on prints the array in scientific
    /// style: `10 ** min(8, decimal digits of the dtype)`
    /// (`np.finfo(dtype).precision`; 2 for bfloat16, as ml_dtypes gives).
    fn scientific_from(self) -> f64 {
        match self {
            Float::F16(_) => 1e3,
            Float::BF16(_) => 1e2,
            Float::F32(_) => 1e6,
            Float::F64(_) => 1e8,
        }
    }

    /// The shortest scientific form that reads back as this value in its
    /// dtype, as Rust's `{:e}` writes it (`1.5e-10`, `1e20`).
    fn shortest_scientific(self) -> String {
        match self {
            Float::F32(v) => format!("{v:e}"),
            Float::F64(v) => format!("{v:e}"),
            Float::F16(v) => shortest_by_search(v.to_f64(), |x| half::f16::from_f64(x) == v),
            Float::BF16(v) => shortest_by_search(v.to_f64(), |x| half::bf16::from_f64(x) == v),
        }
    }
}

/// The fewest significant digits of `value` that `reads_back` accepts
/// (the 16-bit floats, whose crate prints their f32 widening).
fn shortest_by_search(value: f64, reads_back: impl Fn(f64) -> bool) -> String {
    (0..17)
        .map(|frac| format!("{value:.frac$e}"))
        .find(|text| text.parse().is_ok_and(&reads_back))
        .unwrap_or_else(|| format!("{value:e}"))
}

/// Rust's `{:e}` text split into mantissa and exponent.
fn mantissa_and_exponent(text: &str) -> (&str, i32) {
    let (mantissa, exp) = text.split_once('e').expect("`{:e}` writes an exponent");
    (mantissa, exp.parse().expect("`{:e}` writes an integer exponent"))
}

/// A finite value split as NumPy pads it: sign and integer digits, and
/// the digits after the point (without it), plus the exponent in
/// scientific style.
struct Parts {
    int: String,
    frac: String,
    exp: Option<i32>,
}

/// `x` with at most [`PRECISION`] digits after the point, in positional
/// or scientific style.
fn parts(x: Float, scientific: bool) -> Parts {
    let short = x.shortest_scientific();
    let (mantissa, exp) = mantissa_and_exponent(&short);
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let value = x.value();
    if scientific {
        let text = if digits.len() - 1 > PRECISION {
            format!("{value:.PRECISION$e}")
        } else {
            short.clone()
        };
        let (mantissa, exp) = mantissa_and_exponent(&text);
        return split(mantissa, Some(exp));
    }
    let frac_digits = digits.len() as i64 - 1 - exp as i64;
    if frac_digits > PRECISION as i64 {
        return split(&format!("{value:.PRECISION$}"), None);
    }
    // The shortest digits written out around the point.
    let text = if exp >= 0 {
        let point = exp as usize + 1;
        let padded = format!("{digits:0<point$}");
        let (int, frac) = padded.split_at(point);
        format!("{sign}{int}.{frac}")
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        format!("{sign}0.{zeros}{digits}")
    };
    split(&text, None)
}

/// Splits `text` at its point and drops trailing zeros after it.
fn split(text: &str, exp: Option<i32>) -> Parts {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    Parts {
        int: int.to_owned(),
        frac: frac.trim_end_matches('0').to_owned(),
        exp,
    }
}

/// How every element of one array is written.
pub(super) struct FloatFormat {
    scientific: bool,
    /// Width of the sign and integer digits.
    pad_left: usize,
    /// Width of the digits after the point (positional style, padded
    /// with spaces), or their count (scientific style, every mantissa
    /// written to that many digits).
    pad_right: usize,
    /// Exponent digits (scientific style): at least two.
    exp_digits: usize,
    /// Whether positive values get a `+` (the imaginary parts of complex
    /// numbers).
    plus: bool,
}

impl FloatFormat {
    /// NumPy's `FloatingFormat.fillFormat` for `values`.
    pub(super) fn new(values: &[Float], plus: bool) -> FloatFormat {
        let finite: Vec<Float> = values.iter().copied().filter(|x| x.value().is_finite()).collect();
        let magnitudes = finite.iter().map(|x| x.value().abs()).filter(|&m| m != 0.0);
        let (min, max) = magnitudes.fold((f64::INFINITY, 0.0f64), |(lo, hi), m| (lo.min(m), hi.max(m)));
        let scientific = finite.first().is_some_and(|x| {
            let round = |v| x.round_like(v);
            max > 0.0 && (max >= round(x.scientific_from()) || min < round(1e-4) || round(max / min) > round(1e3))
        });
        let all: Vec<Parts> = finite.iter().map(|&x| parts(x, scientific)).collect();
        let sign = |p: &Parts| usize::from(plus && !p.int.starts_with('-'));
        let mut format = FloatFormat {
            scientific,
            pad_left: all.iter().map(|p| p.int.len() + sign(p)).max().unwrap_or(0),
            pad_right: all.iter().map(|p| p.frac.len()).max().unwrap_or(0),
            exp_digits: all
                .iter()
                .filter_map(|p| p.exp)
                .map(|e| e.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2),
            plus,
        };
        if finite.len() != values.len() {
            let negative_inf = plus || values.iter().any(|x| x.value() == f64::NEG_INFINITY);
            let offset = 1 + format.pad_right + format.exp_width();
            let widest = "nan".len().max("inf".len() + usize::from(negative_inf));
            format.pad_left = format.pad_left.max(widest.saturating_sub(offset));
        }
        format
    }

    /// `x` in this format, padded to the array's common width.
    pub(super) fn write(&self, x: Float) -> String {
        let value = x.value();
        if !value.is_finite() {
            let text = if value.is_nan() {
                format!("{}nan", if self.plus { "+" } else { "" })
            } else {
                let sign = if value < 0.0 {
                    "-"
                } else if self.plus {
                    "+"
                } else {
                    ""
                };
                format!("{sign}inf")
            };
            let width = self.pad_left + 1 + self.pad_right + self.exp_width();
            return format!("{text:>width$}");
        }
        let p = if self.scientific {
            // Every mantissa gets the array's count of digits, read from
            // the value itself (NumPy's `min_digits`), not padded with zeros.
            let rounded = format!("{value:.w$e}", w = self.pad_right);
            let (mantissa, exp) = mantissa_and_exponent(&rounded);
            let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            Parts {
                int: int.to_owned(),
                frac: frac.to_owned(),
                exp: Some(exp),
            }
        } else {
            parts(x, false)
        };
        let int = if self.plus && !p.int.starts_with('-') {
            format!("+{}", p.int)
        } else {
            p.int
        };
        let mut text = format!("{int:>w$}.", w = self.pad_left);
        match p.exp {
            Some(exp) => {
                text.push_str(&p.frac);
                let sign = if exp < 0 { '-' } else { '+' };
                text.push_str(&format!("e{sign}{:0>w$}", exp.unsigned_abs(), w = self.exp_digits));
            }
            None => text.push_str(&format!("{:<w$}", p.frac, w = self.pad_right)),
        }
        text
    }

    fn exp_width(&self) -> usize {
        if self.scientific {
            2 + self.exp_digits
        } else {
            0
        }
    }
}
