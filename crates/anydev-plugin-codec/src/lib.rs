//! The call codecs between anydev's op types and the plugin C ABI:
//! [`anydev_ops::Op`] to [`AnydevOpCall`] and back, extension-op calls
//! ([`ExtensionCall`]) to [`AnydevExtensionCall`] and back, and the error
//! codes both sides classify failures by ([`ErrorCode`], [`PluginError`]).
//!
//! The host's plugin adapter encodes with [`encode`] and
//! [`encode_extension`], Rust plugins (through `anydev-plugin`) decode with
//! [`decode`] and [`decode_extension`]. Keeping both directions in one crate
//! (and one round-trip test each) is what keeps them inverse to each other,
//! and keeping that crate apart from the plugin helper lets the host depend
//! on the codec without depending on the plugin authors' side. The layout
//! of each op in the call is the table in [`AnydevOpCall`]'s documentation.

mod error;

use anydev_ops::{
    AttrValue, BinaryOp, DType, Distribution, Op, OpCode, Operand, ReduceOp, Scalar, ScanOp, TensorDType, UnaryOp,
};
use anydev_plugin_abi::{
    AnydevAttribute, AnydevBuffer, AnydevExtensionCall, AnydevOpCall, AnydevOperand, AnydevScalar, AnydevTensor,
    Versioned, Zeroed, ANYDEV_ATTR_BOOL, ANYDEV_ATTR_DTYPE, ANYDEV_ATTR_F64, ANYDEV_ATTR_I64, ANYDEV_ATTR_SHAPE,
    ANYDEV_ATTR_STRING, ANYDEV_DISTRIBUTION_NORMAL, ANYDEV_DISTRIBUTION_UNIFORM, ANYDEV_OPERAND_SCALAR,
    ANYDEV_OPERAND_TENSOR, ANYDEV_OP_FLAG_DESCENDING, ANYDEV_OP_FLAG_RIGHT,
};
pub use error::{ErrorCode, PluginError, Result};
use std::ffi::{c_char, CStr, CString};

/// Builds the ABI description of a strided operand. `shape` and `strides`
/// must outlive every use of the result.
pub fn tensor(
    buffer: *mut AnydevBuffer,
    byte_offset: usize,
    dtype: DType,
    shape: &[usize],
    strides: &[isize],
) -> AnydevTensor {
    AnydevTensor {
        buffer,
        byte_offset: byte_offset as u64,
        dtype: dtype.code(),
        ndim: shape.len() as u32,
        // usize/isize and u64/i64 have one layout on the 64-bit targets the
        // ABI is defined for (asserted in anydev-plugin-abi).
        shape: shape.as_ptr().cast::<u64>(),
        strides: strides.as_ptr().cast::<i64>(),
    }
}

/// The (at most three) inputs of one call.
struct Inputs {
    items: [AnydevOperand; 3],
    len: usize,
}

impl Inputs {
    fn push(&mut self, operand: AnydevOperand) {
        self.items[self.len] = operand;
        self.len += 1;
    }

    fn tensor(&mut self, t: AnydevTensor) {
        let mut operand = AnydevOperand::zeroed();
        operand.kind = ANYDEV_OPERAND_TENSOR;
        operand.tensor = t;
        self.push(operand);
    }

    fn scalar(&mut self, s: Scalar) {
        let mut operand = AnydevOperand::zeroed();
        operand.kind = ANYDEV_OPERAND_SCALAR;
        operand.scalar = AnydevScalar {
            dtype: s.dtype().code(),
            reserved: 0,
            // Every scalar but c128 fits in 64 bits, and the array layer
            // passes c128 scalars as arrays (`Error::Internal` otherwise,
            // from the host's op validation).
            bits: s.to_bits() as u64,
        };
        self.push(operand);
    }

    fn operand<T>(&mut self, o: &Operand<T>, tensor: &mut impl FnMut(&T) -> AnydevTensor) {
        match o {
            Operand::Tensor(t) => self.tensor(tensor(t)),
            Operand::Scalar(s) => self.scalar(*s),
        }
    }
}

