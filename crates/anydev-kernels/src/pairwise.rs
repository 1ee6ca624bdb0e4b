//! Pairwise summation (as NumPy's): the error grows with log n, not n.
//!
//! Blocks of [`BLOCK`] elements are summed across [`LANES`] independent
//! accumulators, and the block sums combine as a balanced binary tree,
//! kept as a stack of partial sums (one per level) as the blocks go by.
//! The blocks run under run-time CPU feature dispatch; f32 and f64 hold
//! their lanes in pulp's vectors (LLVM vectorised the array-of-lanes
//! loop only two lanes wide, half the speed). Lane `l` always sums the
//! same elements and the lanes always combine in the same tree
//! ([`fold_lanes`]), so every instruction set gives the same bits.

use crate::arith::Accum;
use crate::reduce::{fold_lanes, lanes};
use pulp::bytemuck::{self, Pod};
use pulp::Simd;
use std::mem::size_of;

/// Elements of one block.
pub(crate) const BLOCK: usize = 512;
/// Accumulators of one block: two AVX-512 registers of f32, so that
/// additions into independent lanes overlap.
const LANES: usize = 32;

/// The sum of `xs`, in `T`'s accumulator type.
pub(crate) fn sum<T: Accum>(xs: &[T]) -> T::A {
    pulp::Arch::new().dispatch(Blocks(xs))
}

/// [`sum`] as pulp's unit of dispatch: `with_simd` is compiled once per
/// instruction set with the loops inlined into it. (A closure in its
/// place was called, not inlined, from each set's entry point, so the
/// loops ran as baseline code under every set.)
struct Blocks<'a, T>(&'a [T]);

impl<T: Accum> pulp::WithSimd for Blocks<'_, T> {
    type Output = T::A;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> T::A {
        let blocks = self.0.chunks(BLOCK).map(|block| T::block_sum(simd, block));
        tree(blocks, T::acc_add).unwrap_or_default()
    }
}

/// Parts combined as a balanced binary tree as they arrive, left to right:
/// a stack holds one partial result per level, as a binary counter holds
/// its carries, and what is left at the end combines from the last part
/// back. Parts that are each the tree of 2^k smaller ones therefore give
/// the bits of the tree over all of the smaller ones, which is what lets
/// a sum split into chunks of a power-of-two number of blocks keep the
/// bits (and the error, which grows with log n) of one pairwise sum.
pub(crate) struct Tree<A> {
    levels: [Option<(A, u32)>; usize::BITS as usize],
    depth: usize,
}

impl<A> Tree<A> {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Tree {
            levels: std::array::from_fn(|_| None),
            depth: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, mut part: A, combine: impl Fn(A, A) -> A) {
        let mut level = 0;
        while self.depth > 0 {
            match self.levels[self.depth - 1].take() {
                Some((below, l)) if l == level => {
                    part = combine(below, part);
                    level += 1;
                    self.depth -= 1;
                }
                other => {
                    self.levels[self.depth - 1] = other;
                    break;
                }
            }
        }
        self.levels[self.depth] = Some((part, level));
        self.depth += 1;
    }

    /// The combination of every part pushed; `None` when there were none.
    #[inline(always)]
    pub(crate) fn finish(mut self, combine: impl Fn(A, A) -> A) -> Option<A> {
        self.levels[..self.depth]
            .iter_mut()
            .rev()
            .filter_map(|level| level.take().map(|(part, _)| part))
            .reduce(|later, earlier| combine(earlier, later))
    }
}

/// `parts` combined by a [`Tree`].
#[inline(always)]
pub(crate) fn tree<A>(parts: impl IntoIterator<Item = A>, combine: impl Fn(A, A) -> A) -> Option<A> {
    let mut tree = Tree::new();
    for part in parts {
        tree.push(part, &combine);
    }
    tree.finish(combine)
}

/// One block's sum across [`LANES`] scalar accumulators.
#[inline(always)]
pub(crate) fn scalar_lanes<S: Simd, T: Accum>(_: S, xs: &[T]) -> T::A {
    lanes::<LANES, _, _>(xs, T::A::default(), |a, x| T::acc_add(a, x.lift()), T::acc_add)
}

