//! The `linalg` factorizations and `fft` transforms on simulated devices:
//! listed like any op the plugin implements, computed by the same host code
//! as on `cpu` and so giving the same bits (the cpu results are checked
//! against independent references by the device-generic cases), failing on
//! bad data at the call as on `cpu`, and taken off the list by `refuse_ops`.

mod support;

use anydev_array::fft::Norm;
use anydev_array::{self as ad, extension as ext, Array};
use anydev_core::{DType, Device, Error, Runtime};
use support::{run_sim_cases, runtime_with};

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

fn runtime(test: &str, options: &str) -> &'static Runtime {
    Box::leak(Box::new(runtime_with(test, options, vec![anydev_cpu::provider()])))
}

const OPS: [&str; 12] = [
    "linalg::cholesky",
    "linalg::inv",
    "linalg::solve",
    "linalg::slogdet",
    "linalg::det",
    "linalg::eigh",
    "linalg::eig",
    "linalg::svd",
    "linalg::qr",
    "fft::c2c",
    "fft::r2c",
    "fft::c2r",
];

/// A batch of two 3 x 3 matrices, positive definite (so that every
/// factorization applies), with an imaginary part for complex dtypes.
fn matrices(dtype: DType, device: Device) -> Array {
    let values: Vec<f64> = vec![
        4.0, 1.0, 0.5, 1.0, 3.0, -0.25, 0.5, -0.25, 2.0, //
        6.0, -2.0, 1.0, -2.0, 5.0, 0.75, 1.0, 0.75, 3.5,
    ];
    let real = ad::from_slice(&values, &[2, 3, 3], (DType::F64, device)).unwrap();
    if !dtype.is_complex() {
        return real.astype(dtype).unwrap();
    }
    // Hermitian: an antisymmetric imaginary part.
    let skew = ad::from_slice(
        &[0.0, 0.5, -0.25, -0.5, 0.0, 0.125, 0.25, -0.125, 0.0],
        &[3, 3],
        (DType::F64, device),
    )
    .unwrap();
    let i = ad::from_slice(&[ad::Complex64::new(0.0, 1.0)], &[], (DType::C128, device)).unwrap();
    real.astype(DType::C128)
        .unwrap()
        .add(&skew.multiply(&i).unwrap())
        .unwrap()
        .astype(dtype)
        .unwrap()
}

/// Every factorization's and transform's outputs for `x`.
fn outputs(x: &Array) -> Vec<(String, Array)> {
    let b = x.slice(&[ad::SliceArg::Ellipsis, (0..2).into()]).unwrap();
    let signal = x.reshape(&[2, 9]).unwrap();
    let mut out: Vec<(String, Array)> = vec![
        ("cholesky".into(), ad::cholesky(x, false).unwrap()),
        ("cholesky upper".into(), ad::cholesky(x, true).unwrap()),
        ("inv".into(), ad::inv(x).unwrap()),
        ("solve".into(), ad::solve(x, &b).unwrap()),
        ("det".into(), ad::det(x).unwrap()),
        ("fft".into(), ad::fft::fft(&signal, None, -1, Norm::Backward).unwrap()),
        ("ifft".into(), ad::fft::ifft(&signal, Some(7), 0, Norm::Ortho).unwrap()),
    ];
    let pairs = [
        ("slogdet", ad::slogdet(x).unwrap()),
        ("eigh", ad::eigh(x).unwrap()),
        ("eig", ad::eig(x).unwrap()),
        ("qr", ad::qr(&b, false).unwrap()),
        ("qr complete", ad::qr(&b, true).unwrap()),
    ];
    for (name, (first, second)) in pairs {
        out.push((format!("{name} 0"), first));
        out.push((format!("{name} 1"), second));
    }
    for full in [false, true] {
        let (u, s, vh) = ad::svd(&b, full).unwrap();
        out.extend([
            (format!("svd {full} u"), u),
            (format!("svd {full} s"), s),
            (format!("svd {full} vh"), vh),
        ]);
    }
    if !x.dtype().is_complex() {
        let spectrum = ad::fft::rfft(&signal, None, -1, Norm::Forward).unwrap();
        out.push((
            "irfft".into(),
            ad::fft::irfft(&spectrum, Some(9), -1, Norm::Forward).unwrap(),
        ));
        out.push(("rfft".into(), spectrum));
    }
    out
}

#[test]
fn the_devices_list_the_factorizations_and_transforms() {
    ad::with_runtime(runtime("numerics-list", "{}"), || {
        for device in [dev("sim:0"), dev("sim:1")] {
            let listed = ext::device_ops(device).unwrap();
            for op in OPS {
                assert!(listed.iter().any(|o| o == op), "{device} lists {op}: {listed:?}");
            }
        }
    });
}