/// Encodes `op` and hands the call to `run` (the encoded call points into
/// this function's stack, so it lives only for `run`). `tensor` converts
/// one operand, typically with [`tensor`].
pub fn encode<T, R>(
    op: &Op<'_, T>,
    mut tensor: impl FnMut(&T) -> AnydevTensor,
    run: impl FnOnce(&AnydevOpCall) -> R,
) -> R {
    let mut call = AnydevOpCall::new_sized();
    call.op_code = op.code().code();
    let mut inputs = Inputs {
        items: [AnydevOperand::zeroed(); 3],
        len: 0,
    };
    let mut one_axis = [0u64; 1];
    let mut axes: &[u64] = &[];
    let t = &mut tensor;
    match op {
        Op::Unary { x, .. } | Op::Cast { x, .. } | Op::Copy { x, .. } | Op::Nonzero { x, .. } => inputs.tensor(t(x)),
        Op::Binary { lhs, rhs, .. } => {
            inputs.operand(lhs, t);
            inputs.operand(rhs, t);
        }
        Op::Where { cond, x, y, .. } => {
            inputs.tensor(t(cond));
            inputs.operand(x, t);
            inputs.operand(y, t);
        }
        Op::Reduce { x, axes: reduced, .. } => {
            inputs.tensor(t(x));
            // SAFETY: usize and u64 have the same size and alignment on the
            // 64-bit targets the ABI is defined for; the slice is borrowed
            // from `op`, which outlives `run`.
            axes = unsafe { std::slice::from_raw_parts(reduced.as_ptr().cast::<u64>(), reduced.len()) };
        }
        Op::Scan { x, axis, .. } | Op::Sort { x, axis, .. } | Op::Argsort { x, axis, .. } => {
            inputs.tensor(t(x));
            one_axis[0] = *axis as u64;
            axes = &one_axis;
        }
        Op::Take { x, indices, axis, .. } => {
            inputs.tensor(t(x));
            inputs.tensor(t(indices));
            one_axis[0] = *axis as u64;
            axes = &one_axis;
        }
        Op::Fill { value, .. } => inputs.scalar(*value),
        Op::Arange { start, step, .. } => call.params_f64 = [*start, *step],
        Op::Random {
            dist, seed, counter, ..
        } => {
            let (code, params) = match *dist {
                Distribution::Uniform { low, high } => (ANYDEV_DISTRIBUTION_UNIFORM, [low, high]),
                Distribution::Normal { mean, std } => (ANYDEV_DISTRIBUTION_NORMAL, [mean, std]),
            };
            call.distribution = code;
            call.params_f64 = params;
            call.params_u64 = [*seed, *counter];
        }
        Op::Matmul { a, b, .. } => {
            inputs.tensor(t(a));
            inputs.tensor(t(b));
        }
        Op::SearchSorted { sorted, values, .. } => {
            inputs.tensor(t(sorted));
            inputs.tensor(t(values));
        }
    }
    call.flags = match op {
        Op::Sort { descending: true, .. } | Op::Argsort { descending: true, .. } => ANYDEV_OP_FLAG_DESCENDING,
        Op::SearchSorted { right: true, .. } => ANYDEV_OP_FLAG_RIGHT,
        _ => 0,
    };
    call.output = t(op.output());
    call.inputs = inputs.items.as_ptr();
    call.num_inputs = inputs.len;
    call.axes = axes.as_ptr();
    call.num_axes = axes.len();
    run(&call)
}

/// A strided operand as decoded from a call: a buffer handle and its layout.
#[derive(Clone, Copy, Debug)]
pub struct RawTensor<'a> {
    pub buffer: *mut AnydevBuffer,
    pub byte_offset: usize,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
}

impl TensorDType for RawTensor<'_> {
    fn dtype(&self) -> DType {
        self.dtype
    }
}

fn dtype(code: u32) -> Result<DType> {
    DType::from_code(code).ok_or_else(|| PluginError::invalid_argument(format!("unknown dtype code {code}")))
}

/// Borrows `len` elements at `ptr`; NULL is allowed for an empty slice.
///
/// # Safety
///
/// Unless `len` is 0, `ptr` points at `len` initialised `T` that outlive `'a`.
unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(PluginError::invalid_argument(format!(
            "{what}: NULL pointer for {len} elements"
        )));
    }
    // SAFETY: non-NULL and, by the caller's contract, `len` valid elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// # Safety
