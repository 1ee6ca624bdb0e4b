//! `include/anydev_plugin.h` and the Rust types describe one ABI: the size
//! of every struct and the offsets of a selection of fields as a C compiler
//! sees them, and every numeric code.

mod support;

use anydev_ops::{DType, OpCode};
use anydev_plugin_abi::*;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::mem::{offset_of, size_of};

#[repr(C)]
struct LayoutEntry {
    name: *const c_char,
    value: usize,
}

/// The layout table the C plugin exports.
fn c_layout() -> BTreeMap<String, usize> {
    let path = support::good_plugin();
    // SAFETY: the test plugin is ours; loading it runs no initialisers.
    let lib = unsafe { libloading::Library::new(&path) }.expect("load the C test plugin");
    // SAFETY: the symbol is a NULL-terminated array of `LayoutEntry`.
    let table = unsafe { lib.get::<*const LayoutEntry>(b"anydev_test_layout\0") }.expect("layout symbol");
    let mut out = BTreeMap::new();
    let mut entry: *const LayoutEntry = *table;
    // SAFETY: walks the array up to its NULL-named terminator.
    unsafe {
        while !(*entry).name.is_null() {
            let name = CStr::from_ptr((*entry).name).to_str().unwrap().to_owned();
            out.insert(name, (*entry).value);
            entry = entry.add(1);
        }
    }
    std::mem::forget(lib);
    out
}

macro_rules! layout {
    ($($kind:ident $t:ident $(. $f:ident)?),* $(,)?) => {{
        let mut m = BTreeMap::new();
        $(layout!(@one m $kind $t $(. $f)?);)*
        m
    }};
    (@one $m:ident size $t:ident) => { $m.insert(format!("size {}", stringify!($t)), size_of::<$t>()); };
    (@one $m:ident offset $t:ident . $f:ident) => {
        $m.insert(format!("{}.{}", stringify!($t), stringify!($f)), offset_of!($t, $f));
    };
}

#[test]
fn struct_sizes_and_field_offsets_agree_with_the_c_compiler() {
    let rust = layout!(
        size AnydevVersion,
        size AnydevPluginApi,
        offset AnydevPluginApi.version,
        offset AnydevPluginApi.error_code,
        offset AnydevPluginApi.initialize,
        offset AnydevPluginApi.device_count,
        offset AnydevPluginApi.op_supported,
        offset AnydevPluginApi.allocate,
        offset AnydevPluginApi.memory_stats,
        offset AnydevPluginApi.stream_create,
        offset AnydevPluginApi.event_destroy,
        offset AnydevPluginApi.copy_host_to_device,
        offset AnydevPluginApi.fill,
        offset AnydevPluginApi.execute,
        offset AnydevPluginApi.buffer_host_pointer,
        offset AnydevPluginApi.buffer_import,
        offset AnydevPluginApi.op_supported_signature,
        offset AnydevPluginApi.extension_ops,
        offset AnydevPluginApi.extension_supported,
        offset AnydevPluginApi.extension_execute,
        offset AnydevPluginApi.empty_cache,
        offset AnydevPluginApi.memory_reset_peak,
        offset AnydevPluginApi.event_elapsed,
        offset AnydevPluginApi.comm_id,
        offset AnydevPluginApi.comm_init,
        offset AnydevPluginApi.comm_abort,
        offset AnydevPluginApi.comm_destroy,
        offset AnydevPluginApi.collective,
        size AnydevCommId,
        size AnydevCommInitArgs,
        offset AnydevCommInitArgs.id,
        offset AnydevCommInitArgs.nranks,
        offset AnydevCommInitArgs.rank,
        offset AnydevCommInitArgs.timeout_ms,
        size AnydevCollectiveCall,
        offset AnydevCollectiveCall.kind,
        offset AnydevCollectiveCall.dtype,
        offset AnydevCollectiveCall.reduce_op,
        offset AnydevCollectiveCall.peer,
        offset AnydevCollectiveCall.send,
        offset AnydevCollectiveCall.send_offset,
        offset AnydevCollectiveCall.recv,
        offset AnydevCollectiveCall.recv_offset,
        offset AnydevCollectiveCall.count,
        size AnydevExtensionOpList,
        offset AnydevExtensionOpList.names,
        offset AnydevExtensionOpList.count,
        size AnydevExtensionCall,
        offset AnydevExtensionCall.op_name,
        offset AnydevExtensionCall.inputs,
        offset AnydevExtensionCall.num_inputs,
        offset AnydevExtensionCall.outputs,
        offset AnydevExtensionCall.num_outputs,
        offset AnydevExtensionCall.attributes,
        offset AnydevExtensionCall.num_attributes,
        size AnydevOpSignature,
        offset AnydevOpSignature.op_code,
        offset AnydevOpSignature.output_dtype,
        offset AnydevOpSignature.input_dtypes,
        offset AnydevOpSignature.num_inputs,
        size AnydevInitArgs,
        offset AnydevInitArgs.plugin_name,
        offset AnydevInitArgs.options_json,
        size AnydevDeviceProperties,
        offset AnydevDeviceProperties.memory_bytes,
        size AnydevAttribute,
        offset AnydevAttribute.kind,
        offset AnydevAttribute.int_value,
        offset AnydevAttribute.float_value,
        offset AnydevAttribute.string_value,
        offset AnydevAttribute.list,
        offset AnydevAttribute.list_len,
        size AnydevAttributeList,
        offset AnydevAttributeList.count,
        size AnydevMemoryStats,
        offset AnydevMemoryStats.limit,
        offset AnydevMemoryStats.reserved,
        offset AnydevMemoryStats.total,
        size AnydevTensor,
        offset AnydevTensor.byte_offset,
        offset AnydevTensor.dtype,
        offset AnydevTensor.ndim,
        offset AnydevTensor.shape,
        offset AnydevTensor.strides,
        size AnydevScalar,
        offset AnydevScalar.bits,
        size AnydevOperand,
        offset AnydevOperand.tensor,
        offset AnydevOperand.scalar,
        size AnydevOpCall,
        offset AnydevOpCall.op_code,
        offset AnydevOpCall.flags,
        offset AnydevOpCall.output,
        offset AnydevOpCall.inputs,
        offset AnydevOpCall.num_inputs,
        offset AnydevOpCall.axes,
        offset AnydevOpCall.num_axes,
        offset AnydevOpCall.distribution,
        offset AnydevOpCall.params_f64,
        offset AnydevOpCall.params_u64,
    );
    assert_eq!(c_layout(), rust);
}

