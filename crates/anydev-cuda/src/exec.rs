//! From an [`Op`] call to kernel launches: which module and kernel, the
//! parameter block, the variant (vectorised, contiguous or strided) and
//! the grid. The caller has bound the device's context and checked the
//! operands' byte ranges.

use crate::codegen::{self, vec_width, ModuleKey, BLOCK, MAX_DIMS, NONZERO_BLOCK};
use crate::device::CudaDevice;
use crate::driver::{check, CUdeviceptr, CUstream};
use crate::layout::{blocks, coalesce, dims_i, dims_u, is_dense, EwParams, In, LineParams, MmParams, RedParams};
use crate::memory::{CudaAllocation, Scratch};
use anydev_core::backend::TensorRef;
use anydev_core::ops::{Op, Operand, ReduceOp, ScanOp};
use anydev_core::validate::{numel, Check, RandomParams, Reduction};
use anydev_core::{DType, Error, Result, Scalar};
use cudarc::driver::sys;
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::LazyLock;

/// Whether this device runs `op` for `dtype` (given that kernels can be
/// made at all): every op of the host kernels' table. Every call asks, so
/// the answers are worked out once: deciding an elementwise op generates
/// its CUDA expression, which took a tenth of a small op's host time.
pub fn supports(op: anydev_core::ops::OpCode, dtype: DType) -> bool {
    use anydev_core::ops::OpCode;
    static SUPPORTED: LazyLock<HashSet<(OpCode, DType)>> = LazyLock::new(|| {
        let pairs = OpCode::all()
            .into_iter()
            .flat_map(|op| DType::ALL.map(|dtype| (op, dtype)));
        pairs.filter(|&(op, dtype)| defined(op, dtype)).collect()
    });
    SUPPORTED.contains(&(op, dtype))
}

/// Whether the generated kernels define `op` for `dtype`.
fn defined(op: anydev_core::ops::OpCode, dtype: DType) -> bool {
    use anydev_core::ops::OpCode;
    use codegen::{exprs, ty::Ty};
    let t = Ty::of(dtype);
    match op {
        OpCode::Unary(u) => exprs::unary(u, t).is_some(),
        OpCode::Binary(b) => exprs::binary(b, t).is_some(),
        OpCode::Reduce(r) => codegen::reduce_supported(r, dtype),
        OpCode::Scan(_) | OpCode::Matmul => dtype != DType::Bool,
        OpCode::Arange => dtype != DType::Bool && !dtype.is_complex(),
        OpCode::Random => dtype.is_float(),
        // Complex numbers have no order.
        OpCode::Sort | OpCode::Argsort | OpCode::SearchSorted => !dtype.is_complex(),
        OpCode::Cast | OpCode::Where | OpCode::Copy | OpCode::Fill | OpCode::Take | OpCode::Nonzero => true,
    }
}

/// Reductions fold in a block per output when each output folds at least
/// this many elements (else one thread per output).
const BLOCK_REDUCE_MIN: usize = 64;
/// Elements per block below which a reduction is not split further.
const SPLIT_MIN: usize = 8192;
/// Threads per SM a column reduction (a thread per output) aims for by
/// splitting its rows, each split folding at least COLUMN_SPLIT_ROWS:
/// unsplit, 1024 columns are 1024 threads, each loading its whole column
/// one row after another while most of the device idles.
const COLUMN_THREADS_PER_SM: usize = 1024;
const COLUMN_SPLIT_ROWS: usize = 64;
/// Reductions of contiguous runs up to this long take a warp per output
/// when there are at least WARP_OUTPUTS_PER_SM outputs per SM: a block per
/// output spends more on its barriers than on a short run's loads. On an
/// H200 a (1e5, 1000) f32 row sum took 361 µs with a block per row and
/// 136 µs with a warp per row.
const WARP_REDUCE_MAX: usize = 8192;
const WARP_OUTPUTS_PER_SM: usize = 8;
/// Outputs folding fewer elements than this take one block each, unsplit.
/// A split costs a second launch and a scratch allocation: on an H100 a
/// sum of 1e4 or 3e4 elements ran at 6.7 and 9.3 µs a call in one block,
/// and at 11.2 and 16.1 µs split into blocks of `SPLIT_MIN`; from 65,536
/// elements the split was ahead (11.8 against 14.9 µs).
const SPLIT_FROM: usize = 32_768;
/// Scans take a block per line from this line length.
const BLOCK_SCAN_MIN: usize = 256;

