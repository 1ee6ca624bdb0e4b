//! What backends see of extension ops (design section 11): the typed
//! attributes of a call, and kernel bodies in the forms a backend may know
//! how to run. The registry of ops, their schemas and shape rules, and the
//! dispatch by device live in the array layer (`anydev_array::extension`);
//! a backend only runs a body it understands on operands the array layer
//! has already validated, allocated and made contiguous.

pub use anydev_ops::{AttrKind, AttrValue, HostOperand, HostOperandMut};

use crate::{DType, Error, Result};
use std::fmt;
use std::sync::Arc;

/// The attributes of one call, by name, in the order they were given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs {
    values: Vec<(String, AttrValue)>,
}

macro_rules! getter {
    ($(#[$doc:meta])* $name:ident, $variant:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $name(&self, name: &str) -> Result<$ty> {
            match self.get(name) {
                Some(AttrValue::$variant(v)) => Ok(v.clone()),
                other => Err(self.wrong(name, AttrKind::$variant, other)),
            }
        }
    };
}

impl Attrs {
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// Adds (or replaces) attribute `name`.
    pub fn with(mut self, name: &str, value: AttrValue) -> Attrs {
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_owned(), value));
        self
    }

    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.values.iter().map(|(n, v)| (n.as_str(), v))
    }

    fn wrong(&self, name: &str, want: AttrKind, got: Option<&AttrValue>) -> Error {
        let got = got.map_or("missing".to_owned(), |v| format!("{:?}", v.kind()));
        Error::invalid_argument("attribute", format!("{name} must be {want:?}, got {got}"))
    }

    getter!(
        /// Integer attribute `name`.
        int, Int, i64
    );
    getter!(
        /// Float attribute `name`.
        float, Float, f64
    );
    getter!(
        /// Bool attribute `name`.
        bool, Bool, bool
    );
    getter!(
        /// String attribute `name`.
        str, Str, String
    );
    getter!(
        /// Dtype attribute `name`.
        dtype, DType, DType
    );
    getter!(
        /// Shape attribute `name`.
        shape, Shape, Vec<usize>
    );
}

/// An operand's dtype and shape, as shape rules and launch rules see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMeta {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl TensorMeta {
    pub fn new(dtype: DType, shape: &[usize]) -> TensorMeta {
        TensorMeta {
            dtype,
            shape: shape.to_vec(),
        }
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A contiguous row-major input of a host kernel.
pub struct HostTensor<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: &'a [u8],
}

/// A contiguous row-major output of a host kernel.
pub struct HostTensorMut<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: &'a mut [u8],
}

/// Checks that a tensor of `dtype` may be read as `T`.
fn typed<T>(dtype: DType) -> Result<()> {
    if std::mem::size_of::<T>() == dtype.size() {
        return Ok(());
    }
    Err(Error::invalid_argument(
        "host kernel",
        format!("a {dtype} tensor read as {}", std::any::type_name::<T>()),
    ))
}

impl<'a> HostTensor<'a> {
    /// The elements as `T` (of the tensor's element size).
    pub fn as_slice<T: bytemuck::Pod>(&self) -> Result<&[T]> {
        typed::<T>(self.dtype)?;
        bytemuck::try_cast_slice(self.bytes).map_err(|e| Error::invalid_argument("host kernel", e.to_string()))
    }

    /// The tensor as the libraries that compute on host memory without the
    /// runtime take an input.
    pub fn operand(&self) -> HostOperand<'a> {
        HostOperand {
            dtype: self.dtype,
            shape: self.shape,
            bytes: self.bytes,
        }
    }
}

impl HostTensorMut<'_> {
    /// The elements as `T` (of the tensor's element size), writable.
    pub fn as_mut_slice<T: bytemuck::Pod>(&mut self) -> Result<&mut [T]> {
        typed::<T>(self.dtype)?;
        bytemuck::try_cast_slice_mut(self.bytes).map_err(|e| Error::invalid_argument("host kernel", e.to_string()))
    }

    /// The tensor as those libraries take an output.
    pub fn operand(&mut self) -> HostOperandMut<'_> {
        HostOperandMut {
            dtype: self.dtype,
            shape: self.shape,
            bytes: &mut *self.bytes,
        }
    }
}

/// A host kernel: reads the inputs, writes every element of the outputs.
pub type HostFn = dyn Fn(&[HostTensor<'_>], &mut [HostTensorMut<'_>], &Attrs) -> Result<()> + Send + Sync;

/// A WGSL kernel: `@group(0)` binds, in order, a `array<u32>` storage
/// buffer of params, the inputs, then the outputs, each a storage buffer
/// of its elements from element 0 (8- and 16-bit dtypes packed in `u32`
/// words, as the built-in kernels hold them).
#[derive(Clone)]
pub struct Wgsl {
    pub source: String,
    pub entry_point: String,
    /// The workgroup grid for the call's inputs, outputs and attributes.
    pub grid: Arc<LaunchRule<[u32; 3]>>,
    /// The params words for the call (may be empty).
    pub params: Arc<LaunchRule<Vec<u32>>>,
}

/// Computes launch data from the inputs', outputs' metadata and the
/// attributes.
pub type LaunchRule<T> = dyn Fn(&[TensorMeta], &[TensorMeta], &Attrs) -> Result<T> + Send + Sync;

impl fmt::Debug for Wgsl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wgsl")
            .field("entry_point", &self.entry_point)
            .finish_non_exhaustive()
    }
}

/// A CUDA C++ kernel, compiled with NVRTC at run time and cached like the
/// built-in kernels: `name` is an `extern "C" __global__` function whose
/// parameters are, in order, a pointer per input, a pointer per output
/// (each to its first element), then each params word as an
/// `unsigned int`.
#[derive(Clone)]
pub struct Cuda {
    pub source: String,
    pub name: String,
    /// The grid of blocks (`gridDim`).
    pub grid: Arc<LaunchRule<[u32; 3]>>,
    /// The threads per block (`blockDim`).
    pub block: Arc<LaunchRule<[u32; 3]>>,
    /// The trailing `unsigned int` arguments (may be empty).
    pub params: Arc<LaunchRule<Vec<u32>>>,
}

impl fmt::Debug for Cuda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cuda").field("name", &self.name).finish_non_exhaustive()
    }
}

/// One call's kernel, as a backend receives it, with its launch rules
/// evaluated: `key` names the op and kernel for caching what the backend
/// compiles.
pub enum KernelBody<'a> {
    Host(&'a HostFn),
    Wgsl {
        key: &'a str,
        kernel: &'a Wgsl,
        grid: [u32; 3],
        params: &'a [u32],
    },
    Cuda {
        key: &'a str,
        kernel: &'a Cuda,
        grid: [u32; 3],
        block: [u32; 3],
        params: &'a [u32],
    },
    /// The device's own implementation of the named op: a plugin that
    /// lists the op (ABI 1.4) and accepted this call's signature.
    Device {
        op: &'a str,
    },
}

impl KernelBody<'_> {
    /// The kind of code, for errors.
    pub fn form(&self) -> &'static str {
        match self {
            KernelBody::Host(_) => "host",
            KernelBody::Wgsl { .. } => "WGSL",
            KernelBody::Cuda { .. } => "CUDA",
            KernelBody::Device { .. } => "device-implemented",
        }
    }
}
