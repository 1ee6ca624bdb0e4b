//! `x[key]` and `x[key] = value`: integers, slices (any step), `...` and
//! `None` select views; a `bool` array over the leading axes selects by
//! mask; integer arrays gather, alone or mixed with the others. Writes go
//! into the array's memory, as the core's `assign_*` do, and every view
//! sees them.
//!
//! A `bool` array among other indices is what NumPy makes it: the integer
//! arrays of its `nonzero()` in its place, one per axis it covers (its
//! shape must be those axes'). A 0-d `bool` array, or a Python `bool`,
//! adds an axis of length 1 (`True`) or 0 (`False`), as if it were `None`
//! indexed by `[0]` or `[]`.
//!
//! A key with integer arrays follows the standard's integer-array
//! indexing, and NumPy's rules where the standard leaves a choice: the
//! integers in it count as 0-d integer arrays, all of them broadcast to
//! one shape, and that shape's axes replace the indexed axes in place
//! when those are adjacent in the key, or go first when a slice, `...` or
//! `None` separates them (`x[:, i, j]` has them second, `x[:, i, :, j]`
//! first). Such a key is composed from the core's operations: the basic
//! part selects a view, the array-indexed axes of the view are moved to
//! the front, `index_arrays` (or the scatter `assign_arrays`) does the
//! rest, and the result's axes are moved where NumPy puts them.

use crate::array::PyArray;
use crate::errors::{compute, to_py};
use crate::operand::{required_operand, Operand};
use anydev::shape::broadcast_shapes;
use anydev::{Arg, Array, DType, SliceArg};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PyNone, PySlice, PyTuple};

/// What a key selects.
enum Key {
    /// Views: integers, slices, `...`, `None`.
    Basic(Vec<SliceArg>),
    /// A `bool` array over the leading axes.
    Mask(Array),
    /// Integer arrays, possibly among integers, slices, `...` and `None`.
    Arrays(ArrayKey),
}

/// One item of a key.
enum Item {
    Basic(SliceArg),
    Array(Array),
    /// A Python `bool`.
    Bool(bool),
}

impl Item {
    /// How many of the array's axes the item indexes.
    fn axes(&self) -> usize {
        match self {
            Item::Basic(SliceArg::NewAxis | SliceArg::Ellipsis) | Item::Bool(_) => 0,
            Item::Array(a) if a.dtype() == DType::Bool => a.ndim(),
            Item::Basic(_) | Item::Array(_) => 1,
        }
    }
}

impl Key {
    fn parse(key: &Bound<'_, PyAny>, shape: &[usize]) -> PyResult<Key> {
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        let items = items.iter().map(item).collect::<PyResult<Vec<_>>>()?;
        let ellipses = items
            .iter()
            .filter(|i| matches!(i, Item::Basic(SliceArg::Ellipsis)))
            .count();
        if ellipses > 1 {
            // NumPy's exception, as for too many indices below.
            return Err(PyIndexError::new_err(
                "an index can only have a single ellipsis ('...')",
            ));
        }
        let ndim = shape.len();
        let indexed: usize = items.iter().map(Item::axes).sum();
        if indexed > ndim {
            // NumPy's exception for this, so code written for it still works.
            return Err(PyIndexError::new_err(format!(
                "too many indices: {indexed} for an array of {ndim} dimensions"
            )));
        }
        if let [Item::Array(a)] = items.as_slice() {
            if a.dtype() == DType::Bool && a.ndim() > 0 {
                mask_fits(a, shape, 0)?;
                return Ok(Key::Mask(a.clone()));
            }
        }
        let basic: Option<Vec<SliceArg>> = items
            .iter()
            .map(|i| match i {
                Item::Basic(s) => Some(*s),
                Item::Array(_) | Item::Bool(_) => None,
            })
            .collect();
        match basic {
            Some(spec) => Ok(Key::Basic(spec)),
            None => ArrayKey::new(items, shape, ndim - indexed).map(Key::Arrays),
        }
    }
}

