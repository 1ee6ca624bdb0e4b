// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, Array, DType};

#[test]
fn add_and_read_back() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], ()).unwrap();
    let y = x.add(1.0).unwrap();
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
    let z = ad::add(&x, &y.slice(&ad::s![0..1, ..]).unwrap()).unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 5.0, 7.0]);
    println!("{z}\n{z:?}");
}
