//! The dtype half of the kernel generator: for every dtype, the WGSL type
//! kernels compute in and how an element is loaded from and stored to a
//! buffer whose bytes have exactly the host layout.
//!
//! 4- and 8-byte dtypes are bound as native WGSL arrays (`array<f32>`,
//! `array<i64>`). 1- and 2-byte dtypes (bool, i8, u8, i16, u16, f16, bf16)
//! have no WGSL storage type that works everywhere, so they are packed into
//! `u32` words: loads shift and mask, stores update their bits with two
//! atomics (`atomicAnd` clears, `atomicOr` sets) so threads that share a
//! word never lose each other's writes. Packed floats compute in f32 and
//! round once when stored, exactly like the host kernels' `lift`.

use anydev_ops::{DType, DTypeKind};

/// The optional shader features a device has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShaderFeatures {
    pub f64: bool,
    pub int64: bool,
}

impl ShaderFeatures {
    /// Whether a device with these features can hold and compute with `dtype`.
    /// f64 also needs 64-bit integers: f64 bit tests and f64 scalars are
    /// written through `bitcast<u64>`.
    pub fn holds(self, dtype: DType) -> bool {
        match dtype {
            DType::I64 | DType::U64 => self.int64,
            DType::F64 => self.f64 && self.int64,
            // c64 computes in f32; c128's kernels (the c64 library written
            // over f64) are not generated yet.
            DType::C64 => true,
            DType::C128 => false,
            _ => true,
        }
    }
}

/// How one dtype lives in WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dtype: DType,
    /// The WGSL type values are computed in.
    pub compute: &'static str,
    /// Native storage element type, or `None` for packed 1- and 2-byte dtypes.
    pub word: Option<&'static str>,
    /// Packed dtypes: WGSL turning the low bits `$b` (a `u32`) into a compute value.
    decode: &'static str,
    /// Packed dtypes: WGSL turning a compute value `$v` into its bits (a `u32`).
    encode: &'static str,
}

impl Repr {
    pub fn of(dtype: DType) -> Repr {
        let (compute, word, decode, encode) = match dtype {
            DType::Bool => ("u32", None, "select(0u, 1u, $b != 0u)", "($v & 1u)"),
            DType::U8 | DType::U16 => ("u32", None, "$b", "$v"),
            DType::I8 => ("i32", None, "(bitcast<i32>($b << 24u) >> 24u)", "bitcast<u32>($v)"),
            DType::I16 => ("i32", None, "(bitcast<i32>($b << 16u) >> 16u)", "bitcast<u32>($v)"),
            DType::F16 => ("f32", None, "unpack2x16float($b).x", "f32_to_f16_bits($v)"),
            DType::BF16 => ("f32", None, "bitcast<f32>($b << 16u)", "f32_to_bf16_bits($v)"),
            DType::I32 => ("i32", Some("i32"), "", ""),
            DType::U32 => ("u32", Some("u32"), "", ""),
            DType::F32 => ("f32", Some("f32"), "", ""),
            DType::I64 => ("i64", Some("i64"), "", ""),
            DType::U64 => ("u64", Some("u64"), "", ""),
            DType::F64 => ("f64", Some("f64"), "", ""),
            // Two components, real first: the host layout of c64 and c128.
            DType::C64 => ("vec2<f32>", Some("vec2<f32>"), "", ""),
            DType::C128 => ("vec2<f64>", Some("vec2<f64>"), "", ""),
        };
        Repr {
            dtype,
            compute,
            word,
            decode,
            encode,
        }
    }

    pub fn kind(&self) -> DTypeKind {
        self.dtype.kind()
    }

    pub fn is_float(&self) -> bool {
        self.dtype.is_float()
    }

    pub fn is_bool(&self) -> bool {
        self.dtype == DType::Bool
    }

    pub fn is_signed_int(&self) -> bool {
        self.kind() == DTypeKind::SignedInt
    }

    /// Bit width of the dtype (shift ranges and saturation bounds).
    pub fn bits(&self) -> u32 {
        self.dtype.size() as u32 * 8
    }

    /// Whether the compute type is 64 bits wide.
    pub fn wide(&self) -> bool {
        self.compute.ends_with("64")
    }

    /// A WGSL literal of `value` in the compute type.
    pub fn lit(&self, value: i64) -> String {
        if self.dtype.is_complex() {
            let c = Repr::of(self.dtype.real_dtype()).compute;
            return format!("{}({c}({value}), {c}(0))", self.compute);
        }
        format!("{}({value})", self.compute)
    }