/// One block's sum of f32 with the lanes in vectors of `S`.
#[inline(always)]
pub(crate) fn f32_lanes<S: Simd>(simd: S, xs: &[f32]) -> f32 {
    vector_lanes(
        xs,
        simd.splat_f32s(0.0),
        |a, b| simd.add_f32s(a, b),
        |c| S::as_simd_f32s(c).0,
    )
}

/// One block's sum of f64 with the lanes in vectors of `S`.
#[inline(always)]
pub(crate) fn f64_lanes<S: Simd>(simd: S, xs: &[f64]) -> f64 {
    vector_lanes(
        xs,
        simd.splat_f64s(0.0),
        |a, b| simd.add_f64s(a, b),
        |c| S::as_simd_f64s(c).0,
    )
}

/// [`scalar_lanes`] with lane `l` held in lane `l % W` of vector `l / W`
/// (`W` lanes to a `V`), for the same sum in fewer instructions.
#[inline(always)]
fn vector_lanes<T, V>(xs: &[T], zero: V, add: impl Fn(V, V) -> V, split: impl Fn(&[T]) -> &[V]) -> T
where
    T: Pod + Default + std::ops::Add<Output = T>,
    V: Pod,
{
    let vectors = LANES * size_of::<T>() / size_of::<V>();
    let mut acc = [zero; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, &v) in acc[..vectors].iter_mut().zip(split(chunk)) {
            *a = add(*a, v);
        }
    }
    let mut lanes = [T::default(); LANES];
    lanes.copy_from_slice(bytemuck::cast_slice(&acc[..vectors]));
    rest.iter().fold(fold_lanes(lanes, |a, b| a + b), |a, &x| a + x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulp::WithSimd;

    /// Values whose sum depends on the order of the additions.
    fn values(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * (1.0 + (i % 13) as f32 * 1e-3).powi(40))
            .collect()
    }

    /// The dispatched sum (AVX-512 or AVX2 where the CPU has them) has the
    /// bits of the scalar lanes in every length's remainder and tree shape.
    #[test]
    fn every_instruction_set_gives_the_bits_of_the_scalar_lanes() {
        let xs = values(5000);
        for n in [0, 1, 31, 32, 33, 100, 511, 512, 513, 1536, 4999] {
            let xs = &xs[..n];
            let want = Blocks(xs).with_simd(pulp::Scalar::new());
            assert_eq!(sum(xs).to_bits(), want.to_bits(), "f32, {n} elements");
            let wide: Vec<f64> = xs.iter().map(|&x| x as f64 * 1.000_000_1).collect();
            let want = Blocks(&wide[..]).with_simd(pulp::Scalar::new());
            assert_eq!(sum(&wide[..]).to_bits(), want.to_bits(), "f64, {n} elements");
        }
    }

    /// Every block's lanes, the lane tree and the block tree, written out
    /// one addition at a time.
    #[test]
    fn the_sum_is_the_documented_tree() {
        let xs = values(3 * BLOCK + 40);
        let block = |b: &[f32]| {
            let mut acc = [0f32; LANES];
            let whole = b.len() / LANES * LANES;
            for (i, &x) in b[..whole].iter().enumerate() {
                acc[i % LANES] += x;
            }
            let mut width = LANES;
            while width > 1 {
                width /= 2;
                for l in 0..width {
                    acc[l] += acc[l + width];
                }
            }
            b[whole..].iter().fold(acc[0], |a, &x| a + x)
        };
        let [b0, b1, b2, b3] = [0, 1, 2, 3].map(|i| block(&xs[i * BLOCK..((i + 1) * BLOCK).min(xs.len())]));
        let want = (b0 + b1) + (b2 + b3);
        assert_eq!(sum(&xs).to_bits(), want.to_bits());
        assert_eq!(sum(&xs[..3 * BLOCK]).to_bits(), ((b0 + b1) + b2).to_bits());
    }
}
