"""The Array API standard's special cases (revision 2025.12, the "Special
cases" sections of the elementwise functions) checked case by case on every
device, for real-valued float32 and float64 operands.

Each case is a row of the tables below: the inputs and the outcome the
standard states for them. A condition such as "greater than 0 and finite"
is sampled with a few representative values of the dtype (0.5, 1, 3, a
large finite, the largest finite, the smallest subnormal), and two-argument
conditions with the cross product of the samples. Exact outcomes (±0 with
their sign, ±infinity, NaN, 1, -1, an input) must match exactly; outcomes
the standard calls an "implementation-dependent approximation" (π/2, ...)
must have the right sign and lie within ``ULPS`` of the value rounded to the
dtype. Every expected value comes from the standard's text, never from a
library: Python's ``%`` and ``math`` only where the standard defers to them
(``remainder``'s remaining cases) or to compute an approximation's value.
``test_symmetries`` checks the identities the standard states "for all
operands": cosh even, sinh and tanh odd, hypot blind to order and signs.

Left out: the complex-valued special cases, functions the standard gives no
real-valued special case (comparisons other than ``equal``/``not_equal``,
``negative``, ``positive``, ``real``, ``imag``, ``conj``, bitwise and logical
functions), and statements the standard words as "should" (``hypot``
avoiding overflow). ``not_equal(finite, ±infinity)`` is left out as well:
the standard's list falls through to "False" there, which is an omission in
its text rather than a requirement.
"""

import math
import struct
from dataclasses import dataclass

import numpy as np
import pytest

import anydev as xp
from conftest import host, needs_dtype, run_or_skip

INF = math.inf
NAN_POS = math.nan
NAN_NEG = math.copysign(math.nan, -1.0)
NANS = [NAN_POS, NAN_NEG]
ZEROS = [0.0, -0.0]
INFS = [INF, -INF]
PI = math.pi
# Tolerance of an "implementation-dependent approximation", in ulps of the dtype.
ULPS = 4
BOOL_RESULT = {"equal", "not_equal", "isfinite", "isinf", "isnan", "signbit"}


# Outcomes other than an exact float (a Python float: ±0 by sign bit,
# ±inf, finite values) or a bool (predicates).
@dataclass(frozen=True)
class Nan:
    """Any NaN, or a NaN with the given sign bit."""

    negative: bool | None = None


@dataclass(frozen=True)
class Approx:
    """An approximation to ``value``: the same sign, within ``ULPS``."""

    value: float


@dataclass(frozen=True)
class Signed:
    """Not NaN, with a negative or positive sign (any magnitude)."""

    negative: bool


@dataclass(frozen=True)
class AnyZero:
    """A zero of either sign (where the standard does not say which)."""


@dataclass(frozen=True)
class OneOf:
    """Any of the listed outcomes (where the standard allows alternatives)."""

    options: tuple


NAN = Nan()


class Values:
    """Representative values of a dtype, as Python floats it holds exactly."""

    def __init__(self, dtype):
        t = np.dtype(dtype).type
        f = np.finfo(t)
        wide = f.bits == 64
        self.tiny = float(f.smallest_subnormal)
        self.max = float(f.max)
        self.big = float(t(1e300 if wide else 1e30))
        self.small = float(t(1e-300 if wide else 1e-30))
        self.above1 = float(np.nextafter(t(1), t(2)))
        self.below1 = float(np.nextafter(t(1), t(0)))
        self.odd_big = float(2**f.nmant + 1)  # the largest odd integers are near here
        self.tie_big = float(2**f.nmant - 0.5)  # halfway between 2^nmant - 1 and 2^nmant
        self.pos = [0.5, 1.0, 3.0, self.big, self.max, self.tiny]
        self.neg = [-x for x in self.pos]
        self.finite = ZEROS + self.pos + self.neg
        self.dtype = t


def each(xs, outcome):
    """One-argument rows; ``outcome`` is an outcome or a function of the input."""
    return [((a,), outcome(a) if callable(outcome) else outcome) for a in xs]


def cross(xs1, xs2, outcome):
    """Rows for every pair; ``outcome`` is an outcome or a function of the pair."""
    return [((a, b), outcome(a, b) if callable(outcome) else outcome) for a in xs1 for b in xs2]


def neg_of(xs):
    return [-x for x in xs]


