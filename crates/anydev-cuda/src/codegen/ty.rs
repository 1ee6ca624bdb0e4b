//! How each dtype looks in generated CUDA C: its storage type, the type
//! arithmetic runs in (f32 for the 16-bit floats and c128 for both complex
//! dtypes, as on the host), the unsigned type integer arithmetic wraps in,
//! and the conversions between storage and compute types.

use anydev_ops::DType;

/// The C view of one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ty {
    pub dtype: DType,
}

impl Ty {
    pub const fn of(dtype: DType) -> Ty {
        Ty { dtype }
    }

    /// The storage type (a prelude typedef or a C type).
    pub fn storage(self) -> &'static str {
        match self.dtype {
            DType::Bool | DType::U8 => "u8",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U16 | DType::F16 | DType::BF16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::C64 => "cfloat",
            DType::C128 => "cdouble",
        }
    }

    /// The type values are computed in.
    pub fn compute(self) -> &'static str {
        match self.dtype {
            DType::F16 | DType::BF16 | DType::F32 => "float",
            DType::F64 => "double",
            DType::C64 | DType::C128 => "cdouble",
            _ => self.storage(),
        }
    }

    /// The type sums, products, scans and the matmul kernel accumulate in:
    /// the compute type of floats and complex numbers, the wrapping type of
    /// integers.
    pub fn accumulator(self) -> &'static str {
        if self.is_inexact() {
            self.compute()
        } else {
            self.wide()
        }
    }

    /// The accumulator's value `v` (0 or 1) as a C expression.
    pub fn accumulator_const(self, v: u8) -> String {
        if self.is_complex() {
            format!("cdbl({v}.0, 0.0)")
        } else {
            format!("({}){v}", self.accumulator())
        }
    }

    /// The component dtype's view (`f32` for `c64`; the dtype itself
    /// for real dtypes).
    pub fn component(self) -> Ty {
        Ty::of(self.dtype.real_dtype())
    }

    /// The unsigned type integer arithmetic wraps in (also used for sums
    /// and products of integers, which wrap in the dtype's width).
    pub fn wide(self) -> &'static str {
        if self.dtype.size() == 8 {
            "u64"
        } else {
            "u32"
        }
    }

    /// The unsigned integer type of the element's size (for moving bits).
    pub fn bits_type(self) -> &'static str {
        bits_type(self.dtype.size())
    }

    pub fn bits(self) -> usize {
        self.dtype.size() * 8
    }

    pub fn is_float(self) -> bool {
        self.dtype.is_float()
    }

    pub fn is_bool(self) -> bool {
        self.dtype == DType::Bool
    }

    pub fn is_int(self) -> bool {
        self.dtype.is_integer()
    }

    pub fn is_signed_int(self) -> bool {
        self.is_int() && self.dtype.is_signed()
    }

    pub fn is_complex(self) -> bool {
        self.dtype.is_complex()
    }

    /// Real or complex floating point: what computes in [`Ty::compute`]
    /// and rounds back to storage with [`Ty::down`].
    pub fn is_inexact(self) -> bool {
        self.dtype.is_inexact()
    }

    /// `e != 0` for a storage value `e` (a complex NaN counts as non-zero,
    /// as on the host).
    pub fn nonzero(self, e: &str) -> String {
        if self.is_complex() {
            format!("c_nonzero({e})")
        } else {
            format!("({} != 0)", self.up(e))
        }
    }

    /// `e` (storage) in the compute type.
    pub fn up(self, e: &str) -> String {
        match self.dtype {
            DType::F16 => format!("h2f({e})"),
            DType::BF16 => format!("b2f({e})"),
            DType::C64 => format!("c_up({e})"),
            _ => format!("({e})"),
        }
    }

    /// `e` (compute type) rounded to storage.
    pub fn down(self, e: &str) -> String {
        match self.dtype {
            DType::F16 => format!("f2h({e})"),
            DType::BF16 => format!("f2b({e})"),
            DType::C64 => format!("c_down({e})"),
            _ => format!("({})({e})", self.storage()),
        }
    }

    /// The storage bits of a storage value, as `bits_type`.
    pub fn to_bits(self, e: &str) -> String {
        match self.dtype {
            DType::F32 => format!("__float_as_uint({e})"),
            DType::F64 => format!("(u64)__double_as_longlong({e})"),
            _ => format!("({})({e})", self.bits_type()),
        }
    }

    /// A storage value from its bits.
    pub fn from_bits(self, e: &str) -> String {
        match self.dtype {
            DType::F32 => format!("__uint_as_float({e})"),
            DType::F64 => format!("__longlong_as_double((i64)({e}))"),
            _ => format!("({})({e})", self.storage()),
        }
    }

    /// A C math function for the compute type: `sin` -> `sinf` for float.
    pub fn math(self, name: &str) -> String {
        if self.compute() == "float" {
            format!("{name}f")
        } else {
            name.to_owned()
        }
    }

    /// The least and greatest values as C literals of the storage type
    /// (integers) or of the compute type (floats: infinities).
    pub fn lowest(self) -> String {
        match self.dtype {
            DType::Bool => "(u8)0".into(),
            DType::I8 => "(i8)-128".into(),
            DType::I16 => "(i16)-32768".into(),
            DType::I32 => "(i32)(-2147483647 - 1)".into(),
            DType::I64 => "(i64)(-9223372036854775807ll - 1)".into(),
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => format!("({})0", self.storage()),
            DType::F64 => "__longlong_as_double(0xfff0000000000000ll)".into(),
            _ => "__int_as_float(0xff800000)".into(),
        }
    }

    pub fn highest(self) -> String {
        match self.dtype {
            DType::Bool => "(u8)1".into(),
            DType::I8 => "(i8)127".into(),
            DType::I16 => "(i16)32767".into(),
            DType::I32 => "(i32)2147483647".into(),
            DType::I64 => "(i64)9223372036854775807ll".into(),
            DType::U8 => "(u8)255".into(),
            DType::U16 => "(u16)65535".into(),
            DType::U32 => "(u32)4294967295u".into(),
            DType::U64 => "(u64)18446744073709551615ull".into(),
            DType::F64 => "__longlong_as_double(0x7ff0000000000000ll)".into(),
            _ => "__int_as_float(0x7f800000)".into(),
        }
    }

    /// The C expression of a cast of the storage value `e` of this dtype to
    /// `to`, with anydev's `astype` rules: floats go through their exact
    /// f64 value (to integers: truncate, saturate, NaN -> 0), integers
    /// through their exact integer value (to integers: wrap), bool is `!= 0`.
    pub fn cast_to(self, to: Ty, e: &str) -> String {
        if self.dtype == to.dtype {
            return format!("({e})");
        }
        if self.is_complex() || to.is_complex() {
            return self.complex_cast_to(to, e);
        }
        if self.is_float() {
            let v = format!("((double){})", self.up(e));
            from_f64(to, &v)
        } else {
            // The exact integer value, signed or unsigned 64-bit.
            let v = if self.is_bool() {
                format!("((i64)(({e}) != 0))")
            } else if self.dtype.is_signed() {
                format!("((i64)({e}))")
            } else {
                format!("((u64)({e}))")
            };
            match to.dtype {
                DType::Bool => format!("((u8)({v} != 0))"),
                DType::F32 => format!("((float){v})"),
                DType::F64 => format!("((double){v})"),
                DType::F16 => format!("f2h((float){v})"),
                DType::BF16 => format!("f2b(f32_odd((double){v}))"),
                _ => format!("(({})({})({v}))", to.storage(), unsigned_of(to)),
            }
        }
    }

    /// [`Ty::cast_to`] with a complex side, as the host's complex `astype`:
    /// complex to complex converts each component, complex to bool is
    /// `!= 0`, complex to another real dtype casts the real part, and a
    /// real value becomes the real part (cast to the component dtype) with
    /// a zero imaginary part.
    fn complex_cast_to(self, to: Ty, e: &str) -> String {
        match (self.is_complex(), to.is_complex()) {
            (true, true) => to.down(&self.up(e)),
            (true, false) if to.is_bool() => format!("((u8){})", self.nonzero(e)),
            (true, false) => self.component().cast_to(to, &format!("({e}).re")),
            (false, _) => {
                let re = self.cast_to(to.component(), e);
                match to.dtype {
                    DType::C64 => format!("cflt({re}, 0.0f)"),
                    _ => format!("cdbl({re}, 0.0)"),
                }
            }
        }
    }
}