/// One op call on one device.
pub struct Exec<'a> {
    pub dev: &'a CudaDevice,
    pub stream: CUstream,
    pub name: &'static str,
}

impl Exec<'_> {
    /// The device-independent checks of this call.
    pub fn check(&self) -> Check {
        Check::new(self.name, self.dev.id)
    }

    /// The device address of an operand's first element.
    fn ptr(&self, t: &TensorRef<'_>) -> Result<CUdeviceptr> {
        let alloc = t.buffer.downcast::<CudaAllocation>().ok_or_else(|| {
            self.check()
                .invalid(format!("{:?} was not allocated by the cuda backend", t.buffer))
        })?;
        let reachable = alloc.device() == self.dev.core.index
            || alloc.kind != anydev_core::MemoryKind::Device
            || self.dev.peers.contains(&alloc.device());
        if !reachable {
            return Err(Error::DeviceMismatch {
                op: self.name.to_owned(),
                devices: vec![self.dev.id, t.buffer.device()],
            });
        }
        self.check().element_offset(t)?;
        Ok(alloc.ptr + t.offset as u64)
    }

    fn too_many_dims(&self, n: usize) -> Error {
        self.check().invalid(format!(
            "operands need {n} dims after merging contiguous ones; the cuda backend handles at most {MAX_DIMS} (make the array contiguous first)"
        ))
    }

    /// Launches `kernel` of `module` with `args` (pointers to each
    /// parameter value, alive for the call).
    fn launch(
        &self,
        module: ModuleKey,
        kernel: &str,
        grid: (u32, u32),
        block: u32,
        args: &[*mut c_void],
    ) -> Result<()> {
        let f = self.dev.function(module, kernel)?;
        // SAFETY: `f` is a kernel of this context whose parameters are
        // exactly the values behind `args` (generated together with the
        // `#[repr(C)]` blocks of `layout.rs`); every pointer inside them
        // was checked to lie within a live allocation. The driver only
        // reads the parameter array, so passing it as `*mut` is sound.
        let r = unsafe {
            sys::cuLaunchKernel(
                f,
                grid.0,
                grid.1,
                1,
                block,
                1,
                1,
                0,
                self.stream,
                args.as_ptr().cast_mut(),
                std::ptr::null_mut(),
            )
        };
        // The message is formatted only on failure: this runs on every call.
        if r == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        check(r, &format!("launching {kernel} ({})", module.name()))
    }

    fn grid_cap(&self) -> u32 {
        self.dev.sm_count.saturating_mul(32).max(1)
    }

    pub fn execute(&self, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let check = self.check();
        let dtype = op.support_dtype();
        if !supports(op.code(), dtype) {
            return Err(check.unsupported(dtype));
        }
        match op {
            Op::Unary { op: u, x, out } => {
                check.unary(*u, x, out)?;
                let sizes = [x.dtype.size(), out.dtype.size()];
                let kernel = codegen::unary_kernel(*u);
                self.elementwise(ModuleKey::Unary(x.dtype), &kernel, &[Operand::Tensor(*x)], out, &sizes)
            }
            Op::Binary { op: b, lhs, rhs, out } => {
                let d = check.binary(*b, lhs, rhs, out)?;
                let sizes = [d.size(), d.size(), out.dtype.size()];
                let operands = [as_ref(lhs), as_ref(rhs)];
                self.elementwise(
                    ModuleKey::Binary(d),
                    &codegen::binary_kernel(*b),
                    &operands,
                    out,
                    &sizes,
                )
            }
            Op::Cast { x, out } => {
                if x.dtype == out.dtype {
                    return self.copy(x, out);
                }
                let sizes = [x.dtype.size(), out.dtype.size()];
                let kernel = codegen::cast_kernel(out.dtype);
                self.elementwise(ModuleKey::Cast(x.dtype), &kernel, &[Operand::Tensor(*x)], out, &sizes)
            }
            Op::Where { cond, x, y, out } => {
                check.where_(cond, x, y, out)?;
                let s = out.dtype.size();
                let operands = [Operand::Tensor(*cond), as_ref(x), as_ref(y)];
                self.elementwise(ModuleKey::Bytes(s), "where", &operands, out, &[1, s, s, s])
            }
            Op::Copy { x, out } => self.copy(x, out),
            Op::Fill { out, value } => {
                check.fill(out, *value)?;
                let s = out.dtype.size();
                self.elementwise(ModuleKey::Bytes(s), "fill", &[Operand::Scalar(*value)], out, &[s, s])
            }
            Op::Arange { out, start, step } => {
                let operands = [
                    Operand::Scalar(Scalar::F64(*start)),
                    Operand::Scalar(Scalar::F64(*step)),
                ];
                let sizes = [8, 8, out.dtype.size()];
                self.elementwise(ModuleKey::Arange(out.dtype), "arange", &operands, out, &sizes)
            }
            Op::Random {
                out,
                dist,
                seed,
                counter,
            } => {
                let RandomParams { p, q, normal } = check.random(dist)?;
                let kernel = if normal { "normal" } else { "uniform" };
                let operands = [
                    Operand::Scalar(Scalar::U64(*seed)),
                    Operand::Scalar(Scalar::U64(*counter)),
                    Operand::Scalar(Scalar::F64(p)),
                    Operand::Scalar(Scalar::F64(q)),
                ];
                let sizes = [8, 8, 8, 8, out.dtype.size()];
                self.elementwise(ModuleKey::Random(out.dtype), kernel, &operands, out, &sizes)
            }
            Op::Take { x, indices, axis, out } => self.take(x, indices, *axis, out),
            Op::Reduce { op: r, x, axes, out } => self.reduce(*r, x, axes, out),
            Op::Scan { op: s, x, axis, out } => self.scan(*s, x, *axis, out),
            Op::Sort {
                x,
                axis,
                descending,
                out,
            } => self.sort(x, *axis, *descending, out, false),
            Op::Argsort {
                x,
                axis,
                descending,
                out,
            } => self.sort(x, *axis, *descending, out, true),
            Op::SearchSorted {
                sorted,
                values,
                right,
                out,
            } => self.search_sorted(sorted, values, *right, out),
            Op::Matmul { a, b, out } => crate::blas::matmul(self, a, b, out),
            Op::Nonzero { x, out } => self.nonzero(x, out),
        }
    }

    fn copy(&self, x: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        self.check().expect_dtype(out, x.dtype, "the output")?;
        let s = x.dtype.size();
        self.elementwise(ModuleKey::Bytes(s), "copy", &[Operand::Tensor(*x)], out, &[s, s])
    }

    /// An elementwise launch over `out`'s shape. `sizes` are the element
    /// sizes the module was generated with (inputs, then the output).
    pub fn elementwise(
        &self,
        module: ModuleKey,
        kernel: &str,
        operands: &[Operand<TensorRef<'_>>],
        out: &TensorRef<'_>,
        sizes: &[usize],
    ) -> Result<()> {
        let n = numel(out.shape);
        if n == 0 {
            return Ok(());
        }
        let nd = out.shape.len();
        let zeros = vec![0isize; nd];
        let mut strides: Vec<&[isize]> = Vec::with_capacity(operands.len() + 1);
        let mut ins = Vec::with_capacity(operands.len());
        for o in operands {
            match o {
                Operand::Tensor(t) => {
                    self.check().expect_shape(t, out.shape, "every operand")?;
                    strides.push(t.strides);
                    ins.push(In {
                        ptr: self.ptr(t)?,
                        bits: 0,
                    });
                }
                Operand::Scalar(s) => {
                    strides.push(&zeros);
                    ins.push(In {
                        ptr: 0,
                        // The array layer passes c128 scalars as arrays.
                        bits: s.to_bits() as u64,
                    });
                }
            }
        }
        strides.push(out.strides);
        let out_ptr = self.ptr(out)?;
        let (shape, merged) = coalesce(out.shape, &strides);
        let dense = operands
            .iter()
            .zip(&merged)
            .all(|(o, s)| matches!(o, Operand::Scalar(_)) || is_dense(s))
            && merged.last().is_some_and(|s| is_dense(s));
        let vec = vec_width(sizes);
        let variant = if dense {
            let aligned = |ptr: u64, size: usize| ptr.is_multiple_of((size * vec) as u64);
            let all_aligned = ins.iter().zip(sizes).all(|(i, &s)| i.ptr == 0 || aligned(i.ptr, s))
                && aligned(out_ptr, sizes.last().copied().unwrap_or(1));
            if vec > 1 && all_aligned && n >= vec {
                "v"
            } else {
                "c"
            }
        } else if n <= u32::MAX as usize {
            "s"
        } else {
            "l"
        };
        let params = EwParams::new(n, &shape, &merged).ok_or_else(|| self.too_many_dims(shape.len()))?;
        let work = if variant == "v" { n / vec } else { n };
        let grid = blocks(work as u64, BLOCK, self.grid_cap());
        let mut args: Vec<*mut c_void> = Vec::with_capacity(ins.len() + 2);
        args.push(&params as *const EwParams as *mut c_void);
        for i in &ins {
            args.push(i as *const In as *mut c_void);
        }
        args.push(&out_ptr as *const u64 as *mut c_void);
        self.launch(module, &format!("{kernel}_{variant}"), (grid, 1), BLOCK, &args)
    }

    fn take(&self, x: &TensorRef<'_>, indices: &TensorRef<'_>, axis: usize, out: &TensorRef<'_>) -> Result<()> {
        let shape = self.check().take(x, indices, axis, out)?;
        let n = numel(&shape);
        if n == 0 {
            return Ok(());
        }
        if x.shape[axis] == 0 {
            return Err(self.check().invalid("cannot take from an empty axis"));
        }
        let mut index_strides = vec![0isize; shape.len()];
        index_strides[axis] = indices.strides[0];
        let mut x_strides = x.strides.to_vec();
        x_strides[axis] = 0;
        let (cs, merged) = coalesce(&shape, &[&index_strides, &x_strides, out.strides]);
        let params = EwParams::new(n, &cs, &merged).ok_or_else(|| self.too_many_dims(cs.len()))?;
        let (ip, xp, op) = (self.ptr(indices)?, self.ptr(x)?, self.ptr(out)?);
        let xs = x.strides[axis] as i64;
        let len = x.shape[axis] as i64;
        let variant = if n <= u32::MAX as usize { "take_s" } else { "take_l" };
        let grid = blocks(n as u64, BLOCK, self.grid_cap());
        let args = [
            &params as *const EwParams as *mut c_void,
            &ip as *const u64 as *mut c_void,
            &xp as *const u64 as *mut c_void,
            &op as *const u64 as *mut c_void,
            &xs as *const i64 as *mut c_void,
            &len as *const i64 as *mut c_void,
        ];
        self.launch(ModuleKey::Take(x.dtype.size()), variant, (grid, 1), BLOCK, &args)
    }

    fn reduce(&self, op: ReduceOp, x: &TensorRef<'_>, axes: &[usize], out: &TensorRef<'_>) -> Result<()> {
        let Reduction { n_out, n_red, .. } = self.check().reduce(op, x, axes, out)?;
        if n_out == 0 {
            return Ok(());
        }
        let (mut ks, mut kx, mut ko, mut rs, mut rx) = (vec![], vec![], vec![], vec![], vec![]);
        for d in 0..x.shape.len() {
            if axes.contains(&d) {
                rs.push(x.shape[d]);
                rx.push(x.strides[d]);
            } else {
                ks.push(x.shape[d]);
                kx.push(x.strides[d]);
                ko.push(out.strides[d]);
            }
        }
        // argmin/argmax need the position along the one reduced axis, so
        // its dims are not merged (there is one anyway); others merge.
        let (ks, kst) = coalesce(&ks, &[&kx, &ko]);
        let (rs, rst) = if n_red == 0 {
            (vec![], vec![vec![]])
        } else {
            coalesce(&rs, &[&rx])
        };
        if ks.len() > MAX_DIMS || rs.len() > MAX_DIMS {
            return Err(self.too_many_dims(ks.len().max(rs.len())));
        }
        let xp = self.ptr(x)?;
        let op_ptr = self.ptr(out)?;
        let mut p = RedParams {
            n_out: n_out as u64,
            n_red: n_red as u64,
            chunk: n_red as u64,
            splits: 1,
            kdim: ks.len() as i32,
            rdim: rs.len() as i32,
            pad: 0,
            kshape: dims_u(&ks),
            kst_x: dims_i(&kst[0]),
            kst_o: dims_i(&kst[1]),
            rshape: dims_u(&rs),
            rst: dims_i(&rst[0]),
        };
        let module = ModuleKey::Reduce(x.dtype);
        // Outputs adjacent in memory with a strided reduced dim (the sum over
        // axis 0 of a row-major matrix): a thread per output reads coalesced.
        let columns = kst[0].last() == Some(&1) && rst[0].last().is_some_and(|&s| s != 1) && n_out >= 1024;
        let short = n_red < BLOCK_REDUCE_MIN;
        let sms = self.dev.sm_count as usize;
        if columns || short || n_out > i32::MAX as usize {
            // Long columns are split along their rows, so that the device
            // has about COLUMN_THREADS_PER_SM threads per SM reading.
            let splits = if columns {
                (COLUMN_THREADS_PER_SM * sms)
                    .div_ceil(n_out)
                    .min(n_red / COLUMN_SPLIT_ROWS)
                    .clamp(1, 65_535)
            } else {
                1
            };
            p.splits = splits as i32;
            p.chunk = n_red.div_ceil(splits) as u64;
            let grid = blocks(n_out as u64, BLOCK, self.grid_cap());
            return self.launch_reduction(
                op,
                x.dtype,
                &p,
                (xp, op_ptr),
                ("thread", (grid, splits as u32)),
                ("columns", grid),
            );
        }
        // Many outputs, each a contiguous run of moderate length (a row sum
        // of a row-major matrix): a warp per output.
        if rst[0].last() == Some(&1) && n_red <= WARP_REDUCE_MAX && n_out >= WARP_OUTPUTS_PER_SM * sms {
            let grid = blocks(n_out as u64 * 32, BLOCK, self.grid_cap());
            let args = [
                &p as *const RedParams as *mut c_void,
                &xp as *const u64 as *mut c_void,
                &op_ptr as *const u64 as *mut c_void,
            ];
            return self.launch(module, &codegen::reduce_kernel(op, "warp"), (grid, 1), BLOCK, &args);
        }
        // A block per output, split from SPLIT_FROM elements so the device
        // has about four blocks per SM in flight, each folding at least
        // SPLIT_MIN elements.
        let want = (4 * self.dev.sm_count as usize).div_ceil(n_out).max(1);
        let splits = if n_red < SPLIT_FROM {
            1
        } else {
            want.min(n_red.div_ceil(SPLIT_MIN)).clamp(1, 65_535)
        };
        p.splits = splits as i32;
        p.chunk = n_red.div_ceil(splits) as u64;
        self.launch_reduction(
            op,
            x.dtype,
            &p,
            (xp, op_ptr),
            ("block", (n_out as u32, splits as u32)),
            ("final", n_out as u32),
        )
    }

    /// Launches a reduction's kernel `stage` over `grid` (its y the splits of
    /// each output's range) on x and out, and, when `p` is split, the
    /// kernel `merge` over `merge_grid` blocks to combine the parts from
    /// scratch memory.
    fn launch_reduction(
        &self,
        op: ReduceOp,
        dtype: DType,
        p: &RedParams,
        (x, out): (u64, u64),
        (stage, grid): (&str, (u32, u32)),
        (merge, merge_grid): (&str, u32),
    ) -> Result<()> {
        let module = ModuleKey::Reduce(dtype);
        let split = p.splits > 1;
        let scratch = if split {
            let bytes = p.n_out as usize * p.splits as usize * codegen::reduce_acc_size(op, dtype);
            Some(Scratch::new(self.dev, self.stream, bytes)?)
        } else {
            None
        };
        let ws: u64 = scratch.as_ref().map_or(0, |s| s.ptr);
        let args = [
            p as *const RedParams as *mut c_void,
            &x as *const u64 as *mut c_void,
            &out as *const u64 as *mut c_void,
            &ws as *const u64 as *mut c_void,
        ];
        self.launch(module, &codegen::reduce_kernel(op, stage), grid, BLOCK, &args)?;
        if split {
            let args = [
                p as *const RedParams as *mut c_void,
                &ws as *const u64 as *mut c_void,
                &out as *const u64 as *mut c_void,
            ];
            self.launch(
                module,
                &codegen::reduce_kernel(op, merge),
                (merge_grid, 1),
                BLOCK,
                &args,
            )?;
        }
        drop(scratch);
        Ok(())
    }

    /// The lines along `axis` of `x` and `out` (same shape).
    fn lines(&self, x: &TensorRef<'_>, axis: usize, out_strides: &[isize]) -> Result<LineParams> {
        let mut shape = x.shape.to_vec();
        let mut xs = x.strides.to_vec();
        let mut os = out_strides.to_vec();
        let len = shape.remove(axis);
        let (ax_x, ax_o) = (xs.remove(axis), os.remove(axis));
        let lines = numel(&shape);
        let (ls, lst) = coalesce(&shape, &[&xs, &os]);
        if ls.len() > MAX_DIMS {
            return Err(self.too_many_dims(ls.len()));
        }
        Ok(LineParams {
            lines: lines as u64,
            len: len as u64,
            ldim: ls.len() as i32,
            pad: 0,
            lshape: dims_u(&ls),
            lst_x: dims_i(&lst[0]),
            lst_o: dims_i(&lst[1]),
            ax_x: ax_x as i64,
            ax_o: ax_o as i64,
        })
    }

    fn scan(&self, op: ScanOp, x: &TensorRef<'_>, axis: usize, out: &TensorRef<'_>) -> Result<()> {
        self.check().lines(x, axis, out, x.dtype)?;
        if numel(x.shape) == 0 {
            return Ok(());
        }
        let p = self.lines(x, axis, out.strides)?;
        let (xp, op_ptr) = (self.ptr(x)?, self.ptr(out)?);
        let args = [
            &p as *const LineParams as *mut c_void,
            &xp as *const u64 as *mut c_void,
            &op_ptr as *const u64 as *mut c_void,
        ];
        let module = ModuleKey::Scan(x.dtype);
        if p.len as usize >= BLOCK_SCAN_MIN && p.lines <= i32::MAX as u64 {
            self.launch(
                module,
                &codegen::scan_kernel(op, "block"),
                (p.lines as u32, 1),
                BLOCK,
                &args,
            )
        } else {
            let grid = blocks(p.lines, BLOCK, self.grid_cap());
            self.launch(module, &codegen::scan_kernel(op, "thread"), (grid, 1), BLOCK, &args)
        }
    }

    fn sort(&self, x: &TensorRef<'_>, axis: usize, descending: bool, out: &TensorRef<'_>, arg: bool) -> Result<()> {
        let check = self.check();
        check.expect_output(out, if arg { DType::I64 } else { x.dtype }, x.shape)?;
        if x.shape.is_empty() {
            // One element: sorting copies it, argsort gives index 0.
            return if arg {
                self.elementwise(
                    ModuleKey::Bytes(8),
                    "fill",
                    &[Operand::Scalar(Scalar::I64(0))],
                    out,
                    &[8, 8],
                )
            } else {
                self.copy(x, out)
            };
        }
        check.axis(axis, x.shape.len())?;
        let n = numel(x.shape);
        if n == 0 {
            return Ok(());
        }
        let p = self.lines(x, axis, out.strides)?;
        let size = x.dtype.size();
        let keys = [
            Scratch::new(self.dev, self.stream, n * size)?,
            Scratch::new(self.dev, self.stream, n * size)?,
        ];
        let idx = [
            Scratch::new(self.dev, self.stream, n * 8)?,
            Scratch::new(self.dev, self.stream, n * 8)?,
        ];
        let module = ModuleKey::Sort(x.dtype);
        let grid = blocks(n as u64, BLOCK, self.grid_cap());
        let xp = self.ptr(x)?;
        let pp = &p as *const LineParams as *mut c_void;
        let (k0, i0) = (keys[0].ptr, idx[0].ptr);
        self.launch(
            module,
            "sort_init",
            (grid, 1),
            BLOCK,
            &[
                pp,
                &xp as *const u64 as *mut c_void,
                &k0 as *const u64 as *mut c_void,
                &i0 as *const u64 as *mut c_void,
            ],
        )?;
        let merge = if descending {
            "sort_merge_desc"
        } else {
            "sort_merge_asc"
        };
        let mut src = 0usize;
        let mut width = 1u64;
        while width < p.len {
            let (ks, is, kd, id) = (keys[src].ptr, idx[src].ptr, keys[1 - src].ptr, idx[1 - src].ptr);
            self.launch(
                module,
                merge,
                (grid, 1),
                BLOCK,
                &[
                    pp,
                    &width as *const u64 as *mut c_void,
                    &ks as *const u64 as *mut c_void,
                    &is as *const u64 as *mut c_void,
                    &kd as *const u64 as *mut c_void,
                    &id as *const u64 as *mut c_void,
                ],
            )?;
            src = 1 - src;
            width *= 2;
        }
        let op_ptr = self.ptr(out)?;
        let (kernel, from) = if arg {
            ("sort_idx_out", idx[src].ptr)
        } else {
            ("sort_keys_out", keys[src].ptr)
        };
        self.launch(
            module,
            kernel,
            (grid, 1),
            BLOCK,
            &[
                pp,
                &from as *const u64 as *mut c_void,
                &op_ptr as *const u64 as *mut c_void,
            ],
        )
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
        if n == 0 {
            return Ok(());
        }
        let (shape, merged) = coalesce(values.shape, &[values.strides, out.strides]);
        let params = EwParams::new(n, &shape, &merged).ok_or_else(|| self.too_many_dims(shape.len()))?;
        let (vp, op_ptr, sp) = (self.ptr(values)?, self.ptr(out)?, self.ptr(sorted)?);
        let ss = sorted.strides[0] as i64;
        let len = sorted.shape[0] as u64;
        let side = if right { "search_right" } else { "search_left" };
        let variant = if n <= u32::MAX as usize { "s" } else { "l" };
        let grid = blocks(n as u64, BLOCK, self.grid_cap());
        let args = [
            &params as *const EwParams as *mut c_void,
            &vp as *const u64 as *mut c_void,
            &op_ptr as *const u64 as *mut c_void,
            &sp as *const u64 as *mut c_void,
            &ss as *const i64 as *mut c_void,
            &len as *const u64 as *mut c_void,
        ];
        self.launch(
            ModuleKey::Search(sorted.dtype),
            &format!("{side}_{variant}"),
            (grid, 1),
            BLOCK,
            &args,
        )
    }

    fn nonzero(&self, x: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        self.check().nonzero(x, out)?;
        let nd = x.shape.len();
        let n = numel(x.shape);
        let count = out.shape[0] as u64;
        if n == 0 || count == 0 || nd == 0 {
            return Ok(());
        }
        if nd > MAX_DIMS {
            return Err(self.too_many_dims(nd));
        }
        // The original dims (not merged): coordinates are per dim.
        let params = EwParams::new(n, x.shape, &[x.strides.to_vec()]).ok_or_else(|| self.too_many_dims(nd))?;
        let (xp, op_ptr) = (self.ptr(x)?, self.ptr(out)?);
        let (os0, os1) = (out.strides[0] as i64, out.strides[1] as i64);
        let args = [
            &params as *const EwParams as *mut c_void,
            &xp as *const u64 as *mut c_void,
            &op_ptr as *const u64 as *mut c_void,
            &count as *const u64 as *mut c_void,
            &os0 as *const i64 as *mut c_void,
            &os1 as *const i64 as *mut c_void,
        ];
        self.launch(ModuleKey::Nonzero(x.dtype), "nonzero", (1, 1), NONZERO_BLOCK, &args)
    }

    /// The generic matmul kernel (integers, and floats without cuBLAS or
    /// with layouts cuBLAS cannot read).
    pub fn matmul_kernel(&self, a: &TensorRef<'_>, b: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        let nd = a.shape.len();
        let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
        let batch_shape = &a.shape[..nd - 2];
        let batch = numel(batch_shape);
        if batch == 0 || m == 0 || n == 0 {
            return Ok(());
        }
        let (bs, bst) = coalesce(
            batch_shape,
            &[&a.strides[..nd - 2], &b.strides[..nd - 2], &out.strides[..nd - 2]],
        );
        if bs.len() > MAX_DIMS {
            return Err(self.too_many_dims(bs.len()));
        }
        let p = MmParams {
            batch: batch as u64,
            bdim: bs.len() as i32,
            pad: 0,
            bshape: dims_u(&bs),
            bst: [dims_i(&bst[0]), dims_i(&bst[1]), dims_i(&bst[2])],
            m: m as i64,
            n: n as i64,
            k: k as i64,
            ars: a.strides[nd - 2] as i64,
            acs: a.strides[nd - 1] as i64,
            brs: b.strides[nd - 2] as i64,
            bcs: b.strides[nd - 1] as i64,
            ors: out.strides[nd - 2] as i64,
            ocs: out.strides[nd - 1] as i64,
        };
        let (ap, bp, op_ptr) = (self.ptr(a)?, self.ptr(b)?, self.ptr(out)?);
        let total = (batch as u64).saturating_mul(m as u64).saturating_mul(n as u64);
        let grid = blocks(total, BLOCK, self.grid_cap());
        let args = [
            &p as *const MmParams as *mut c_void,
            &ap as *const u64 as *mut c_void,
            &bp as *const u64 as *mut c_void,
            &op_ptr as *const u64 as *mut c_void,
        ];
        self.launch(ModuleKey::Matmul(a.dtype), "matmul", (grid, 1), BLOCK, &args)
    }

    /// Sets every element of `out` to zero (a matmul with `k == 0`).
    pub fn zero(&self, out: &TensorRef<'_>) -> Result<()> {
        let s = out.dtype.size();
        let zero = Scalar::from_bits(out.dtype, 0);
        self.elementwise(ModuleKey::Bytes(s), "fill", &[Operand::Scalar(zero)], out, &[s, s])
    }

    pub fn ptr_of(&self, t: &TensorRef<'_>) -> Result<CUdeviceptr> {
        self.ptr(t)
    }
}

fn as_ref<'a>(o: &Operand<TensorRef<'a>>) -> Operand<TensorRef<'a>> {
    match o {
        Operand::Tensor(t) => Operand::Tensor(*t),
        Operand::Scalar(s) => Operand::Scalar(*s),
    }
}