def nan_rows(others):
    """Two-argument rows where either input is NaN (both signs of NaN)."""
    return cross(NANS, others + NANS, NAN) + cross(others, NANS, NAN)


CASES = {}


def cases(*names):
    def register(build):
        for name in names:
            CASES[name] = build
        return build

    return register


# --- one argument -----------------------------------------------------------


@cases("abs")
def _abs(v):
    return (each(NANS, NAN) + each([-0.0], 0.0) + each([-INF], INF)
            # The result has the magnitude of the input and a positive sign.
            + each(v.pos + [0.0, INF], lambda a: a) + each(v.neg, lambda a: -a))


@cases("acos")
def _acos(v):
    return (each(NANS, NAN) + each([v.above1, 3.0, v.big, INF], NAN)
            + each([-v.above1, -3.0, -v.big, -INF], NAN) + each([1.0], 0.0))


@cases("acosh")
def _acosh(v):
    return (each(NANS, NAN) + each([v.below1, 0.5, v.tiny, 0.0, -0.0, -1.0, -3.0, -INF], NAN)
            + each([1.0], 0.0) + each([INF], INF))


@cases("asin")
def _asin(v):
    return (each(NANS, NAN) + each([v.above1, 3.0, v.big, INF], NAN)
            + each([-v.above1, -3.0, -v.big, -INF], NAN) + each(ZEROS, lambda a: a))


@cases("asinh", "sinh")
def _odd_unbounded(v):
    return each(NANS, NAN) + each(ZEROS + INFS, lambda a: a)


@cases("atan")
def _atan(v):
    return each(NANS, NAN) + each(ZEROS, lambda a: a) + each([INF], Approx(PI / 2)) + each([-INF], Approx(-PI / 2))


@cases("atanh")
def _atanh(v):
    return (each(NANS, NAN) + each([-v.above1, -3.0, -INF], NAN) + each([v.above1, 3.0, INF], NAN)
            + each([-1.0], -INF) + each([1.0], INF) + each(ZEROS, lambda a: a))


@cases("ceil", "floor", "trunc")
def _integral(v):
    integers = [1.0, 3.0, v.odd_big, v.big, v.max]
    return (each(integers + neg_of(integers), lambda a: a)
            + each(INFS + ZEROS, lambda a: a) + each(NANS, NAN))


@cases("round")
def _round(v):
    # Ties go to the even integer; the sign of a zero result is not stated.
    ties = [((0.5,), AnyZero()), ((-0.5,), AnyZero()), ((1.5,), 2.0), ((2.5,), 2.0), ((3.5,), 4.0),
            ((-1.5,), -2.0), ((-2.5,), -2.0), ((v.tie_big,), v.tie_big + 0.5), ((-v.tie_big,), -v.tie_big - 0.5)]
    return _integral(v) + ties


@cases("cos")
def _cos(v):
    return each(NANS, NAN) + each(ZEROS, 1.0) + each(INFS, NAN)


@cases("cosh")
def _cosh(v):
    return each(NANS, NAN) + each(ZEROS, 1.0) + each(INFS, INF)


@cases("exp")
def _exp(v):
    return each(NANS, NAN) + each(ZEROS, 1.0) + each([INF], INF) + each([-INF], 0.0)


@cases("expm1")
def _expm1(v):
    return each(NANS, NAN) + each(ZEROS, lambda a: a) + each([INF], INF) + each([-INF], -1.0)


@cases("log", "log2", "log10")
def _logs(v):
    return (each(NANS, NAN) + each([-v.tiny, -0.5, -1.0, -3.0, -v.max, -INF], NAN)
            + each(ZEROS, -INF) + each([1.0], 0.0) + each([INF], INF))


@cases("log1p")
def _log1p(v):
    return (each(NANS, NAN) + each([-v.above1, -3.0, -v.max, -INF], NAN) + each([-1.0], -INF)
            + each(ZEROS, lambda a: a) + each([INF], INF))


@cases("sin", "tan")
def _sin_tan(v):
    return each(NANS, NAN) + each(ZEROS, lambda a: a) + each(INFS, NAN)


@cases("tanh")
def _tanh(v):
    return each(NANS, NAN) + each(ZEROS, lambda a: a) + each([INF], 1.0) + each([-INF], -1.0)


@cases("sqrt")
def _sqrt(v):
    return (each(NANS, NAN) + each([-v.tiny, -1.0, -v.max, -INF], NAN)
            + each(ZEROS, lambda a: a) + each([INF], INF))