///
/// `t.shape` and `t.strides` point at `t.ndim` values that outlive `'a`.
unsafe fn raw_tensor<'a>(t: &AnydevTensor) -> Result<RawTensor<'a>> {
    if t.buffer.is_null() {
        return Err(PluginError::invalid_argument("an array operand has a NULL buffer"));
    }
    let ndim = t.ndim as usize;
    // SAFETY: forwarded from the caller; u64/i64 and usize/isize share one
    // layout on the 64-bit targets the ABI is defined for.
    let (shape, strides) = unsafe {
        (
            slice(t.shape.cast::<usize>(), ndim, "shape")?,
            slice(t.strides.cast::<isize>(), ndim, "strides")?,
        )
    };
    Ok(RawTensor {
        buffer: t.buffer,
        byte_offset: usize::try_from(t.byte_offset)
            .map_err(|_| PluginError::invalid_argument("byte offset does not fit in memory"))?,
        dtype: dtype(t.dtype)?,
        shape,
        strides,
    })
}

/// The inputs of one call, checked as they are taken.
struct Decoder<'a> {
    op: OpCode,
    inputs: &'a [AnydevOperand],
}

impl<'a> Decoder<'a> {
    fn expect_inputs(&self, n: usize) -> Result<()> {
        if self.inputs.len() == n {
            Ok(())
        } else {
            Err(PluginError::invalid_argument(format!(
                "{} takes {n} inputs, the call has {}",
                self.op,
                self.inputs.len()
            )))
        }
    }

    fn operand(&self, i: usize) -> Result<Operand<RawTensor<'a>>> {
        let o = &self.inputs[i];
        match o.kind {
            // SAFETY: the host's call points at valid shape/stride arrays
            // for the duration of the call, which outlives the decoded op.
            ANYDEV_OPERAND_TENSOR => Ok(Operand::Tensor(unsafe { raw_tensor(&o.tensor)? })),
            ANYDEV_OPERAND_SCALAR => match dtype(o.scalar.dtype)? {
                DType::C128 => Err(PluginError::invalid_argument(format!(
                    "{}: input {i} is a c128 scalar, which the ABI passes as an array",
                    self.op
                ))),
                d => Ok(Operand::Scalar(Scalar::from_bits(d, o.scalar.bits.into()))),
            },
            k => Err(PluginError::invalid_argument(format!(
                "{}: input {i} has unknown kind {k}",
                self.op
            ))),
        }
    }

    fn tensor(&self, i: usize) -> Result<RawTensor<'a>> {
        match self.operand(i)? {
            Operand::Tensor(t) => Ok(t),
            Operand::Scalar(_) => Err(PluginError::invalid_argument(format!(
                "{}: input {i} must be an array",
                self.op
            ))),
        }
    }

    fn scalar(&self, i: usize) -> Result<Scalar> {
        match self.operand(i)? {
            Operand::Scalar(s) => Ok(s),
            Operand::Tensor(_) => Err(PluginError::invalid_argument(format!(
                "{}: input {i} must be a scalar",
                self.op
            ))),
        }
    }
}

