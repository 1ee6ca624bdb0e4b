//! Default dtypes belong to a device, not to the library (design section
//! 14): a device without `f64` defaults to `f32`, so `zeros(shape)` works
//! there instead of failing on its first line. Creation functions without
//! a dtype and scalars on their own use the defaults of the device the
//! result goes to.

use crate::context::creation_ctx;
use anydev_core::{DType, Device, Result};

/// The dtypes a device uses when none is given, as the Array API
/// standard's `__array_namespace_info__().default_dtypes(device=)` reports
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultDTypes {
    /// Real floating point: `f64`, or `f32` on a device without `f64`.
    pub real_floating: DType,
    /// Complex floating point: `c128`, or `c64` on a device without `c128`.
    pub complex_floating: DType,
    /// Integers: `i64`, or `i32` on a device without `i64`.
    pub integral: DType,
    /// Indices, as `argsort`, `argmax`, `nonzero` and `searchsorted`
    /// return them: always `i64`.
    pub indexing: DType,
}

impl DefaultDTypes {
    /// The defaults of a device that holds the dtypes `holds` accepts (its
    /// declared `dtypes` capability): the widest of each kind it holds.
    pub fn for_device_holding(holds: impl Fn(DType) -> bool) -> DefaultDTypes {
        let pick = |wide, narrow| if holds(wide) { wide } else { narrow };
        DefaultDTypes {
            real_floating: pick(DType::F64, DType::F32),
            complex_floating: pick(DType::C128, DType::C64),
            integral: pick(DType::I64, DType::I32),
            indexing: DType::I64,
        }
    }
}

/// The default dtypes of `device`, or of the device creation functions
/// would use now (the scope's, else the default device) when `None`.
pub fn default_dtypes(device: Option<Device>) -> Result<DefaultDTypes> {
    Ok(creation_ctx(device)?.default_dtypes())
}
