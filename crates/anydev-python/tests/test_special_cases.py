"""The Array API standard's special cases (revision 2025.12, the "Special
cases" sections of the elementwise functions) checked case by case on every
device, for real-valued float32 and float64 operands and for complex64 and
complex128 operands.

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

The complex cases ("let a = real(x_i), b = imag(x_i)") have an outcome per
component: one written with a sign ("+0", "- 0j", "+infinity") is exact, one
written without ("0 + 0j", "infinity + NaN j") or called unspecified may
have either sign, and "NaN ± πj/2" accepts both. The standard's notes that
f(conj(x)) must equal conj(f(x)) and that cosh is even and sinh, tanh, asinh
and atanh odd carry each case to the other quadrants. asin, atan, cos, sin
and tan follow from the hyperbolic functions' cases by the identities the
standard gives (asin(x) = -1j * asinh(x*1j), ...; x*1j and -1j*y by the
multiply table's purely imaginary operand), log2 and log10 from log's by the
change of base, and add, subtract, round, equal and not_equal from the
real-valued cases, which apply to each component. A case "+infinity * cis(b)"
or "+0 * cis(b)" (exp, expm1, cosh, sinh) is a zero or infinity of the signs
of cos(b) and sin(b), sampled where those are far from 0. Where a is +0 and
b is ±infinity or NaN, tanh's (and so tan's) "+0" may be NaN, as the
standard's warning allows.

Left out: functions the standard gives no special case (comparisons other
than ``equal``/``not_equal``, ``negative``, ``positive``, ``real``,
``imag``, ``conj``, bitwise and logical functions), and statements the
standard words as "should" (``hypot`` avoiding overflow, complex ``pow`` as
if ``exp(x2*log(x1))``, the textbook formula for complex ``multiply`` and
``divide``). Of complex ``multiply``, ``divide`` and ``square`` only the
all-NaN case is checked: the other non-finite cases are implementation
dependent, and so is all of complex ``reciprocal`` (1.0 / x). Complex
``sign``'s "remaining cases" follow "the rules of complex number division"
without saying what divides what, and the cis(b) cases at a large or
subnormal b would test the accuracy of cos and sin rather than the special
case; both are left out. ``not_equal(finite, ±infinity)`` is left out as
well: the standard's list falls through to "False" there, which is an
omission in its text rather than a requirement.
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
class AnyInf:
    """An infinity of either sign (where the standard does not say which)."""


@dataclass(frozen=True)
class OneOf:
    """Any of the listed outcomes (where the standard allows alternatives)."""

    options: tuple


NAN = Nan()
ANY_ZERO = AnyZero()
ANY_INF = AnyInf()


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


# --- complex operands -------------------------------------------------------
#
# A complex input is a pair (real, imaginary) and a complex outcome a pair of
# outcomes for the real and imaginary components (a bool for predicates, one
# real outcome for abs). The standard lists the cases as "If a is ... and b is
# ..., the result is ..." with a = real(x_i), b = imag(x_i), mostly for the
# upper half plane; its notes that f(conj(x)) must equal conj(f(x)) and that f
# is even or odd give the other quadrants. A component written with a sign
# ("+0", "- 0j", "+infinity", "- infinity j") is exact; one written without
# ("0 + 0j", "infinity + NaN j") or that the text calls unspecified may have
# either sign.

COMPLEX_CASES = {}
COMPONENT = {"complex64": "float32", "complex128": "float64"}


def complex_cases(*names):
    def register(build):
        for name in names:
            COMPLEX_CASES[name] = build
        return build

    return register


def grid(reals, imags):
    """The complex inputs with any of ``reals`` and any of ``imags``."""
    return [(a, b) for a in reals for b in imags]


def neg(outcome):
    """The outcome with its sign flipped (NaN and either-sign outcomes stay)."""
    if isinstance(outcome, float):
        return -outcome
    if isinstance(outcome, Approx):
        return Approx(-outcome.value)
    if isinstance(outcome, OneOf):
        return OneOf(tuple(neg(o) for o in outcome.options))
    if isinstance(outcome, Nan) and outcome.negative is not None:
        return Nan(not outcome.negative)
    return outcome


def with_conj(rows):
    """The rows and their conjugates: f(conj(x)) equals conj(f(x))."""
    return rows + [(((a, -b),), (re, neg(im))) for ((a, b),), (re, im) in rows]


def with_odd(rows):
    """The rows and their negatives for an odd f: f(-x) equals -f(x)."""
    return rows + [(((-a, -b),), (neg(re), neg(im))) for ((a, b),), (re, im) in rows]


def with_even(rows):
    """The rows and their negatives for an even f: f(-x) equals f(x)."""
    return rows + [(((-a, -b),), out) for ((a, b),), out in rows]


def rotated(rows, then):
    """Rows of ``then(f(x*1j))`` from the rows of f. By the multiply table's
    purely imaginary operand x*1j is -b + aj, so f's input u + wj is w - uj."""
    return [(((w, -u),), then(out)) for ((u, w),), out in rows]


