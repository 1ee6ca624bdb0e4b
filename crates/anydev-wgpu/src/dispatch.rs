//! Encoding one kernel launch: the params buffer, the bind group, the
//! workgroup grid, and the submission, all inside an error scope.

use crate::device::GpuDevice;
use crate::shader::layout::{HEADER, WORKGROUP};
use crate::shader::{Access, KernelKey};
use anydev_core::{Error, Result};

/// Builder of the params words (see [`crate::shader::layout`]).
#[derive(Clone)]
pub struct Params {
    words: Vec<i32>,
}

fn word(op: &str, value: i128) -> Result<i32> {
    i32::try_from(value).map_err(|_| {
        Error::invalid_argument(
            op,
            format!("{value} does not fit the 32-bit index arithmetic of the wgpu kernels; split the array"),
        )
    })
}

impl Params {
    /// Header for `threads` threads over an iteration space of `shape`.
    pub fn new(op: &str, threads: usize, shape: &[usize]) -> Result<Params> {
        let mut words = vec![0i32; HEADER];
        words[0] = u32::try_from(threads).map_err(|_| {
            Error::invalid_argument(
                op,
                format!("{threads} elements are more than one wgpu kernel can address"),
            )
        })? as i32;
        words[1] = shape.len() as i32;
        let mut p = Params { words };
        for &n in shape {
            p.push(op, n as i128)?;
        }
        Ok(p)
    }

    /// Sets 64-bit scalar slot `slot` (0..4) to `bits`.
    pub fn scalar(&mut self, slot: usize, bits: u64) {
        self.words[2 + 2 * slot] = bits as u32 as i32;
        self.words[3 + 2 * slot] = (bits >> 32) as u32 as i32;
    }

    /// Appends one operand layout: element offset, then strides.
    pub fn operand(&mut self, op: &str, offset: usize, strides: &[isize]) -> Result<()> {
        self.push(op, offset as i128)?;
        for &s in strides {
            self.push(op, s as i128)?;
        }
        Ok(())
    }

    pub fn push(&mut self, op: &str, value: i128) -> Result<()> {
        self.words.push(word(op, value)?);
        Ok(())
    }

    fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// The iteration space of an elementwise launch, simplified: dimensions of
/// length 1 dropped, and each dimension merged into the one before it
/// wherever every operand steps through the pair as through one dimension
/// (the outer stride is the inner stride times the inner length; zero
/// strides of broadcast operands merge the same way). The same elements
/// in the same order, in fewer dimensions: operands that are all
/// contiguous become one dimension, which the kernels index without a
/// division (`operand_offset`). `strides` has one slice per operand, each
/// as long as `shape`; the result's strides are as long as its shape.
pub fn coalesce(shape: &[usize], strides: &[&[isize]]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut merged: Vec<usize> = Vec::with_capacity(shape.len());
    let mut merged_strides: Vec<Vec<isize>> = vec![Vec::with_capacity(shape.len()); strides.len()];
    for (d, &len) in shape.iter().enumerate() {
        if len == 1 {
            continue;
        }
        let joins = merged.last().is_some() && {
            let outer = merged_strides.iter().map(|s| s.last().copied());
            strides
                .iter()
                .zip(outer)
                .all(|(s, outer)| Some(s[d].checked_mul(len as isize)) == Some(outer))
        };
        if joins {
            if let Some(last) = merged.last_mut() {
                *last *= len;
            }
            for (s, m) in strides.iter().zip(&mut merged_strides) {
                if let Some(last) = m.last_mut() {
                    *last = s[d];
                }
            }
        } else {
            merged.push(len);
            for (s, m) in strides.iter().zip(&mut merged_strides) {
                m.push(s[d]);
            }
        }
    }
    (merged, merged_strides)
}

/// The workgroup grid for `groups` workgroups, folded into two
/// dimensions when one would exceed the per-dimension limit.
pub fn grid(dev: &GpuDevice, op: &str, groups: u64) -> Result<[u32; 3]> {
    let limit = dev.limits.max_compute_workgroups_per_dimension.max(1) as u64;
    let x = groups.min(limit);
    let y = groups.div_ceil(x.max(1));
    if y > limit {
        return Err(Error::invalid_argument(
            op,
            format!("{groups} workgroups are more than one dispatch can launch"),
        ));
    }
    Ok([x as u32, y as u32, 1])
}

/// The grid for one thread per item in workgroups of [`WORKGROUP`].
pub fn threads(dev: &GpuDevice, op: &str, items: usize) -> Result<[u32; 3]> {
    grid(dev, op, (items as u64).div_ceil(WORKGROUP as u64))
}

/// The ranges `[start, end)` of at most `step` positions that cover
/// `0..total`, one launch each; a single empty range when `total` is 0, so
/// that a kernel that writes an identity (the sum of nothing) still runs.
pub fn ranges(total: usize, step: usize) -> impl Iterator<Item = (usize, usize)> {
    let step = step.max(1);
    (0..total.max(1))
        .step_by(step)
        .map(move |start| (start, total.min(start + step)))
}

/// One launch: a kernel and how it addresses its elements, its params,
/// its input buffers in binding order (after params), the output buffer
/// (last binding), and the grid.
pub struct Launch<'a> {
    pub op: &'a str,
    pub key: KernelKey,
    pub access: Access,
    pub params: Params,
    pub inputs: Vec<&'a wgpu::Buffer>,
    pub output: &'a wgpu::Buffer,
    pub grid: [u32; 3],
}

