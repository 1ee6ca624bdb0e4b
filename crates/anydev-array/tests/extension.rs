//! Defining extension ops and registering their kernels: what the
//! registry refuses, and why. (Calls on every device are the
//! device-generic case `extension::*` in anydev-testing.)

use anydev_array::extension::{self as ext, Kernel, OpDef};
use anydev_core::extension::{AttrKind, HostFn};
use anydev_core::Error;
use std::sync::Arc;

fn def(name: &str, inputs: usize) -> OpDef {
    OpDef {
        name: name.into(),
        inputs,
        attrs: vec![("k".into(), AttrKind::Int)],
        shape_rule: Arc::new(|ins, _| Ok(vec![ins[0].clone()])),
    }
}

fn host() -> Kernel {
    let f: Arc<HostFn> = Arc::new(|_, _, _| Ok(()));
    Kernel::Host(f)
}

fn is_invalid(result: anydev_core::Result<()>, what: &str) {
    match result {
        Err(Error::InvalidArgument { message, .. }) => assert!(!message.is_empty(), "{what}"),
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn names_must_be_namespaced_and_unique() {
    for bad in ["dequantize", "::x", "quant::", "quant::de-quantize", "a::b::c"] {
        is_invalid(ext::define_op(def(bad, 1)), bad);
    }
    ext::define_op(def("registry_test::once", 1)).unwrap();
    is_invalid(ext::define_op(def("registry_test::once", 1)), "a second definition");
    is_invalid(
        ext::define_op(def("registry_test::no_inputs", 0)),
        "an op without array inputs",
    );
}

#[test]
fn kernels_need_a_defined_op_a_fitting_kind_and_one_per_kind() {
    is_invalid(
        ext::register_kernel("registry_test::undefined", "cpu", host()),
        "an undefined op",
    );
    ext::define_op(def("registry_test::kernels", 1)).unwrap();
    is_invalid(
        ext::register_kernel("registry_test::kernels", "wgpu", host()),
        "a host kernel for wgpu",
    );
    ext::register_kernel("registry_test::kernels", "cpu", host()).unwrap();
    is_invalid(
        ext::register_kernel("registry_test::kernels", "cpu", host()),
        "a second cpu kernel",
    );
    assert_eq!(ext::kernel_kinds("registry_test::kernels").unwrap(), ["cpu"]);
    is_invalid(
        ext::set_host_fallback("registry_test::undefined", true),
        "fallback of an undefined op",
    );
}

#[test]
fn the_schema_is_queryable_for_bindings() {
    let mut d = def("registry_test::schema", 1);
    d.attrs.push(("shape".into(), AttrKind::Shape));
    ext::define_op(d).unwrap();
    assert_eq!(
        ext::op_attrs("registry_test::schema").unwrap(),
        [("k".to_owned(), AttrKind::Int), ("shape".to_owned(), AttrKind::Shape)]
    );
    let ops = ext::ops().unwrap();
    assert!(ops.iter().any(|o| o == "registry_test::schema"));
    // The built-in extensions are listed before their first use.
    assert!(ops.iter().any(|o| o == "linalg::cholesky"), "{ops:?}");
    assert!(ops.windows(2).all(|w| w[0] < w[1]), "sorted: {ops:?}");
    is_invalid(
        ext::op_attrs("registry_test::undefined").map(drop),
        "the schema of an undefined op",
    );
}