#[test]
fn every_factorization_and_transform_gives_the_cpus_bits() {
    ad::with_runtime(runtime("numerics-bits", "{}"), || {
        for dtype in [DType::F32, DType::F64, DType::C64, DType::C128] {
            let on_cpu = outputs(&matrices(dtype, dev("cpu:0")));
            let on_sim = outputs(&matrices(dtype, dev("sim:1")));
            assert_eq!(on_cpu.len(), on_sim.len());
            for ((name, want), (_, got)) in on_cpu.iter().zip(&on_sim) {
                assert_eq!(got.device(), dev("sim:1"), "{name} ({dtype}) stays on its device");
                assert_eq!(
                    (got.dtype(), got.shape()),
                    (want.dtype(), want.shape()),
                    "{name} ({dtype})"
                );
                assert_eq!(
                    got.host_bytes().unwrap(),
                    want.host_bytes().unwrap(),
                    "{name} ({dtype})"
                );
            }
        }
    });
}

#[test]
fn bad_matrices_are_the_calls_error_as_on_the_cpu() {
    ad::with_runtime(runtime("numerics-errors", "{}"), || {
        let singular = ad::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2], dev("sim:0")).unwrap();
        for (what, result) in [
            ("inv", ad::inv(&singular)),
            ("cholesky", ad::cholesky(&singular.negative().unwrap(), false)),
            ("solve", ad::solve(&singular, &singular)),
        ] {
            match result {
                Err(Error::InvalidArgument { message, .. }) => {
                    assert!(
                        message.contains("singular") || message.contains("positive definite"),
                        "{what}: {message}"
                    )
                }
                other => panic!("{what} of a bad matrix: {other:?}"),
            }
        }
        // The stream carries on: the next call and a read succeed.
        let x = ad::from_slice(&[2.0f64, 0.0, 0.0, 4.0], &[2, 2], dev("sim:0")).unwrap();
        assert_eq!(ad::inv(&x).unwrap().to_vec::<f64>().unwrap(), [0.5, 0.0, 0.0, 0.25]);
        // Narrow floats and integers are refused by the shape rule before anything runs.
        let half = x.astype(DType::F16).unwrap();
        assert!(matches!(ad::inv(&half), Err(Error::InvalidDType { .. })));
    });
}

#[test]
fn refuse_ops_takes_a_factorization_off_the_list() {
    let options = r#"{"refuse_ops": ["linalg::inv", "fft::r2c"]}"#;
    ad::with_runtime(runtime("numerics-refuse", options), || {
        let listed = ext::device_ops(dev("sim:0")).unwrap();
        assert!(
            !listed.iter().any(|o| o == "linalg::inv" || o == "fft::r2c"),
            "{listed:?}"
        );
        assert!(listed.iter().any(|o| o == "linalg::det"), "{listed:?}");
        let x = ad::from_slice(&[2.0f32, 0.0, 0.0, 4.0], &[2, 2], dev("sim:0")).unwrap();
        match ad::inv(&x) {
            Err(Error::NoKernel { op, device, available }) => {
                assert_eq!((op.as_str(), device), ("linalg::inv", dev("sim:0")));
                assert_eq!(available, ["cpu"]);
            }
            other => panic!("inv on a device that refuses it: {other:?}"),
        }
        // A device without the transform's op runs it composed from its
        // own array ops instead: rows [2, 0] and [0, 4] have the two-point
        // spectra [2, 2] and [4, -4].
        let spectrum = ad::fft::rfft(&x, None, -1, Norm::Backward).unwrap();
        assert_eq!(spectrum.device(), dev("sim:0"));
        let got: Vec<(f32, f32)> = spectrum
            .to_vec::<ad::Complex32>()
            .unwrap()
            .iter()
            .map(|c| (c.re, c.im))
            .collect();
        assert_eq!(got, [(2.0, 0.0), (2.0, 0.0), (4.0, 0.0), (-4.0, 0.0)]);
        assert_eq!(ad::det(&x).unwrap().to_vec::<f32>().unwrap(), [8.0]);
    });
}

/// With the transforms' ops refused, the fft functions are composed from
/// the simulator's own array ops: the device-generic transform cases pass
/// that way too, in both precisions (wgpu, the other device they compose
/// on in the suite, has no c128).
#[test]
fn the_fft_cases_pass_composed_from_array_ops() {
    let options = r#"{"refuse_ops": ["fft::c2c", "fft::r2c", "fft::c2r"]}"#;
    let rt = runtime("numerics-composed-fft", options);
    let listed = ext::device_ops_in(rt, dev("sim:0")).unwrap();
    assert!(!listed.iter().any(|o| o.starts_with("fft::")), "{listed:?}");
    run_sim_cases(rt, "fft::");
}