/// `#define NAME VALUE` lines of the header with the given prefix.
fn header_defines(prefix: &str) -> BTreeMap<String, u64> {
    let text = include_str!("../include/anydev_plugin.h");
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == "#define").then_some(())?;
            let name = words.next()?.strip_prefix(prefix)?;
            let value = words.next()?.trim_end_matches('u');
            let value = match value.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => value.parse().ok()?,
            };
            Some((name.to_owned(), value))
        })
        .collect()
}

#[test]
fn header_op_and_dtype_codes_are_the_op_sets() {
    let ops: BTreeMap<String, u64> = OpCode::all()
        .into_iter()
        .map(|op| (op.name().to_uppercase(), u64::from(op.code())))
        .collect();
    let mut header_ops = header_defines("ANYDEV_OP_");
    header_ops.retain(|name, _| !name.starts_with("FLAG_"));
    assert_eq!(header_ops, ops);
    let dtypes: BTreeMap<String, u64> = DType::ALL
        .iter()
        .map(|d| (d.name().to_uppercase(), u64::from(d.code())))
        .collect();
    assert_eq!(header_defines("ANYDEV_DTYPE_"), dtypes);
}

#[test]
fn header_abi_constants_match_the_crate() {
    let pairs: &[(&str, u64)] = &[
        ("ABI_VERSION_MAJOR", ABI_VERSION_MAJOR.into()),
        ("ABI_VERSION_MINOR", ABI_VERSION_MINOR.into()),
        ("ERROR_UNIMPLEMENTED", ANYDEV_ERROR_UNIMPLEMENTED as u64),
        ("ERROR_INVALID_ARGUMENT", ANYDEV_ERROR_INVALID_ARGUMENT as u64),
        ("ERROR_OUT_OF_MEMORY", ANYDEV_ERROR_OUT_OF_MEMORY as u64),
        ("ERROR_INTERNAL", ANYDEV_ERROR_INTERNAL as u64),
        ("ERROR_UNAVAILABLE", ANYDEV_ERROR_UNAVAILABLE as u64),
        ("MEMORY_DEVICE", ANYDEV_MEMORY_DEVICE.into()),
        ("MEMORY_HOST_PINNED", ANYDEV_MEMORY_HOST_PINNED.into()),
        ("MEMORY_MANAGED", ANYDEV_MEMORY_MANAGED.into()),
        ("MEMORY_SYSTEM", ANYDEV_MEMORY_SYSTEM.into()),
        ("ATTR_BOOL", ANYDEV_ATTR_BOOL.into()),
        ("ATTR_I64", ANYDEV_ATTR_I64.into()),
        ("ATTR_F64", ANYDEV_ATTR_F64.into()),
        ("ATTR_STRING", ANYDEV_ATTR_STRING.into()),
        ("ATTR_I64_LIST", ANYDEV_ATTR_I64_LIST.into()),
        ("ATTR_DTYPE", ANYDEV_ATTR_DTYPE.into()),
        ("ATTR_SHAPE", ANYDEV_ATTR_SHAPE.into()),
        ("OPERAND_TENSOR", ANYDEV_OPERAND_TENSOR.into()),
        ("OPERAND_SCALAR", ANYDEV_OPERAND_SCALAR.into()),
        ("DISTRIBUTION_UNIFORM", ANYDEV_DISTRIBUTION_UNIFORM.into()),
        ("DISTRIBUTION_NORMAL", ANYDEV_DISTRIBUTION_NORMAL.into()),
        ("COMM_ID_BYTES", ANYDEV_COMM_ID_BYTES as u64),
        ("COLLECTIVE_ALL_REDUCE", ANYDEV_COLLECTIVE_ALL_REDUCE.into()),
        ("COLLECTIVE_BROADCAST", ANYDEV_COLLECTIVE_BROADCAST.into()),
        ("COLLECTIVE_ALL_GATHER", ANYDEV_COLLECTIVE_ALL_GATHER.into()),
        ("COLLECTIVE_REDUCE_SCATTER", ANYDEV_COLLECTIVE_REDUCE_SCATTER.into()),
        ("COLLECTIVE_ALL_TO_ALL", ANYDEV_COLLECTIVE_ALL_TO_ALL.into()),
        ("COLLECTIVE_SEND", ANYDEV_COLLECTIVE_SEND.into()),
        ("COLLECTIVE_RECV", ANYDEV_COLLECTIVE_RECV.into()),
        ("REDUCE_SUM", ANYDEV_REDUCE_SUM.into()),
        ("REDUCE_PROD", ANYDEV_REDUCE_PROD.into()),
        ("REDUCE_MIN", ANYDEV_REDUCE_MIN.into()),
        ("REDUCE_MAX", ANYDEV_REDUCE_MAX.into()),
    ];
    let header = header_defines("ANYDEV_");
    for (name, value) in pairs {
        assert_eq!(header.get(*name), Some(value), "ANYDEV_{name}");
    }
    assert!(include_str!("../include/anydev_plugin.h").contains(&format!("\"{ENTRY_SYMBOL}\"")));
}

