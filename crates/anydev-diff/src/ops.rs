//! Runs a case's op through the public API, by name.

use crate::case::{Case, Index, Input, Kwargs, Number, Repeats};
use crate::hex;
use anydev::{self as ad, Arg, Array, DType, Device, Element, NormOrd, Order, Side, SliceArg, Weak};

/// The case's result, or why the driver could not run it (`Err`).
pub fn run(case: &Case) -> Result<ad::Result<Array>, String> {
    let device: Device = match case.device.parse() {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    let mut args = Vec::with_capacity(case.args.len());
    for input in &case.args {
        match upload(input, device)? {
            Ok(a) => args.push(a),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let (false, Some(first)) = (case.kw.view.is_empty(), args.first_mut()) {
        match first.slice(&indices(&case.kw.view)) {
            Ok(view) => *first = view,
            Err(e) => return Ok(Err(e)),
        }
    }
    call(&case.op, &args, &case.kw, device)
}

fn dtype(name: &str) -> Result<DType, String> {
    name.parse().map_err(|e| format!("{e}"))
}

/// The input on `device`, built from its bytes in its own dtype.
fn upload(input: &Input, device: Device) -> Result<ad::Result<Array>, String> {
    fn typed<T: Element>(bytes: &[u8], shape: &[usize], device: Device) -> ad::Result<Array> {
        let values: Vec<T> = bytes.chunks_exact(T::DTYPE.size()).map(T::get_le).collect();
        Array::from_vec(values, shape, device)
    }
    let dtype = dtype(&input.dtype)?;
    let bytes = hex::decode(&input.hex)?;
    let elements: usize = input.shape.iter().product();
    if bytes.len() != elements * dtype.size() {
        return Err(format!("{} bytes for {elements} {dtype} elements", bytes.len()));
    }
    let (b, s, d) = (&bytes[..], &input.shape[..], device);
    Ok(match dtype {
        DType::Bool => typed::<bool>(b, s, d),
        DType::I8 => typed::<i8>(b, s, d),
        DType::I16 => typed::<i16>(b, s, d),
        DType::I32 => typed::<i32>(b, s, d),
        DType::I64 => typed::<i64>(b, s, d),
        DType::U8 => typed::<u8>(b, s, d),
        DType::U16 => typed::<u16>(b, s, d),
        DType::U32 => typed::<u32>(b, s, d),
        DType::U64 => typed::<u64>(b, s, d),
        DType::F16 => typed::<half::f16>(b, s, d),
        DType::BF16 => typed::<half::bf16>(b, s, d),
        DType::F32 => typed::<f32>(b, s, d),
        DType::F64 => typed::<f64>(b, s, d),
        DType::C64 => typed::<ad::Complex32>(b, s, d),
        DType::C128 => typed::<ad::Complex64>(b, s, d),
    })
}

type Unary = fn(&Array) -> ad::Result<Array>;
type Binary = fn(Arg<'_>, Arg<'_>) -> ad::Result<Array>;

/// The one-argument elementwise functions, by name.
macro_rules! unary_by_name {
    ($name:expr; $($f:ident),* $(,)?) => {
        match $name {
            $(stringify!($f) => Some(ad::$f as Unary),)*
            _ => None,
        }
    };
}

/// The two-argument elementwise functions, by name.
macro_rules! binary_by_name {
    ($name:expr; $($f:ident),* $(,)?) => {
        match $name {
            $(stringify!($f) => Some((|a, b| ad::$f(a, b)) as Binary),)*
            _ => None,
        }
    };
}

fn unary(name: &str) -> Option<Unary> {
    unary_by_name!(name;
        abs, acos, acosh, asin, asinh, atan, atanh, bitwise_invert, ceil, conj, cos, cosh, exp, expm1, floor, imag,
        isfinite, isinf, isnan, log, log1p, log2, log10, logical_not, negative, positive, reciprocal, round,
        real, sign, signbit, sin, sinh, square, sqrt, tan, tanh, trunc, unique_values,
    )
}

fn binary(name: &str) -> Option<Binary> {
    binary_by_name!(name;
        add, atan2, bitwise_and, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, copysign,
        divide, equal, floor_divide, greater, greater_equal, hypot, less, less_equal, logaddexp, logical_and,
        logical_or, logical_xor, maximum, minimum, multiply, nextafter, not_equal, pow, remainder, subtract,
    )
}

/// The ops of one array besides the elementwise functions.
#[rustfmt::skip]
const ONE_ARRAY: &[&str] = &[
    "astype", "sum", "prod", "min", "max", "mean", "all", "any", "logsumexp", "var", "std", "argmin", "argmax",
    "cumulative_sum", "cumulative_prod", "sort", "argsort", "slice", "repeat", "clip", "roll", "flip",
    "count_nonzero", "diff", "fftshift", "ifftshift", "det", "inv", "cholesky", "eigvals", "eigvalsh", "svdvals",
    "pinv", "matrix_rank", "slogdet.sign", "slogdet.logabsdet", "diagonal", "trace", "vector_norm", "matrix_norm", "matrix_power", "unique_all.values", "unique_all.indices", "unique_all.inverse_indices",
    "unique_all.counts",
];

fn call(op: &str, args: &[Array], kw: &Kwargs, device: Device) -> Result<ad::Result<Array>, String> {
    let arity = match op {
        "linspace" | "arange" | "fftfreq" | "rfftfreq" => 0,
        "where" => 3,
        "concat" => args.len().max(1),
        "index_arrays" => args.len().max(2),
        // The array written into, a mask for assign_mask, then the value
        // unless it is the scalar.
        "assign_slice" => 1 + usize::from(kw.scalar.is_none()),
        "assign_mask" => 2 + usize::from(kw.scalar.is_none()),
        // The array, one or more index arrays, then the value unless it is
        // the scalar.
        "assign_arrays" => args.len().max(2 + usize::from(kw.scalar.is_none())),
        "searchsorted" | "take" | "matmul" | "isin" | "take_along_axis" | "index_mask" | "outer" | "cross"
        | "solve" => 2,
        _ if binary(op).is_some() => 2 - usize::from(kw.scalar.is_some()),
        _ if unary(op).is_some() || ONE_ARRAY.contains(&op) => 1,
        _ => return Err(format!("unknown op {op:?}")),
    };
    if args.len() != arity {
        return Err(format!("{op} takes {arity} arrays, the case has {}", args.len()));
    }
    let axes = || ad::Axes::from(kw.axes.clone());
    let order = if kw.descending {
        Order::Descending
    } else {
        Order::Ascending
    };
    Ok(match op {
        "linspace" => {
            let dtype = kw.dtype.as_deref().map(dtype).transpose()?;
            let [start, stop] = [kw.start, kw.stop].map(|n| n.map_or(0.0, Number::as_f64));
            ad::linspace(start, stop, kw.num, kw.endpoint, ad::Spec::new(dtype, Some(device)))
        }
        "arange" => {
            let dtype = kw.dtype.as_deref().map(dtype).transpose()?;
            let [start, stop, step] = [kw.start, kw.stop, kw.step].map(|n| weak(n.unwrap_or(Number::Int(0))));
            ad::arange(start, stop, step, ad::Spec::new(dtype, Some(device)))
        }
        "fftfreq" | "rfftfreq" => {
            let spec = ad::Spec::new(kw.dtype.as_deref().map(dtype).transpose()?, Some(device));
            let d = kw.d.unwrap_or(1.0);
            if op == "fftfreq" {
                ad::fft::fftfreq(kw.num, d, spec)
            } else {
                ad::fft::rfftfreq(kw.num, d, spec)
            }
        }
        "where" => ad::where_(&args[0], &args[1], &args[2]),
        "searchsorted" => {
            let side = if kw.side.as_deref() == Some("right") {
                Side::Right
            } else {
                Side::Left
            };
            ad::searchsorted(&args[0], &args[1], side)
        }
        "take" => ad::take(&args[0], &args[1], kw.axis),
        "isin" => ad::isin(&args[0], &args[1], kw.invert),
        "outer" => ad::outer(&args[0], &args[1]),
        "solve" => ad::solve(&args[0], &args[1]),
        "cross" => ad::cross(&args[0], &args[1], kw.axis.unwrap_or(-1)),
        "index_arrays" => args[0].index_arrays(&args[1..].iter().collect::<Vec<_>>()),
        "index_mask" => args[0].index_mask(&args[1]),
        "assign_slice" | "assign_mask" => {
            let x = &args[0];
            let value = kw
                .scalar
                .map_or(Arg::Array(args.last().expect("a value")), |n| Arg::Scalar(weak(n)));
            let written = if op == "assign_slice" {
                x.assign_slice(&indices(&kw.index), value)
            } else {
                x.assign_mask(&args[1], value)
            };
            written.map(|()| x.clone())
        }
        "assign_arrays" => {
            let (x, rest) = (&args[0], &args[1..]);
            let (indices, value) = match kw.scalar {
                Some(n) => (rest, Arg::Scalar(weak(n))),
                None => (&rest[..rest.len() - 1], Arg::Array(&rest[rest.len() - 1])),
            };
            x.assign_arrays(&indices.iter().collect::<Vec<_>>(), value)
                .map(|()| x.clone())
        }
        "take_along_axis" => ad::take_along_axis(&args[0], &args[1], kw.axis.unwrap_or(-1)),
        "matmul" => ad::matmul(&args[0], &args[1]),
        "concat" => ad::concat(&args.iter().collect::<Vec<_>>(), kw.axis),
        _ if binary(op).is_some() => {
            let f = binary(op).expect("a binary function");
            match (kw.scalar.map(|s| Arg::Scalar(weak(s))), kw.scalar_first) {
                (None, _) => f(Arg::Array(&args[0]), Arg::Array(&args[1])),
                (Some(s), false) => f(Arg::Array(&args[0]), s),
                (Some(s), true) => f(s, Arg::Array(&args[0])),
            }
        }
        _ => {
            let x = &args[0];
            match op {
                "astype" => x.astype(dtype(kw.dtype.as_deref().ok_or("astype needs dtype")?)?),
                "sum" => ad::sum(x, axes(), kw.keepdims),
                "prod" => ad::prod(x, axes(), kw.keepdims),
                "min" => ad::min(x, axes(), kw.keepdims),
                "max" => ad::max(x, axes(), kw.keepdims),
                "mean" => ad::mean(x, axes(), kw.keepdims),
                "all" => ad::all(x, axes(), kw.keepdims),
                "any" => ad::any(x, axes(), kw.keepdims),
                "logsumexp" => ad::logsumexp(x, axes(), kw.keepdims),
                "var" => ad::var(x, axes(), kw.correction, kw.keepdims),
                "std" => ad::std(x, axes(), kw.correction, kw.keepdims),
                "argmin" => ad::argmin(x, kw.axis, kw.keepdims),
                "argmax" => ad::argmax(x, kw.axis, kw.keepdims),
                "cumulative_sum" => ad::cumulative_sum(x, kw.axis, kw.include_initial),
                "cumulative_prod" => ad::cumulative_prod(x, kw.axis, kw.include_initial),
                "sort" => ad::sort(x, kw.axis.unwrap_or(-1), order),
                "argsort" => ad::argsort(x, kw.axis.unwrap_or(-1), order),
                "slice" => x.slice(&indices(&kw.index)),
                "repeat" => match kw.repeats.as_ref().ok_or("repeat needs repeats")? {
                    Repeats::Each(n) => ad::repeat(x, *n, kw.axis),
                    Repeats::PerElement(v) => ad::repeat(x, &v[..], kw.axis),
                },
                "roll" => ad::roll(x, &kw.shifts, axes()),
                "flip" => x.flip(axes()),
                "count_nonzero" => ad::count_nonzero(x, axes(), kw.keepdims),
                "diff" => ad::diff(x, kw.axis.unwrap_or(-1), kw.n),
                "fftshift" => ad::fft::fftshift(x, axes()),
                "ifftshift" => ad::fft::ifftshift(x, axes()),
                "det" => ad::det(x),
                "inv" => ad::inv(x),
                "cholesky" => ad::cholesky(x, false),
                "eigvals" => ad::eigvals(x),
                "eigvalsh" => ad::eigvalsh(x),
                "svdvals" => ad::svdvals(x),
                "pinv" => ad::pinv(x, None),
                "matrix_rank" => ad::matrix_rank(x, None),
                "slogdet.sign" => ad::slogdet(x).map(|(sign, _)| sign),
                "slogdet.logabsdet" => ad::slogdet(x).map(|(_, log)| log),
                "diagonal" => ad::diagonal(x, kw.offset),
                "trace" => ad::trace(x, kw.offset),
                "vector_norm" => ad::vector_norm(x, axes(), kw.keepdims, norm_ord(kw)?),
                "matrix_norm" => ad::matrix_norm(
                    x,
                    kw.keepdims,
                    match kw.ord.as_deref() {
                        None | Some("fro") => NormOrd::Fro,
                        Some("nuc") => NormOrd::Nuc,
                        Some(_) => NormOrd::P(norm_ord(kw)?),
                    },
                ),
                "matrix_power" => ad::matrix_power(x, kw.n as i64),
                "unique_all.values" => ad::unique_all(x).map(|u| u.values),
                "unique_all.indices" => ad::unique_all(x).map(|u| u.indices),
                "unique_all.inverse_indices" => ad::unique_all(x).map(|u| u.inverse_indices),
                "unique_all.counts" => ad::unique_all(x).map(|u| u.counts),
                "clip" => ad::clip(
                    x,
                    kw.min.map(|n| Arg::Scalar(weak(n))),
                    kw.max.map(|n| Arg::Scalar(weak(n))),
                ),
                _ => unary(op).expect("arity 1")(x),
            }
        }
    })
}

/// A norm's order from its text (`"inf"`, `"-inf"`, `"2"`); 2 when absent.
fn norm_ord(kw: &Kwargs) -> Result<f64, String> {
    kw.ord
        .as_deref()
        .map_or(Ok(2.0), |s| s.parse().map_err(|e| format!("ord {s:?}: {e}")))
}

fn indices(index: &[Index]) -> Vec<SliceArg> {
    index
        .iter()
        .map(|item| match *item {
            Index::At(i) => SliceArg::Index(i),
            Index::Range(start, stop, step) => SliceArg::Slice { start, stop, step },
        })
        .collect()
}

fn weak(n: Number) -> Weak {
    match n {
        Number::Int(v) => Weak::Int(v.into()),
        Number::UInt(v) => Weak::Int(v.into()),
        Number::Float(v) => Weak::Float(v),
    }
}
