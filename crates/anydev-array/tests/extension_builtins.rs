//! The built-in extensions' ops (`linalg::*`, `fft::*`) exist from a
//! process's first extension call on, whichever function it is: this
//! file is its own process, and each test may be the first to run.

anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::extension::{self as ext, Kernel, OpDef};
use anydev_array::Array;
use anydev_core::extension::{Attrs, HostFn};
use anydev_core::Error;
use std::sync::Arc;

#[test]
fn a_first_call_by_name_finds_the_builtin_op() {
    let x = Array::from_slice(&[2.0f64, 0.0, 0.0, 4.0], &[2, 2], ()).unwrap();
    let inverse = ext::call("linalg::inv", &[&x], &Attrs::new()).unwrap();
    assert_eq!(inverse[0].to_vec::<f64>().unwrap(), [0.5, 0.0, 0.0, 0.25]);
}

#[test]
fn a_first_registration_finds_the_builtin_op() {
    // A second kind of kernel for a built-in op is accepted; a second
    // `cpu` kernel is not, since the built-in one is there already.
    let f: Arc<HostFn> = Arc::new(|_, _, _| Ok(()));
    let refused = ext::register_kernel("fft::r2c", "cpu", Kernel::Host(f));
    assert!(
        matches!(&refused, Err(Error::InvalidArgument { message, .. }) if message.contains("already has a kernel")),
        "{refused:?}"
    );
}

#[test]
fn a_library_cannot_take_a_builtin_name() {
    let def = OpDef {
        name: "linalg::cholesky".into(),
        inputs: 1,
        attrs: vec![],
        shape_rule: Arc::new(|ins, _| Ok(vec![ins[0].clone()])),
    };
    let refused = ext::define_op(def);
    assert!(
        matches!(&refused, Err(Error::InvalidArgument { message, .. }) if message.contains("already defined")),
        "{refused:?}"
    );
    assert!(ext::ops().unwrap().iter().any(|op| op == "linalg::cholesky"));
}