/// The unsigned integer C type of `size` bytes (`b128`, two 64-bit
/// words, for 16).
pub fn bits_type(size: usize) -> &'static str {
    match size {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        8 => "u64",
        _ => "b128",
    }
}

fn unsigned_of(t: Ty) -> &'static str {
    bits_type(t.dtype.size())
}

/// The C expression converting the f64 expression `v` to `to`'s storage
/// with the rules of `Element::from_f64` on the host.
pub fn from_f64(to: Ty, v: &str) -> String {
    match to.dtype {
        DType::Bool => format!("((u8)({v} != 0.0))"),
        DType::F64 => format!("({v})"),
        DType::F32 => format!("__double2float_rn({v})"),
        DType::F16 => format!("f2h(f32_odd({v}))"),
        DType::BF16 => format!("f2b(f32_odd({v}))"),
        d => {
            let (lo, hi) = match d {
                DType::I8 => ("-128.0", "127.0"),
                DType::I16 => ("-32768.0", "32767.0"),
                DType::I32 => ("-2147483648.0", "2147483647.0"),
                DType::I64 => ("-9223372036854775808.0", "9223372036854775808.0"),
                DType::U8 => ("0.0", "255.0"),
                DType::U16 => ("0.0", "65535.0"),
                DType::U32 => ("0.0", "4294967295.0"),
                _ => ("0.0", "18446744073709551616.0"),
            };
            format!(
                "sat_cast<{s}>({v}, {lo}, {hi}, {}, {})",
                to.lowest(),
                to.highest(),
                s = to.storage()
            )
        }
    }
}