/// Whether the `bool` array `mask` has the shape of the axes of `shape`
/// from `axis` that it covers; if not, NumPy's exception and words, so
/// code written for NumPy still works.
fn mask_fits(mask: &Array, shape: &[usize], axis: usize) -> PyResult<()> {
    let covered = &shape[axis..axis + mask.ndim()];
    match (0..mask.ndim()).find(|&i| mask.shape()[i] != covered[i]) {
        None => Ok(()),
        Some(i) => Err(PyIndexError::new_err(format!(
            "boolean index did not match indexed array along axis {}; size of axis is {} \
             but size of corresponding boolean axis is {}",
            axis + i,
            covered[i],
            mask.shape()[i]
        ))),
    }
}

/// A key with integer arrays, split into the basic key that selects a view
/// (`:` where an array or integer indexes, `None` where a `bool` scalar
/// adds an axis) and the indices of the view's axes that arrays index.
struct ArrayKey {
    /// One item per axis of the view: the ellipsis is expanded.
    basic: Vec<SliceArg>,
    /// The view's array-indexed axes, in key order; `indices` covers them
    /// in the same order (a `bool` array covers several).
    axes: Vec<usize>,
    indices: Vec<Index>,
}

/// The index of one or more array-indexed axes.
enum Index {
    /// An integer array.
    Array(Array),
    /// A Python integer, which indexes as a 0-d array.
    Int(isize),
    /// A `bool` array over as many axes as it has: its `nonzero()`.
    Mask(Array),
    /// A `bool` scalar over the length-1 axis it added: `[0]` or `[]`.
    Bool(bool),
}

impl ArrayKey {
    /// `unindexed` is the number of axes of the array (of `shape`) that no
    /// item of the key names: the ellipsis (or the key's end) takes them
    /// whole.
    fn new(items: Vec<Item>, shape: &[usize], unindexed: usize) -> PyResult<ArrayKey> {
        let has_ellipsis = items.iter().any(|i| matches!(i, Item::Basic(SliceArg::Ellipsis)));
        let mut key = ArrayKey {
            basic: Vec::with_capacity(items.len() + unindexed),
            axes: Vec::new(),
            indices: Vec::new(),
        };
        // The axis of the array the next item indexes: the view's, less
        // the axes that `None` and `bool` scalars added.
        let mut added = 0;
        for item in items {
            let axis = key.basic.len() - added;
            match item {
                Item::Basic(SliceArg::Ellipsis) => key.whole(unindexed),
                Item::Basic(SliceArg::Index(i)) => {
                    // Checked here, as NumPy does: where the indices
                    // broadcast to nothing, the gather reads no index.
                    let n = shape[axis];
                    if i < -(n as isize) || i >= n as isize {
                        return Err(PyIndexError::new_err(format!(
                            "index {i} is out of bounds for axis {axis} of length {n}"
                        )));
                    }
                    key.push_index(Index::Int(i))
                }
                Item::Basic(SliceArg::NewAxis) => {
                    key.basic.push(SliceArg::NewAxis);
                    added += 1;
                }
                Item::Basic(s) => key.basic.push(s),
                Item::Bool(b) => {
                    key.push_new_axis(b);
                    added += 1;
                }
                Item::Array(a) if a.dtype() == DType::Bool && a.ndim() == 0 => {
                    let b = a.to_scalar::<bool>().map_err(to_py)?;
                    key.push_new_axis(b);
                    added += 1;
                }
                Item::Array(a) if a.dtype() == DType::Bool => {
                    mask_fits(&a, shape, axis)?;
                    for _ in 0..a.ndim() {
                        key.axes.push(key.basic.len());
                        key.basic.push(SliceArg::FULL);
                    }
                    key.indices.push(Index::Mask(a));
                }
                Item::Array(a) => key.push_index(Index::Array(a)),
            }
        }
        if !has_ellipsis {
            key.whole(unindexed);
        }
        Ok(key)
    }

    fn whole(&mut self, axes: usize) {
        self.basic.extend(std::iter::repeat_n(SliceArg::FULL, axes));
    }

    fn push_index(&mut self, index: Index) {
        self.axes.push(self.basic.len());
        self.basic.push(SliceArg::FULL);
        self.indices.push(index);
    }

    /// A `bool` scalar: a new axis of length 1, indexed by `[0]` or `[]`.
    fn push_new_axis(&mut self, b: bool) {
        self.axes.push(self.basic.len());
        self.basic.push(SliceArg::NewAxis);
        self.indices.push(Index::Bool(b));
    }

