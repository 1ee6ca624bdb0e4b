//! Views: new shapes and strides over the same buffer, no data moved.
//! `reshape` is the one that copies, when the layout cannot be viewed.

use crate::array::Array;
use crate::shape::{self, normalize_axes, normalize_axis, Dims, Strides};
use crate::slice::{self, SliceArg};
use anydev_core::{Error, Result};
use smallvec::SmallVec;

/// Axes for reductions and squeezes: every axis, or a list (negative
/// counts from the end). Converts from `isize`, arrays, slices, vectors
/// and `Option`s of those; [`ALL`] is every axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axes {
    All,
    Some(SmallVec<[isize; shape::INLINE_DIMS]>),
}

/// Every axis.
pub const ALL: Axes = Axes::All;

impl Axes {
    pub(crate) fn as_option(&self) -> Option<&[isize]> {
        match self {
            Axes::All => None,
            Axes::Some(v) => Some(v),
        }
    }
}

impl From<isize> for Axes {
    fn from(a: isize) -> Axes {
        Axes::Some(SmallVec::from_slice(&[a]))
    }
}

impl From<&[isize]> for Axes {
    fn from(a: &[isize]) -> Axes {
        Axes::Some(SmallVec::from_slice(a))
    }
}

impl<const N: usize> From<[isize; N]> for Axes {
    fn from(a: [isize; N]) -> Axes {
        Axes::Some(SmallVec::from_slice(&a))
    }
}

impl From<Vec<isize>> for Axes {
    fn from(a: Vec<isize>) -> Axes {
        Axes::Some(SmallVec::from_vec(a))
    }
}

impl<T: Into<Axes>> From<Option<T>> for Axes {
    fn from(a: Option<T>) -> Axes {
        a.map_or(Axes::All, Into::into)
    }
}

