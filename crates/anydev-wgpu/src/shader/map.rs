//! The elementwise kernel template: one thread per element of the
//! iteration space, each operand found through its own strides (zero
//! strides broadcast), a body that computes `r`, one store.

use super::dtype::Repr;
use super::layout::{entry, frame};
use std::collections::BTreeSet;

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

pub fn source(spec: &MapSpec) -> String {
    let mut decls = String::new();
    let mut slot = 1u32;
    let mut body = String::new();
    let mut tensor = 0u32;
    let mut types: Vec<&str> = spec.uses.clone();
    for (k, operand) in spec.operands.iter().enumerate() {
        match operand {
            Operand::Tensor { repr, load } => {
                decls.push_str(&repr.binding(slot, &format!("t{k}"), false));
                slot += 1;
                body.push_str(&format!("  let o{k} = operand_offset(i, {tensor}u);\n"));
                if *load {
                    body.push_str(&format!("  let v{k} = ld_t{k}(o{k});\n"));
                }
                tensor += 1;
                types.push(repr.compute);
            }
            Operand::Scalar { repr, slot: s } => {
                body.push_str(&format!(
                    "  let v{k} = {};\n",
                    repr.from_meta(&format!("{}u", 2 + 2 * s))
                ));
                types.push(repr.compute);
            }
        }
    }
    for (k, repr) in spec.extra.iter().enumerate() {
        decls.push_str(&repr.binding(slot, &format!("e{k}"), false));
        slot += 1;
        types.push(repr.compute);
    }
    decls.push_str(&spec.out.binding(slot, "out", true));
    types.push(spec.out.compute);
    body.push_str(&format!("  let oo = operand_offset(i, {tensor}u);\n"));
    format!(
        "{frame}\n{decls}\n{helpers}\n{functions}\n{entry}{body}{user}\n  st_out(oo, r);\n}}\n",
        frame = frame(),
        helpers = helpers_for(types),
        functions = spec.functions,
        entry = entry(),
        user = spec.body,
    )
}
