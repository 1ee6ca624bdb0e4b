//! The `linalg` factorizations as wgpu devices' own implementation of the
//! extension ops (design section 11): the array layer finds them through
//! [`anydev_core::backend::Backend::extension_ops`] and runs them as
//! [`KernelBody::Device`](anydev_core::extension::KernelBody::Device), so
//! that each call can have the workspace it needs, which a registered
//! WGSL kernel (inputs and outputs only) could not.
//!
//! A call allocates its workspace on the device, runs one invocation per
//! matrix ([`crate::shader::linalg`]) and waits for the matrices' status
//! words: a singular or indefinite matrix, or an iteration that did not
//! converge, is an error like the `cpu` kernel's, never a result of NaNs.
//! Waiting makes these calls synchronous, as they are on `cpu`.
//!
//! f32 and c64 on every device, f64 where the device holds it; c128 on
//! none (wgpu devices do not hold it).

use crate::device::GpuDevice;
use crate::memory;
use crate::shader::dtype::ShaderFeatures;
use crate::shader::linalg::{self as wgsl, CANARY_TRIPS, LOOP_LIMIT, NO_CONVERGENCE, NO_FACTORIZATION, WORKGROUP};
use crate::{dispatch, NAME};
use anydev_core::backend::TensorRef;
use anydev_core::extension::{AttrValue, Attrs, TensorMeta};
use anydev_core::{DType, Device, Error, Result};

/// The ops, by their names under `linalg::`.
const FUNCTIONS: [&str; 9] = ["cholesky", "inv", "solve", "slogdet", "det", "eigh", "eig", "svd", "qr"];

/// The extension ops the devices implement.
pub fn ops() -> Vec<String> {
    FUNCTIONS.iter().map(|f| format!("linalg::{f}")).collect()
}

/// Whether a device with `features` runs `op` on these inputs.
pub fn supported(features: ShaderFeatures, op: &str, inputs: &[TensorMeta]) -> bool {
    let function = op.strip_prefix("linalg::").unwrap_or("");
    FUNCTIONS.contains(&function)
        && inputs
            .first()
            .is_some_and(|x| matches!(x.dtype, DType::F32 | DType::F64 | DType::C64) && features.holds(x.dtype))
}

/// One call's launch data: params words, workspace elements (none bound
/// for Cholesky, which works in its output) and index words per matrix,
/// and the matrix count.
struct Plan {
    params: Vec<u32>,
    work: Option<usize>,
    words: usize,
    count: usize,
}

fn flag(attrs: &Attrs, name: &str) -> bool {
    matches!(attrs.get(name), Some(AttrValue::Bool(true)))
}

fn word(op: &str, value: usize) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::invalid_argument(op, format!("{value} is too large for a wgpu kernel")))
}