impl Array {
    /// The array with a new shape (one extent may be `-1`): a view when the
    /// layout allows, else a contiguous copy.
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let new_shape = shape::resolve_shape("reshape", self.size(), shape)?;
        match shape::reshape_strides(&self.shape, &self.strides, &new_shape) {
            Some(strides) => Ok(self.view(new_shape, strides, self.offset)),
            None => self.as_contiguous()?.reshape(shape),
        }
    }

    /// The array with a shape given as `usize` extents.
    pub(crate) fn reshape_to(&self, shape: &[usize]) -> Result<Array> {
        let signed: SmallVec<[isize; shape::INLINE_DIMS]> = shape.iter().map(|&n| n as isize).collect();
        self.reshape(&signed)
    }

    /// Flattens to 1-D (a view when contiguous).
    pub fn flatten(&self) -> Result<Array> {
        self.reshape(&[-1])
    }

    /// Reorders the axes: output axis `i` is input axis `axes[i]`.
    pub fn permute_dims(&self, axes: &[isize]) -> Result<Array> {
        if axes.len() != self.ndim() {
            return Err(Error::invalid_argument(
                "permute_dims",
                format!("{axes:?} names {} axes but the array has {}", axes.len(), self.ndim()),
            ));
        }
        let mut shape = Dims::with_capacity(axes.len());
        let mut strides = Strides::with_capacity(axes.len());
        let mut seen: SmallVec<[usize; shape::INLINE_DIMS]> = SmallVec::new();
        for &a in axes {
            let a = normalize_axis("permute_dims", a, self.ndim())?;
            if seen.contains(&a) {
                return Err(Error::invalid_argument(
                    "permute_dims",
                    format!("{axes:?} is not a permutation: axis {a} appears twice"),
                ));
            }
            seen.push(a);
            shape.push(self.shape[a]);
            strides.push(self.strides[a]);
        }
        Ok(self.view(shape, strides, self.offset))
    }

    /// Swaps the last two axes (`.mT`); needs at least 2 dimensions.
    pub fn matrix_transpose(&self) -> Result<Array> {
        let n = self.ndim();
        if n < 2 {
            return Err(Error::invalid_argument(
                "matrix_transpose",
                format!("needs an array of at least 2 dimensions, got shape {:?}", self.shape),
            ));
        }
        let mut shape = self.shape.clone();
        let mut strides = self.strides.clone();
        shape.swap(n - 2, n - 1);
        strides.swap(n - 2, n - 1);
        Ok(self.view(shape, strides, self.offset))
    }

    /// Moves axes `source` to positions `destination`, keeping the order of
    /// the others.
    pub fn moveaxis(&self, source: &[isize], destination: &[isize]) -> Result<Array> {
        let op = "moveaxis";
        if source.len() != destination.len() {
            return Err(Error::invalid_argument(
                op,
                format!("source {source:?} and destination {destination:?} differ in length"),
            ));
        }
        let n = self.ndim();
        let src = normalize_axes(op, Some(source), n)?;
        let _ = normalize_axes(op, Some(destination), n)?;
        let mut order: SmallVec<[isize; shape::INLINE_DIMS]> =
            (0..n).filter(|a| !src.contains(a)).map(|a| a as isize).collect();
        let mut pairs: SmallVec<[(usize, isize); shape::INLINE_DIMS]> = destination
            .iter()
            .zip(source)
            .map(|(&d, &s)| Ok((normalize_axis(op, d, n)?, normalize_axis(op, s, n)? as isize)))
            .collect::<Result<_>>()?;
        pairs.sort_unstable();
        for (d, s) in pairs {
            order.insert(d, s);
        }
        self.permute_dims(&order)
    }

    /// Inserts length-1 axes at `axes`, their positions in the result (of
    /// rank `ndim + axes.len()`, negative ones counting from its end, none
    /// repeated); one axis is in `-ndim-1..=ndim`. The Array API's
    /// `expand_dims` as of its 2025.12 revision.
    pub fn expand_dims(&self, axes: impl Into<Axes>) -> Result<Array> {
        let axes = axes.into();
        let Some(axes) = axes.as_option() else {
            return Err(Error::invalid_argument(
                "expand_dims",
                "give the positions of the new axes; `ALL` names none",
            ));
        };
        shape::check_ndim("expand_dims", self.ndim() + axes.len())?;
        let mut shape = self.shape.clone();
        let mut strides = self.strides.clone();
        // Sorted positions in the result: inserting each in turn puts it there.
        for a in normalize_axes("expand_dims", Some(axes), self.ndim() + axes.len())? {
            shape.insert(a, 1);
            strides.insert(a, 0);
        }
        Ok(self.view(shape, strides, self.offset))
    }

    /// Removes length-1 axes: the given ones (an error if one is not of
    /// length 1), or every one for [`ALL`].
    pub fn squeeze(&self, axes: impl Into<Axes>) -> Result<Array> {
        let axes = axes.into();
        let drop = match axes.as_option() {
            None => (0..self.ndim()).filter(|&a| self.shape[a] == 1).collect(),
            Some(list) => {
                let list = normalize_axes("squeeze", Some(list), self.ndim())?;
                if let Some(&a) = list.iter().find(|&&a| self.shape[a] != 1) {
                    return Err(Error::invalid_argument(
                        "squeeze",
                        format!(
                            "axis {a} has length {}, only axes of length 1 can be removed",
                            self.shape[a]
                        ),
                    ));
                }
                list
            }
        };
        Ok(self.drop_axes(&drop))
    }

    /// The view without the (length-1) axes in `drop`.
    pub(crate) fn drop_axes(&self, drop: &[usize]) -> Array {
        let kept = (0..self.ndim()).filter(|i| !drop.contains(i));
        let shape = kept.clone().map(|i| self.shape[i]).collect();
        let strides = kept.map(|i| self.strides[i]).collect();
        self.view(shape, strides, self.offset)
    }

    /// A read-only view with `shape`, repeating along new and length-1 axes.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        if self.shape.as_slice() == shape {
            return Ok(self.clone());
        }
        let strides = shape::broadcast_strides("broadcast_to", &self.shape, &self.strides, shape)?;
        // A view allocates nothing, but its element count must still be
        // countable: every later size computation relies on it.
        shape::checked_size("broadcast_to", shape)?;
        let mut view = self.view(shape.into(), strides, self.offset);
        view.read_only |= view.repeats_elements();
        Ok(view)
    }

    /// Reverses the order of elements along `axes` (all for [`ALL`]): a
    /// view with negated strides.
    pub fn flip(&self, axes: impl Into<Axes>) -> Result<Array> {
        let axes = normalize_axes("flip", axes.into().as_option(), self.ndim())?;
        let mut strides = self.strides.clone();
        let mut offset = self.offset as isize;
        for &a in &axes {
            if self.shape[a] > 0 {
                offset += (self.shape[a] as isize - 1) * strides[a];
            }
            strides[a] = -strides[a];
        }
        Ok(self.view(self.shape.clone(), strides, offset as usize))
    }

    /// Basic indexing (NumPy's `x[...]` with integers, slices with steps,
    /// new axes and one ellipsis), always a view. Build specs with [`crate::s!`].
    pub fn slice(&self, spec: &[SliceArg]) -> Result<Array> {
        let op = "slice";
        let ellipses = spec.iter().filter(|s| **s == SliceArg::Ellipsis).count();
        if ellipses > 1 {
            return Err(Error::invalid_argument(op, "an index can contain at most one ellipsis"));
        }
        let consumed = spec
            .iter()
            .filter(|s| matches!(s, SliceArg::Index(_) | SliceArg::Slice { .. }))
            .count();
        if consumed > self.ndim() {
            return Err(Error::invalid_argument(
                op,
                format!("{consumed} indices given for an array of {} dimensions", self.ndim()),
            ));
        }
        let mut shape = Dims::new();
        let mut strides = Strides::new();
        let mut offset = self.offset as isize;
        let mut axis = 0usize;
        let full = [SliceArg::FULL];
        let expanded = spec.iter().flat_map(|s| match s {
            SliceArg::Ellipsis => std::iter::repeat_n(&full[0], self.ndim() - consumed),
            other => std::iter::repeat_n(other, 1),
        });
        let trailing = std::iter::repeat_n(&full[0], if ellipses == 0 { self.ndim() - consumed } else { 0 });
        for item in expanded.chain(trailing) {
            match *item {
                SliceArg::NewAxis => {
                    shape.push(1);
                    strides.push(0);
                }
                SliceArg::Index(i) => {
                    let n = self.shape[axis];
                    let pos = if i < 0 { i + n as isize } else { i };
                    if !(0..n as isize).contains(&pos) {
                        return Err(Error::IndexOutOfBounds {
                            op: op.into(),
                            index: i as i128,
                            len: n,
                        });
                    }
                    offset += pos * self.strides[axis];
                    axis += 1;
                }
                SliceArg::Slice { start, stop, step } => {
                    let (first, len) = slice::resolve(op, start, stop, step, self.shape[axis])?;
                    if len > 0 {
                        offset += first * self.strides[axis];
                    }
                    shape.push(len);
                    // With at most one element the step is never taken (and
                    // an extreme step times the stride could overflow).
                    strides.push(if len > 1 {
                        self.strides[axis] * step
                    } else {
                        self.strides[axis]
                    });
                    axis += 1;
                }
                SliceArg::Ellipsis => unreachable!("expanded above"),
            }
        }
        shape::check_ndim(op, shape.len())?;
        let offset = if shape.contains(&0) {
            self.offset
        } else {
            offset as usize
        };
        Ok(self.view(shape, strides, offset))
    }
}
