//! Elementwise ops and broadcasting checked against plain f64/i64 loops,
//! over random shapes (including 0-d and zero-size), random layouts
//! (contiguous, transposed, negative strides) and special values.

use anydev_array::{self as ad, Array, DType, Error};
use anydev_testing::reference::{broadcast_shape as broadcast, indices, source_index};
use proptest::prelude::*;

/// `values` (row-major for `shape`) as an f64 array with the given layout.
fn with_layout(values: &[f64], shape: &[usize], layout: u8) -> Array {
    match layout {
        // Negative strides on every axis: store reversed, flip back.
        1 => {
            let rev: Vec<f64> = values.iter().rev().copied().collect();
            Array::from_slice(&rev, shape, ()).unwrap().flip(ad::ALL).unwrap()
        }
        // Transposed storage: store the axes reversed, permute back.
        2 => {
            let t_shape: Vec<usize> = shape.iter().rev().copied().collect();
            let stored: Vec<f64> = indices(&t_shape)
                .iter()
                .map(|ti| {
                    let idx: Vec<usize> = ti.iter().rev().copied().collect();
                    values[source_index(shape, shape, &idx)]
                })
                .collect();
            let axes: Vec<isize> = (0..shape.len() as isize).rev().collect();
            let a = Array::from_slice(&stored, &t_shape, ())
                .unwrap()
                .permute_dims(&axes)
                .unwrap();
            assert_eq!(a.shape(), shape);
            a
        }
        _ => Array::from_slice(values, shape, ()).unwrap(),
    }
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

fn special() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -100.0..100.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(-0.0),
        1 => Just(0.0),
    ]
}

/// A shape and a second shape that broadcasts with it.
fn shape_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(0usize..4, 0..4).prop_flat_map(|a| {
        let n = a.len();
        (Just(a.clone()), prop::collection::vec(any::<bool>(), n), 0..=n).prop_map(move |(a, ones, keep)| {
            let b: Vec<usize> = a.iter().zip(&ones).map(|(&x, &one)| if one { 1 } else { x }).collect();
            let b = b[n - keep..].to_vec();
            (a, b)
        })
    })
}

type BinRef = fn(f64, f64) -> f64;
type UnaryCase = (&'static str, fn(&Array) -> ad::Result<Array>, fn(f64) -> f64);

const BINARY: [(&str, BinRef); 10] = [
    ("add", |a, b| a + b),
    ("subtract", |a, b| a - b),
    ("multiply", |a, b| a * b),
    ("divide", |a, b| a / b),
    (
        "maximum",
        |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) },
    ),
    (
        "minimum",
        |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) },
    ),
    ("less", |a, b| (a < b) as u8 as f64),
    ("equal", |a, b| (a == b) as u8 as f64),
    ("greater_equal", |a, b| (a >= b) as u8 as f64),
    ("copysign", f64::copysign),
];