    /// Where the broadcast index axes go in the result: in place of the
    /// indexed axes when those are adjacent, else first.
    fn result_axis(&self) -> usize {
        let (first, last) = (self.axes[0], self.axes[self.axes.len() - 1]);
        if last - first + 1 == self.axes.len() {
            first
        } else {
            0
        }
    }

    /// The view the basic part selects, with the array-indexed axes first.
    fn view(&self, x: &Array) -> anydev::Result<Array> {
        let view = x.slice(&self.basic)?;
        let rest = (0..view.ndim()).filter(|a| !self.axes.contains(a));
        let order: Vec<isize> = self.axes.iter().copied().chain(rest).map(|a| a as isize).collect();
        view.permute_dims(&order)
    }

    /// The indices as integer arrays on `x`'s device, one per
    /// array-indexed axis.
    fn index_arrays(&self, x: &Array) -> anydev::Result<Vec<Array>> {
        let mut arrays = Vec::with_capacity(self.axes.len());
        for index in &self.indices {
            match index {
                Index::Array(a) => arrays.push(a.clone()),
                Index::Int(i) => arrays.push(Array::from_slice(&[*i as i64], &[], x.device())?),
                Index::Mask(m) => arrays.extend(anydev::nonzero(m)?),
                Index::Bool(b) => {
                    let selected: &[i64] = if *b { &[0] } else { &[] };
                    arrays.push(Array::from_slice(selected, &[selected.len()], x.device())?)
                }
            }
        }
        Ok(arrays)
    }

    /// The indices as [`ArrayKey::index_arrays`] makes them, with the
    /// shape they broadcast to; indices that do not broadcast are NumPy's
    /// `IndexError`.
    fn indices(&self, py: Python<'_>, x: &Array) -> PyResult<Indices> {
        let arrays = compute(py, || self.index_arrays(x))?;
        let shapes: Vec<&[usize]> = arrays.iter().map(|i| i.shape()).collect();
        let shape = broadcast_shapes("index", &shapes).map_err(|_| {
            let shapes: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
            PyIndexError::new_err(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                shapes.join(" ")
            ))
        })?;
        Ok(Indices {
            arrays,
            shape: shape.to_vec(),
        })
    }

    /// `x[key]`.
    fn read(&self, x: &Array, indices: &Indices) -> anydev::Result<Array> {
        let refs: Vec<&Array> = indices.arrays.iter().collect();
        let view = self.view(x)?;
        let gathered = view.index_arrays(&refs)?;
        let index_ndim = indices.shape.len();
        gathered.permute_dims(&move_axes(gathered.ndim(), 0, index_ndim, self.result_axis()))
    }

    /// `x[key] = value`, indices included.
    fn assign(&self, py: Python<'_>, x: &Array, value: Arg<'_>) -> PyResult<()> {
        let indices = self.indices(py, x)?;
        compute(py, || self.write(x, &indices, value))
    }

    /// `x[key] = value`: the value broadcasts to the shape `x[key]` has,
    /// and is laid out as the view's scatter expects.
    fn write(&self, x: &Array, indices: &Indices, value: Arg<'_>) -> anydev::Result<()> {
        let refs: Vec<&Array> = indices.arrays.iter().collect();
        let view = self.view(x)?;
        let at = self.result_axis();
        match value {
            Arg::Array(v) if at > 0 => {
                let rest = &view.shape()[self.axes.len()..];
                let shape: Vec<usize> = rest[..at]
                    .iter()
                    .chain(&indices.shape)
                    .chain(&rest[at..])
                    .copied()
                    .collect();
                let order = move_axes(shape.len(), at, indices.shape.len(), 0);
                view.assign_arrays(&refs, &v.broadcast_to(&shape)?.permute_dims(&order)?)
            }
            value => view.assign_arrays(&refs, value),
        }
    }
}

/// The integer arrays of a key, one per array-indexed axis, and the shape
/// they broadcast to.
struct Indices {
    arrays: Vec<Array>,
    shape: Vec<usize>,
}

