//! Python operators on arrays, each the namespace function the standard
//! names for it, with Python scalars on either side.
//!
//! In-place operators (`x += 1`) compute the result and write it into `x`'s
//! memory, so every view of `x` sees it; as the standard says, a result
//! that would need another dtype is an error rather than a silent cast.

use crate::array::PyArray;
use crate::errors::{compute, compute_elementwise};
use crate::operand::{array_arg, operand, required_operand};
use anydev::{Arg, Array};
use pyo3::prelude::*;

/// An elementwise binary function of the core.
pub type Binary = for<'a> fn(Arg<'a>, Arg<'a>) -> anydev::Result<Array>;

impl PyArray {
    /// `self op other` (or `other op self` when `reflected`), or
    /// `NotImplemented` for an operand anydev does not know.
    fn binary(&self, py: Python<'_>, other: &Bound<'_, PyAny>, f: Binary, reflected: bool) -> PyResult<Py<PyAny>> {
        let Some(other) = operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let me = &self.inner;
        let out = compute_elementwise(py, [Some(me), other.array()], || {
            if reflected {
                f(other.arg(), Arg::Array(me))
            } else {
                f(Arg::Array(me), other.arg())
            }
        })?;
        Ok(Bound::new(py, PyArray::from(out))?.into_any().unbind())
    }

    /// `self op= other`: the result written into `self`.
    fn inplace(&self, py: Python<'_>, other: &Bound<'_, PyAny>, f: Binary) -> PyResult<()> {
        let other = required_operand(other)?;
        let me = &self.inner;
        compute_elementwise(py, [Some(me), other.array()], || {
            me.assign(&f(Arg::Array(me), other.arg())?)
        })
    }

    fn unary(&self, py: Python<'_>, f: fn(&Array) -> anydev::Result<Array>) -> PyResult<PyArray> {
        let me = &self.inner;
        compute_elementwise(py, [Some(me)], || f(me)).map(PyArray::from)
    }
}

macro_rules! operators {
    (
        reflected: [$($op:ident, $rop:ident => $f:ident;)*]
        forward: [$($fop:ident => $ff:ident;)*]
        inplace: [$($iop:ident => $if:ident;)*]
        unary: [$($uop:ident => $uf:ident;)*]
    ) => {
        #[pymethods]
        impl PyArray {
            $(
                fn $op(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    self.binary(py, other, |a, b| anydev::$f(a, b), false)
                }

                fn $rop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    self.binary(py, other, |a, b| anydev::$f(a, b), true)
                }
            )*
            $(
                fn $fop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    self.binary(py, other, |a, b| anydev::$ff(a, b), false)
                }
            )*
            $(
                fn $iop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
                    self.inplace(py, other, |a, b| anydev::$if(a, b))
                }
            )*
            $(
                fn $uop(&self, py: Python<'_>) -> PyResult<PyArray> {
                    self.unary(py, anydev::$uf)
                }
            )*
        }
    };
}

operators! {
    reflected: [
        __add__, __radd__ => add;
        __sub__, __rsub__ => subtract;
        __mul__, __rmul__ => multiply;
        __truediv__, __rtruediv__ => divide;
        __floordiv__, __rfloordiv__ => floor_divide;
        __mod__, __rmod__ => remainder;
        __and__, __rand__ => bitwise_and;
        __or__, __ror__ => bitwise_or;
        __xor__, __rxor__ => bitwise_xor;
        __lshift__, __rlshift__ => bitwise_left_shift;
        __rshift__, __rrshift__ => bitwise_right_shift;
    ]
    forward: [
        __eq__ => equal;
        __ne__ => not_equal;
        __lt__ => less;
        __le__ => less_equal;
        __gt__ => greater;
        __ge__ => greater_equal;
    ]
    inplace: [
        __iadd__ => add;
        __isub__ => subtract;
        __imul__ => multiply;
        __itruediv__ => divide;
        __ifloordiv__ => floor_divide;
        __imod__ => remainder;
        __iand__ => bitwise_and;
        __ior__ => bitwise_or;
        __ixor__ => bitwise_xor;
        __ilshift__ => bitwise_left_shift;
        __irshift__ => bitwise_right_shift;
    ]
    unary: [
        __neg__ => negative;
        __pos__ => positive;
        __abs__ => abs;
        __invert__ => bitwise_invert;
    ]
}

#[pymethods]
impl PyArray {
    /// `x ** y`; the three-argument form is not part of the standard.
    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some() {
            return Ok(py.NotImplemented());
        }
        self.binary(py, other, |a, b| anydev::pow(a, b), false)
    }

    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some() {
            return Ok(py.NotImplemented());
        }
        self.binary(py, other, |a, b| anydev::pow(a, b), true)
    }

    fn __ipow__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, _modulo: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, other, |a, b| anydev::pow(a, b))
    }

    /// `x @ y`: arrays only, as the standard says (a scalar operand gets
    /// `NotImplemented`, so Python raises `TypeError`).
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.matmul(py, other, false)
    }

    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.matmul(py, other, true)
    }

    /// `x @= y`: the product written into `x` (its shape must not change).
    fn __imatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let (me, other) = (&self.inner, array_arg(other)?);
        compute(py, || me.assign(&anydev::matmul(me, &other)?))
    }
}

impl PyArray {
    fn matmul(&self, py: Python<'_>, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<PyArray>() else {
            return Ok(py.NotImplemented());
        };
        let (me, other) = (&self.inner, &other.get().inner);
        let (a, b) = if reflected { (other, me) } else { (me, other) };
        let out = compute(py, || anydev::matmul(a, b))?;
        Ok(Bound::new(py, PyArray::from(out))?.into_any().unbind())
    }
}