    /// WGSL declaring storage binding `slot` as `name`, with `ld_NAME(e)`
    /// (and `st_NAME(e, v)` when `write`) taking element indices.
    pub fn binding(&self, slot: u32, name: &str, write: bool) -> String {
        let ct = self.compute;
        match (self.word, write) {
            (Some(w), false) => format!(
                "@group(0) @binding({slot}) var<storage, read> {name}: array<{w}>;\n\
                 fn ld_{name}(e: i32) -> {ct} {{ return {name}[e]; }}\n"
            ),
            (Some(w), true) => format!(
                "@group(0) @binding({slot}) var<storage, read_write> {name}: array<{w}>;\n\
                 fn ld_{name}(e: i32) -> {ct} {{ return {name}[e]; }}\n\
                 fn st_{name}(e: i32, v: {ct}) {{ {name}[e] = v; }}\n"
            ),
            (None, false) => format!(
                "@group(0) @binding({slot}) var<storage, read> {name}: array<u32>;\n\
                 fn ld_{name}(e: i32) -> {ct} {{\n  let byte = u32(e) * {size}u;\n  let b = ({name}[byte >> 2u] >> ((byte & 3u) * 8u)) & {mask}u;\n  return {dec};\n}}\n",
                size = self.dtype.size(),
                mask = self.mask(),
                dec = self.decode.replace("$b", "b"),
            ),
            (None, true) => format!(
                "@group(0) @binding({slot}) var<storage, read_write> {name}: array<atomic<u32>>;\n\
                 fn ld_{name}(e: i32) -> {ct} {{\n  let byte = u32(e) * {size}u;\n  let b = (atomicLoad(&{name}[byte >> 2u]) >> ((byte & 3u) * 8u)) & {mask}u;\n  return {dec};\n}}\n\
                 fn st_{name}(e: i32, v: {ct}) {{\n  let byte = u32(e) * {size}u;\n  let shift = (byte & 3u) * 8u;\n  let bits = ({enc}) & {mask}u;\n  atomicAnd(&{name}[byte >> 2u], ~({mask}u << shift));\n  atomicOr(&{name}[byte >> 2u], bits << shift);\n}}\n",
                size = self.dtype.size(),
                mask = self.mask(),
                dec = self.decode.replace("$b", "b"),
                enc = self.encode.replace("$v", "v"),
            ),
        }
    }

    /// WGSL reading a scalar of this dtype from the meta words at `at`
    /// (low word) and `at + 1` (high word), as [`anydev_ops::Scalar::to_bits`] laid them out.
    pub fn from_meta(&self, at: &str) -> String {
        let lo = format!("bitcast<u32>(params[{at}])");
        let hi = format!("bitcast<u32>(params[({at}) + 1u])");
        let wide = format!("((u64({hi}) << 32u) | u64({lo}))");
        match self.dtype {
            DType::I32 => format!("bitcast<i32>({lo})"),
            DType::U32 => lo,
            DType::F32 => format!("bitcast<f32>({lo})"),
            DType::U64 => wide,
            DType::I64 => format!("bitcast<i64>({wide})"),
            DType::F64 => format!("bitcast<f64>({wide})"),
            // Real part in the low word, imaginary part in the high word.
            DType::C64 => format!("vec2<f32>(bitcast<f32>({lo}), bitcast<f32>({hi}))"),
            _ => format!("({})", self.decode.replace("$b", &format!("({lo} & {}u)", self.mask()))),
        }
    }

    /// WGSL multiplying the compute values `a` and `b`.
    pub fn mul(&self, a: &str, b: &str) -> String {
        if self.dtype == DType::C64 {
            format!("c64_mul({a}, {b})")
        } else {
            format!("{a} * {b}")
        }
    }

    /// Packed dtypes: WGSL turning the compute value `v` into its bits in
    /// the low bits of a `u32`, masked to the dtype's width.
    pub fn packed_bits(&self, v: &str) -> String {
        format!("(({}) & {}u)", self.encode.replace("$v", v), self.mask())
    }

    fn mask(&self) -> u32 {
        if self.dtype.size() == 1 {
            0xff
        } else {
            0xffff
        }
    }
}

/// WGSL helpers the packed floats need: round-to-nearest-even f32 to f16
/// and bf16 conversions (WGSL's `pack2x16float` leaves rounding and
/// overflow to the implementation, so it is not used).
pub const PACKED_FLOAT_HELPERS: &str = r#"
fn f32_to_f16_bits(v: f32) -> u32 {
  let x = bitcast<u32>(v);
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) { return sign | 0x7e00u | ((ax >> 13u) & 0x3ffu); }
  if (ax >= 0x477ff000u) { return sign | 0x7c00u; }
  if (ax < 0x38800000u) {
    if (ax <= 0x33000000u) { return sign; }
    let e = ax >> 23u;
    let m = (ax & 0x7fffffu) | 0x800000u;
    let s = 126u - e;
    let q = m >> s;
    let r = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    return sign | select(q, q + 1u, r > half || (r == half && (q & 1u) == 1u));
  }
  let base = ax - 0x38000000u;
  let q = base >> 13u;
  let r = base & 0x1fffu;
  return sign | select(q, q + 1u, r > 0x1000u || (r == 0x1000u && (q & 1u) == 1u));
}

fn f32_to_bf16_bits(v: f32) -> u32 {
  let x = bitcast<u32>(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) { return (x >> 16u) | 0x40u; }
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}
"#;