def unchanged(out):
    return out


def times_minus_1j(out):
    """-1j * (p + qj) is q - pj (the multiply table's purely imaginary operand)."""
    p, q = out
    return (q, neg(p))


def cis_args(v):
    """Positive finite b whose cos(b) and sin(b) are far from 0 for their size
    (all four quadrants, and a small b); b near a large multiple of π/2 would
    make the outcome's sign depend on rounding."""
    return [0.5, 1.0, 2.0, 3.0, 4.0, 6.0, v.small]


def times_cis(scale, b):
    """scale * cis(b) = scale*cos(b) + scale*sin(b)j for a scale of +0 or
    +infinity: by the real-valued multiply, zeros or infinities of the signs
    of cos(b) and sin(b)."""
    return (math.copysign(scale, math.cos(b)), math.copysign(scale, math.sin(b)))


def minus_one(out):
    """out - 1.0: the real component less 1, the imaginary one unchanged (add's table)."""
    re, im = out
    return (re - 1.0, im)


def divided(rows, c):
    """Rows of f(x) / c for a positive real c from the rows of f (divide's
    table: each component divided by c). The exact outcomes are zeros and
    infinities, which the division keeps."""
    def quotient(o):
        if isinstance(o, Approx):
            return Approx(o.value / c)
        assert not isinstance(o, float) or o == 0 or math.isinf(o), o
        return o

    return [(inputs, tuple(quotient(o) for o in out)) for inputs, out in rows]


