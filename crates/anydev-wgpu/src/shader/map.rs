//! The elementwise kernel template: one thread per element of the
//! iteration space (or per four, see [`Access::Vector`]), each operand
//! found through its own strides (zero strides broadcast), a body that
//! computes `r`, one store.

use super::dtype::Repr;
use super::layout::{entry, frame, HEADER};
use std::collections::BTreeSet;

/// How the threads of an elementwise kernel find their elements, chosen
/// per call from the operands' layouts (`Exec::elementwise`). On
/// llvmpipe the general walk over the shape, even when it ends after one
/// dimension, made an `add` of contiguous f32 arrays five times slower
/// than a kernel that indexes them directly; `vec4` loads and stores
/// halve the time again (docs/performance.md, "wgpu: contiguous and
/// vector kernels").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Any layout: each operand's offset from the iteration shape and its
    /// strides (`operand_offset`).
    Strided,
    /// A one-dimensional iteration space: an operand's offset is its
    /// base plus the index times its one stride (`linear_offset`).
    Linear,
    /// A two-dimensional one (a row of biases added to every row of a
    /// matrix, a transposed operand): one division splits the index into
    /// row and column for every operand (`planar_index`), where the shape
    /// walk divides twice per operand.
    Planar,
    /// One-dimensional, with an output of a 1- or 2-byte dtype (bool,
    /// the 8- and 16-bit integers, f16, bf16) at unit stride from its
    /// buffer's first element, spanning its whole allocation: each thread
    /// computes the elements of one 4-byte word, its operands found as in
    /// `Linear`, and stores the word whole. Packed stores are otherwise two
    /// atomics per element (so that threads sharing a word keep each
    /// other's bits): a comparison of 1e6 f32 on llvmpipe took nine times
    /// as long as an add.
    Words,
    /// One-dimensional, every tensor operand and the output with unit
    /// stride starting at its buffer's first element, all in 4-byte
    /// types, and an output that spans its whole allocation: each thread
    /// loads and stores four elements as one `vec4`, at the same index in
    /// every binding. Only for kernels whose body
    /// reads nothing but the operands' values
    /// ([`super::KernelKey::vectorizes`]). An offset read from the params,
    /// even a uniform one, cost llvmpipe a quarter of the kernel's time.
    Vector,
}

/// One operand of an elementwise kernel.
#[derive(Clone, Debug)]
pub enum Operand {
    /// A strided array, bound as `tK`; its element offset is `oK`, and its
    /// value `vK` is loaded unless `load` is false.
    Tensor { repr: Repr, load: bool },
    /// A scalar read from the params slot `slot` into `vK`.
    Scalar { repr: Repr, slot: u32 },
}

/// An elementwise kernel: operands, output (bound as `out`, offset `oo`),
/// extra whole-buffer inputs (bound as `eK`), and a body of WGSL
/// statements that defines `r` in the output's compute type.
#[derive(Clone, Debug)]
pub struct MapSpec {
    pub operands: Vec<Operand>,
    pub out: Repr,
    pub extra: Vec<Repr>,
    /// Compute types whose helpers the body uses beyond the operands'.
    pub uses: Vec<&'static str>,
    pub body: String,
    /// Extra WGSL functions the body calls.
    pub functions: String,
}

/// Helpers for every compute type in `types`, plus the packed-float stores.
pub fn helpers_for<'a>(types: impl IntoIterator<Item = &'a str>) -> String {
    // Complex kernels compute with their component type's helpers.
    let mut complex = false;
    let set: BTreeSet<&str> = types
        .into_iter()
        .map(|t| match t {
            "vec2<f32>" => {
                complex = true;
                "f32"
            }
            "vec2<f64>" => "f64",
            t => t,
        })
        .collect();
    let mut text = String::from(super::dtype::PACKED_FLOAT_HELPERS);
    // Float helpers test bits through the same-width unsigned integer.
    for t in &set {
        text.push_str(&super::prelude::helpers(t));
    }
    if set.contains("f32") {
        text.push_str(super::math_trig::LIBRARY);
    }
    if complex {
        text.push_str(super::complex::LIBRARY);
    }
    text
}

