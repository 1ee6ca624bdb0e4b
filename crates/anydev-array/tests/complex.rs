//! Complex arrays on the cpu device: the array-layer rules that sit on
//! top of the kernels (reductions keep the dtype, `mean` stays complex,
//! `var`/`std` refuse, `vecdot` conjugates, readback refuses to drop the
//! imaginary part), with references written out here.

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, Array, DType};
use num_complex::{Complex32, Complex64 as C};

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

fn near(a: &[C], b: &[C], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).norm() <= tol * y.norm().max(1.0))
}

#[test]
fn reductions_keep_complex_and_mean_divides() {
    let v = vec![c(1.0, 2.0), c(-3.0, 0.5), c(0.0, -1.0), c(2.0, 2.0)];
    let x = Array::from_slice(&v, &[2, 2], ()).unwrap();
    let s = ad::sum(&x, 0, false).unwrap();
    assert_eq!(s.dtype(), DType::C128);
    assert!(near(&s.to_c128_vec().unwrap(), &[c(1.0, 1.0), c(-1.0, 2.5)], 1e-15));
    let p = ad::prod(&x, 1, false).unwrap();
    assert!(near(&p.to_c128_vec().unwrap(), &[v[0] * v[1], v[2] * v[3]], 1e-15));
    let m = ad::mean(&x, None::<isize>, false).unwrap();
    assert_eq!(m.dtype(), DType::C128);
    let total: C = v.iter().sum();
    assert!(near(&m.to_c128_vec().unwrap(), &[total / 4.0], 1e-15));
    let cs = ad::cumulative_sum(&x, Some(1), false).unwrap();
    assert_eq!(cs.dtype(), DType::C128);
    assert!(near(
        &cs.to_c128_vec().unwrap(),
        &[v[0], v[0] + v[1], v[2], v[2] + v[3]],
        1e-15
    ));
    for r in [
        ad::var(&x, None::<isize>, 0.0, false),
        ad::std(&x, None::<isize>, 0.0, false),
    ] {
        assert!(matches!(r, Err(ad::Error::InvalidDType { .. })), "{r:?}");
    }
    let x32 = Array::from_slice(&[Complex32::new(1.0, 1.0), Complex32::new(2.0, -1.0)], &[2], ()).unwrap();
    assert_eq!(ad::sum(&x32, None::<isize>, false).unwrap().dtype(), DType::C64);
    assert_eq!(ad::mean(&x32, None::<isize>, false).unwrap().dtype(), DType::C64);
}

#[test]
fn readback_refuses_to_drop_the_imaginary_part() {
    let x = Array::from_slice(&[c(1.0, 2.0)], &[1], ()).unwrap();
    assert!(x.to_f64_vec().is_err());
    assert_eq!(x.to_c128_vec().unwrap(), [c(1.0, 2.0)]);
    let r = Array::from_slice(&[1.5f32], &[1], ()).unwrap();
    assert_eq!(r.to_c128_vec().unwrap(), [c(1.5, 0.0)]);
    assert_eq!(ad::real(&x).unwrap().to_f64_vec().unwrap(), [1.0]);
}

#[test]
fn vecdot_conjugates_the_first_argument_and_matmul_does_not() {
    let a = vec![c(1.0, 2.0), c(0.0, -1.0), c(3.0, 0.5)];
    let b = vec![c(-1.0, 1.0), c(2.0, 2.0), c(0.5, -4.0)];
    let (x, y) = (
        Array::from_slice(&a, &[3], ()).unwrap(),
        Array::from_slice(&b, &[3], ()).unwrap(),
    );
    let d = ad::vecdot(&x, &y, -1).unwrap();
    let want: C = a.iter().zip(&b).map(|(p, q)| p.conj() * q).sum();
    assert!(near(&d.to_c128_vec().unwrap(), &[want], 1e-15));
    let m = ad::matmul(&x.reshape(&[1, 3]).unwrap(), &y.reshape(&[3, 1]).unwrap()).unwrap();
    let plain: C = a.iter().zip(&b).map(|(p, q)| p * q).sum();
    assert!(near(&m.to_c128_vec().unwrap(), &[plain], 1e-15));
}

#[test]
fn equality_promotion_and_casts() {
    let x = Array::from_slice(&[Complex32::new(1.0, 2.0), Complex32::new(3.0, 0.0)], &[2], ()).unwrap();
    let r = Array::from_slice(&[3.0f32, 3.0], &[2], ()).unwrap();
    assert_eq!(ad::equal(&x, &r).unwrap().to_vec::<bool>().unwrap(), [false, true]);
    assert_eq!(
        ad::not_equal(&x, Complex32::new(1.0, 2.0))
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        [false, true]
    );
    // A c128 scalar with a c64 array: weak, the array's dtype wins.
    let y = ad::add(&x, c(0.5, -1.0)).unwrap();
    assert_eq!(y.dtype(), DType::C64);
    assert_eq!(
        y.to_vec::<Complex32>().unwrap(),
        [Complex32::new(1.5, 1.0), Complex32::new(3.5, -1.0)]
    );
    // f64 with c64 promotes to c128.
    let f = Array::from_slice(&[2.0f64, 0.25], &[2], ()).unwrap();
    let z = ad::multiply(&x, &f).unwrap();
    assert_eq!(z.dtype(), DType::C128);
    assert!(near(&z.to_c128_vec().unwrap(), &[c(2.0, 4.0), c(0.75, 0.0)], 1e-15));
    assert!(x.astype(DType::F32).is_err());
    assert_eq!(x.astype(DType::Bool).unwrap().to_vec::<bool>().unwrap(), [true, true]);
    assert_eq!(r.astype(DType::C128).unwrap().to_c128_vec().unwrap(), [c(3.0, 0.0); 2]);
    assert_eq!(ad::abs(&x).unwrap().dtype(), DType::F32);
}