/// Decodes a call the host built with [`encode`] (or a C host built by the
/// table in [`AnydevOpCall`]'s docs). An op code this version does not know
/// is `Unimplemented`; a malformed call is `InvalidArgument`.
///
/// # Safety
///
/// Every pointer in `call` (inputs, axes, shapes, strides) is valid for the
/// lengths it states, for as long as `'a`.
pub unsafe fn decode<'a>(call: &'a AnydevOpCall) -> Result<Op<'a, RawTensor<'a>>> {
    let code = call.op_code;
    let op = OpCode::from_code(code).ok_or_else(|| {
        PluginError::unimplemented(format!(
            "op code {code:#06x} is not in op set {}.{} that this plugin was built with",
            anydev_ops::OP_SET_VERSION.0,
            anydev_ops::OP_SET_VERSION.1
        ))
    })?;
    // SAFETY: forwarded from the caller.
    let (inputs, axes, out) = unsafe {
        (
            slice(call.inputs, call.num_inputs, "inputs")?,
            slice(call.axes.cast::<usize>(), call.num_axes, "axes")?,
            raw_tensor(&call.output)?,
        )
    };
    let d = Decoder { op, inputs };
    let axis = || match axes {
        [axis] => Ok(*axis),
        _ => Err(PluginError::invalid_argument(format!(
            "{op} takes exactly one axis, the call has {}",
            axes.len()
        ))),
    };
    let flag = |bit: u32| call.flags & bit != 0;
    let arity = match op {
        OpCode::Arange | OpCode::Random => 0,
        OpCode::Unary(_)
        | OpCode::Cast
        | OpCode::Copy
        | OpCode::Nonzero
        | OpCode::Reduce(_)
        | OpCode::Scan(_)
        | OpCode::Sort
        | OpCode::Argsort
        | OpCode::Fill => 1,
        OpCode::Binary(_) | OpCode::Take | OpCode::Matmul | OpCode::SearchSorted => 2,
        OpCode::Where => 3,
    };
    d.expect_inputs(arity)?;
    Ok(match op {
        OpCode::Unary(op) => Op::Unary {
            op,
            x: d.tensor(0)?,
            out,
        },
        OpCode::Binary(op) => Op::Binary {
            op,
            lhs: d.operand(0)?,
            rhs: d.operand(1)?,
            out,
        },
        OpCode::Reduce(op) => Op::Reduce {
            op,
            x: d.tensor(0)?,
            axes,
            out,
        },
        OpCode::Scan(op) => Op::Scan {
            op,
            x: d.tensor(0)?,
            axis: axis()?,
            out,
        },
        OpCode::Cast => Op::Cast { x: d.tensor(0)?, out },
        OpCode::Where => Op::Where {
            cond: d.tensor(0)?,
            x: d.operand(1)?,
            y: d.operand(2)?,
            out,
        },
        OpCode::Copy => Op::Copy { x: d.tensor(0)?, out },
        OpCode::Fill => Op::Fill {
            out,
            value: d.scalar(0)?,
        },
        OpCode::Arange => Op::Arange {
            out,
            start: call.params_f64[0],
            step: call.params_f64[1],
        },
        OpCode::Random => {
            let [a, b] = call.params_f64;
            let dist = match call.distribution {
                ANYDEV_DISTRIBUTION_UNIFORM => Distribution::Uniform { low: a, high: b },
                ANYDEV_DISTRIBUTION_NORMAL => Distribution::Normal { mean: a, std: b },
                other => {
                    return Err(PluginError::unimplemented(format!(
                        "random distribution code {other} is unknown"
                    )))
                }
            };
            Op::Random {
                out,
                dist,
                seed: call.params_u64[0],
                counter: call.params_u64[1],
            }
        }
        OpCode::Take => Op::Take {
            x: d.tensor(0)?,
            indices: d.tensor(1)?,
            axis: axis()?,
            out,
        },
        OpCode::Matmul => Op::Matmul {
            a: d.tensor(0)?,
            b: d.tensor(1)?,
            out,
        },
        OpCode::Sort => Op::Sort {
            x: d.tensor(0)?,
            axis: axis()?,
            descending: flag(ANYDEV_OP_FLAG_DESCENDING),
            out,
        },
        OpCode::Argsort => Op::Argsort {
            x: d.tensor(0)?,
            axis: axis()?,
            descending: flag(ANYDEV_OP_FLAG_DESCENDING),
            out,
        },
        OpCode::SearchSorted => Op::SearchSorted {
            sorted: d.tensor(0)?,
            values: d.tensor(1)?,
            right: flag(ANYDEV_OP_FLAG_RIGHT),
            out,
        },
        OpCode::Nonzero => Op::Nonzero { x: d.tensor(0)?, out },
    })
}

/// Attributes in the ABI's form together with the names, strings and lists
/// they point at (heap data that stays put while the value lives, however
/// the value moves).
#[derive(Default)]
pub struct RawAttributes {
    names: Vec<CString>,
    strings: Vec<CString>,
    lists: Vec<Vec<i64>>,
    raw: Vec<AnydevAttribute>,
}

/// A value of one of the ABI's attribute kinds.
pub enum RawValue {
    /// `ANYDEV_ATTR_BOOL`, `I64` or `DTYPE`: the kind and `int_value`.
    Int(u32, i64),
    Float(f64),
    Text(CString),
    /// `ANYDEV_ATTR_I64_LIST` or `SHAPE`: the kind and the list.
    List(u32, Vec<i64>),
}