fn plan(function: &str, inputs: &[TensorRef<'_>], attrs: &Attrs) -> Result<Plan> {
    let x = &inputs[0];
    let d = x.shape.len();
    let (m, n) = (x.shape[d - 2], x.shape[d - 1]);
    let count: usize = x.shape[..d - 2].iter().product();
    let (params, work, words) = match function {
        "cholesky" => (vec![n, usize::from(flag(attrs, "upper"))], None, 0),
        "inv" | "det" | "slogdet" => (vec![n], Some(n * n), n),
        "solve" => {
            let y = &inputs[1];
            (vec![n, y.shape[y.shape.len() - 1]], Some(n * n), n)
        }
        "qr" => {
            let k = if flag(attrs, "complete") { m } else { m.min(n) };
            (vec![m, n, k], Some(m * n + 2 * m.min(n)), 0)
        }
        "eigh" => (vec![n], Some(n * n), 0),
        "svd" => {
            let full = flag(attrs, "full_matrices");
            let (big, small) = (m.max(n), m.min(n));
            let lc = if full { big } else { small };
            (
                vec![m, n, usize::from(full)],
                Some(big * small + small * small + big * lc),
                0,
            )
        }
        "eig" => (vec![n, usize::from(!x.dtype.is_complex())], Some(3 * n * n + 2 * n), n),
        other => {
            return Err(Error::invalid_argument(
                other,
                "not a factorization of the wgpu backend",
            ))
        }
    };
    let params = std::iter::once(count)
        .chain(params)
        .map(|v| word(function, v))
        .chain([Ok(CANARY_TRIPS)])
        .collect::<Result<_>>()?;
    Ok(Plan {
        params,
        work,
        words,
        count,
    })
}

/// The workspace's element size: the input's, complex for `eig`.
fn work_element(function: &str, dtype: DType) -> usize {
    match (function, dtype.complex_dtype()) {
        ("eig", Some(complex)) => complex.size(),
        _ => dtype.size(),
    }
}

/// Runs factorization `op` on device `index`, which has checked the call.
pub fn run(
    dev: &GpuDevice,
    id: Device,
    index: usize,
    op: &str,
    inputs: &[TensorRef<'_>],
    outputs: &[TensorRef<'_>],
    attrs: &Attrs,
) -> Result<()> {
    let function = op.strip_prefix("linalg::").unwrap_or(op);
    let dtype = inputs[0].dtype;
    let source = wgsl::source(function, dtype).ok_or_else(|| Error::Unsupported {
        op: op.to_owned(),
        dtype,
        device: id,
    })?;
    let plan = plan(function, inputs, attrs)?;
    if plan.count == 0 {
        return Ok(());
    }
    let work = plan
        .work
        .map(|elements| memory::allocate(dev, id, index, plan.count * elements * work_element(function, dtype)))
        .transpose()?;
    let status = memory::allocate(dev, id, index, plan.count * (1 + plan.words) * 4)?;
    let ins = memory::whole_buffers(inputs, index, id, op)?;
    let mut outs = memory::whole_buffers(outputs, index, id, op)?;
    outs.extend(work.as_ref().map(|w| &w.buffer));
    outs.push(&status.buffer);
    let pipeline = dev
        .pipelines
        .extension(dev, &format!("{op}:{dtype}"), &source, "main")?;
    let params: Vec<u8> = plan.params.iter().flat_map(|w| w.to_le_bytes()).collect();
    let grid = dispatch::grid(dev, op, (plan.count as u64).div_ceil(WORKGROUP.into()))?;
    dispatch::submit(dev, &pipeline, &params, &ins, &outs, grid)
        .map_err(|e| Error::backend(NAME, format!("{op}: launching the kernel: {e}")))?;
    let mut words = vec![0u8; plan.count * 4];
    memory::read(dev, &status.buffer, 0, &mut words)?;
    let failed = words
        .chunks_exact(4)
        .enumerate()
        .find_map(|(b, w)| Some((b, u32::from_le_bytes(w.try_into().ok()?))).filter(|(_, s)| *s != 0));
    match failed {
        None => Ok(()),
        Some((_, LOOP_LIMIT)) => {
            let x = &inputs[0];
            Err(Error::FeatureUnsupported {
                feature: format!("{op} of {:?} matrices", &x.shape[x.shape.len() - 2..]),
                device: id,
                reason: format!(
                    "the shader compiler of {} ends the loops of a shader invocation after a fixed number of \
                     iterations (llvmpipe: 65,535), fewer than one matrix of this size needs; factorize smaller \
                     matrices here, or use another device",
                    dev.info.name
                ),
            })
        }
        Some((b, code)) => {
            let reason = match (code, function) {
                (NO_FACTORIZATION, "cholesky") => "the matrix is not positive definite",
                (NO_FACTORIZATION, _) => "the matrix is singular",
                (NO_CONVERGENCE, "svd") => "the decomposition did not converge",
                (NO_CONVERGENCE, _) => "the eigendecomposition did not converge",
                _ => "the kernel reported an unknown status",
            };
            let place = if plan.count > 1 {
                format!(" (matrix {b} of the batch)")
            } else {
                String::new()
            };
            Err(Error::invalid_argument(function, format!("{reason}{place}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FUNCTIONS;
    use crate::adapter::{open_devices, InitOptions};
    use crate::shader::linalg::source;
    use anydev_core::DType;

    /// Every factorization's kernel compiles for every dtype a device
    /// holds (the device cases run them; this names a broken one).
    #[test]
    fn every_factorization_compiles() {
        let devices = match open_devices(&InitOptions::from_env().unwrap()) {
            Ok(d) => d,
            Err(e) => return eprintln!("SKIPPED: no wgpu device: {e:?}"),
        };
        for dev in &devices {
            let mut failures = Vec::new();
            for function in FUNCTIONS {
                for dtype in [DType::F32, DType::F64, DType::C64]
                    .into_iter()
                    .filter(|&d| dev.features.holds(d))
                {
                    let wgsl = source(function, dtype).expect("a source for every function and these dtypes");
                    let key = format!("linalg::{function}:{dtype}");
                    if let Err(e) = dev.pipelines.extension(dev, &key, &wgsl, "main") {
                        failures.push(format!("{key}: {e}"));
                    }
                }
            }
            assert!(failures.is_empty(), "{}", failures.join("\n"));
        }
    }
}
