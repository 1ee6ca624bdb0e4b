//! Index arithmetic on the host: merging dims, contiguity, grid sizes and
//! the launch parameter blocks (laid out exactly as the structs of
//! `prelude.cu`). Pure Rust, tested without a GPU.

use crate::codegen::{MAX_DIMS, MAX_OPERANDS};

/// Merges dims that every operand walks as one: size-1 dims are dropped,
/// and dim `d` joins dim `d + 1` when, for each operand,
/// `strides[d] == strides[d + 1] * shape[d + 1]`. Zero strides (broadcast)
/// and negative strides merge by the same rule. Returns the merged shape
/// and each operand's merged strides (a 0-d result for one element).
pub fn coalesce(shape: &[usize], strides: &[&[isize]]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::with_capacity(shape.len()); strides.len()];
    for d in 0..shape.len() {
        let n = shape[d];
        if n == 1 {
            continue;
        }
        if let Some(&last) = out_shape.last() {
            // Merge into the previous kept dim when it steps over this one exactly.
            let mergeable = strides
                .iter()
                .zip(&out_strides)
                .all(|(s, o)| o.last().copied() == Some(s[d].wrapping_mul(n as isize)));
            if mergeable {
                let l = out_shape.len() - 1;
                out_shape[l] = last * n;
                for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                    o[l] = s[d];
                }
                continue;
            }
        }
        out_shape.push(n);
        for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
            o.push(s[d]);
        }
    }
    (out_shape, out_strides)
}

/// Whether merged strides describe a dense row-major run (one dim of
/// stride 1, or no dims).
pub fn is_dense(strides: &[isize]) -> bool {
    strides.is_empty() || strides == [1]
}

/// Blocks for `work` items at `block` threads each, capped at `cap` (the
/// kernels loop grid-stride over the rest); at least one.
pub fn blocks(work: u64, block: u32, cap: u32) -> u32 {
    let needed = work.div_ceil(block as u64).max(1);
    needed.min(cap.max(1) as u64) as u32
}

/// `EwParams` of `prelude.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EwParams {
    pub n: u64,
    pub ndim: i32,
    pub pad: i32,
    pub shape: [i64; MAX_DIMS],
    pub st: [[i64; MAX_DIMS]; MAX_OPERANDS],
}

impl EwParams {
    /// Parameters for `n` elements of the merged `shape`, with each
    /// operand's merged strides (inputs first, output last). `None` when
    /// there are too many dims or operands.
    pub fn new(n: usize, shape: &[usize], strides: &[Vec<isize>]) -> Option<EwParams> {
        if shape.len() > MAX_DIMS || strides.len() > MAX_OPERANDS {
            return None;
        }
        let mut p = EwParams {
            n: n as u64,
            ndim: shape.len() as i32,
            pad: 0,
            shape: [0; MAX_DIMS],
            st: [[0; MAX_DIMS]; MAX_OPERANDS],
        };
        for (d, &s) in shape.iter().enumerate() {
            p.shape[d] = s as i64;
        }
        for (k, st) in strides.iter().enumerate() {
            for (d, &s) in st.iter().enumerate() {
                p.st[k][d] = s as i64;
            }
        }
        Some(p)
    }
}

/// `In<T>` of `prelude.cu`: a pointer, or null and a scalar's bits.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct In {
    pub ptr: u64,
    pub bits: u64,
}

/// `RedParams` of `prelude.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RedParams {
    pub n_out: u64,
    pub n_red: u64,
    pub chunk: u64,
    pub splits: i32,
    pub kdim: i32,
    pub rdim: i32,
    pub pad: i32,
    pub kshape: [i64; MAX_DIMS],
    pub kst_x: [i64; MAX_DIMS],
    pub kst_o: [i64; MAX_DIMS],
    pub rshape: [i64; MAX_DIMS],
    pub rst: [i64; MAX_DIMS],
}

/// `LineParams` of `prelude.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LineParams {
    pub lines: u64,
    pub len: u64,
    pub ldim: i32,
    pub pad: i32,
    pub lshape: [i64; MAX_DIMS],
    pub lst_x: [i64; MAX_DIMS],
    pub lst_o: [i64; MAX_DIMS],
    pub ax_x: i64,
    pub ax_o: i64,
}

/// `MmParams` of the matmul module.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MmParams {
    pub batch: u64,
    pub bdim: i32,
    pub pad: i32,
    pub bshape: [i64; MAX_DIMS],
    pub bst: [[i64; MAX_DIMS]; 3],
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub ars: i64,
    pub acs: i64,
    pub brs: i64,
    pub bcs: i64,
    pub ors: i64,
    pub ocs: i64,
}

/// Copies `values` into a fixed array of `MAX_DIMS` (the caller checked the length).
pub fn dims<T: Copy + Into<i64>>(values: &[T]) -> [i64; MAX_DIMS] {
    let mut a = [0i64; MAX_DIMS];
    for (d, &v) in values.iter().take(MAX_DIMS).enumerate() {
        a[d] = v.into();
    }
    a
}

/// `usize`/`isize` dims as `i64`.
pub fn dims_u(values: &[usize]) -> [i64; MAX_DIMS] {
    let v: Vec<i64> = values.iter().map(|&x| x as i64).collect();
    dims(&v)
}