impl RawAttributes {
    /// Appends the attribute `name` = `value`, keeping both alive here.
    pub fn push(&mut self, name: CString, value: RawValue) {
        let mut a = AnydevAttribute::zeroed();
        a.name = name.as_ptr();
        self.names.push(name);
        match value {
            RawValue::Int(kind, v) => (a.kind, a.int_value) = (kind, v),
            RawValue::Float(v) => (a.kind, a.float_value) = (ANYDEV_ATTR_F64, v),
            RawValue::Text(s) => {
                (a.kind, a.string_value) = (ANYDEV_ATTR_STRING, s.as_ptr());
                self.strings.push(s);
            }
            RawValue::List(kind, list) => {
                (a.kind, a.list, a.list_len) = (kind, list.as_ptr(), list.len());
                self.lists.push(list);
            }
        }
        self.raw.push(a);
    }

    /// The attributes in the ABI's form, pointing into `self`.
    pub fn as_slice(&self) -> &[AnydevAttribute] {
        &self.raw
    }
}

// SAFETY: the raw pointers inside point only into heap data owned by the
// same value, which is never mutated after it is pushed.
unsafe impl Send for RawAttributes {}
// SAFETY: as above.
unsafe impl Sync for RawAttributes {}

/// One call of a named extension op, decoded: the op's name, its operands
/// (contiguous row-major, see [`AnydevExtensionCall`]) and its typed
/// attributes in the caller's order.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionCall<'a, T> {
    pub op: &'a str,
    pub inputs: Vec<T>,
    pub outputs: Vec<T>,
    pub attrs: Vec<(&'a str, AttrValue)>,
}

impl<'a, T> ExtensionCall<'a, T> {
    /// Attribute `name`, if the call has it.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The same call with every operand converted by `f`.
    pub fn try_map<U, E>(self, mut f: impl FnMut(T) -> Result<U, E>) -> Result<ExtensionCall<'a, U>, E> {
        Ok(ExtensionCall {
            op: self.op,
            inputs: self.inputs.into_iter().map(&mut f).collect::<Result<_, E>>()?,
            outputs: self.outputs.into_iter().map(&mut f).collect::<Result<_, E>>()?,
            attrs: self.attrs,
        })
    }
}

/// An operand of an extension call without its memory: what
/// `extension_supported` decides on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorSpec<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
}

impl TensorDType for TensorSpec<'_> {
    fn dtype(&self) -> DType {
        self.dtype
    }
}

/// `text` as a C string, or the error naming `what` when it holds a NUL.
fn c_text(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| PluginError::invalid_argument(format!("{what} {text:?} contains a NUL byte")))
}

/// Encodes an extension call and hands it to `run` (the encoded call
/// points into this function's locals, so it lives only for `run`).
/// `tensor` converts one operand, typically with [`tensor`]. A name or
/// string with a NUL byte, which C cannot carry, is `InvalidArgument`.
pub fn encode_extension<T, R>(
    call: &ExtensionCall<'_, T>,
    mut tensor: impl FnMut(&T) -> AnydevTensor,
    run: impl FnOnce(&AnydevExtensionCall) -> R,
) -> Result<R> {
    let op = c_text(call.op, "the op name")?;
    let inputs: Vec<AnydevTensor> = call.inputs.iter().map(&mut tensor).collect();
    let outputs: Vec<AnydevTensor> = call.outputs.iter().map(&mut tensor).collect();
    let mut attrs = RawAttributes::default();
    for (name, value) in &call.attrs {
        let what = format!("{}: attribute", call.op);
        let value = match value {
            AttrValue::Int(v) => RawValue::Int(ANYDEV_ATTR_I64, *v),
            AttrValue::Float(v) => RawValue::Float(*v),
            AttrValue::Bool(v) => RawValue::Int(ANYDEV_ATTR_BOOL, i64::from(*v)),
            AttrValue::Str(s) => RawValue::Text(c_text(s, &format!("{what} {name}: the string"))?),
            AttrValue::DType(d) => RawValue::Int(ANYDEV_ATTR_DTYPE, i64::from(d.code())),
            AttrValue::Shape(dims) => RawValue::List(
                ANYDEV_ATTR_SHAPE,
                dims.iter()
                    .map(|&d| i64::try_from(d))
                    .collect::<Result<_, _>>()
                    .map_err(|_| PluginError::invalid_argument(format!("{what} {name}: a dimension exceeds i64")))?,
            ),
        };
        attrs.push(c_text(name, &what)?, value);
    }
    let mut raw = AnydevExtensionCall::new_sized();
    raw.op_name = op.as_ptr();
    raw.inputs = inputs.as_ptr();
    raw.num_inputs = inputs.len();
    raw.outputs = outputs.as_ptr();
    raw.num_outputs = outputs.len();
    raw.attributes = attrs.as_slice().as_ptr();
    raw.num_attributes = attrs.as_slice().len();
    Ok(run(&raw))
}