def componentwise(name, v, combine):
    """Complex rows from the real-valued rows of ``name``, which apply to the
    components independently: each real row is the real part of one complex
    row and the imaginary part of another."""
    rows = table(name, np.dtype(v.dtype).name)
    partners = rows[len(rows) // 2:] + rows[:len(rows) // 2]
    return [(tuple(zip(x, y)), combine(o, p)) for (x, o), (y, p) in zip(rows, partners)]


@complex_cases("abs")
def _c_abs(v):
    anything = v.finite + INFS + NANS
    return (each(grid(INFS, anything), INF) + each(grid(anything, INFS), INF)
            + each(grid(ZEROS, v.finite), lambda z: abs(z[1])) + each(grid(v.finite, ZEROS), lambda z: abs(z[0]))
            + each(grid(NANS, v.finite), NAN) + each(grid(v.finite, NANS), NAN) + each(grid(NANS, NANS), NAN))


@complex_cases("acos")
def _c_acos(v):
    return with_conj(
        each(grid(ZEROS, [0.0]), (Approx(PI / 2), -0.0)) + each(grid(ZEROS, NANS), (Approx(PI / 2), NAN))
        + each(grid(v.finite, [INF]), (Approx(PI / 2), -INF)) + each(grid(v.pos + v.neg, NANS), (NAN, NAN))
        + each(grid([-INF], v.pos), (Approx(PI), -INF)) + each(grid([INF], v.pos), (0.0, -INF))
        + each(grid([-INF], [INF]), (Approx(3 * PI / 4), -INF)) + each(grid([INF], [INF]), (Approx(PI / 4), -INF))
        + each(grid(INFS, NANS), (NAN, ANY_INF)) + each(grid(NANS, v.finite), (NAN, NAN))
        + each(grid(NANS, [INF]), (NAN, -INF)) + each(grid(NANS, NANS), (NAN, NAN)))


@complex_cases("acosh")
def _c_acosh(v):
    plus_minus_half_pi = OneOf((Approx(PI / 2), Approx(-PI / 2)))
    return with_conj(
        each(grid(ZEROS, [0.0]), (0.0, Approx(PI / 2))) + each(grid(v.finite, [INF]), (INF, Approx(PI / 2)))
        + each(grid(v.pos + v.neg, NANS), (NAN, NAN)) + each(grid([0.0], NANS), (NAN, plus_minus_half_pi))
        + each(grid([-INF], v.pos), (INF, Approx(PI))) + each(grid([INF], v.pos), (INF, 0.0))
        + each(grid([-INF], [INF]), (INF, Approx(3 * PI / 4))) + each(grid([INF], [INF]), (INF, Approx(PI / 4)))
        + each(grid(INFS, NANS), (INF, NAN)) + each(grid(NANS, v.finite), (NAN, NAN))
        + each(grid(NANS, [INF]), (INF, NAN)) + each(grid(NANS, NANS), (NAN, NAN)))


@complex_cases("asinh")
def _c_asinh(v):
    return with_conj(with_odd(
        each(grid([0.0], [0.0]), (0.0, 0.0)) + each(grid(v.pos, [INF]), (INF, Approx(PI / 2)))
        + each(grid(v.finite, NANS), (NAN, NAN)) + each(grid([INF], v.pos), (INF, 0.0))
        + each(grid([INF], [INF]), (INF, Approx(PI / 4))) + each(grid(NANS, [0.0]), (NAN, 0.0))
        + each(grid(NANS, v.pos + v.neg), (NAN, NAN)) + each(grid(NANS, [INF]), (ANY_INF, NAN))
        + each(grid(NANS, NANS), (NAN, NAN))))


@complex_cases("asin")
def _c_asin(v):
    # As if -1j * asinh(x*1j).
    return with_conj(rotated(_c_asinh(v), times_minus_1j))


@complex_cases("atanh")
def _c_atanh(v):
    return with_conj(with_odd(
        each(grid([0.0], [0.0]), (0.0, 0.0)) + each(grid([0.0], NANS), (0.0, NAN))
        + each(grid([1.0], [0.0]), (INF, 0.0)) + each(grid(v.pos, [INF]), (0.0, Approx(PI / 2)))
        + each(grid(v.pos + v.neg, NANS), (NAN, NAN)) + each(grid([INF], v.pos), (0.0, Approx(PI / 2)))
        + each(grid([INF], [INF]), (0.0, Approx(PI / 2))) + each(grid([INF], NANS), (0.0, NAN))
        + each(grid(NANS, v.finite), (NAN, NAN)) + each(grid(NANS, [INF]), (ANY_ZERO, Approx(PI / 2)))
        + each(grid(NANS, NANS), (NAN, NAN))))


@complex_cases("atan")
def _c_atan(v):
    # As if -1j * atanh(x*1j).
    return with_conj(rotated(_c_atanh(v), times_minus_1j))


@complex_cases("cosh")
def _c_cosh(v):
    cis, nonzero = cis_args(v), v.pos + v.neg
    return with_conj(with_even(
        each(grid([0.0], [0.0]), (1.0, 0.0)) + each(grid([0.0], [INF]), (NAN, ANY_ZERO))
        + each(grid([0.0], NANS), (NAN, ANY_ZERO)) + each(grid(nonzero, [INF]), (NAN, NAN))
        + each(grid(nonzero, NANS), (NAN, NAN)) + each(grid([INF], [0.0]), (INF, 0.0))
        + each(grid([INF], cis + neg_of(cis)), lambda z: times_cis(INF, z[1]))
        + each(grid([INF], [INF]), (ANY_INF, NAN)) + each(grid([INF], NANS), (INF, NAN))
        + each(grid(NANS, ZEROS), (NAN, ANY_ZERO)) + each(grid(NANS, nonzero), (NAN, NAN))
        + each(grid(NANS, NANS), (NAN, NAN))))


@complex_cases("cos")
def _c_cos(v):
    # As if cosh(x*1j).
    return rotated(_c_cosh(v), unchanged)


@complex_cases("sinh")
def _c_sinh(v):
    return with_conj(with_odd(
        each(grid([0.0], [0.0]), (0.0, 0.0)) + each(grid([0.0], [INF]), (ANY_ZERO, NAN))
        + each(grid([0.0], NANS), (ANY_ZERO, NAN)) + each(grid(v.pos, [INF]), (NAN, NAN))
        + each(grid(v.pos, NANS), (NAN, NAN)) + each(grid([INF], [0.0]), (INF, 0.0))
        + each(grid([INF], cis_args(v)), lambda z: times_cis(INF, z[1]))
        + each(grid([INF], [INF]), (ANY_INF, NAN)) + each(grid([INF], NANS), (ANY_INF, NAN))
        + each(grid(NANS, [0.0]), (NAN, 0.0)) + each(grid(NANS, v.pos + v.neg), (NAN, NAN))
        + each(grid(NANS, NANS), (NAN, NAN))))


@complex_cases("sin")
def _c_sin(v):
    # As if -1j * sinh(x*1j).
    return rotated(_c_sinh(v), times_minus_1j)


@complex_cases("tanh")
def _c_tanh(v):
    # Where a is +0 and b is +infinity or NaN the result is "+0 + NaN j", but
    # the standard's warning lets a library return "NaN + NaN j" there. For
    # +infinity + bj with finite b > 0 it writes "1 + 0j" with an unsigned
    # zero; C99 (G.6.2.6) makes it 1 + 0 sin(2b) j, signed like sin(2b).
    zero_or_nan, nonzero = OneOf((0.0, NAN)), v.pos + v.neg
    return with_conj(with_odd(
        each(grid([0.0], [0.0]), (0.0, 0.0)) + each(grid(nonzero, [INF]), (NAN, NAN))
        + each(grid([0.0], [INF]), (zero_or_nan, NAN)) + each(grid(nonzero, NANS), (NAN, NAN))
        + each(grid([0.0], NANS), (zero_or_nan, NAN)) + each(grid([INF], v.pos), (1.0, ANY_ZERO))
        + each(grid([INF], [INF]), (1.0, ANY_ZERO)) + each(grid([INF], NANS), (1.0, ANY_ZERO))
        + each(grid(NANS, [0.0]), (NAN, 0.0)) + each(grid(NANS, nonzero + INFS), (NAN, NAN))
        + each(grid(NANS, NANS), (NAN, NAN))))


@complex_cases("tan")
def _c_tan(v):
    # As if -1j * tanh(x*1j).
    return rotated(_c_tanh(v), times_minus_1j)


@complex_cases("exp")
def _c_exp(v):
    cis = cis_args(v)
    return with_conj(
        each(grid(ZEROS, [0.0]), (1.0, 0.0)) + each(grid(v.finite, [INF]), (NAN, NAN))
        + each(grid(v.finite, NANS), (NAN, NAN)) + each(grid([INF], [0.0]), (ANY_INF, 0.0))
        + each(grid([-INF], ZEROS + cis + neg_of(cis)), lambda z: times_cis(0.0, z[1]))
        + each(grid([INF], cis + neg_of(cis)), lambda z: times_cis(INF, z[1]))
        + each(grid([-INF], [INF]), (ANY_ZERO, ANY_ZERO)) + each(grid([INF], [INF]), (ANY_INF, NAN))
        + each(grid([-INF], NANS), (ANY_ZERO, ANY_ZERO)) + each(grid([INF], NANS), (ANY_INF, NAN))
        + each(grid(NANS, [0.0]), (NAN, 0.0)) + each(grid(NANS, v.pos + v.neg + INFS), (NAN, NAN))
        + each(grid(NANS, NANS), (NAN, NAN)))


@complex_cases("expm1")
def _c_expm1(v):
    cis = cis_args(v)
    return with_conj(
        each(grid(ZEROS, [0.0]), (ANY_ZERO, 0.0)) + each(grid(v.finite, [INF]), (NAN, NAN))
        + each(grid(v.finite, NANS), (NAN, NAN)) + each(grid([INF], [0.0]), (INF, 0.0))
        + each(grid([-INF], ZEROS + cis + neg_of(cis)), lambda z: minus_one(times_cis(0.0, z[1])))
        + each(grid([INF], cis + neg_of(cis)), lambda z: minus_one(times_cis(INF, z[1])))
        + each(grid([-INF], [INF]), (-1.0, ANY_ZERO)) + each(grid([INF], [INF]), (ANY_INF, NAN))
        + each(grid([-INF], NANS), (-1.0, ANY_ZERO)) + each(grid([INF], NANS), (ANY_INF, NAN))
        + each(grid(NANS, [0.0]), (NAN, 0.0)) + each(grid(NANS, v.pos + v.neg + INFS), (NAN, NAN))
        + each(grid(NANS, NANS), (NAN, NAN)))


def _c_log_shared(v):
    """The cases log and log1p share."""
    return (each(grid(v.finite, [INF]), (INF, Approx(PI / 2))) + each(grid(v.finite, NANS), (NAN, NAN))
            + each(grid([-INF], v.pos), (INF, Approx(PI))) + each(grid([INF], v.pos), (INF, 0.0))
            + each(grid([-INF], [INF]), (INF, Approx(3 * PI / 4)))
            + each(grid([INF], [INF]), (INF, Approx(PI / 4)))
            + each(grid(INFS, NANS), (INF, NAN)) + each(grid(NANS, v.finite), (NAN, NAN))
            + each(grid(NANS, [INF]), (INF, NAN)) + each(grid(NANS, NANS), (NAN, NAN)))


@complex_cases("log")
def _c_log(v):
    return with_conj(each(grid([-0.0], [0.0]), (-INF, Approx(PI))) + each(grid([0.0], [0.0]), (-INF, 0.0))
                     + _c_log_shared(v))


@complex_cases("log2")
def _c_log2(v):
    # As if log(x) / log(2).
    return divided(_c_log(v), math.log(2))


@complex_cases("log10")
def _c_log10(v):
    # As if log(x) / log(10).
    return divided(_c_log(v), math.log(10))


@complex_cases("log1p")
def _c_log1p(v):
    return with_conj(each(grid([-1.0], [0.0]), (-INF, 0.0)) + _c_log_shared(v))


@complex_cases("sqrt")
def _c_sqrt(v):
    # "a is NaN and b is any value" leaves out b = +infinity, which the case
    # before it ("any value (including NaN)") settles.
    return with_conj(
        each(grid(ZEROS, [0.0]), (0.0, 0.0)) + each(grid(v.finite + INFS + NANS, [INF]), (INF, INF))
        + each(grid(v.finite, NANS), (NAN, NAN)) + each(grid([-INF], v.pos), (0.0, INF))
        + each(grid([INF], v.pos), (INF, 0.0)) + each(grid([-INF], NANS), (NAN, ANY_INF))
        + each(grid([INF], NANS), (INF, NAN)) + each(grid(NANS, v.finite + NANS), (NAN, NAN)))


@complex_cases("sign")
def _c_sign(v):
    anything = v.finite + INFS + NANS
    return (each(grid(ZEROS, ZEROS), (ANY_ZERO, 0.0))
            + each(grid(NANS, anything) + grid(anything, NANS), (NAN, NAN)))


@complex_cases("isfinite")
def _c_isfinite(v):
    finite = [0.0, -0.0, 3.0, -v.max, v.tiny]
    return (each(grid(NANS, finite + INFS + NANS) + grid(finite + INFS, NANS), False)
            + each(grid(INFS, finite + INFS + NANS) + grid(finite + NANS, INFS), False)
            + each(grid(finite, finite), True))


@complex_cases("isinf")
def _c_isinf(v):
    finite = [0.0, -0.0, 3.0, -v.max, v.tiny]
    return (each(grid(INFS, finite + INFS + NANS), True) + each(grid(finite + NANS, INFS), True)
            + each(grid(finite + NANS, finite + NANS), False))


@complex_cases("isnan")
def _c_isnan(v):
    others = [0.0, -0.0, 3.0, -v.max, v.tiny] + INFS
    return each(grid(NANS, others + NANS) + grid(others, NANS), True) + each(grid(others, others), False)


@complex_cases("add")
def _c_add(v):
    # With the standard's own example: (-0 + 0j) + (-0 - 0j) is -0 + 0j.
    return componentwise("add", v, lambda o, p: (o, p)) + [(((-0.0, 0.0), (-0.0, -0.0)), (-0.0, 0.0))]


@complex_cases("subtract")
def _c_subtract(v):
    return componentwise("subtract", v, lambda o, p: (o, p))


@complex_cases("round")
def _c_round(v):
    return componentwise("round", v, lambda o, p: (o, p))


@complex_cases("equal")
def _c_equal(v):
    # Any NaN component gives False, which the real-valued rows already say.
    return componentwise("equal", v, lambda o, p: o and p)


@complex_cases("not_equal")
def _c_not_equal(v):
    return componentwise("not_equal", v, lambda o, p: o or p)


@complex_cases("multiply", "divide")
def _c_all_nan(v):
    # Complex by complex follows "special rules": the result is NaN + NaN j
    # where a, b, c and d are all NaN; the rest is implementation dependent.
    return cross(grid(NANS, NANS), grid(NANS, NANS), (NAN, NAN))


@complex_cases("square")
def _c_square(v):
    # As if x * x (see multiply).
    return each(grid(NANS, NANS), (NAN, NAN))


# --- checking ----------------------------------------------------------------


def bits(x):
    return struct.pack("<d", x)


def outcome_key(outcome):
    if isinstance(outcome, tuple):
        return tuple(outcome_key(o) for o in outcome)
    if isinstance(outcome, OneOf):
        return ("one of", frozenset(outcome_key(o) for o in outcome.options))
    return ("float", bits(outcome)) if isinstance(outcome, float) and not isinstance(outcome, bool) else outcome


def table(name, dtype, registry=CASES):
    """The rows for ``name`` and ``dtype``, each input (each component of a
    complex input) held exactly by the dtype and each distinct; a case listed
    twice must agree with itself."""
    v = Values(COMPONENT.get(dtype, dtype))
    rows = {}
    for inputs, outcome in registry[name](v):
        inputs = tuple(tuple(float(x) for x in z) if isinstance(z, tuple) else float(z) for z in inputs)
        parts = [x for z in inputs for x in (z if isinstance(z, tuple) else (z,))]
        for x in parts:
            held = float(v.dtype(x))
            assert bits(held) == bits(x) or (math.isnan(x) and math.isnan(held)), (name, dtype, x)
        key = tuple(bits(x) for x in parts)
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
    if isinstance(outcome, AnyInf):
        return math.isinf(got)
    if isinstance(outcome, OneOf):
        return any(matches(got, o, t) for o in outcome.options)
    raise TypeError(outcome)


def matches_complex(got, outcome, t):
    """``matches`` for a pair of component outcomes, or for a single outcome."""
    if isinstance(outcome, tuple):
        return matches(got.real, outcome[0], t) and matches(got.imag, outcome[1], t)
    return matches(got, outcome, t)


def show(x):
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if np.iscomplexobj(x):
        return f"complex({show(x.real)}, {show(x.imag)})"
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
    if isinstance(outcome, AnyInf):
        return "±inf"
    if isinstance(outcome, tuple):
        return f"complex({describe(outcome[0])}, {describe(outcome[1])})"
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


def run_complex_cases(device, name, dtype, rows):
    """Calls ``name`` once on complex columns of all the rows' inputs; the failures."""
    d = getattr(xp, dtype)
    needs_dtype(device, d)
    part = COMPONENT[dtype]
    t = np.dtype(part).type
    columns = []
    for i in range(len(rows[0][0])):
        c = np.empty(len(rows), dtype=dtype)
        c.real = [inputs[i][0] for inputs, _ in rows]
        c.imag = [inputs[i][1] for inputs, _ in rows]
        # Signed zeros and the signs of NaNs survive into the column.
        signs = [math.copysign(1.0, x) < 0 for inputs, _ in rows for x in inputs[i]]
        assert np.signbit(c.view(t)).tolist() == signs
        columns.append(c)
    got = run_or_skip(getattr(xp, name), *(xp.asarray(c, device=device) for c in columns))
    assert got.device == device
    want = xp.bool if name in BOOL_RESULT else getattr(xp, part) if name == "abs" else d
    assert got.dtype == want, f"{name} on {device}: dtype {got.dtype}, expected {want}"
    values = host(got)
    assert values.shape == (len(rows),)
    return [
        f"  {name}({', '.join(show(c[i]) for c in columns)}): expected {describe(outcome)}, got {show(values[i])}"
        for i, (_, outcome) in enumerate(rows)
        if not matches_complex(values[i], outcome, t)
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_special_cases(device, name, dtype):
    rows = table(name, dtype)
    failures = run_cases(device, name, dtype, rows)
    assert not failures, (f"{name} {dtype} on {device}: {len(failures)} of {len(rows)} special cases differ "
                          f"from the standard:\n" + "\n".join(failures))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_special_cases_complex(device, name, dtype):
    rows = table(name, dtype, COMPLEX_CASES)
    failures = run_complex_cases(device, name, dtype, rows)
    assert not failures, (f"{name} {dtype} on {device}: {len(failures)} of {len(rows)} complex special cases "
                          f"differ from the standard:\n" + "\n".join(failures))


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