@cases("sign")
def _sign(v):
    return (each(v.neg + [-INF], -1.0) + each(ZEROS, AnyZero()) + each(v.pos + [INF], 1.0)
            + each(NANS, NAN))


@cases("signbit")
def _signbit(v):
    return (each([0.0, INF, NAN_POS] + v.pos, False) + each([-0.0, -INF, NAN_NEG] + v.neg, True))


@cases("isfinite")
def _isfinite(v):
    return each(INFS + NANS, False) + each(v.finite, True)


@cases("isinf")
def _isinf(v):
    return each(INFS, True) + each(NANS + v.finite, False)


@cases("isnan")
def _isnan(v):
    return each(NANS, True) + each(INFS + v.finite, False)


@cases("reciprocal")
def _reciprocal(v):
    # As if 1.0 / x (see divide).
    finite = [0.5, 1.0, 3.0, v.big, v.max]
    return (each(NANS, NAN) + each([0.0], INF) + each([-0.0], -INF) + each([INF], 0.0) + each([-INF], -0.0)
            + each(finite, Signed(False)) + each(neg_of(finite), Signed(True))
            # Overflow: an infinity of the input's sign.
            + each([v.tiny], INF) + each([-v.tiny], -INF))


@cases("square")
def _square(v):
    # As if x * x (see multiply).
    return (each(NANS, NAN) + each(INFS, INF) + each(ZEROS, 0.0) + each([3.0, -3.0], 9.0)
            + each([v.max, -v.max], INF) + each([v.small, -v.small, v.tiny], 0.0))


# --- two arguments ----------------------------------------------------------


@cases("add")
def _add(v):
    nonzero = v.pos + v.neg
    return (nan_rows([0.0, -0.0, 3.0, -3.0, INF, -INF])
            + cross([INF], [-INF], NAN) + cross([-INF], [INF], NAN)
            + cross([INF], [INF], INF) + cross([-INF], [-INF], -INF)
            + cross([INF], v.finite, INF) + cross([-INF], v.finite, -INF)
            + cross(v.finite, [INF], INF) + cross(v.finite, [-INF], -INF)
            + cross([-0.0], [-0.0], -0.0) + cross([-0.0], [0.0], 0.0) + cross([0.0], ZEROS, 0.0)
            + cross(ZEROS, nonzero, lambda a, b: b) + cross(nonzero, ZEROS, lambda a, b: a)
            + [((x, -x), 0.0) for x in nonzero]
            # The remaining cases: rounded to nearest, overflowing to a signed infinity.
            + [((1.5, 2.25), 3.75), ((0.5, -3.0), -2.5), ((v.max, v.max), INF), ((-v.max, -v.max), -INF)])


@cases("subtract")
def _subtract(v):
    # x1 - x2 is x1 + (-x2).
    return [((a, -b), outcome) for (a, b), outcome in _add(v)]


@cases("atan2")
def _atan2(v):
    pos, neg = v.pos, v.neg
    return (nan_rows([0.0, -0.0, 1.0, -1.0, INF, -INF])
            + cross(pos + [INF], ZEROS, Approx(PI / 2))
            + cross([0.0], pos + [INF, 0.0], 0.0) + cross([0.0], neg + [-INF, -0.0], Approx(PI))
            + cross([-0.0], pos + [INF, 0.0], -0.0) + cross([-0.0], neg + [-INF, -0.0], Approx(-PI))
            + cross(neg + [-INF], ZEROS, Approx(-PI / 2))
            + cross(pos, [INF], 0.0) + cross(pos, [-INF], Approx(PI))
            + cross(neg, [INF], -0.0) + cross(neg, [-INF], Approx(-PI))
            + cross([INF], v.finite, Approx(PI / 2)) + cross([-INF], v.finite, Approx(-PI / 2))
            + cross([INF], [INF], Approx(PI / 4)) + cross([INF], [-INF], Approx(3 * PI / 4))
            + cross([-INF], [INF], Approx(-PI / 4)) + cross([-INF], [-INF], Approx(-3 * PI / 4)))


