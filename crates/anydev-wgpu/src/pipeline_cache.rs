//! Compiled compute pipelines, one per [`KernelKey`] and [`Access`] per
//! device: each kernel is generated and compiled the first time it is
//! used and reused after that.

use crate::device::{lock, GpuDevice};
use crate::shader::{self, Access, KernelKey};
use anydev_core::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct PipelineCache {
    pipelines: Mutex<HashMap<(KernelKey, Access), Arc<wgpu::ComputePipeline>>>,
    /// Extension ops' WGSL kernels, by the key their call gives.
    extensions: Mutex<HashMap<String, Arc<wgpu::ComputePipeline>>>,
}

impl PipelineCache {
    /// Number of compiled pipelines (for tests and diagnostics).
    pub fn len(&self) -> usize {
        lock(&self.pipelines).len() + lock(&self.extensions).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pipeline for `key` written for `access`, compiling it on first
    /// use. `unsupported` builds the error for a key the generator refuses.
    pub fn get(
        &self,
        device: &GpuDevice,
        key: &KernelKey,
        access: Access,
        unsupported: impl FnOnce() -> Error,
    ) -> Result<Arc<wgpu::ComputePipeline>> {
        if let Some(p) = lock(&self.pipelines).get(&(*key, access)) {
            return Ok(Arc::clone(p));
        }
        let source = shader::source(key, access).ok_or_else(unsupported)?;
        let label = format!("{key:?} {access:?}");
        let pipeline = compile(device, &label, &source, "main").map_err(|e| {
            Error::backend(
                crate::NAME,
                format!("the generated kernel {label} failed to compile (a bug in anydev-wgpu): {e}"),
            )
        })?;
        lock(&self.pipelines).insert((*key, access), Arc::clone(&pipeline));
        Ok(pipeline)
    }

    /// The pipeline of an extension op's WGSL kernel, compiled on first
    /// use; a kernel that does not compile is an error naming it.
    pub fn extension(
        &self,
        device: &GpuDevice,
        key: &str,
        source: &str,
        entry_point: &str,
    ) -> Result<Arc<wgpu::ComputePipeline>> {
        if let Some(p) = lock(&self.extensions).get(key) {
            return Ok(Arc::clone(p));
        }
        let pipeline = compile(device, key, source, entry_point)
            .map_err(|e| Error::backend(crate::NAME, format!("the WGSL kernel of {key} failed to compile: {e}")))?;
        lock(&self.extensions).insert(key.to_owned(), Arc::clone(&pipeline));
        Ok(pipeline)
    }
}

/// Compiles one compute pipeline with its layout taken from the shader.
fn compile(
    device: &GpuDevice,
    label: &str,
    source: &str,
    entry_point: &str,
) -> Result<Arc<wgpu::ComputePipeline>, crate::device::ScopeError> {
    device
        .checked(|| {
            let module = device.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            device.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some(entry_point),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .map(Arc::new)
}

#[cfg(test)]
mod tests {
    use crate::adapter::{open_devices, InitOptions};
    use crate::shader::{self, supports, Access, KernelKey, ReduceForm};
    use anydev_core::ops::OpCode;
    use anydev_core::{DType, Error};

    /// Every kernel variant of every supported (op, dtype) pair.
    fn keys(op: OpCode, d: DType) -> Vec<KernelKey> {
        let flags = [false, true];
        match op {
            OpCode::Unary(op) => vec![KernelKey::Unary { op, dtype: d }],
            OpCode::Binary(op) => flags
                .iter()
                .flat_map(|&l| {
                    flags.map(|r| KernelKey::Binary {
                        op,
                        dtype: d,
                        lhs_scalar: l,
                        rhs_scalar: r,
                    })
                })
                .collect(),
            OpCode::Reduce(op) => ReduceForm::ALL
                .into_iter()
                .filter(|form| form.serves(op, d))
                .map(|form| KernelKey::Reduce { op, dtype: d, form })
                .collect(),
            OpCode::Scan(op) => vec![KernelKey::Scan { op, dtype: d }],
            OpCode::Cast => DType::ALL.iter().map(|&to| KernelKey::Cast { from: d, to }).collect(),
            OpCode::Where => vec![
                KernelKey::Where {
                    dtype: d,
                    x_scalar: false,
                    y_scalar: false,
                },
                KernelKey::Where {
                    dtype: d,
                    x_scalar: true,
                    y_scalar: true,
                },
            ],
            OpCode::Copy => vec![KernelKey::Copy(d)],
            OpCode::Fill => vec![KernelKey::Fill(d)],
            OpCode::Arange => vec![
                KernelKey::Arange {
                    via: DType::F64,
                    out: d,
                },
                KernelKey::Arange {
                    via: DType::F32,
                    out: d,
                },
            ],
            OpCode::Random => flags
                .iter()
                .flat_map(|&normal| [DType::F32, DType::F64].map(|via| KernelKey::Random { out: d, via, normal }))
                // f64 output is computed in f64 only.
                .filter(|k| {
                    !matches!(
                        k,
                        KernelKey::Random {
                            out: DType::F64,
                            via: DType::F32,
                            ..
                        }
                    )
                })
                .collect(),
            OpCode::Take => vec![KernelKey::Take(d)],
            OpCode::Matmul => vec![KernelKey::Matmul(d)],
            OpCode::Sort | OpCode::Argsort => flags
                .iter()
                .map(|&descending| KernelKey::SortStage { dtype: d, descending })
                .chain(flags.map(|arg| KernelKey::SortGather { dtype: d, arg }))
                .collect(),
            OpCode::SearchSorted => flags
                .iter()
                .map(|&right| KernelKey::SearchSorted { dtype: d, right })
                .collect(),
            OpCode::Nonzero => flags.map(|write| KernelKey::Nonzero { dtype: d, write }).to_vec(),
        }
    }

    /// Every generated kernel of every supported pair compiles on every
    /// device, in every access it has a form for, and a pair declared
    /// unsupported has no kernel to compile.
    #[test]
    fn every_supported_kernel_compiles() {
        let devices = match open_devices(&InitOptions::from_env().unwrap()) {
            Ok(d) => d,
            Err(e) => return eprintln!("SKIPPED: no wgpu device: {e:?}"),
        };
        for dev in &devices {
            let mut failures = Vec::new();
            for op in OpCode::all() {
                for d in DType::ALL {
                    if !supports(dev.features, op, d) {
                        continue;
                    }
                    for key in keys(op, d) {
                        let needs = match key {
                            KernelKey::Cast { to, .. } => to,
                            KernelKey::Arange { via, .. } | KernelKey::Random { via, .. } => via,
                            _ => d,
                        };
                        if !dev.features.holds(needs) {
                            continue;
                        }
                        let accesses = [
                            Access::Strided,
                            Access::Linear,
                            Access::Planar,
                            Access::Words,
                            Access::Vector,
                        ];
                        for access in accesses {
                            // Strided is every kernel's form; the others are optional.
                            if access != Access::Strided && shader::source(&key, access).is_none() {
                                continue;
                            }
                            let unsupported = || Error::backend("test", "unsupported");
                            if let Err(e) = dev.pipelines.get(dev, &key, access, unsupported) {
                                failures.push(format!("{key:?} {access:?}: {e}"));
                            }
                        }
                    }
                }
            }
            assert!(
                failures.is_empty(),
                "{} kernels failed:\n{}",
                failures.len(),
                failures.join("\n")
            );
            assert!(
                dev.pipelines.len() > 500,
                "only {} kernels compiled",
                dev.pipelines.len()
            );
        }
    }
}