#[test]
fn header_and_docs_list_every_standard_capability() {
    let header = include_str!("../include/anydev_plugin.h");
    let start = header.find("Standard names").expect("the header's capability table");
    let end = start + header[start..].find("are the host's").expect("the table's end");
    let table = &header[start..end];
    let docs = include_str!("../../../docs/plugins.md");
    for key in anydev_core::capability::keys::ALL {
        assert!(table.contains(key), "the header's capability table lacks {key}");
        assert!(docs.contains(&format!("`{key}`")), "docs/plugins.md lacks `{key}`");
    }
}

/// The docs offer the header to C++ plugins too: it compiles as strict
/// C++11 and C++20, and its macros work there (C++ has no compound
/// literals, so `ANYDEV_STRUCT_INIT` has a C++ form).
#[test]
fn header_macros_work_in_cpp() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = support::scratch("cpp");
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    for standard in ["c++11", "c++20"] {
        let exe = dir.join(format!("struct_init_{standard}"));
        let compiler = cc::Build::new()
            .cpp(true)
            .cargo_metadata(false)
            .target(&triple)
            .host(&triple)
            .opt_level(0)
            .get_compiler();
        let built = compiler
            .to_command()
            .args([
                &format!("-std={standard}"),
                "-Wall",
                "-Wextra",
                "-Wpedantic",
                "-Werror",
                "-I",
            ])
            .arg(root.join("include"))
            .arg(root.join("tests/cpp/struct_init.cpp"))
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run the C++ compiler");
        assert!(
            built.status.success(),
            "{standard}: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = std::process::Command::new(&exe).output().expect("run the C++ program");
        assert!(ran.status.success(), "{standard}: the program failed");
        let want = format!(
            "struct_size {}\nzeroed 1\nhas peak 1\nhas peak when shorter 0\n",
            size_of::<AnydevMemoryStats>()
        );
        assert_eq!(String::from_utf8_lossy(&ran.stdout), want, "{standard}");
    }
}
