//! From an [`Op`] call to kernel launches: pick the kernel key, lay out
//! the params (shapes, strides, offsets, scalars) and the grid.

use crate::device::GpuDevice;
use crate::dispatch::{coalesce, grid, launch, ranges, threads, Launch, Params};
use crate::memory::{self, GpuAllocation};
use crate::shader::layout::{LOOP_BUDGET, WORKGROUP};
use crate::shader::{matmul, sort, Access, KernelKey, ReduceForm, MATMUL_TILE};
use anydev_core::backend::TensorRef;
use anydev_core::ops::{Distribution, Op, Operand, ReduceOp, ScanOp};
use anydev_core::validate::{numel, Check, MatmulDims, RandomParams, Reduction};
use anydev_core::{DType, Device, Error, Result, Scalar};

/// A reduction switches to a workgroup per output element when each
/// output folds at least this many elements...
const WORKGROUP_REDUCE_MIN: usize = 256;
/// ...and there are too few outputs to keep a GPU busy otherwise. A
/// software device ([`GpuDevice::software`]) runs each workgroup on one
/// host core, so a thread per output keeps it busy from a workgroup's
/// worth of outputs per core; on llvmpipe, where every barrier switches
/// between a workgroup's invocations, argmax along the rows of a
/// 1000 x 1000 f32 matrix took 12 ms with a workgroup per row and 1.5 ms
/// with a thread per row.
const WORKGROUP_REDUCE_MAX_OUTPUTS: usize = 1 << 14;
/// `nonzero` runs at most this many workgroups per launch...
const NONZERO_MAX_GROUPS: usize = 256;
/// ...each thread of which takes at least this many elements.
const NONZERO_GRAIN: usize = 64;

/// A reduction with fewer outputs than this spreads each output over
/// several threads that write partial results (`ReduceForm::Split`),
/// where a workgroup per output would synchronise it for every step of
/// its tree: on llvmpipe, summing each row of a 1000 x 1000 matrix took
/// 15 ms that way and 2.9 ms split...
const SPLIT_MAX_OUTPUTS: usize = 1 << 14;
/// ...each thread folding about this many elements...
const SPLIT_GRAIN: usize = 64;
/// ...with at most this many threads per output...
const SPLIT_MAX_PARTS: usize = 4096;
/// ...and at most this many partial results in all (4 MiB of f32
/// scratch), both limits giving way where one thread would otherwise
/// loop past `LOOP_BUDGET`.
const SPLIT_MAX_PARTIALS: usize = 1 << 20;

/// A reduction in passes (`Exec::reduce_in_passes`) reduces its innermost
/// dimension first when that is at least this long, so that its scratch
/// array holds at most one in this many of the input's elements; shorter
/// ones fold in one pass.
const PASS_MIN_LINE: usize = 16;

/// An operand's element offset and its strides over a kept space.
type Layout<'a> = (usize, &'a [isize]);

/// An operand's buffer, element offset and strides over a kept space.
type Placed<'a> = (&'a wgpu::Buffer, usize, &'a [isize]);

/// One reduction as the kernels see it: of `x` (of the first dtype) into
/// `out` (of the second), both placed over the kept space `shape`, over
/// the sub-space `reduced` (its shape and `x`'s strides).
#[derive(Clone, Copy)]
struct Reducing<'a> {
    op: ReduceOp,
    dtypes: (DType, DType),
    shape: &'a [usize],
    x: Placed<'a>,
    out: Placed<'a>,
    reduced: (&'a [usize], &'a [isize]),
}

/// The strides of `shape` laid out in row-major order, each element
/// `inner` elements wide.
fn row_major(shape: &[usize], inner: usize) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = inner as isize;
    for d in (0..shape.len()).rev() {
        strides[d] = step;
        step *= shape[d] as isize;
    }
    strides
}