fn run_binary(name: &str, a: &Array, b: &Array) -> ad::Result<Array> {
    match name {
        "add" => ad::add(a, b),
        "subtract" => ad::subtract(a, b),
        "multiply" => ad::multiply(a, b),
        "divide" => ad::divide(a, b),
        "maximum" => ad::maximum(a, b),
        "minimum" => ad::minimum(a, b),
        "less" => ad::less(a, b),
        "equal" => ad::equal(a, b),
        "greater_equal" => ad::greater_equal(a, b),
        "copysign" => ad::copysign(a, b),
        _ => unreachable!(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn binary_ops_broadcast_like_the_reference(
        (sa, sb) in shape_pair(),
        swap in any::<bool>(),
        la in 0u8..3,
        lb in 0u8..3,
        seed in prop::collection::vec(special(), 64),
    ) {
        let (sa, sb) = if swap { (sb, sa) } else { (sa, sb) };
        let na: usize = sa.iter().product();
        let nb: usize = sb.iter().product();
        let va: Vec<f64> = (0..na).map(|i| seed[i % 64]).collect();
        let vb: Vec<f64> = (0..nb).map(|i| seed[(i * 7 + 3) % 64]).collect();
        let a = with_layout(&va, &sa, la);
        let b = with_layout(&vb, &sb, lb);
        let out_shape = broadcast(&sa, &sb).unwrap();
        for (name, reference) in BINARY {
            let r = run_binary(name, &a, &b).unwrap();
            prop_assert_eq!(r.shape(), out_shape.as_slice(), "{}", name);
            let got = r.to_f64_vec().unwrap();
            for (k, idx) in indices(&out_shape).iter().enumerate() {
                let want = reference(va[source_index(&sa, &out_shape, idx)], vb[source_index(&sb, &out_shape, idx)]);
                prop_assert!(same(got[k], want), "{} at {:?}: got {} want {}", name, idx, got[k], want);
            }
        }
    }

    #[test]
    fn incompatible_shapes_are_errors_showing_both(a in prop::collection::vec(2usize..5, 1..4), extra in 1usize..3) {
        let mut b = a.clone();
        let last = b.len() - 1;
        b[last] += extra;
        let x = ad::zeros(&a, ()).unwrap();
        let y = ad::zeros(&b, ()).unwrap();
        let err = ad::add(&x, &y).unwrap_err();
        let is_mismatch = matches!(err, Error::ShapeMismatch { .. });
        prop_assert!(is_mismatch);
        let text = err.to_string();
        prop_assert!(text.contains(&format!("{a:?}")) && text.contains(&format!("{b:?}")), "{}", text);
    }

    #[test]
    fn unary_float_functions_match_std(values in prop::collection::vec(special(), 0..40), layout in 0u8..3) {
        let x = with_layout(&values, &[values.len()], layout);
        let cases: [UnaryCase; 8] = [
            ("exp", ad::exp, f64::exp),
            ("log", ad::log, f64::ln),
            ("sqrt", ad::sqrt, f64::sqrt),
            ("tanh", ad::tanh, f64::tanh),
            ("abs", ad::abs, f64::abs),
            ("floor", ad::floor, f64::floor),
            ("negative", ad::negative, |v| -v),
            ("square", ad::square, |v| v * v),
        ];
        for (name, op, reference) in cases {
            let got = op(&x).unwrap().to_vec::<f64>().unwrap();
            for (g, v) in got.iter().zip(&values) {
                let want = reference(*v);
                prop_assert!(same(*g, want) || (g - want).abs() < 1e-14, "{}({}) = {} want {}", name, v, g, want);
            }
        }
    }
}

#[test]
fn scalar_operands_work_on_both_sides_and_with_zero_d_arrays() {
    let x = Array::from_slice(&[1.0f32, 2.0, 4.0], &[3], ()).unwrap();
    assert_eq!(
        ad::subtract(10, &x).unwrap().to_vec::<f32>().unwrap(),
        vec![9.0, 8.0, 6.0]
    );
    assert_eq!(ad::divide(&x, 2).unwrap().to_vec::<f32>().unwrap(), vec![0.5, 1.0, 2.0]);
    assert_eq!(ad::pow(2.0, &x).unwrap().to_vec::<f32>().unwrap(), vec![2.0, 4.0, 16.0]);
    let s = Array::scalar(3.0f32, ()).unwrap();
    let r = x.multiply(&s).unwrap();
    assert_eq!(r.shape(), &[3]);
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![3.0, 6.0, 12.0]);
    let r = s.add(1).unwrap();
    assert_eq!((r.ndim(), r.to_scalar::<f32>().unwrap()), (0, 4.0));
    let empty = ad::zeros(&[0, 2], DType::F32).unwrap();
    let r = empty.add(&ad::ones(&[2], DType::F32).unwrap()).unwrap();
    assert_eq!(r.shape(), &[0, 2]);
    assert!(r.to_vec::<f32>().unwrap().is_empty());
}

#[test]
fn integer_arithmetic_wraps_and_division_by_zero_gives_zero() {
    let a = Array::from_slice(&[i32::MAX, i32::MIN, -7, 7, 5, i32::MIN], &[6], ()).unwrap();
    let b = Array::from_slice(&[1i32, -1, 3, -3, 0, -1], &[6], ()).unwrap();
    let va = a.to_vec::<i32>().unwrap();
    let vb = b.to_vec::<i32>().unwrap();
    let add = a.add(&b).unwrap().to_vec::<i32>().unwrap();
    let mul = a.multiply(&b).unwrap().to_vec::<i32>().unwrap();
    for k in 0..6 {
        assert_eq!(add[k], va[k].wrapping_add(vb[k]));
        assert_eq!(mul[k], va[k].wrapping_mul(vb[k]));
    }
    // Floor division and remainder with the divisor's sign; by zero: 0.
    assert_eq!(
        a.floor_divide(&b).unwrap().to_vec::<i32>().unwrap(),
        vec![i32::MAX, i32::MIN, -3, -3, 0, i32::MIN]
    );
    assert_eq!(
        a.remainder(&b).unwrap().to_vec::<i32>().unwrap(),
        vec![0, 0, 2, -2, 0, 0]
    );
    let u = Array::from_slice(&[0u8, 255], &[2], ()).unwrap();
    assert_eq!(u.subtract(1).unwrap().to_vec::<u8>().unwrap(), vec![255, 254]);
    assert_eq!(u.add(1).unwrap().to_vec::<u8>().unwrap(), vec![1, 0]);
    assert_eq!(
        Array::from_slice(&[i8::MIN], &[1], ())
            .unwrap()
            .abs()
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        vec![i8::MIN]
    );
    assert_eq!(
        ad::bitwise_left_shift(&u, 1).unwrap().to_vec::<u8>().unwrap(),
        vec![0, 254]
    );
}

#[test]
fn float_semantics_follow_the_standard() {
    let x = Array::from_slice(&[0.5f64, 1.5, 2.5, -0.5, -1.5, f64::NAN], &[6], ()).unwrap();
    let r = x.round().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(&r[..5], &[0.0, 2.0, 2.0, -0.0, -2.0]);
    assert!(r[3].is_sign_negative() && r[5].is_nan());
    let m = Array::from_slice(&[-7.5f64, 7.5], &[2], ()).unwrap();
    assert_eq!(m.remainder(2.0).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 1.5]);
    assert_eq!(m.remainder(-2.0).unwrap().to_vec::<f64>().unwrap(), vec![-1.5, -0.5]);
    let s = Array::from_slice(&[-0.0f32, 0.0, -1.0, f32::NAN], &[4], ()).unwrap();
    assert_eq!(s.signbit().unwrap().to_vec::<bool>().unwrap()[..3], [true, false, true]);
    assert_eq!(
        s.isnan().unwrap().to_vec::<bool>().unwrap(),
        vec![false, false, false, true]
    );
    let inf = Array::from_slice(&[f32::INFINITY, 1.0, f32::NAN], &[3], ()).unwrap();
    assert_eq!(
        inf.isfinite().unwrap().to_vec::<bool>().unwrap(),
        vec![false, true, false]
    );
    assert_eq!(inf.isinf().unwrap().to_vec::<bool>().unwrap(), vec![true, false, false]);
    let half = ad::full(&[2], 1.0, DType::F16).unwrap();
    assert_eq!(
        half.add(&half.divide(2).unwrap()).unwrap().to_f64_vec().unwrap(),
        vec![1.5, 1.5]
    );
    assert_eq!(half.add(&half).unwrap().dtype(), DType::F16);
}