/// The kernel's WGSL for `access`.
pub fn source(spec: &MapSpec, access: Access) -> String {
    let (offset, index, prologue) = match access {
        Access::Vector => return vector_source(spec),
        Access::Words => return words_source(spec),
        Access::Linear => ("linear_offset", "i", ""),
        Access::Planar => ("planar_offset", "rc", "  let rc = planar_index(i);\n"),
        Access::Strided => ("operand_offset", "i", ""),
    };
    let mut inputs = Inputs::of(spec, offset, index);
    inputs.decls.push_str(&spec.out.binding(inputs.slot, "out", true));
    inputs.types.push(spec.out.compute);
    format!(
        "{frame}\n{decls}\n{helpers}\n{functions}\n{entry}{prologue}{loads}  let oo = {offset}({index}, {tensor}u);\n{user}\n  st_out(oo, r);\n}}\n",
        frame = frame(),
        decls = inputs.decls,
        helpers = helpers_for(inputs.types),
        functions = spec.functions,
        entry = entry(),
        loads = inputs.loads,
        tensor = inputs.tensors,
        user = spec.body,
    )
}

/// A kernel's input side, for the forms that load one element at a time.
struct Inputs<'a> {
    /// The bindings of the tensor operands and extra buffers.
    decls: String,
    /// Each operand's `oK` (tensors) and `vK`.
    loads: String,
    /// The compute types the operands use, beside the spec's own.
    types: Vec<&'a str>,
    /// The next free binding, the output's.
    slot: u32,
    /// Tensor operands, so also the output's operand number.
    tensors: u32,
}