/// The params of a reduction launch: `threads` threads over the kept
/// space `shape`, `x`'s and `out`'s element offsets and strides over it,
/// then the reduced sub-space in the tail (its length, rank, shape and
/// strides; see `shader::reduce`), folding the reduced positions `range`.
fn reduce_params(
    op: &str,
    threads: usize,
    shape: &[usize],
    x: Layout<'_>,
    out: Layout<'_>,
    (red_shape, red_strides): (&[usize], &[isize]),
    (start, end): (usize, usize),
) -> Result<Params> {
    let mut params = Params::new(op, threads, shape)?;
    params.operand(op, x.0, x.1)?;
    params.operand(op, out.0, out.1)?;
    params.push(op, numel(red_shape) as i128)?;
    params.push(op, red_shape.len() as i128)?;
    for &n in red_shape {
        params.push(op, n as i128)?;
    }
    for &s in red_strides {
        params.push(op, s as i128)?;
    }
    params.scalar(0, start as u64);
    params.scalar(1, end as u64);
    Ok(params)
}

/// How an elementwise kernel over the coalesced `shape` addresses operands
/// with these `strides` and element `offsets` (the output last), when the
/// output, of dtype `out`, spans its whole allocation (`spans`) or not:
/// see [`Access`].
fn access(
    key: &KernelKey,
    shape: &[usize],
    strides: &[Vec<isize>],
    offsets: &[usize],
    spans: bool,
    out: DType,
) -> Access {
    match shape.len() {
        1 => {}
        2 => return Access::Planar,
        _ => return Access::Strided,
    }
    let whole_output = spans && strides.last().is_some_and(|s| s[0] == 1) && offsets.last() == Some(&0);
    if out.size() < 4 && whole_output {
        return Access::Words;
    }
    let unit = strides.iter().all(|s| s[0] == 1);
    let at_start = offsets.iter().all(|&o| o == 0);
    if unit && at_start && spans && key.vectorizes() {
        Access::Vector
    } else {
        Access::Linear
    }
}

/// One op call being translated on one device.
pub struct Exec<'a> {
    pub dev: &'a GpuDevice,
    pub id: Device,
    pub index: usize,
    pub name: &'static str,
}

impl<'a> Exec<'a> {
    fn check(&self) -> Check {
        Check::new(self.name, self.id)
    }