/// A NUL-terminated UTF-8 string of a call.
///
/// # Safety
///
/// `s` is NULL or a NUL-terminated string that outlives `'a`.
unsafe fn call_text<'a>(s: *const c_char, what: &str) -> Result<&'a str> {
    if s.is_null() {
        return Err(PluginError::invalid_argument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL; NUL-terminated and alive for `'a` by the caller's contract.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| PluginError::invalid_argument(format!("{what} is not UTF-8")))
}

/// # Safety
///
/// The attribute's name, string and list are valid as its kind states,
/// for `'a`.
unsafe fn attribute<'a>(op: &str, a: &AnydevAttribute) -> Result<(&'a str, AttrValue)> {
    // SAFETY: forwarded from the caller.
    let name = unsafe { call_text(a.name, &format!("{op}: an attribute name")) }?;
    let bad = |why: String| PluginError::invalid_argument(format!("{op}: attribute {name} {why}"));
    let value = match a.kind {
        ANYDEV_ATTR_I64 => AttrValue::Int(a.int_value),
        ANYDEV_ATTR_F64 => AttrValue::Float(a.float_value),
        ANYDEV_ATTR_BOOL => AttrValue::Bool(a.int_value != 0),
        // SAFETY: forwarded from the caller.
        ANYDEV_ATTR_STRING => {
            AttrValue::Str(unsafe { call_text(a.string_value, &format!("{op}: attribute {name}")) }?.to_owned())
        }
        ANYDEV_ATTR_DTYPE => AttrValue::DType(
            u32::try_from(a.int_value)
                .ok()
                .and_then(DType::from_code)
                .ok_or_else(|| bad(format!("has unknown dtype code {}", a.int_value)))?,
        ),
        ANYDEV_ATTR_SHAPE => {
            // SAFETY: forwarded from the caller.
            let dims = unsafe { slice(a.list, a.list_len, &format!("{op}: attribute {name}")) }?;
            AttrValue::Shape(
                dims.iter()
                    .map(|&d| usize::try_from(d))
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad(format!("has a negative dimension in {dims:?}")))?,
            )
        }
        kind => return Err(bad(format!("has kind {kind}, which extension calls do not use"))),
    };
    Ok((name, value))
}

/// Decodes an extension call with `tensor` converting each operand.
///
/// # Safety
///
/// Every pointer in `call` is valid for the lengths it states, for `'a`.
unsafe fn decode_extension_with<'a, T>(
    call: &'a AnydevExtensionCall,
    tensor: impl Fn(&'a AnydevTensor) -> Result<T>,
) -> Result<ExtensionCall<'a, T>> {
    // SAFETY: forwarded from the caller.
    let (op, inputs, outputs, attrs) = unsafe {
        let op = call_text(call.op_name, "the extension op name")?;
        (
            op,
            slice(call.inputs, call.num_inputs, "inputs")?,
            slice(call.outputs, call.num_outputs, "outputs")?,
            slice(call.attributes, call.num_attributes, "attributes")?,
        )
    };
    Ok(ExtensionCall {
        op,
        inputs: inputs.iter().map(&tensor).collect::<Result<_>>()?,
        outputs: outputs.iter().map(&tensor).collect::<Result<_>>()?,
        // SAFETY: forwarded from the caller.
        attrs: attrs
            .iter()
            .map(|a| unsafe { attribute(op, a) })
            .collect::<Result<_>>()?,
    })
}

/// Decodes an extension call the host built with [`encode_extension`] for
/// `extension_execute`. A malformed call (NULL where data is due, a name
/// that is not UTF-8, an unknown dtype or attribute kind) is
/// `InvalidArgument`.
///
/// # Safety
///
/// Every pointer in `call` (operands, shapes, strides, attributes, names)
/// is valid for the lengths it states, for as long as `'a`.
pub unsafe fn decode_extension<'a>(call: &'a AnydevExtensionCall) -> Result<ExtensionCall<'a, RawTensor<'a>>> {
    // SAFETY: forwarded from the caller.
    unsafe { decode_extension_with(call, |t| raw_tensor(t)) }
}