/// The axis order that moves the `count` axes starting at `from` so that
/// they start at `to` (among `ndim` axes), the others keeping their order.
fn move_axes(ndim: usize, from: usize, count: usize, to: usize) -> Vec<isize> {
    let moved = from..from + count;
    let mut others: Vec<usize> = (0..ndim).filter(|a| !moved.contains(a)).collect();
    let tail = others.split_off(to);
    others
        .into_iter()
        .chain(moved)
        .chain(tail)
        .map(|a| a as isize)
        .collect()
}

/// A Python int as an index.
fn integer(i: &Bound<'_, PyAny>) -> PyResult<Item> {
    i.extract::<isize>()
        .map(|i| Item::Basic(SliceArg::Index(i)))
        .map_err(|_| PyIndexError::new_err(format!("index {i} is out of range")))
}

/// One item of a key.
fn item(item: &Bound<'_, PyAny>) -> PyResult<Item> {
    if let Ok(a) = item.cast::<PyArray>() {
        return Ok(Item::Array(a.get().inner.clone()));
    }
    if let Ok(b) = item.cast::<PyBool>() {
        return Ok(Item::Bool(b.is_true()));
    }
    if item.is_instance_of::<PyInt>() {
        return integer(item);
    }
    if let Ok(slice) = item.cast::<PySlice>() {
        // Bounds beyond the index range clamp, as Python's own sequences
        // clamp them (`x[-10**20:10**20]` is all of `x`).
        let bound = |name: &str| -> PyResult<Option<isize>> {
            let value = slice.getattr(name)?;
            if value.is_none() {
                return Ok(None);
            }
            let value = if value.is_instance_of::<PyInt>() {
                value
            } else {
                slice.py().import("operator")?.call_method1("index", (value,))?
            };
            Ok(Some(match value.extract() {
                Ok(i) => i,
                Err(_) if value.lt(0)? => -isize::MAX,
                Err(_) => isize::MAX,
            }))
        };
        return Ok(Item::Basic(SliceArg::Slice {
            start: bound("start")?,
            stop: bound("stop")?,
            step: bound("step")?.unwrap_or(1),
        }));
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Basic(SliceArg::Ellipsis));
    }
    if item.is_instance_of::<PyNone>() {
        return Ok(Item::Basic(SliceArg::NewAxis));
    }
    if item.is_instance_of::<PyList>() {
        return Err(PyTypeError::new_err(
            "a list is not an index; index with an anydev integer or bool array",
        ));
    }
    // Other integers (NumPy's, say) by `__index__`, as Python's own
    // sequences take them.
    if let Ok(i) = item.call_method0("__index__") {
        if i.is_instance_of::<PyInt>() {
            return integer(&i);
        }
    }
    Err(PyTypeError::new_err(format!(
        "an index must be an int, a slice, ..., None, an anydev array or a tuple of those, not {}",
        item.get_type().name()?
    )))
}

#[pymethods]
impl PyArray {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let a = &self.inner;
        let out = match Key::parse(key, a.shape())? {
            Key::Basic(spec) => compute(py, || a.slice(&spec)),
            Key::Mask(mask) => compute(py, || a.index_mask(&mask)),
            Key::Arrays(key) => {
                let indices = key.indices(py, a)?;
                compute(py, || key.read(a, &indices))
            }
        };
        out.map(PyArray::from)
    }

    /// Writes `value` (a Python scalar, or an array on the same device that
    /// broadcasts) into the selected elements, in place; the value may not
    /// change the array's dtype. Where integer arrays select one element
    /// more than once, the last of them in the indices' row-major order
    /// is written.
    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = &self.inner;
        let value: Operand = required_operand(value)?;
        match Key::parse(key, a.shape())? {
            Key::Basic(spec) => compute(py, || a.assign_slice(&spec, value.arg())),
            Key::Mask(mask) => match value.arg() {
                // A value per selected element (NumPy's `x[mask] = v`, with
                // `v` of `x[mask]`'s shape): a scatter at `nonzero(mask)`.
                Arg::Array(v) if v.ndim() > a.ndim() - mask.ndim() => {
                    let unmasked = a.ndim() - mask.ndim();
                    ArrayKey::new(vec![Item::Array(mask)], a.shape(), unmasked)?.assign(py, a, value.arg())
                }
                value => compute(py, || a.assign_mask(&mask, value)),
            },
            Key::Arrays(key) => key.assign(py, a, value.arg()),
        }
    }
}