    /// The wgpu buffer behind an operand, checked to be this device's.
    fn buffer<'t>(&self, t: &TensorRef<'t>) -> Result<&'t wgpu::Buffer> {
        Ok(&self.allocation(t)?.buffer)
    }

    /// The allocation behind an operand, checked to be this device's.
    fn allocation<'t>(&self, t: &TensorRef<'t>) -> Result<&'t GpuAllocation> {
        let alloc = t.buffer.downcast::<GpuAllocation>().ok_or_else(|| {
            self.check()
                .invalid(format!("{:?} was not allocated by the wgpu backend", t.buffer))
        })?;
        if alloc.device != self.index {
            return Err(Error::DeviceMismatch {
                op: self.name.to_owned(),
                devices: vec![self.id, t.buffer.device()],
            });
        }
        Ok(alloc)
    }

    /// The operand's offset in elements.
    fn elements(&self, t: &TensorRef<'_>) -> Result<usize> {
        self.check().element_offset(t)
    }

    fn run(
        &self,
        key: KernelKey,
        params: Params,
        inputs: Vec<&wgpu::Buffer>,
        output: &wgpu::Buffer,
        grid: [u32; 3],
        dtype: DType,
    ) -> Result<()> {
        let l = Launch {
            op: self.name,
            key,
            access: Access::Strided,
            params,
            inputs,
            output,
            grid,
        };
        launch(self.dev, l, || self.check().unsupported(dtype))
    }

    /// An elementwise launch over `out`'s shape: tensor operands in order,
    /// scalar operands in the given slots.
    fn elementwise(
        &self,
        key: KernelKey,
        operands: &[Operand<&TensorRef<'_>>],
        out: &TensorRef<'_>,
        dtype: DType,
    ) -> Result<()> {
        let n = numel(out.shape);
        let tensors: Vec<&TensorRef<'_>> = operands
            .iter()
            .filter_map(|operand| match operand {
                Operand::Tensor(t) => Some(*t),
                Operand::Scalar(_) => None,
            })
            .chain([out])
            .collect();
        for t in &tensors[..tensors.len() - 1] {
            self.check().expect_shape(t, out.shape, "every operand")?;
        }
        let strides: Vec<&[isize]> = tensors.iter().map(|t| t.strides).collect();
        let (mut shape, mut strides) = coalesce(out.shape, &strides);
        if shape.is_empty() {
            // One element: a one-dimensional space of one.
            shape = vec![1];
            strides = vec![vec![0]; tensors.len()];
        }
        let offsets = tensors.iter().map(|t| self.elements(t)).collect::<Result<Vec<_>>>()?;
        // Vector stores may run past the output's last element, into the
        // buffer's padding only when the output spans its allocation.
        let output = self.allocation(out)?;
        let spans = output.bytes() == n * out.dtype.size();
        let access = access(&key, &shape, &strides, &offsets, spans, out.dtype);
        let threads_needed = match access {
            Access::Vector => n.div_ceil(4),
            Access::Words => n.div_ceil(4 / out.dtype.size()),
            _ => n,
        };
        let mut params = Params::new(self.name, threads_needed, &shape)?;
        for (&offset, strides) in offsets.iter().zip(&strides) {
            params.operand(self.name, offset, strides)?;
        }
        for (slot, operand) in operands.iter().enumerate() {
            // No wgpu device holds c128, the one dtype wider than 64 bits.
            if let Operand::Scalar(s) = operand {
                params.scalar(slot, s.to_bits() as u64);
            }
        }
        let inputs = tensors[..tensors.len() - 1]
            .iter()
            .map(|t| self.buffer(t))
            .collect::<Result<Vec<_>>>()?;
        let l = Launch {
            op: self.name,
            key,
            access,
            params,
            inputs,
            output: &output.buffer,
            grid: threads(self.dev, self.name, threads_needed)?,
        };
        launch(self.dev, l, || self.check().unsupported(dtype))
    }

    pub fn execute(&self, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let check = self.check();
        let dtype = op.support_dtype();
        if !crate::shader::supports(self.dev.features, op.code(), dtype) {
            return Err(check.unsupported(dtype));
        }
        match op {
            Op::Unary { op: u, x, out } => {
                check.unary(*u, x, out)?;
                let key = KernelKey::Unary { op: *u, dtype: x.dtype };
                self.elementwise(key, &[Operand::Tensor(x)], out, dtype)
            }
            Op::Binary { op: b, lhs, rhs, out } => {
                let d = check.binary(*b, lhs, rhs, out)?;
                let key = KernelKey::Binary {
                    op: *b,
                    dtype: d,
                    lhs_scalar: lhs.tensor().is_none(),
                    rhs_scalar: rhs.tensor().is_none(),
                };
                let operands = [as_ref(lhs), as_ref(rhs)];
                self.elementwise(key, &operands, out, dtype)
            }
            Op::Cast { x, out } => {
                if !self.dev.features.holds(out.dtype) {
                    return Err(Error::UnsupportedDType {
                        dtype: out.dtype,
                        device: self.id,
                    });
                }
                let key = KernelKey::Cast {
                    from: x.dtype,
                    to: out.dtype,
                };
                self.elementwise(key, &[Operand::Tensor(x)], out, dtype)
            }
            Op::Where { cond, x, y, out } => {
                check.where_(cond, x, y, out)?;
                let key = KernelKey::Where {
                    dtype: out.dtype,
                    x_scalar: x.tensor().is_none(),
                    y_scalar: y.tensor().is_none(),
                };
                let operands = [Operand::Tensor(cond), as_ref(x), as_ref(y)];
                self.elementwise(key, &operands, out, dtype)
            }
            Op::Copy { x, out } => {
                check.expect_dtype(out, x.dtype, "the output")?;
                self.elementwise(KernelKey::Copy(x.dtype), &[Operand::Tensor(x)], out, dtype)
            }
            Op::Fill { out, value } => {
                check.fill(out, *value)?;
                self.elementwise(KernelKey::Fill(out.dtype), &[Operand::Scalar(*value)], out, dtype)
            }
            Op::Arange { out, start, step } => {
                let via = if self.dev.features.holds(DType::F64) {
                    DType::F64
                } else {
                    DType::F32
                };
                let bits = |v: f64| {
                    if via == DType::F64 {
                        v.to_bits()
                    } else {
                        (v as f32).to_bits() as u64
                    }
                };
                let scalars = [
                    Operand::Scalar(Scalar::from_bits(via, bits(*start).into())),
                    Operand::Scalar(Scalar::from_bits(via, bits(*step).into())),
                ];
                self.elementwise(KernelKey::Arange { via, out: out.dtype }, &scalars, out, dtype)
            }
            Op::Random {
                out,
                dist,
                seed,
                counter,
            } => self.random(out, dist, *seed, *counter),
            Op::Take { x, indices, axis, out } => self.take(x, indices, *axis, out),
            Op::Reduce { op: r, x, axes, out } => self.reduce(*r, x, axes, out),
            Op::Scan { op: s, x, axis, out } => {
                check.lines(x, *axis, out, x.dtype)?;
                self.scan(*s, x, *axis, out)
            }
            Op::Sort {
                x,
                axis,
                descending,
                out,
            } => {
                check.lines(x, *axis, out, x.dtype)?;
                self.sort(x, *axis, *descending, false, out)
            }
            Op::Argsort {
                x,
                axis,
                descending,
                out,
            } => {
                check.lines(x, *axis, out, DType::I64)?;
                self.sort(x, *axis, *descending, true, out)
            }
            Op::SearchSorted {
                sorted,
                values,
                right,
                out,
            } => self.search_sorted(sorted, values, *right, out),
            Op::Matmul { a, b, out } => self.matmul(a, b, out),
            Op::Nonzero { x, out } => self.nonzero(x, out),
        }
    }

    fn random(&self, out: &TensorRef<'_>, dist: &Distribution, seed: u64, counter: u64) -> Result<()> {
        let RandomParams { p, q, normal } = self.check().random(dist)?;
        let via = crate::shader::random::via(self.dev.features.holds(DType::F64));
        let param = |v: f64| {
            if via == DType::F64 {
                Operand::Scalar(Scalar::F64(v))
            } else {
                Operand::Scalar(Scalar::F32(v as f32))
            }
        };
        let operands = [
            Operand::Scalar(Scalar::U64(seed)),
            Operand::Scalar(Scalar::U64(counter)),
            param(p),
            param(q),
        ];
        self.elementwise(
            KernelKey::Random {
                out: out.dtype,
                via,
                normal,
            },
            &operands,
            out,
            out.dtype,
        )
    }

    fn take(&self, x: &TensorRef<'_>, indices: &TensorRef<'_>, axis: usize, out: &TensorRef<'_>) -> Result<()> {
        let check = self.check();
        let shape = check.take(x, indices, axis, out)?;
        if x.shape[axis] == 0 && indices.shape[0] > 0 {
            return Err(check.invalid("cannot take from an empty axis"));
        }
        let n = numel(&shape);
        let mut params = Params::new(self.name, n, &shape)?;
        let mut index_strides = vec![0isize; shape.len()];
        index_strides[axis] = indices.strides[0];
        params.operand(self.name, self.elements(indices)?, &index_strides)?;
        let mut x_strides = x.strides.to_vec();
        x_strides[axis] = 0;
        params.operand(self.name, self.elements(x)?, &x_strides)?;
        params.operand(self.name, self.elements(out)?, out.strides)?;
        params.scalar(0, x.strides[axis] as i64 as u64);
        let grid = threads(self.dev, self.name, n)?;
        let inputs = vec![self.buffer(indices)?, self.buffer(x)?];
        self.run(
            KernelKey::Take(x.dtype),
            params,
            inputs,
            self.buffer(out)?,
            grid,
            x.dtype,
        )
    }

    fn reduce(&self, op: ReduceOp, x: &TensorRef<'_>, axes: &[usize], out: &TensorRef<'_>) -> Result<()> {
        let Reduction { shape, .. } = self.check().reduce(op, x, axes, out)?;
        // Both sub-spaces coalesced, so contiguous axes cost no division.
        let (shape, kept_strides) = coalesce(&shape, &[x.strides, out.strides]);
        let mut reduced: Vec<(usize, isize)> = axes.iter().map(|&a| (x.shape[a], x.strides[a])).collect();
        // Outermost first, so that the axes of a permuted view coalesce
        // too; argmax and argmin count positions in the order given.
        if !matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
            reduced.sort_by_key(|&(_, stride)| std::cmp::Reverse(stride.unsigned_abs()));
        }
        let (red_shape, red_strides): (Vec<usize>, Vec<isize>) = reduced.into_iter().unzip();
        let (red_shape, red_strides) = coalesce(&red_shape, &[&red_strides]);
        let x_at = (self.buffer(x)?, self.elements(x)?, kept_strides[0].as_slice());
        let out_at = (self.buffer(out)?, self.elements(out)?, kept_strides[1].as_slice());
        self.reduce_space(Reducing {
            op,
            dtypes: (x.dtype, out.dtype),
            shape: &shape,
            x: x_at,
            out: out_at,
            reduced: (&red_shape, &red_strides[0]),
        })
    }

    /// Runs `r`: in passes when its reduced sub-space has several
    /// dimensions, split over several threads per output when there are
    /// few outputs, else folded.
    fn reduce_space(&self, r: Reducing<'_>) -> Result<()> {
        let Reducing {
            op,
            dtypes: (x_dtype, out_dtype),
            shape,
            x,
            out,
            reduced,
        } = r;
        let (n_out, n_red) = (numel(shape), numel(reduced.0));
        let passes = reduced.0.len() >= 2
            && reduced.0.last().is_some_and(|&len| len >= PASS_MIN_LINE)
            && n_out > 0
            && !matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin);
        if passes {
            return self.reduce_in_passes(r);
        }
        // Threads per output: enough for each to fold about SPLIT_GRAIN
        // elements, within the limits unless the loop budget needs more.
        let parts = (n_red / SPLIT_GRAIN)
            .min(SPLIT_MAX_PARTS)
            .min(SPLIT_MAX_PARTIALS / n_out.max(1))
            .max(n_red.div_ceil(LOOP_BUDGET));
        let split = (1..SPLIT_MAX_OUTPUTS).contains(&n_out)
            && parts >= 2
            && reduced.0.len() == 1
            && !matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin);
        if !split {
            return self.fold(op, x_dtype, shape, x, out, reduced);
        }
        // Partial results, output by output, each output's parts together.
        let partials = n_out * parts;
        let scratch = memory::allocate(self.dev, self.id, self.index, partials * out_dtype.size())?;
        // The split kernels write element `i` of the scratch: no layout.
        let no_layout = vec![0; shape.len()];
        let (x_at, out_at) = ((x.1, x.2), (0, &no_layout[..]));
        let mut params = reduce_params(self.name, partials, shape, x_at, out_at, reduced, (0, n_red))?;
        params.scalar(2, parts as u64);
        let vector = n_out == 1 && reduced.1[0] == 1 && x.1 == 0 && crate::shader::four_bytes(x_dtype);
        let form = if vector {
            ReduceForm::SplitVector
        } else {
            ReduceForm::Split
        };
        let key = KernelKey::Reduce {
            op,
            dtype: x_dtype,
            form,
        };
        let grid = threads(self.dev, self.name, partials)?;
        self.run(key, params, vec![x.0], &scratch.buffer, grid, x_dtype)?;
        // Output `o`'s parts start at element `o * parts` of the scratch.
        let scratch_strides = row_major(shape, parts);
        let scratch_at = (&scratch.buffer, 0, scratch_strides.as_slice());
        self.fold(op, out_dtype, shape, scratch_at, out, (&[parts], &[1]))
    }

    /// A reduction over several dimensions (`reduced`, outermost first)
    /// in two: the last, innermost one is reduced into a scratch array
    /// over the kept space and the other reduced dimensions, in which
    /// those then lie contiguous and reduce as one. The kernels that walk
    /// several dimensions find each position by division, which llvmpipe
    /// makes lane by lane in scalar code: a sum over axes 0 and 2 of a
    /// 100 x 100 x 100 f32 array took 10.6 ms that way on `wgpu:0`.
    fn reduce_in_passes(&self, r: Reducing<'_>) -> Result<()> {
        let Reducing { shape, x, reduced, .. } = r;
        let out_dtype = r.dtypes.1;
        let inner = reduced.0.len() - 1;
        let (rest, line) = (
            (&reduced.0[..inner], &reduced.1[..inner]),
            (&reduced.0[inner..], &reduced.1[inner..]),
        );
        let space = [shape, rest.0].concat();
        let scratch_strides = row_major(&space, 1);
        let scratch = memory::allocate(self.dev, self.id, self.index, numel(&space) * out_dtype.size())?;
        let x_strides = [x.2, rest.1].concat();
        let (first_space, first_strides) = coalesce(&space, &[&x_strides, &scratch_strides]);
        self.reduce_space(Reducing {
            shape: &first_space,
            x: (x.0, x.1, &first_strides[0]),
            out: (&scratch.buffer, 0, &first_strides[1]),
            reduced: line,
            ..r
        })?;
        let (kept_strides, rest_strides) = scratch_strides.split_at(shape.len());
        let (rest_shape, rest_strides) = coalesce(rest.0, &[rest_strides]);
        self.reduce_space(Reducing {
            dtypes: (out_dtype, out_dtype),
            x: (&scratch.buffer, 0, kept_strides),
            reduced: (&rest_shape, &rest_strides[0]),
            ..r
        })
    }

    /// A reduction of `x`'s reduced sub-space (`reduced`: shape and
    /// strides) for every element of the kept space `shape` into `out`;
    /// each layout is a buffer, an element offset and strides over `shape`.
    fn fold(
        &self,
        op: ReduceOp,
        dtype: DType,
        shape: &[usize],
        x: Placed<'_>,
        out: Placed<'_>,
        reduced: (&[usize], &[isize]),
    ) -> Result<()> {
        let n_out = numel(shape);
        let n_red = numel(reduced.0);
        // Loop iterations per reduced element: the fold and `red_offset`.
        let per_element = reduced.0.len() + 2;
        let serial_fits = n_red * per_element <= LOOP_BUDGET;
        let busy = if self.dev.software() {
            self.dev.host_cores * WORKGROUP as usize
        } else {
            WORKGROUP_REDUCE_MAX_OUTPUTS
        };
        let workgroup = n_red >= WORKGROUP_REDUCE_MIN && (n_out < busy || !serial_fits);
        let mut step = LOOP_BUDGET / per_element;
        if workgroup {
            step *= WORKGROUP as usize;
        }
        let grid = if workgroup {
            grid(self.dev, self.name, n_out as u64)?
        } else {
            threads(self.dev, self.name, n_out)?
        };
        let form = if workgroup {
            ReduceForm::Workgroup
        } else {
            ReduceForm::Serial
        };
        let form = form.for_rank(reduced.0.len());
        let key = KernelKey::Reduce { op, dtype, form };
        for (start, end) in ranges(n_red, step) {
            let params = reduce_params(
                self.name,
                n_out,
                shape,
                (x.1, x.2),
                (out.1, out.2),
                reduced,
                (start, end),
            )?;
            self.run(key, params, vec![x.0], out.0, grid, dtype)?;
        }
        Ok(())
    }

    /// Params of a kernel over the lines along `axis`: the iteration
    /// space is `x`'s shape with the axis at length 1, `work` threads, and
    /// the tail `[len, x_axis_stride, out_axis_stride]` then `extra`.
    fn line_params(
        &self,
        x: &TensorRef<'_>,
        axis: usize,
        out: &TensorRef<'_>,
        work: usize,
        extra: &[usize],
    ) -> Result<Params> {
        let mut shape = x.shape.to_vec();
        shape[axis] = 1;
        let mut params = Params::new(self.name, work, &shape)?;
        params.operand(self.name, self.elements(x)?, x.strides)?;
        params.operand(self.name, self.elements(out)?, out.strides)?;
        params.push(self.name, x.shape[axis] as i128)?;
        params.push(self.name, x.strides[axis] as i128)?;
        params.push(self.name, out.strides[axis] as i128)?;
        for &w in extra {
            params.push(self.name, w as i128)?;
        }
        Ok(params)
    }

    /// An inclusive scan (checked by the caller): one thread per line, in
    /// launches of at most [`LOOP_BUDGET`] positions along the axis.
    fn scan(&self, op: ScanOp, x: &TensorRef<'_>, axis: usize, out: &TensorRef<'_>) -> Result<()> {
        let len = x.shape[axis];
        let lines = numel(x.shape).checked_div(len).unwrap_or(0);
        for (start, end) in ranges(len, LOOP_BUDGET) {
            let params = self.line_params(x, axis, out, lines, &[start, end])?;
            let grid = threads(self.dev, self.name, lines)?;
            let key = KernelKey::Scan { op, dtype: x.dtype };
            self.run(key, params, vec![self.buffer(x)?], self.buffer(out)?, grid, x.dtype)?;
        }
        Ok(())
    }

    /// Sorts and argsorts (checked by the caller) by the bitonic network
    /// of [`crate::shader`]'s `sort`: scratch buffers of `u32` positions
    /// and of the values, each line padded to a power of two `p`, one
    /// launch per stage (one thread per pair), then one that copies out
    /// the result.
    fn sort(&self, x: &TensorRef<'_>, axis: usize, descending: bool, arg: bool, out: &TensorRef<'_>) -> Result<()> {
        let len = x.shape[axis];
        let n = numel(x.shape);
        if n == 0 {
            return Ok(());
        }
        let lines = n / len;
        let p = len.next_power_of_two().max(2);
        let slots = lines
            .checked_mul(p)
            .filter(|&s| u32::try_from(s).is_ok())
            .ok_or_else(|| {
                self.check().invalid(format!(
                    "{lines} lines of {p} sorting slots are more than the 32-bit positions of the wgpu sort address; split the array"
                ))
            })?;
        let positions = memory::allocate(self.dev, self.id, self.index, slots * 4)?;
        let keys = memory::allocate(self.dev, self.id, self.index, slots * sort::key_size(x.dtype))?;
        let stages = p.trailing_zeros();
        let mut first = true;
        for k in (1..=stages).map(|s| 1usize << s) {
            for j in (0..k.trailing_zeros()).rev().map(|s| 1usize << s) {
                let params = self.line_params(x, axis, out, slots / 2, &[p, k, j, first as usize])?;
                let key = KernelKey::SortStage {
                    dtype: x.dtype,
                    descending,
                };
                let grid = threads(self.dev, self.name, slots / 2)?;
                let inputs = vec![self.buffer(x)?, &positions.buffer];
                self.run(key, params, inputs, &keys.buffer, grid, x.dtype)?;
                first = false;
            }
        }
        let params = self.line_params(x, axis, out, n, &[p])?;
        let key = KernelKey::SortGather { dtype: x.dtype, arg };
        let grid = threads(self.dev, self.name, n)?;
        let result = if arg { &positions.buffer } else { &keys.buffer };
        self.run(key, params, vec![result], self.buffer(out)?, grid, x.dtype)
    }

    fn search_sorted(
        &self,
        sorted: &TensorRef<'_>,
        values: &TensorRef<'_>,
        right: bool,
        out: &TensorRef<'_>,
    ) -> Result<()> {
        self.check().search_sorted(sorted, values, out)?;
        let n = numel(values.shape);
        let mut params = Params::new(self.name, n, values.shape)?;
        params.operand(self.name, self.elements(values)?, values.strides)?;
        params.operand(self.name, self.elements(out)?, out.strides)?;
        params.scalar(0, self.elements(sorted)? as u64);
        params.scalar(1, sorted.strides[0] as i64 as u64);
        params.scalar(2, sorted.shape[0] as u64);
        let grid = threads(self.dev, self.name, n)?;
        let key = KernelKey::SearchSorted {
            dtype: sorted.dtype,
            right,
        };
        let inputs = vec![self.buffer(values)?, self.buffer(sorted)?];
        self.run(key, params, inputs, self.buffer(out)?, grid, sorted.dtype)
    }

    fn matmul(&self, a: &TensorRef<'_>, b: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        let check = self.check();
        let MatmulDims {
            batch: batches,
            m,
            k,
            n,
        } = check.matmul(a, b, out)?;
        let nd = out.shape.len();
        let batch = &out.shape[..nd - 2];
        if m * n * batches == 0 {
            return Ok(());
        }
        let limit = self.dev.limits.max_compute_workgroups_per_dimension.max(1);
        let tiles = |v: usize| {
            u32::try_from(v.div_ceil(MATMUL_TILE as usize))
                .ok()
                .filter(|&t| t <= limit)
                .ok_or_else(|| {
                    check.invalid(format!(
                        "{m}x{n} results need more than the {limit} workgroups per grid dimension (max_compute_workgroups_per_dimension) of {MATMUL_TILE}x{MATMUL_TILE} tiles; split the matrices"
                    ))
                })
        };
        let (cols, rows) = (tiles(n)?, tiles(m)?);
        for (first, end) in ranges(batches, limit as usize) {
            for (k_first, k_end) in ranges(k, matmul::k_per_launch()) {
                let mut params = Params::new(self.name, batches, batch)?;
                for t in [a, b, out] {
                    params.operand(self.name, self.elements(t)?, &t.strides[..nd - 2])?;
                }
                for v in [m, n, k] {
                    params.push(self.name, v as i128)?;
                }
                for t in [a, b, out] {
                    params.push(self.name, t.strides[nd - 2] as i128)?;
                    params.push(self.name, t.strides[nd - 1] as i128)?;
                }
                params.scalar(0, first as u64);
                params.scalar(1, k_first as u64);
                params.scalar(2, k_end as u64);
                let grid = [cols, rows, (end - first) as u32];
                let inputs = vec![self.buffer(a)?, self.buffer(b)?];
                self.run(
                    KernelKey::Matmul(a.dtype),
                    params,
                    inputs,
                    self.buffer(out)?,
                    grid,
                    a.dtype,
                )?;
            }
        }
        Ok(())
    }

    /// Non-zero coordinates (see `shader::nonzero`): up to
    /// [`NONZERO_MAX_GROUPS`] workgroups of at least [`NONZERO_GRAIN`]
    /// elements a thread, in launches of at most [`LOOP_BUDGET`] loop
    /// iterations per thread: two passes over each element with its
    /// `operand_offset`, and the coordinates it writes, besides the first
    /// thread's scans over the threads and the workgroups before it.
    fn nonzero(&self, x: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        self.check().nonzero(x, out)?;
        let n = numel(x.shape);
        if n == 0 || out.shape[0] == 0 {
            return Ok(());
        }
        let per_element = 3 * x.shape.len() + 5;
        let groups = n
            .div_ceil(NONZERO_GRAIN * WORKGROUP as usize)
            .clamp(1, NONZERO_MAX_GROUPS);
        let per_group = (LOOP_BUDGET - 2 * WORKGROUP as usize - NONZERO_MAX_GROUPS) / per_element * WORKGROUP as usize;
        // Rows written before each launch (two slots), then the counts.
        let carry = memory::allocate(self.dev, self.id, self.index, (2 + groups) * 4)?;
        for (launch, (start, end)) in ranges(n, per_group * groups).enumerate() {
            let mut params = Params::new(self.name, n, x.shape)?;
            params.operand(self.name, self.elements(x)?, x.strides)?;
            params.push(self.name, self.elements(out)? as i128)?;
            params.push(self.name, out.strides[0] as i128)?;
            params.push(self.name, out.strides[1] as i128)?;
            params.scalar(0, start as u64);
            params.scalar(1, end as u64);
            params.scalar(2, launch as u64);
            let grid = [groups as u32, 1, 1];
            // One workgroup has no workgroups before it to count.
            if groups > 1 {
                let key = KernelKey::Nonzero {
                    dtype: x.dtype,
                    write: false,
                };
                self.run(key, params.clone(), vec![self.buffer(x)?], &carry.buffer, grid, x.dtype)?;
            }
            let key = KernelKey::Nonzero {
                dtype: x.dtype,
                write: true,
            };
            let inputs = vec![self.buffer(x)?, &carry.buffer];
            self.run(key, params, inputs, self.buffer(out)?, grid, x.dtype)?;
        }
        Ok(())
    }
}

fn as_ref<'r, 't>(o: &'r Operand<TensorRef<'t>>) -> Operand<&'r TensorRef<'t>> {
    match o {
        Operand::Tensor(t) => Operand::Tensor(t),
        Operand::Scalar(s) => Operand::Scalar(*s),
    }
}