impl<'a> Inputs<'a> {
    /// `spec`'s inputs, each tensor operand `k` found at
    /// `offset(index, k)`.
    fn of(spec: &'a MapSpec, offset: &str, index: &str) -> Inputs<'a> {
        let mut inputs = Inputs {
            decls: String::new(),
            loads: String::new(),
            types: spec.uses.clone(),
            slot: 1,
            tensors: 0,
        };
        for (k, operand) in spec.operands.iter().enumerate() {
            match operand {
                Operand::Tensor { repr, load } => {
                    inputs
                        .decls
                        .push_str(&repr.binding(inputs.slot, &format!("t{k}"), false));
                    inputs.slot += 1;
                    let tensor = inputs.tensors;
                    inputs
                        .loads
                        .push_str(&format!("  let o{k} = {offset}({index}, {tensor}u);\n"));
                    if *load {
                        inputs.loads.push_str(&format!("  let v{k} = ld_t{k}(o{k});\n"));
                    }
                    inputs.tensors += 1;
                    inputs.types.push(repr.compute);
                }
                Operand::Scalar { repr, slot } => {
                    inputs
                        .loads
                        .push_str(&format!("  let v{k} = {};\n", scalar(repr, *slot)));
                    inputs.types.push(repr.compute);
                }
            }
        }
        for (k, repr) in spec.extra.iter().enumerate() {
            inputs
                .decls
                .push_str(&repr.binding(inputs.slot, &format!("e{k}"), false));
            inputs.slot += 1;
            inputs.types.push(repr.compute);
        }
        inputs
    }
}

/// WGSL reading scalar operand `slot` from the params.
fn scalar(repr: &Repr, slot: u32) -> String {
    repr.from_meta(&format!("{}u", 2 + 2 * slot))
}

/// [`Access::Vector`]: thread `i` computes elements `4i..4i+4` by calling
/// the body, wrapped as `element(v0, v1, ...)`, once per component, and
/// stores all four even past the end of a length that is not a multiple
/// of four: the host picks this form only when those elements are the
/// output buffer's padding (every allocation is a multiple of 16 bytes,
/// `memory.rs`), and the loads past the inputs' ends stay inside their
/// buffers for the same reason. A branch for a partial last vector cost
/// llvmpipe a fifth of an `add`'s time.
fn vector_source(spec: &MapSpec) -> String {
    let mut decls = String::new();
    let mut params = Vec::new();
    let mut loads = String::new();
    let mut args: Vec<String> = Vec::new();
    let mut tensor = 0u32;
    let mut types: Vec<&str> = spec.uses.clone();
    for (k, operand) in spec.operands.iter().enumerate() {
        match operand {
            Operand::Tensor { repr, .. } => {
                let word = repr.word.unwrap_or(repr.compute);
                decls.push_str(&format!(
                    "@group(0) @binding({slot}) var<storage, read> t{k}: array<vec4<{word}>>;\n",
                    slot = tensor + 1
                ));
                loads.push_str(&format!("  let w{k} = t{k}[i];\n"));
                args.push(format!("w{k}[c]"));
                tensor += 1;
            }
            Operand::Scalar { repr, slot } => {
                loads.push_str(&format!("  let s{k} = {};\n", scalar(repr, *slot)));
                args.push(format!("s{k}"));
            }
        }
        let repr = match operand {
            Operand::Tensor { repr, .. } | Operand::Scalar { repr, .. } => repr,
        };
        params.push(format!("v{k}: {}", repr.compute));
        types.push(repr.compute);
    }
    let out = spec.out.compute;
    types.push(out);
    decls.push_str(&format!(
        "@group(0) @binding({slot}) var<storage, read_write> out: array<vec4<{word}>>;\n",
        slot = tensor + 1,
        word = spec.out.word.unwrap_or(out),
    ));
    let call = |c: &str| format!("element({})", args.join(", ").replace("[c]", c));
    let lanes = [".x", ".y", ".z", ".w"].map(call).join(", ");
    format!(
        "{frame}\n{decls}\n{helpers}\n{functions}\n\
         fn element({params}) -> {out} {{\n{user}\n  return r;\n}}\n\n\
         {entry}{loads}  out[i] = vec4<{out}>({lanes});\n}}\n",
        frame = frame(),
        helpers = helpers_for(types),
        functions = spec.functions,
        params = params.join(", "),
        user = spec.body,
        entry = entry(),
    )
}

/// [`Access::Words`]: the body, with its operands' loads, wrapped as
/// `element(i)` for flat index `i`; thread `w` packs the results of
/// elements `w * per .. (w + 1) * per` into one word. Bits past the last
/// element fall in the output buffer's padding.
fn words_source(spec: &MapSpec) -> String {
    let mut inputs = Inputs::of(spec, "linear_offset", "i");
    inputs.decls.push_str(&format!(
        "@group(0) @binding({slot}) var<storage, read_write> out: array<u32>;\n",
        slot = inputs.slot
    ));
    let out = spec.out.compute;
    inputs.types.push(out);
    let size = spec.out.dtype.size() as u32;
    let per = 4 / size;
    let packs: String = (0..per)
        .map(|c| {
            format!(
                "  if (e + {c}u < n) {{ word = word | ({} << {shift}u); }}\n",
                spec.out.packed_bits(&format!("element(e + {c}u)")),
                shift = c * size * 8,
            )
        })
        .collect();
    format!(
        "{frame}\n{decls}\n{helpers}\n{functions}\n\
         fn element(i: u32) -> {out} {{\n{loads}{user}\n  return r;\n}}\n\n\
         {entry}  let n = u32(params[{HEADER}]);\n  let e = i * {per}u;\n  var word = 0u;\n{packs}  out[i] = word;\n}}\n",
        frame = frame(),
        decls = inputs.decls,
        helpers = helpers_for(inputs.types),
        functions = spec.functions,
        loads = inputs.loads,
        user = spec.body,
        entry = entry(),
    )
}