pub fn dims_i(values: &[isize]) -> [i64; MAX_DIMS] {
    let v: Vec<i64> = values.iter().map(|&x| x as i64).collect();
    dims(&v)
}

/// The operand layout of a matrix for cuBLAS: `Some((transposed, ld))`
/// when the `rows x cols` matrix with strides (`rs`, `cs`) is one cuBLAS
/// reads directly as the column-major matrix of its transpose (row-major,
/// `cs == 1`) or of itself (column-major, `rs == 1`).
///
/// Returned `transposed` is true when the row-major data must be read with
/// `CUBLAS_OP_T` relative to the row-major formulation used by the matmul
/// (see `blas.rs`).
pub fn blas_layout(rows: usize, cols: usize, rs: isize, cs: isize) -> Option<(bool, usize)> {
    // Strides of length-1 dims are meaningless: normalise them.
    let rs = if rows == 1 { cols.max(1) as isize } else { rs };
    let cs = if cols == 1 { 1 } else { cs };
    if cs == 1 && rs >= cols.max(1) as isize {
        return Some((false, rs as usize));
    }
    let rs2 = if rows == 1 { 1 } else { rs };
    let cs2 = if cols == 1 { rows.max(1) as isize } else { cs };
    if rs2 == 1 && cs2 >= rows.max(1) as isize {
        return Some((true, cs2 as usize));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_dims_merge_into_one() {
        let (s, st) = coalesce(&[2, 3, 4], &[&[12, 4, 1], &[12, 4, 1]]);
        assert_eq!(s, vec![24]);
        assert_eq!(st, vec![vec![1], vec![1]]);
        assert!(is_dense(&st[0]));
    }

    #[test]
    fn broadcast_and_transposed_operands_keep_their_dims() {
        // x [2, 3] row-major, y broadcast along dim 0, out row-major.
        let (s, st) = coalesce(&[2, 3], &[&[3, 1], &[0, 1], &[3, 1]]);
        assert_eq!(s, vec![2, 3]);
        assert_eq!(st, vec![vec![3, 1], vec![0, 1], vec![3, 1]]);
        // A transposed input cannot merge.
        let (s, st) = coalesce(&[3, 2], &[&[1, 3], &[2, 1]]);
        assert_eq!(s, vec![3, 2]);
        assert_eq!(st[0], vec![1, 3]);
        // A fully broadcast scalar merges (0 == 0 * n).
        let (s, st) = coalesce(&[4, 5], &[&[0, 0], &[5, 1]]);
        assert_eq!(s, vec![20]);
        assert_eq!(st, vec![vec![0], vec![1]]);
    }

    #[test]
    fn size_one_dims_vanish_and_negative_strides_merge() {
        let (s, st) = coalesce(&[1, 4, 1], &[&[99, 1, 7]]);
        assert_eq!((s, st), (vec![4], vec![vec![1]]));
        // A reversed contiguous vector of 2 x 3: strides -3, -1 merge to -1.
        let (s, st) = coalesce(&[2, 3], &[&[-3, -1]]);
        assert_eq!((s, st), (vec![6], vec![vec![-1]]));
        let (s, st) = coalesce(&[], &[&[]]);
        assert!(s.is_empty() && st[0].is_empty());
        assert!(is_dense(&st[0]));
    }

    #[test]
    fn grids_are_capped_and_never_empty() {
        assert_eq!(blocks(0, 256, 100), 1);
        assert_eq!(blocks(257, 256, 100), 2);
        assert_eq!(blocks(1 << 40, 256, 1000), 1000);
    }

    #[test]
    fn parameter_blocks_have_the_c_layout() {
        // u64 + 2 x i32 + 12 + 5 x 12 i64.
        assert_eq!(std::mem::size_of::<EwParams>(), 16 + 8 * 12 + 8 * 60);
        assert_eq!(std::mem::size_of::<In>(), 16);
        assert_eq!(std::mem::size_of::<RedParams>(), 24 + 16 + 5 * 8 * 12);
        assert_eq!(std::mem::size_of::<LineParams>(), 24 + 3 * 8 * 12 + 16);
        assert_eq!(std::mem::size_of::<MmParams>(), 16 + 4 * 8 * 12 + 9 * 8);
        assert!(EwParams::new(1, &[0; MAX_DIMS + 1], &[]).is_none());
    }

    #[test]
    fn blas_layouts() {
        // Row-major 3 x 4.
        assert_eq!(blas_layout(3, 4, 4, 1), Some((false, 4)));
        // Row-major with padding.
        assert_eq!(blas_layout(3, 4, 8, 1), Some((false, 8)));
        // Column-major 3 x 4 (a transposed view).
        assert_eq!(blas_layout(3, 4, 1, 3), Some((true, 3)));
        // Neither dim unit-stride.
        assert_eq!(blas_layout(3, 4, 8, 2), None);
        // Overlapping rows.
        assert_eq!(blas_layout(3, 4, 2, 1), None);
        // A row vector / column vector with odd strides.
        assert_eq!(blas_layout(1, 4, 0, 1), Some((false, 4)));
        assert_eq!(blas_layout(4, 1, 1, 0), Some((false, 1)));
    }
}