@cases("copysign")
def _copysign(v):
    mags = [0.0, -0.0, 3.0, -3.0, v.tiny, -v.tiny, v.max, INF, -INF]
    negative, positive = v.neg + [-INF, -0.0, NAN_NEG], v.pos + [INF, 0.0, NAN_POS]
    return (cross(mags, negative, lambda a, b: -abs(a)) + cross(mags, positive, lambda a, b: abs(a))
            + cross(NANS, negative, Nan(negative=True)) + cross(NANS, positive, Nan(negative=False)))


def _quotient_zeros_and_infinities(v):
    """The cases divide and floor_divide share (NaN, zeros, division by zero,
    x1 finite against an infinite x2 of the same sign)."""
    pos, neg = v.pos, v.neg
    return (nan_rows([0.0, -0.0, 3.0, -3.0, INF, -INF])
            + cross(INFS, INFS, NAN) + cross(ZEROS, ZEROS, NAN)
            + cross([0.0], pos + [INF], 0.0) + cross([-0.0], pos + [INF], -0.0)
            + cross([0.0], neg + [-INF], -0.0) + cross([-0.0], neg + [-INF], 0.0)
            + cross(pos + [INF], [0.0], INF) + cross(pos + [INF], [-0.0], -INF)
            + cross(neg + [-INF], [0.0], -INF) + cross(neg + [-INF], [-0.0], INF)
            + cross(pos, [INF], 0.0) + cross(neg, [-INF], 0.0))


def _quotient_signs(v):
    some = [0.5, 3.0, v.big]
    return (cross(some, some, Signed(False)) + cross(neg_of(some), neg_of(some), Signed(False))
            + cross(some, neg_of(some), Signed(True)) + cross(neg_of(some), some, Signed(True)))


@cases("divide")
def _divide(v):
    pos, neg = v.pos, v.neg
    return (_quotient_zeros_and_infinities(v)
            + cross([INF], pos, INF) + cross([INF], neg, -INF) + cross([-INF], pos, -INF) + cross([-INF], neg, INF)
            + cross(pos, [-INF], -0.0) + cross(neg, [INF], -0.0)
            + _quotient_signs(v)
            # The remaining cases: overflow to a signed infinity, underflow to a signed zero.
            + [((v.max, 0.5), INF), ((-v.max, 0.5), -INF), ((v.max, -0.5), -INF),
               ((v.small, v.big), 0.0), ((-v.small, v.big), -0.0), ((v.small, -v.big), -0.0),
               ((v.tiny, 4.0), 0.0), ((-v.tiny, 4.0), -0.0)])


@cases("floor_divide")
def _floor_divide(v):
    pos, neg = v.pos, v.neg
    # Where the standard lets a library follow Python instead of floor(x1 / x2).
    inf_or_nan, minus_inf_or_nan = OneOf((INF, NAN)), OneOf((-INF, NAN))
    zero_or_minus_one = OneOf((-0.0, -1.0))
    return (_quotient_zeros_and_infinities(v)
            + cross([INF], pos, inf_or_nan) + cross([INF], neg, minus_inf_or_nan)
            + cross([-INF], pos, minus_inf_or_nan) + cross([-INF], neg, inf_or_nan)
            + cross(pos, [-INF], zero_or_minus_one) + cross(neg, [INF], zero_or_minus_one)
            + _quotient_signs(v)
            # The remaining cases: the greatest integer not above the quotient; overflow.
            + [((7.0, 2.0), 3.0), ((-7.0, 2.0), -4.0), ((7.0, -2.0), -4.0), ((-7.0, -2.0), 3.0),
               ((v.max, 0.5), INF), ((-v.max, 0.5), -INF)])


