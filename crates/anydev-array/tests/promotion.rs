//! Type promotion for all 169 dtype pairs against a table written out
//! here, independently of the implementation, and weak Rust scalars.

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, result_type, Array, DType, Error};

/// Column and row order of [`TABLE`].
const ORDER: [DType; 13] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
];

/// The promotion table. Entries among {bool}, among the signed and
/// unsigned integers (except u64 with signed), and among f32/f64 are the
/// Array API standard's. The rest is what the standard leaves to the
/// implementation, filled in as NumPy 2 does: bool gives way to anything;
/// u64 with a signed integer is f64; an integer with a float needs a float
/// with more mantissa than the integer has bits (8-bit: f16/bf16, 16-bit:
/// f32, 32/64-bit: f64); f16 with bf16 is f32.
const TABLE: [&str; 13] = [
    //        b    i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64
    /* b   */
    "b    i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64",
    /* i8  */ "i8   i8   i16  i32  i64  i16  i32  i64  f64  f16  bf16 f32  f64",
    /* i16 */ "i16  i16  i16  i32  i64  i16  i32  i64  f64  f32  f32  f32  f64",
    /* i32 */ "i32  i32  i32  i32  i64  i32  i32  i64  f64  f64  f64  f64  f64",
    /* i64 */ "i64  i64  i64  i64  i64  i64  i64  i64  f64  f64  f64  f64  f64",
    /* u8  */ "u8   i16  i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64",
    /* u16 */ "u16  i32  i32  i32  i64  u16  u16  u32  u64  f32  f32  f32  f64",
    /* u32 */ "u32  i64  i64  i64  i64  u32  u32  u32  u64  f64  f64  f64  f64",
    /* u64 */ "u64  f64  f64  f64  f64  u64  u64  u64  u64  f64  f64  f64  f64",
    /* f16 */ "f16  f16  f32  f64  f64  f16  f32  f64  f64  f16  f32  f32  f64",
    /* bf16*/ "bf16 bf16 f32  f64  f64  bf16 f32  f64  f64  f32  bf16 f32  f64",
    /* f32 */ "f32  f32  f32  f64  f64  f32  f32  f64  f64  f32  f32  f32  f64",
    /* f64 */ "f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64",
];

fn expected(i: usize, j: usize) -> DType {
    let name = TABLE[i].split_whitespace().nth(j).unwrap();
    if name == "b" {
        DType::Bool
    } else {
        name.parse().unwrap()
    }
}

#[test]
fn result_type_matches_the_table_for_every_pair() {
    for (i, &a) in ORDER.iter().enumerate() {
        for (j, &b) in ORDER.iter().enumerate() {
            assert_eq!(result_type(a, b), expected(i, j), "{a} with {b}");
        }
    }
}

#[test]
fn array_ops_produce_the_promoted_dtype_and_values() {
    // `maximum` accepts every dtype, so it exercises all 169 pairs end to end.
    for (i, &a) in ORDER.iter().enumerate() {
        let x = ad::ones(&[3], a).unwrap();
        for (j, &b) in ORDER.iter().enumerate() {
            let y = ad::zeros(&[3], b).unwrap();
            let r = ad::maximum(&x, &y).unwrap();
            assert_eq!(r.dtype(), expected(i, j), "{a} with {b}");
            assert_eq!(r.to_f64_vec().unwrap(), vec![1.0; 3], "{a} with {b}");
        }
    }
}

#[test]
fn weak_scalars_take_the_array_dtype_when_they_fit() {
    let u8s = Array::from_slice(&[250u8, 5], &[2], ()).unwrap();
    let r = u8s.add(5).unwrap();
    assert_eq!(r.dtype(), DType::U8);
    assert_eq!(r.to_vec::<u8>().unwrap(), vec![255, 10]);
    // 300 does not fit in u8: an error, not a silent promotion.
    let err = u8s.add(300).unwrap_err();
    assert!(matches!(err, Error::InvalidDType { dtype: DType::U8, .. }), "{err:?}");
    assert!(err.to_string().contains("300"));
    assert!(u8s.subtract(-1).is_err());
    assert!(ad::subtract(-1, &u8s).is_err());

    let f16s = ad::ones(&[1], DType::F16).unwrap();
    assert_eq!(f16s.multiply(2.5f64).unwrap().dtype(), DType::F16);
    assert_eq!(f16s.multiply(1e10).unwrap().to_f64_vec().unwrap(), vec![f64::INFINITY]);

    let i32s = Array::from_slice(&[1i32, 2], &[2], ()).unwrap();
    // Float scalar with an integer array: the default float, f64 (NumPy 2).
    let r = i32s.add(0.5f32).unwrap();
    assert_eq!(r.dtype(), DType::F64);
    assert_eq!(r.to_vec::<f64>().unwrap(), vec![1.5, 2.5]);
    assert_eq!(i32s.add(1i64).unwrap().dtype(), DType::I32);
    assert_eq!(i32s.add(true).unwrap().dtype(), DType::I32);

    let bools = Array::from_slice(&[true, false], &[2], ()).unwrap();
    let r = bools.add(1).unwrap();
    assert_eq!(r.dtype(), DType::I64);
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![2, 1]);
    assert_eq!(bools.multiply(1.5).unwrap().dtype(), DType::F64);
    assert_eq!(
        bools.logical_and(true).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );

    let i8s = Array::from_slice(&[-128i8], &[1], ()).unwrap();
    // Comparisons take any integer scalar and compare its value (NumPy 2).
    assert_eq!(i8s.greater(-129).unwrap().to_vec::<bool>().unwrap(), vec![true]);
    assert_eq!(ad::less(300, &i8s).unwrap().to_vec::<bool>().unwrap(), vec![false]);
    assert_eq!(i8s.equal(-128).unwrap().to_vec::<bool>().unwrap(), vec![true]);
}

#[test]
fn float_functions_compute_integers_in_numpys_floats_and_reject_bool() {
    // NumPy's loops: 16-bit integers compute in f32, division in f64.
    let ints = Array::from_slice(&[1i16, 4], &[2], ()).unwrap();
    let r = ints.sqrt().unwrap();
    assert_eq!(r.dtype(), DType::F32);
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert_eq!(ad::divide(&ints, 2).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 2.0]);
    let bools = Array::from_slice(&[true], &[1], ()).unwrap();
    for r in [
        bools.sin(),
        bools.exp(),
        bools.abs(),
        bools.negative(),
        ad::add(&bools, &bools),
        bools.positive(),
    ] {
        assert!(
            matches!(r, Err(Error::InvalidDType { dtype: DType::Bool, .. })),
            "{r:?}"
        );
    }
    let floats = ad::ones(&[1], DType::F32).unwrap();
    for r in [
        floats.bitwise_and(&floats),
        floats.bitwise_left_shift(1),
        floats.bitwise_invert(),
    ] {
        assert!(matches!(r, Err(Error::InvalidDType { dtype: DType::F32, .. })), "{r:?}");
    }
    assert!(matches!(
        bools.bitwise_right_shift(&bools),
        Err(Error::InvalidDType { .. })
    ));
    assert_eq!(bools.bitwise_right_shift(1).unwrap().dtype(), DType::I64);
    assert_eq!(bools.bitwise_xor(true).unwrap().to_vec::<bool>().unwrap(), vec![false]);
}