/// Compiles (or finds) the kernel and submits it.
pub fn launch(dev: &GpuDevice, launch: Launch<'_>, unsupported: impl FnOnce() -> Error) -> Result<()> {
    if launch.grid.contains(&0) {
        return Ok(());
    }
    let pipeline = dev.pipelines.get(dev, &launch.key, launch.access, unsupported)?;
    submit(
        dev,
        &pipeline,
        &launch.params.bytes(),
        &launch.inputs,
        &[launch.output],
        launch.grid,
    )
    .map_err(|e| Error::backend(crate::NAME, format!("{}: launching {:?}: {e}", launch.op, launch.key)))
}

/// Binds the params words (binding 0), the inputs, then the outputs, and
/// submits one dispatch of `grid`. An input that is also an output is
/// snapshotted first, since one dispatch may not both read and write a
/// buffer through different bindings.
pub fn submit(
    dev: &GpuDevice,
    pipeline: &wgpu::ComputePipeline,
    params: &[u8],
    inputs: &[&wgpu::Buffer],
    outputs: &[&wgpu::Buffer],
    grid: [u32; 3],
) -> Result<(), crate::device::ScopeError> {
    if grid.contains(&0) {
        return Ok(());
    }
    dev.checked(|| {
        // A storage binding may not be empty: kernels without params get
        // one zero word.
        let mut words = params.to_vec();
        words.resize(params.len().max(4), 0);
        let params_buffer = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("anydev params"),
            size: words.len() as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: true,
        });
        if let Ok(mut view) = params_buffer.slice(..).get_mapped_range_mut() {
            view.copy_from_slice(&words);
        }
        params_buffer.unmap();
        let mut encoder = dev.device.create_command_encoder(&Default::default());
        let snapshots: Vec<Option<wgpu::Buffer>> = inputs
            .iter()
            .map(|&input| {
                outputs.contains(&input).then(|| {
                    let copy = dev.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("anydev snapshot"),
                        size: input.size(),
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    encoder.copy_buffer_to_buffer(input, 0, &copy, 0, input.size());
                    copy
                })
            })
            .collect();
        let mut buffers: Vec<&wgpu::Buffer> = vec![&params_buffer];
        for (input, snapshot) in inputs.iter().zip(&snapshots) {
            buffers.push(snapshot.as_ref().unwrap_or(input));
        }
        buffers.extend_from_slice(outputs);
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let bind_group = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            let [x, y, z] = grid;
            pass.dispatch_workgroups(x, y, z);
        }
        dev.queue.submit([encoder.finish()]);
    })
}

#[cfg(test)]
mod tests {
    use super::coalesce;

    /// Every operand's element offsets, in iteration order.
    fn offsets(shape: &[usize], strides: &[Vec<isize>]) -> Vec<Vec<isize>> {
        let n: usize = shape.iter().product();
        strides
            .iter()
            .map(|s| {
                (0..n)
                    .map(|i| {
                        let mut rem = i;
                        let mut off = 0;
                        for d in (0..shape.len()).rev() {
                            off += (rem % shape[d]) as isize * s[d];
                            rem /= shape[d];
                        }
                        off
                    })
                    .collect()
            })
            .collect()
    }

    fn check(shape: &[usize], strides: &[&[isize]], expected_shape: &[usize]) {
        let (merged, merged_strides) = coalesce(shape, strides);
        assert_eq!(merged, expected_shape, "{shape:?} {strides:?}");
        assert!(merged_strides.iter().all(|s| s.len() == merged.len()));
        let original: Vec<Vec<isize>> = strides.iter().map(|s| s.to_vec()).collect();
        assert_eq!(offsets(&merged, &merged_strides), offsets(shape, &original));
    }

    #[test]
    fn contiguous_operands_become_one_dimension() {
        check(&[2, 3, 4], &[&[12, 4, 1], &[12, 4, 1]], &[24]);
        check(&[1, 5, 1], &[&[5, 1, 1], &[5, 1, 5]], &[5]);
        // Broadcast scalars merge along with contiguous outputs.
        check(&[2, 3], &[&[0, 0], &[3, 1]], &[6]);
        check(&[], &[&[], &[]], &[]);
        check(&[1, 1], &[&[1, 1], &[7, 3]], &[]);
    }

    #[test]
    fn layouts_that_do_not_line_up_keep_their_dimensions() {
        // A transposed operand.
        check(&[3, 4], &[&[1, 3], &[4, 1]], &[3, 4]);
        // Broadcast along the outer axis only: the inner two merge.
        check(&[2, 3, 4], &[&[0, 4, 1], &[12, 4, 1]], &[2, 12]);
        // A column slice of a wider array, reversed.
        check(&[3, 2], &[&[10, -1], &[2, 1]], &[3, 2]);
        // Every other element: strided but uniform, so one dimension.
        check(&[2, 3], &[&[6, 2], &[3, 1]], &[6]);
        // Zero-size spaces stay zero-size.
        check(&[2, 0, 3], &[&[0, 3, 1], &[0, 3, 1]], &[0]);
    }
}