/// Decodes the call `extension_supported` receives: [`decode_extension`]'s
/// call without memory (every buffer is NULL there).
///
/// # Safety
///
/// As for [`decode_extension`].
pub unsafe fn decode_extension_spec<'a>(call: &'a AnydevExtensionCall) -> Result<ExtensionCall<'a, TensorSpec<'a>>> {
    // SAFETY: forwarded from the caller.
    unsafe {
        decode_extension_with(call, |t| {
            Ok(TensorSpec {
                dtype: dtype(t.dtype)?,
                shape: slice(t.shape.cast::<usize>(), t.ndim as usize, "shape")?,
            })
        })
    }
}

/// One example call of every op code, for round-trip tests of codecs.
#[doc(hidden)]
pub fn example_ops<T: Copy>(a: T, b: T, c: T, out: T) -> Vec<Op<'static, T>> {
    let s = Operand::Scalar(Scalar::F32(2.5));
    let mut ops = Vec::new();
    for &op in UnaryOp::ALL {
        ops.push(Op::Unary { op, x: a, out });
    }
    for &op in BinaryOp::ALL {
        ops.push(Op::Binary {
            op,
            lhs: Operand::Tensor(a),
            rhs: s,
            out,
        });
    }
    for &op in ReduceOp::ALL {
        ops.push(Op::Reduce {
            op,
            x: a,
            axes: &[0, 2],
            out,
        });
    }
    for &op in ScanOp::ALL {
        ops.push(Op::Scan { op, x: a, axis: 1, out });
    }
    ops.extend([
        Op::Cast { x: a, out },
        Op::Where {
            cond: a,
            x: s,
            y: Operand::Tensor(b),
            out,
        },
        Op::Copy { x: a, out },
        Op::Fill {
            out,
            value: Scalar::I16(-7),
        },
        Op::Arange {
            out,
            start: 1.5,
            step: -0.25,
        },
        Op::Random {
            out,
            dist: Distribution::Normal { mean: 1.0, std: 3.0 },
            seed: 42,
            counter: 1 << 40,
        },
        Op::Random {
            out,
            dist: Distribution::Uniform { low: -1.0, high: 1.0 },
            seed: 7,
            counter: 0,
        },
        Op::Take {
            x: a,
            indices: b,
            axis: 2,
            out,
        },
        Op::Matmul { a, b, out },
        Op::Sort {
            x: a,
            axis: 0,
            descending: true,
            out,
        },
        Op::Argsort {
            x: a,
            axis: 1,
            descending: false,
            out,
        },
        Op::SearchSorted {
            sorted: a,
            values: b,
            right: true,
            out,
        },
        Op::Nonzero { x: c, out },
    ]);
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in operand: which of four buffers, with a fixed layout.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Fake(usize, DType);

    impl TensorDType for Fake {
        fn dtype(&self) -> DType {
            self.1
        }
    }

    const SHAPE: [usize; 3] = [2, 3, 4];
    const STRIDES: [isize; 3] = [12, -4, 0];

    #[test]
    fn every_op_survives_encode_then_decode() {
        let ops = example_ops(
            Fake(1, DType::F32),
            Fake(2, DType::I64),
            Fake(3, DType::Bool),
            Fake(4, DType::F64),
        );
        assert!(ops.len() >= OpCode::all().len());
        for op in &ops {
            encode(
                op,
                |f| tensor(f.0 as *mut AnydevBuffer, f.0 * 8, f.1, &SHAPE, &STRIDES),
                |call| {
                    // SAFETY: the call and its arrays live for this closure.
                    let decoded = unsafe { decode(call) }.unwrap_or_else(|e| panic!("{op:?}: {e}"));
                    let back = decoded
                        .try_map(|r| {
                            assert_eq!((r.shape, r.strides), (&SHAPE[..], &STRIDES[..]));
                            assert_eq!(r.byte_offset, r.buffer as usize * 8);
                            Ok::<_, PluginError>(Fake(r.buffer as usize, r.dtype))
                        })
                        .unwrap();
                    assert_eq!(&back, op);
                },
            );
        }
    }

    #[test]
    fn malformed_calls_are_errors() {
        let op = Op::Copy {
            x: Fake(1, DType::F32),
            out: Fake(2, DType::F32),
        };
        let enc = |f: &Fake| tensor(f.0 as *mut AnydevBuffer, 0, f.1, &SHAPE, &STRIDES);
        let mut copy = encode(&op, enc, |call| *call);
        copy.num_inputs = 0;
        // SAFETY: no pointer of the call is dereferenced past its length.
        let err = unsafe { decode(&copy) }.unwrap_err();
        assert!(err.message.contains("takes 1 inputs"), "{err}");
        copy.op_code = 0xffff;
        // SAFETY: as above.
        let err = unsafe { decode(&copy) }.unwrap_err();
        assert_eq!(err.code, crate::ErrorCode::Unimplemented);
    }
    #[test]
    fn extension_calls_survive_encode_then_decode() {
        let call = ExtensionCall {
            op: "test::every_attr",
            inputs: vec![Fake(1, DType::F32), Fake(2, DType::I64)],
            outputs: vec![Fake(3, DType::C64)],
            attrs: vec![
                ("i", AttrValue::Int(-3)),
                ("f", AttrValue::Float(0.25)),
                ("b", AttrValue::Bool(true)),
                ("s", AttrValue::Str("nf4 ü".into())),
                ("d", AttrValue::DType(DType::BF16)),
                ("shape", AttrValue::Shape(vec![2, 0, 7])),
                ("scalar_shape", AttrValue::Shape(vec![])),
            ],
        };
        let enc = |f: &Fake| tensor(f.0 as *mut AnydevBuffer, 0, f.1, &SHAPE, &STRIDES);
        encode_extension(&call, enc, |raw| {
            // SAFETY: the call and its arrays live for this closure.
            let decoded = unsafe { decode_extension(raw) }.unwrap();
            let back = decoded
                .try_map(|r| Ok::<_, PluginError>(Fake(r.buffer as usize, r.dtype)))
                .unwrap();
            assert_eq!(back, call);
            // SAFETY: as above.
            let spec = unsafe { decode_extension_spec(raw) }.unwrap();
            assert_eq!(
                spec.outputs,
                [TensorSpec {
                    dtype: DType::C64,
                    shape: &SHAPE
                }]
            );
        })
        .unwrap();
    }

    #[test]
    fn malformed_extension_calls_are_errors() {
        let call = ExtensionCall {
            op: "test::bad",
            inputs: vec![Fake(1, DType::F32)],
            outputs: vec![Fake(2, DType::F32)],
            attrs: vec![("d", AttrValue::DType(DType::F32))],
        };
        let enc = |f: &Fake| tensor(f.0 as *mut AnydevBuffer, 0, f.1, &SHAPE, &STRIDES);
        let nul = ExtensionCall {
            attrs: vec![("s", AttrValue::Str("a\0b".into()))],
            ..call.clone()
        };
        let err = encode_extension(&nul, enc, |_| ()).unwrap_err();
        assert!(err.message.contains("NUL"), "{err}");
        encode_extension(&call, enc, |raw| {
            // SAFETY: one attribute, alive here.
            let good = unsafe { *raw.attributes };
            let with_attr = |attr: AnydevAttribute| {
                let attrs = [attr];
                let bad = AnydevExtensionCall {
                    attributes: attrs.as_ptr(),
                    ..*raw
                };
                // SAFETY: every pointer of `bad` is alive for this closure.
                unsafe { decode_extension(&bad) }.map(|_| ()).unwrap_err()
            };
            let err = with_attr(AnydevAttribute { int_value: 999, ..good });
            assert!(err.message.contains("unknown dtype code 999"), "{err}");
            let err = with_attr(AnydevAttribute { kind: 99, ..good });
            assert!(err.message.contains("kind 99"), "{err}");
            let mut bad = *raw;
            bad.op_name = std::ptr::null();
            // SAFETY: as above.
            let err = unsafe { decode_extension(&bad) }.unwrap_err();
            assert!(err.message.contains("NULL"), "{err}");
            let mut no_outputs = *raw;
            no_outputs.num_outputs = 1;
            no_outputs.outputs = std::ptr::null();
            // SAFETY: as above (NULL is refused, not read).
            let err = unsafe { decode_extension(&no_outputs) }.unwrap_err();
            assert!(err.message.contains("outputs"), "{err}");
        })
        .unwrap();
    }
}