#[test]
fn where_and_clip_follow_the_standard() {
    let x = Array::from_slice(&[1.0f32, -2.0, f32::NAN, 5.0], &[4], ()).unwrap();
    let r = ad::where_(&x.greater(0.0).unwrap(), &x, 0.0).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap()[..2], [1.0, 0.0]);
    // A non-bool condition is read as != 0; a 0-d condition broadcasts.
    let r = ad::where_(&Array::scalar(1u8, ()).unwrap(), 1, 2.5).unwrap();
    assert_eq!((r.dtype(), r.to_scalar::<f64>().unwrap()), (DType::F64, 1.0));
    let clipped = x.clip(-1.0, 2.0).unwrap().to_vec::<f32>().unwrap();
    assert_eq!([clipped[0], clipped[1], clipped[3]], [1.0, -1.0, 2.0]);
    assert!(clipped[2].is_nan());
    let lo = Array::from_slice(&[0.0f32, 0.0, 0.0, 6.0], &[4], ()).unwrap();
    assert_eq!(x.clip(&lo, ()).unwrap().to_vec::<f32>().unwrap()[3], 6.0);
    // Bounds outside an integer dtype's range mean no bound; the dtype stays.
    let u = Array::from_slice(&[0u8, 200], &[2], ()).unwrap();
    let r = u.clip(-5, 300).unwrap();
    assert_eq!((r.dtype(), r.to_vec::<u8>().unwrap()), (DType::U8, vec![0, 200]));
    let bad = Array::from_slice(&[0.0f32; 3], &[3], ()).unwrap();
    assert!(matches!(x.clip(&bad, ()), Err(Error::ShapeMismatch { .. })));
}

#[test]
fn astype_converts_with_the_standard_rules() {
    let x = Array::from_slice(&[-1.7f64, 2.9, f64::NAN, 1e20, -1e20], &[5], ()).unwrap();
    assert_eq!(
        x.astype(DType::I32).unwrap().to_vec::<i32>().unwrap(),
        vec![-1, 2, 0, i32::MAX, i32::MIN]
    );
    assert_eq!(x.astype(DType::Bool).unwrap().to_vec::<bool>().unwrap(), vec![true; 5]);
    let i = Array::from_slice(&[300i32, -1], &[2], ()).unwrap();
    assert_eq!(i.astype(DType::U8).unwrap().to_vec::<u8>().unwrap(), vec![44, 255]);
    assert!(i.astype(DType::I32).unwrap().shares_buffer(&i));
}