@cases("remainder")
def _remainder(v):
    pos, neg = v.pos, v.neg
    remaining = [(5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (-5.5, -2.0), (4.0, 2.0), (-4.0, 2.0), (4.0, -2.0),
                 (-4.0, -2.0), (0.5, 3.0), (-0.5, 3.0), (v.big, 3.0), (v.max, 2.0), (v.tiny, 1.0), (3.0, 0.5)]
    return (nan_rows([0.0, -0.0, 3.0, -3.0, INF, -INF])
            + cross(INFS, INFS, NAN) + cross(ZEROS, ZEROS, NAN)
            + cross(ZEROS, pos + [INF], 0.0) + cross(ZEROS, neg + [-INF], -0.0)
            + cross(pos + [INF] + neg + [-INF], ZEROS, NAN)
            + cross(INFS, pos + neg, NAN)
            + cross(pos, [INF], lambda a, b: a) + cross(pos, [-INF], -INF)
            + cross(neg, [INF], INF) + cross(neg, [-INF], lambda a, b: a)
            # The remaining cases: Python's % (the results are held exactly by the dtype).
            + [((a, b), python_mod(a, b, v.dtype)) for a, b in remaining])


def python_mod(a, b, t):
    r = a % b
    assert float(t(r)) == r, f"{a} % {b} = {r} is not exact in {np.dtype(t).name}"
    return r


@cases("hypot")
def _hypot(v):
    others = NANS + ZEROS + [3.0, -3.0, v.tiny, v.max] + INFS
    zero_partners = [0.0, -0.0, 3.0, -3.0, v.tiny, -v.tiny, v.max, -v.max]
    nan_partners = [0.0, -0.0, 3.0, -3.0, v.tiny, v.max]
    return (cross(INFS, others, INF) + cross(others, INFS, INF)
            + cross(ZEROS, zero_partners, lambda a, b: abs(b)) + cross(zero_partners, ZEROS, lambda a, b: abs(a))
            + cross(nan_partners + NANS, NANS, NAN) + cross(NANS, nan_partners, NAN)
            # No underflow unless both inputs are subnormal and so is the result.
            + cross([v.small, -v.small], [v.small, -v.small], Approx(math.hypot(v.small, v.small))))


@cases("logaddexp")
def _logaddexp(v):
    others = [INF, -INF, 0.0, -0.0, 3.0, -3.0, v.max, -v.max]
    return nan_rows([0.0, 1.0, -3.0, INF, -INF]) + cross([INF], others, INF) + cross(others, [INF], INF)


@cases("maximum", "minimum")
def _extrema(v):
    return nan_rows([0.0, -0.0, 1.0, -1.0, v.max, INF, -INF])


@cases("multiply")
def _multiply(v):
    nonzero = v.pos + v.neg

    def sign(a, b):
        return math.copysign(1.0, a) * math.copysign(1.0, b)

    some = [0.5, 3.0, v.big]
    return (nan_rows([0.0, -0.0, 3.0, -3.0, INF, -INF])
            + cross(INFS, ZEROS, NAN) + cross(ZEROS, INFS, NAN)
            + cross(INFS, INFS + nonzero, lambda a, b: sign(a, b) * INF)
            + cross(nonzero, INFS, lambda a, b: sign(a, b) * INF)
            + cross(some, some, Signed(False)) + cross(neg_of(some), neg_of(some), Signed(False))
            + cross(some, neg_of(some), Signed(True)) + cross(neg_of(some), some, Signed(True))
            # The remaining cases: exact zeros and products, overflow, underflow.
            + cross(ZEROS, ZEROS + [3.0, -3.0, v.max, -v.max], lambda a, b: math.copysign(0.0, sign(a, b)))
            + [((1.5, -2.0), -3.0), ((v.max, 2.0), INF), ((v.max, -2.0), -INF), ((-v.max, -2.0), INF),
               ((v.small, v.small), 0.0), ((-v.small, v.small), -0.0), ((v.tiny, 0.25), 0.0),
               ((-v.tiny, 0.25), -0.0)])


@cases("equal")
def _equal(v):
    same = [0.5, 3.0, -3.0, v.tiny, v.max, -v.max]
    return (cross(NANS, [0.0, 1.0, INF, -INF] + NANS, False) + cross([0.0, 1.0, INF, -INF], NANS, False)
            + cross([INF], [INF], True) + cross([-INF], [-INF], True) + cross(ZEROS, ZEROS, True)
            + [((x, x), True) for x in same]
            + [((INF, -INF), False), ((-INF, INF), False), ((3.0, 0.5), False), ((v.tiny, 0.0), False),
               ((-v.tiny, -0.0), False), ((1.0, v.above1), False), ((v.max, INF), False)])


@cases("not_equal")
def _not_equal(v):
    same = [0.5, 3.0, -3.0, v.tiny, v.max, -v.max]
    return (cross(NANS, [0.0, 1.0, INF, -INF] + NANS, True) + cross([0.0, 1.0, INF, -INF], NANS, True)
            + cross([INF], [-INF], True) + cross([-INF], [INF], True)
            + [((3.0, 0.5), True), ((v.tiny, 0.0), True), ((-v.tiny, -0.0), True), ((1.0, v.above1), True)]
            + cross([INF], [INF], False) + cross([-INF], [-INF], False) + cross(ZEROS, ZEROS, False)
            + [((x, x), False) for x in same])


@cases("nextafter")
def _nextafter(v):
    return nan_rows([0.0, -0.0, 1.0, INF, -INF]) + [((-0.0, 0.0), 0.0), ((0.0, -0.0), -0.0)]


@cases("pow")
def _pow(v):
    odd = [1.0, 3.0, v.odd_big]
    not_odd = [0.5, 2.0, 2.5, v.big, INF]  # v.big is an even integer
    above = [v.above1, 3.0, v.big, v.max, INF]
    below = [0.5, v.below1, v.tiny, 0.0]
    return (cross([0.0, -0.0, -1.0, 0.5, 2.0, -3.0, INF, -INF] + NANS, NANS, NAN)  # x1 is not 1
            + cross(NANS + ZEROS + [3.0, -3.0, v.tiny, 1.0] + INFS, ZEROS, 1.0)
            + cross(NANS, [1.0, -1.0, 0.5, 3.0, INF, -INF], NAN)
            + cross(above + neg_of(above), [INF], INF) + cross(above + neg_of(above), [-INF], 0.0)
            + cross([1.0, -1.0], INFS, 1.0)
            + cross([1.0], [0.5, 3.0, -3.0, v.big, v.max, -v.max, v.tiny], 1.0)
            + cross(below + neg_of(below), [INF], 0.0) + cross(below + neg_of(below), [-INF], INF)
            + cross([INF], odd + not_odd, INF) + cross([INF], neg_of(odd + not_odd), 0.0)
            + cross([-INF], odd, -INF) + cross([-INF], not_odd, INF)
            + cross([-INF], neg_of(odd), -0.0) + cross([-INF], neg_of(not_odd), 0.0)
            + cross([0.0], odd + not_odd, 0.0) + cross([0.0], neg_of(odd + not_odd), INF)
            + cross([-0.0], odd, -0.0) + cross([-0.0], not_odd, 0.0)
            + cross([-0.0], neg_of(odd), -INF) + cross([-0.0], neg_of(not_odd), INF)
            + cross([-0.5, -3.0, -v.big, -v.tiny], [0.5, -0.5, 2.5, -2.5, v.above1], NAN))


# --- three arguments --------------------------------------------------------


@cases("clip")
def _clip(v):
    return [((x, lo, hi), NAN) for x, lo, hi in [
        (NAN_POS, -1.0, 1.0), (NAN_NEG, -1.0, 1.0), (0.5, NAN_POS, 1.0), (0.5, -1.0, NAN_POS),
        (5.0, NAN_NEG, 1.0), (-5.0, -1.0, NAN_NEG), (INF, -1.0, NAN_POS), (0.5, NAN_POS, NAN_POS),
        (NAN_POS, NAN_POS, NAN_POS)]]


# --- checking ----------------------------------------------------------------


def bits(x):
    return struct.pack("<d", x)


def outcome_key(outcome):
    return ("float", bits(outcome)) if isinstance(outcome, float) and not isinstance(outcome, bool) else outcome


def table(name, dtype):
    """The rows for ``name`` and ``dtype``, each input held exactly by the
    dtype and each distinct; a case listed twice must agree with itself."""
    v = Values(dtype)
    rows = {}
    for inputs, outcome in CASES[name](v):
        inputs = tuple(float(x) for x in inputs)
        for x in inputs:
            held = float(v.dtype(x))
            assert bits(held) == bits(x) or (math.isnan(x) and math.isnan(held)), (name, dtype, x)
        key = tuple(bits(x) for x in inputs)
        if key in rows:
            assert outcome_key(rows[key][1]) == outcome_key(outcome), (name, dtype, inputs, rows[key][1], outcome)
            continue
        rows[key] = (inputs, outcome)
    return list(rows.values())


def matches(got, outcome, t):
    """Whether the host value ``got`` is the standard's ``outcome``."""
    if isinstance(outcome, bool):
        return bool(got) is outcome
    got = float(got)
    if isinstance(outcome, float):
        if math.isnan(outcome):
            return math.isnan(got)
        return got == outcome and math.copysign(1.0, got) == math.copysign(1.0, outcome)
    if isinstance(outcome, Nan):
        return math.isnan(got) and (outcome.negative is None or bool(np.signbit(got)) == outcome.negative)
    if isinstance(outcome, Approx):
        ref = t(outcome.value)
        slack = ULPS * float(np.spacing(np.abs(ref)))
        return (math.isfinite(got) and math.copysign(1.0, got) == math.copysign(1.0, outcome.value)
                and abs(got - float(ref)) <= slack)
    if isinstance(outcome, Signed):
        return not math.isnan(got) and math.copysign(1.0, got) == (-1.0 if outcome.negative else 1.0)
    if isinstance(outcome, AnyZero):
        return got == 0.0
    if isinstance(outcome, OneOf):
        return any(matches(got, o, t) for o in outcome.options)
    raise TypeError(outcome)


def show(x):
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    x = float(x)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return repr(x)


def describe(outcome):
    if isinstance(outcome, float):
        return show(outcome)
    if isinstance(outcome, Nan):
        return {None: "NaN", True: "NaN with sign bit 1", False: "NaN with sign bit 0"}[outcome.negative]
    if isinstance(outcome, Approx):
        return f"≈{outcome.value!r} (±{ULPS} ulp, same sign)"
    if isinstance(outcome, Signed):
        return "negative sign" if outcome.negative else "positive sign"
    if isinstance(outcome, AnyZero):
        return "±0"
    if isinstance(outcome, OneOf):
        return " or ".join(describe(o) for o in outcome.options)
    return repr(outcome)


def run_cases(device, name, dtype, rows):
    """Calls ``name`` once on columns of all the rows' inputs; the failures."""
    d = getattr(xp, dtype)
    needs_dtype(device, d)
    t = np.dtype(dtype).type
    columns = [np.array([inputs[i] for inputs, _ in rows], dtype=t) for i in range(len(rows[0][0]))]
    args = [xp.asarray(c, device=device) for c in columns]
    got = run_or_skip(getattr(xp, name), *args)
    assert got.device == device
    want = xp.bool if name in BOOL_RESULT else d
    assert got.dtype == want, f"{name} on {device}: dtype {got.dtype}, expected {want}"
    values = host(got)
    assert values.shape == (len(rows),)
    return [
        f"  {name}({', '.join(show(c[i]) for c in columns)}): expected {describe(outcome)}, got {show(values[i])}"
        for i, (_, outcome) in enumerate(rows)
        if not matches(values[i], outcome, t)
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_special_cases(device, name, dtype):
    rows = table(name, dtype)
    failures = run_cases(device, name, dtype, rows)
    assert not failures, (f"{name} {dtype} on {device}: {len(failures)} of {len(rows)} special cases differ "
                          f"from the standard:\n" + "\n".join(failures))


# The standard's symmetries: cosh is even, sinh and tanh are odd ("for all
# operands"), and hypot ignores the order and signs of its arguments.
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["cosh", "sinh", "tanh", "hypot"])
def test_symmetries(device, name, dtype):
    d = getattr(xp, dtype)
    needs_dtype(device, d)
    v = Values(dtype)
    xs = np.array([0.0, v.tiny, v.small, 0.25, 0.5, 1.0, 3.0, 20.0, v.big, v.max, INF], dtype=dtype)
    if name == "hypot":
        a, b = (m.ravel() for m in np.meshgrid(xs, xs))
        variants = {"": (a, b), "swapped": (b, a), "x2 negated": (a, -b), "x1 negated": (-a, b),
                    "both negated": (-a, -b)}
        got = {k: host(run_or_skip(xp.hypot, xp.asarray(p, device=device), xp.asarray(q, device=device)))
               for k, (p, q) in variants.items()}
        inputs = [f"({show(p)}, {show(q)})" for p, q in zip(a, b)]
        pairs = [(k, got[k], got[""]) for k in variants if k]
    else:
        fn = getattr(xp, name)
        pos, neg = (host(run_or_skip(fn, xp.asarray(s, device=device))) for s in (xs, -xs))
        inputs = [f"({show(x)})" for x in xs]
        pairs = [("negated", neg, pos if name == "cosh" else -pos)]
    failures = [
        f"  {name}{inputs[i]} {label}: {show(r[i])}, expected {show(w[i])}"
        for label, r, w in pairs
        for i in range(len(inputs))
        if bits(float(r[i])) != bits(float(w[i]))
    ]
    assert not failures, f"{name} {dtype} on {device} is not symmetric:\n" + "\n".join(failures)
