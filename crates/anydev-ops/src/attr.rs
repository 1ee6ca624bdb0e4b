//! Typed attributes of extension-op calls (design section 11). They live
//! in the op vocabulary because both sides of the plugin ABI see them: the
//! runtime builds them and a plugin's kernels read them, with one type and
//! one codec between the two.

use crate::DType;

/// The type of one attribute in an op's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Float,
    Bool,
    Str,
    DType,
    Shape,
}

/// One attribute value of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    DType(DType),
    Shape(Vec<usize>),
}

impl AttrValue {
    pub fn kind(&self) -> AttrKind {
        match self {
            AttrValue::Int(_) => AttrKind::Int,
            AttrValue::Float(_) => AttrKind::Float,
            AttrValue::Bool(_) => AttrKind::Bool,
            AttrValue::Str(_) => AttrKind::Str,
            AttrValue::DType(_) => AttrKind::DType,
            AttrValue::Shape(_) => AttrKind::Shape,
        }
    }
}
