#!/usr/bin/env python3
"""Differential tests of anydev against NumPy, on every device.

Generates cases deterministically from a seed (every elementwise function,
comparisons across integer dtypes, casts between all dtypes, reductions,
scans, sorting, searching, slicing, repeat, linspace, clip, the set
functions, diff, take_along_axis, integer-array and mask indexing,
writes through slices and masks, the linalg functions built from them),
at
sizes around
the backends' limits and with special values; runs them on each device
through the driver binary `anydev-diff` (crates/anydev-diff), and compares
the results with NumPy's:

- integer, bool and comparison results, casts, sorting, indexing: exact;
- float results: within the ulp bound of the function (ULPS below), the
  sign of zero and NaN/inf included; sums and scans within the error of
  naive summation in the accumulation dtype;
- where NumPy raises, anydev must return an error, and every device the
  same kind of error.

References are computed in float64 from the exact inputs and rounded once
to the result's dtype (bf16 by this script, f16 by NumPy's direct
conversion), never through float32 twice. NumPy is the reference except
for anydev's documented differences, each marked "Documented difference"
where its cases are generated.

Usage: scripts/diff_numpy.py [--device cpu:0 ...] [--seed N] [--driver PATH]
(run it with the python of scripts/python-env.sh; see docs/testing.md).
Prints one line per failing case and `N passed, N failed`; exits 1 on
any failure.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------- dtypes

DTYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
# bf16 values are carried in float32 arrays (every bf16 is a float32).
CARRIER = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}
COMPLEX = ["c64", "c128"]
COMPONENT = {"c64": "f32", "c128": "f64"}
BITS = {"f16": (np.uint16, 16), "bf16": (np.uint16, 16), "f32": (np.uint32, 32), "f64": (np.uint64, 64)}


def bf16_bits(x):
    """The bf16 bit patterns of float32 values, rounded to nearest even."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0) | ((b >> 16).astype(np.uint16) & 0x8000), rounded)


def to_f32_odd(x):
    """float64 values rounded to float32 by round-to-odd: rounding that once
    more to a format of at most 22 bits rounds the exact value correctly."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
        inexact = np.isfinite(x) & (r.astype(np.float64) != x)
        # Truncate toward zero, then make the last bit odd.
        toward = np.abs(r.astype(np.float64)) > np.abs(x)
        r = np.where(inexact & toward, np.nextafter(r, np.float32(0)), r)
    bits = r.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    return bits.view(np.float32)


def round_to(dtype, x):
    """Exact (float64) values rounded once to `dtype`'s carrier."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "bf16":
            return (bf16_bits(to_f32_odd(x)).astype(np.uint32) << 16).view(np.float32)
        return x.astype(CARRIER[dtype])


# ---------------------------------------------------------------- wire format


def encode(dtype, a):
    a = np.array(a, CARRIER[dtype], order="C")
    raw = bf16_bits(a).astype("<u2") if dtype == "bf16" else a.astype(a.dtype.newbyteorder("<"))
    return {"dtype": dtype, "shape": list(a.shape), "hex": raw.tobytes().hex()}


def decode(d):
    dtype, raw = d["dtype"], bytes.fromhex(d["hex"])
    if dtype == "bf16":
        a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        a = np.frombuffer(raw, np.dtype(CARRIER[dtype]).newbyteorder("<")).astype(CARRIER[dtype])
    return dtype, a.reshape(d["shape"])


# ---------------------------------------------------------------- values


def specials(dtype):
    """Edge values of `dtype`: extremes, zeros, subnormals, infinities, NaN."""
    if dtype == "bool":
        return [False, True]
    if dtype in INTS:
        info = np.iinfo(CARRIER[dtype])
        return sorted({info.min, info.min + 1, -1 if info.min else 2, 0, 1, info.max - 1, info.max})
    if dtype == "bf16":
        tiny, sub, big = 2.0**-126, 2.0**-133, float(np.float32(3.3895314e38))
    else:
        fi = np.finfo(CARRIER[dtype])
        tiny, sub, big = float(fi.smallest_normal), float(fi.smallest_subnormal), float(fi.max)
    vals = [0.0, 1.0, 0.5, 1.5, 2.5, 2.0, 3.0, sub, 3 * sub, tiny - sub, tiny, big, math.inf, math.nan, 1e-8, 0.1,
            7.25, 1e10, 1e30]
    return vals + [-v for v in vals]


def fits(dtype, *values):
    """Whether every integer in `values` is within the integer dtype's range."""
    info = np.iinfo(CARRIER[dtype])
    return all(info.min <= v <= info.max for v in values)


def sample(rng, dtype, n, lo=None, hi=None):
    """`n` values of `dtype`: the special values, then random ones over the
    whole range (floats: random sign and binade), or within [lo, hi]."""
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in INTS:
        info = np.iinfo(CARRIER[dtype])
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
        vals = rng.integers(lo, hi, n, dtype=CARRIER[dtype], endpoint=True)
        spec = [v for v in specials(dtype) if lo <= v <= hi]
        k = min(n, len(spec))
        vals[:k] = spec[:k]
        return rng.permutation(vals)
    if lo is not None:
        vals = rng.uniform(lo, hi, n)
    else:
        emax = {"f16": 15, "bf16": 127, "f32": 127, "f64": 1023}[dtype]
        mant = rng.uniform(1, 2, n) * rng.choice([-1.0, 1.0], n)
        vals = np.ldexp(mant, rng.integers(-emax - 10, emax + 1, n))
        spec = specials(dtype)
        k = min(n, len(spec))
        vals[:k] = spec[:k]
        vals = rng.permutation(vals)
    return round_to(dtype, vals)


def exact(a):
    """Values as float64 (exact for floats and for integers below 2^53)."""
    return np.asarray(a).astype(np.float64)


# ---------------------------------------------------------------- cases


class Case:
    """One op call; `expect` is (dtype, array), or None where NumPy raises."""

    def __init__(self, op, args, expect, kw=None, tol=0, check="ulps", note=""):
        self.op, self.args, self.expect, self.kw = op, args, expect, kw or {}
        self.tol, self.check, self.note = tol, check, note

    def wire(self, case_id, device):
        return {
            "id": case_id, "device": device, "op": self.op,
            "args": [encode(d, a) for d, a in self.args], "kw": self.kw,
        }

    def describe(self):
        shapes = ",".join(f"{d}{list(np.shape(a))}" for d, a in self.args)
        kw = "" if not self.kw else " " + json.dumps(self.kw, separators=(",", ":"))[:120]
        return f"{self.op}({shapes}){kw}{self.note}"


def reference(fn, dtype_out, *exact_args):
    """`fn` of the exact float64 inputs, rounded once to `dtype_out`."""
    with np.errstate(all="ignore"):
        return dtype_out, round_to(dtype_out, fn(*exact_args))


def raises(fn, *args):
    """NumPy's result, or None where NumPy raises."""
    with np.errstate(all="ignore"):
        try:
            return fn(*args)
        except (ValueError, TypeError, IndexError, OverflowError, MemoryError, np.exceptions.AxisError):
            return None


# Ulp bounds of the float functions (f32 ulps; f16 and bf16 get 1 ulp of
# their own where the f32 bound is at most 2, as docs/accuracy.md states).
# These are the "aim" column of BOUNDS in
# crates/anydev-testing/src/cases/accuracy.rs: what std's f32 functions
# achieve and every backend should promise (issue 21). f64 results are
# judged against NumPy's own float64 function, so they get one ulp more.
ULPS = {
    "acos": 1, "acosh": 1, "asin": 1, "asinh": 1, "atan": 1, "atanh": 1, "cos": 1, "cosh": 1,
    "exp": 1, "expm1": 1, "log": 1, "log1p": 1, "log2": 1, "log10": 2, "sin": 1, "sinh": 1,
    "tan": 1, "tanh": 2, "sqrt": 0, "reciprocal": 0, "square": 0, "divide": 0, "atan2": 1,
    "hypot": 1, "logaddexp": 1, "pow": 1, "remainder": 0,
}


def ulps_for(op, dtype):
    bound = ULPS.get(op, 0)
    if dtype in ("f16", "bf16"):
        return 1 if 0 < bound <= 2 else bound
    if dtype == "f64" and bound:
        return bound + 1
    return bound


UNARY_FLOAT = {
    "abs": np.abs, "negative": np.negative, "positive": np.positive, "ceil": np.ceil, "floor": np.floor,
    "round": np.round, "trunc": np.trunc, "sign": np.sign, "square": np.square, "sqrt": np.sqrt,
    "reciprocal": np.reciprocal, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh,
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "sinh": np.sinh, "tan": np.tan, "tanh": np.tanh,
}
UNARY_PREDICATE = {"isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "signbit": np.signbit}
UNARY_INT = {"abs": np.abs, "negative": np.negative, "bitwise_invert": np.invert, "square": np.square,
             "sign": np.sign}
BINARY_FLOAT = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "copysign": np.copysign, "atan2": np.arctan2,
    "hypot": np.hypot, "logaddexp": np.logaddexp, "pow": np.power, "remainder": np.remainder,
    "floor_divide": np.floor_divide,
}
BINARY_INT = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "floor_divide": np.floor_divide, "remainder": np.remainder,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}


def elementwise(rng, n):
    for dtype in FLOATS:
        for op, fn in UNARY_FLOAT.items():
            x = sample(rng, dtype, n)
            yield Case(op, [(dtype, x)], reference(fn, dtype, exact(x)), tol=ulps_for(op, dtype))
        for op, fn in UNARY_PREDICATE.items():
            x = sample(rng, dtype, n)
            yield Case(op, [(dtype, x)], ("bool", fn(exact(x))))
        for op, fn in BINARY_FLOAT.items():
            x, y = sample(rng, dtype, n), sample(rng, dtype, n)
            if op == "pow":  # also moderate values, where pow neither overflows nor saturates
                x[: n // 2] = sample(rng, dtype, n // 2, 0.001, 100)
                y[: n // 2] = np.round(sample(rng, dtype, n // 2, -20, 20), 0 if dtype in ("f16", "bf16") else 3)
                y = round_to(dtype, y)
            yield Case(op, [(dtype, x), (dtype, y)], reference(fn, dtype, exact(x), exact(y)),
                       tol=ulps_for(op, dtype), check="nosign" if op in ("maximum", "minimum") else "ulps")
        x, y = sample(rng, dtype, n), sample(rng, dtype, n)
        y[: n // 4] = x[: n // 4]
        want = bf16_nextafter(x, y) if dtype == "bf16" else np.nextafter(x, y)  # NumPy has no bf16
        yield Case("nextafter", [(dtype, x), (dtype, y)], (dtype, want))
        for op, fn in COMPARE.items():
            x = sample(rng, dtype, n)
            y = np.where(rng.random(n) < 0.3, x, sample(rng, dtype, n))
            yield Case(op, [(dtype, x), (dtype, y)], ("bool", fn(exact(x), exact(y))))
    for dtype in INTS:
        bits = np.iinfo(CARRIER[dtype]).bits
        for op, fn in UNARY_INT.items():
            x = sample(rng, dtype, n)
            with np.errstate(all="ignore"):
                yield Case(op, [(dtype, x)], (dtype, fn(x)))
        for op, fn in BINARY_INT.items():
            x, y = sample(rng, dtype, n), sample(rng, dtype, n)
            with np.errstate(all="ignore"):
                yield Case(op, [(dtype, x), (dtype, y)], (dtype, fn(x, y)))
        for op, fn in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
            x, y = sample(rng, dtype, n), sample(rng, dtype, n, 0, bits + 2)
            yield Case(op, [(dtype, x), (dtype, y)], (dtype, fn(x, y)))
        x, y = sample(rng, dtype, n, 0 if dtype[0] == "u" else -9, 9), sample(rng, dtype, n, 0, 8)
        with np.errstate(all="ignore"):
            yield Case("pow", [(dtype, x), (dtype, y)], (dtype, np.power(x, y)))
    for op, fn in LOGICAL.items():
        x, y = sample(rng, "bool", n), sample(rng, "bool", n)
        yield Case(op, [("bool", x), ("bool", y)], ("bool", fn(x, y)))
    x = sample(rng, "bool", n)
    yield Case("logical_not", [("bool", x)], ("bool", ~x))


def special_pairs():
    """Every pair of special values, for every binary function: where the
    IEEE and C99 special cases live (0/0, inf - inf, pow(-inf, 0.5), ...)."""
    for dtype in FLOATS + INTS:
        vals = np.array(specials(dtype), np.float64 if dtype in FLOATS else CARRIER[dtype])
        x, y = (np.repeat(vals, len(vals)), np.tile(vals, len(vals)))
        if dtype in FLOATS:
            x, y = round_to(dtype, x), round_to(dtype, y)
            for op, fn in BINARY_FLOAT.items():
                yield Case(op, [(dtype, x), (dtype, y)], reference(fn, dtype, exact(x), exact(y)),
                           tol=ulps_for(op, dtype), check="nosign" if op in ("maximum", "minimum") else "ulps",
                           note=" (special pairs)")
        else:
            for op, fn in BINARY_INT.items():
                with np.errstate(all="ignore"):
                    yield Case(op, [(dtype, x), (dtype, y)], (dtype, fn(x, y)), note=" (special pairs)")


def comparisons(rng, n):
    """Every pair of integer dtypes: comparisons are exact whatever the
    promotion of arithmetic (int64 against uint64 included)."""
    for a in INTS:
        for b in INTS:
            x, y = sample(rng, a, n), sample(rng, b, n)
            # Neighbouring values across the pair's ranges.
            edge = [int(v) for v in specials(a)]
            k = min(n, len(edge))
            y[:k] = [min(max(v + 1, int(np.iinfo(CARRIER[b]).min)), int(np.iinfo(CARRIER[b]).max)) for v in edge[:k]]
            xs, ys = [int(v) for v in x], [int(v) for v in y]
            for op in ("equal", "less", "greater_equal"):
                cmp = {"equal": int.__eq__, "less": int.__lt__, "greater_equal": int.__ge__}[op]
                want = np.array([cmp(p, q) for p, q in zip(xs, ys)], bool)
                yield Case(op, [(a, x), (b, y)], ("bool", want))
    x = np.array([2**63 - 1, -1, 2**62], np.int64)
    y = np.array([2**63, 2**64 - 1, 2**62], np.uint64)
    yield Case("equal", [("i64", x), ("u64", y)], ("bool", np.array([False, False, True])),
               note=" (issue 21: 2^63-1 == 2^63)")


def cast_reference(src, dst, x):
    """`x` of dtype `src` converted to `dst`, each value rounded once.

    Documented difference: floats to integers truncate toward zero,
    saturate, and NaN becomes 0: anydev's choice where the standard leaves out-of-range
    conversions undefined (NumPy's result there is platform-dependent);
    see Array::astype in crates/anydev-array/src/elementwise.rs."""
    if dst == "bool":
        return x.astype(np.float64) != 0 if src in FLOATS else x != 0
    if dst in INTS:
        if src in FLOATS:
            info = np.iinfo(CARRIER[dst])
            v = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=math.inf, neginf=-math.inf)
            out = [info.max if t >= info.max else info.min if t <= info.min else int(t) for t in v.ravel()]
            return np.array(out, CARRIER[dst]).reshape(x.shape)
        return x.astype(CARRIER[dst])  # integers wrap, bool is 0 or 1
    if src in INTS and np.iinfo(CARRIER[src]).bits == 64:
        # Beyond 2^53 the int -> float64 step rounds: go through round-to-odd instead.
        return np.array([int_to_float(int(v), dst) for v in x.ravel()], CARRIER[dst]).reshape(x.shape)
    return round_to(dst, x.astype(np.float64))


def int_to_float(v, dst):
    """A 64-bit integer rounded once to the float dtype `dst`: through
    float64 rounded to odd where float64 cannot hold it."""
    f = float(v)
    if int(f) != v and dst != "f64":
        if abs(int(f)) > abs(v):
            f = math.nextafter(f, 0.0)
        f = struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", f))[0] | 1))[0]
    return round_to(dst, np.array([f]))[0]


def casts(rng, n):
    for src in DTYPES:
        x = sample(rng, src, n)
        for dst in DTYPES:
            if dst != src:
                yield Case("astype", [(src, x)], (dst, cast_reference(src, dst, x)), kw={"dtype": dst})
    # Issue 21: 1 + 2^-11 + 2^-40 rounds to 1 + 2^-10 (f16) when rounded once.
    x = np.array([1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8 + 2.0**-40, 65519.99, 65520.0, 2.0**-25, 2.0**-25 + 2.0**-60])
    for dst in ("f16", "bf16", "f32"):
        yield Case("astype", [("f64", x)], (dst, round_to(dst, x)), kw={"dtype": dst}, note=" (rounding once)")


def sum_bound(dtype, terms, count):
    """Error bound of summing `count` terms of absolute sum `terms` in the
    accumulation dtype (f32 at least), plus the final rounding."""
    u = 2.0**-53 if dtype == "f64" else 2.0**-24
    return count * u * terms


def reductions(rng, sizes):
    for n in sizes:
        for dtype in ("i8", "u8", "i32", "i64", "u64", "bool"):
            x = sample(rng, dtype, n)
            acc = {"bool": np.int64, "u8": np.uint64, "u64": np.uint64}.get(dtype, np.int64)
            out = "u64" if acc is np.uint64 else "i64"
            with np.errstate(all="ignore"):
                yield Case("sum", [(dtype, x)], (out, np.sum(x, dtype=acc)))
                yield Case("cumulative_sum", [(dtype, x)], (out, np.cumulative_sum(x, dtype=acc)), kw={"axis": 0})
            if dtype != "bool":
                yield Case("max", [(dtype, x)], (dtype, raises(np.max, x)) if n else None)
                yield Case("min", [(dtype, x)], (dtype, raises(np.min, x)) if n else None)
                yield Case("argmax", [(dtype, x)], ("i64", np.argmax(x)) if n else None)
        for dtype in FLOATS:
            x = sample(rng, dtype, n, -4, 4)
            v = exact(x)
            terms = float(np.sum(np.abs(v)))
            yield Case("sum", [(dtype, x)], (dtype, round_to(dtype, math.fsum(v))), tol=sum_bound(dtype, terms, n),
                       check="abs")
            if n:
                yield Case("mean", [(dtype, x)], (dtype, round_to(dtype, math.fsum(v) / n)),
                           tol=sum_bound(dtype, terms, n) / n, check="abs")
                mean = math.fsum(v) / n
                var = math.fsum((v - mean) ** 2) / n
                tol = sum_bound(dtype, float(np.sum((v - mean) ** 2)) + terms * 8, n) / n
                yield Case("var", [(dtype, x)], (dtype, round_to(dtype, var)), tol=tol, check="abs")
                yield Case("std", [(dtype, x)], (dtype, round_to(dtype, math.sqrt(var))),
                           tol=math.sqrt(tol) + tol, check="abs")
            prefix = np.array([math.fsum(v[: i + 1]) for i in range(n)]) if n <= 1000 else np.cumsum(v)
            bound = sum_bound(dtype, np.cumsum(np.abs(v)), np.arange(1, n + 1)) if n else 0
            yield Case("cumulative_sum", [(dtype, x)], (dtype, round_to(dtype, prefix)), kw={"axis": 0},
                       tol=bound, check="abs")
            yield Case("max", [(dtype, x)], (dtype, raises(np.max, x)) if n else None)
            yield Case("min", [(dtype, x)], (dtype, raises(np.min, x)) if n else None)
    # Special values through reductions: NaN propagates, inf - inf is NaN.
    for dtype in FLOATS:
        for vals in ([1.0, math.nan, 2.0], [math.inf, -math.inf], [math.inf, 1.0], [-0.0, -0.0]):
            x = round_to(dtype, np.array(vals))
            v = exact(x)
            for op, fn in (("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod), ("mean", np.mean)):
                yield Case(op, [(dtype, x)], reference(fn, dtype, v))
    # Issue 21: f16 mean of more than 65,504 elements, and of two large values.
    for vals in (np.full(70000, 0.5), np.full(70000, 1.0), np.array([60000.0, 60000.0])):
        x = vals.astype(np.float16)
        yield Case("mean", [("f16", x)], ("f16", round_to("f16", np.mean(vals))), note=" (issue 21: f16 mean)")
    x = np.full(70000, 1.0).astype(np.float16)
    yield Case("var", [("f16", x)], ("f16", np.float16(0.0)), note=" (issue 21: f16 var)")


def sorting(rng, sizes):
    for n in sizes:
        small = ("u64", "i8", "u32", "bf16", "bool") if n <= 257 else ()
        for dtype in ("i32", "u8", "i64", "f32", "f64", "f16") + small:
            x = sample(rng, dtype, n)
            if dtype in ("i32", "u8") and n > 100:  # many duplicates
                x = (x % 97).astype(CARRIER[dtype])
            # NumPy's own float16 sort misplaces -0 among subnormals: sort the float64 values.
            v = exact(x) if dtype in FLOATS else x
            yield Case("sort", [(dtype, x)], (dtype, np.sort(v)), kw={"axis": 0}, check="sort")
            yield Case("argsort", [(dtype, x)], ("i64", np.argsort(v, stable=True)), kw={"axis": 0}, check="argsort")
            finite = x[~np.isnan(x)] if dtype in FLOATS else x
            yield Case("sort", [(dtype, finite)], (dtype, np.sort(v[~np.isnan(v)] if dtype in FLOATS else v)[::-1]),
                       kw={"axis": 0, "descending": True}, check="sort")
            yield Case("argsort", [(dtype, finite)], ("i64", np.argsort(finite, stable=True)[::-1]),
                       kw={"axis": 0, "descending": True}, check="argsort")
            yield Case("unique_values", [(dtype, x)], (dtype, np.unique_values(v)), check="unique")
            hay = np.sort(sample(rng, dtype, max(n // 3, 1)).astype(np.float64 if dtype in FLOATS else x.dtype))
            for side in ("left", "right"):
                yield Case("searchsorted", [(dtype, hay.astype(x.dtype)), (dtype, x)],
                           ("i64", np.searchsorted(hay, v, side=side)), kw={"side": side})


EXTREMES = [-(2**63), 2**63 - 1, -(2**63) + 1, 2**62]


def slicing(rng):
    x = np.arange(10, dtype=np.int32)
    starts = [None, 0, 1, 3, 9, -1, -10, 10, 11, -11] + EXTREMES
    steps = [1, 2, 3, -1, -2, 9, 10, -10] + EXTREMES
    for step in steps:
        for start in starts:
            for stop in (None, 5, -(2**63), 2**63 - 1):
                want = x[slice(start, stop, step)]
                yield Case("slice", [("i32", x)], ("i32", want), kw={"index": [[start, stop, step]]})
    # Slicing a slice: the view's strides and offset must compose.
    m = np.arange(60, dtype=np.int16).reshape(6, 10)
    for step in (2**63 - 1, -(2**63), 3, -4):
        yield Case("slice", [("i16", m)], ("i16", m[1:, ::step]), kw={"index": [[1, None, 1], [None, None, step]]})
    for index in ([10], [-11], [2**63 - 1], [-(2**63)]):
        yield Case("slice", [("i32", x)], None, kw={"index": index})


def manipulation(rng):
    x = np.array([1, 2, 3], np.int8)
    for r in (0, 1, 4):
        yield Case("repeat", [("i8", x)], ("i8", np.repeat(x, r)), kw={"repeats": r})
    yield Case("repeat", [("i8", x)], ("i8", np.repeat(x, [0, 2, 1])), kw={"repeats": [0, 2, 1]})
    # Issue 21: huge counts are clean errors (NumPy raises too), never a panic.
    for r in (2**64 - 1, 2**62, 2**40):
        yield Case("repeat", [("i8", x)], None, kw={"repeats": r})
    for dtype in ("f32", "f64", "f16", "i32", "i8", "u8"):
        for start, stop, num, endpoint in ((0, 1, 5, True), (-3, 7, 11, False), (-2.5, 2.5, 6, True),
                                           (1e6, -1e6, 7, True), (0, 1, 0, True), (5, 5, 1, False), (-7, 3, 4, True),
                                           (0, 300, 4, True)):
            want = raises(np.linspace, start, stop, num, endpoint, False, CARRIER[dtype])
            if dtype not in FLOATS and not fits(dtype, math.floor(start), math.floor(stop)):
                # Documented difference: an end that does not fit the integer dtype is an error
                # (NumPy wraps silently).
                want = None
            kw = {"start": start, "stop": stop, "num": num, "endpoint": endpoint, "dtype": dtype}
            yield Case("linspace", [], (dtype, want), kw=kw, tol=1 if dtype in FLOATS else 0)
    for dtype in ("i8", "u8", "i64", "f32", "f16"):
        x = sample(rng, dtype, 64)
        for lo, hi in ((1, 50), (-5, 5), (-1000, 1000), (None, 3), (2, None)):
            want = np.clip(x, lo, hi) if dtype in FLOATS or dtype[0] == "i" or (lo or 0) >= 0 else None
            if want is None:
                continue
            kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
            yield Case("clip", [(dtype, x)], (dtype, np.asarray(want, CARRIER[dtype])), kw=kw)
    # Documented difference: float bounds on an integer array are an error, as in array-api-strict
    # (NumPy returns floats; the standard keeps x's dtype).
    yield Case("clip", [("i8", sample(rng, "i8", 64))], None, kw={"min": 1.5, "max": 50.5},
               note=" (issue 21: int8 with float bounds)")


def limits(rng, sizes):
    """Elementwise and take at sizes around the dispatch limits."""
    for n in sizes:
        x, y = sample(rng, "f32", n, -100, 100), sample(rng, "f32", n, -100, 100)
        yield Case("add", [("f32", x), ("f32", y)], reference(np.add, "f32", exact(x), exact(y)))
        i = sample(rng, "i32", n)
        yield Case("negative", [("i32", i)], ("i32", np.negative(i)))
        idx = rng.integers(0, max(n, 1), n, dtype=np.int64) if n else np.zeros(0, np.int64)
        if n:
            yield Case("take", [("i32", i), ("i64", idx)], ("i32", np.take(i, idx)), kw={"axis": 0})
    x = np.zeros((), np.float32) + np.float32(2.5)
    yield Case("sqrt", [("f32", x)], reference(np.sqrt, "f32", 2.5))
    yield Case("sum", [("f32", x)], ("f32", x))
    yield Case("add", [("f32", np.zeros((3, 0), np.float32)), ("f32", np.zeros((3, 0), np.float32))],
               ("f32", np.zeros((3, 0), np.float32)))
    yield Case("add", [("f32", np.zeros(3, np.float32)), ("f32", np.zeros(4, np.float32))], None)
    yield Case("sum", [("f32", np.zeros((2, 3), np.float32))], None, kw={"axes": [2]})
    yield Case("take", [("i32", np.arange(5, dtype=np.int32)), ("i64", np.array([5]))], None, kw={"axis": 0})
    yield Case("bitwise_and", [("f32", np.zeros(3, np.float32)), ("f32", np.zeros(3, np.float32))], None)


def np_index(items):
    """A driver index (integers, [start, stop, step]) as a NumPy index."""
    return tuple(slice(*i) if isinstance(i, list) else i for i in items)


def promotion(rng, n):
    """Mixed dtypes of one kind, whose result dtype the standard defines."""
    pairs = [(a, b) for a in INTS for b in INTS if a != b and {a, b} != {"i64", "u64"}]
    pairs += [(a, b) for a in ("f16", "f32", "f64") for b in ("f16", "f32", "f64") if a != b]
    for a, b in pairs:
        x, y = sample(rng, a, n), sample(rng, b, n)
        out = np.result_type(CARRIER[a], CARRIER[b])
        out = next(d for d in DTYPES if CARRIER[d] == out and d != "bf16")
        for op in ("add", "multiply", "maximum"):
            if a in INTS:
                with np.errstate(all="ignore"):
                    want = (out, getattr(np, op)(x, y))
            else:
                want = reference(getattr(np, op), out, exact(x), exact(y))
            yield Case(op, [(a, x), (b, y)], want, check="nosign" if op == "maximum" else "ulps")
        yield Case("less", [(a, x), (b, y)], ("bool", np.less(x, y)))
    # Broadcasting, 0-d operands and where.
    x, y = sample(rng, "f32", 12).reshape(3, 4), sample(rng, "f32", 4)
    z = np.array(sample(rng, "f32", 1)[0], np.float32).reshape(())
    yield Case("add", [("f32", x), ("f32", y)], reference(np.add, "f32", exact(x), exact(y)))
    yield Case("subtract", [("f32", z), ("f32", x)], reference(np.subtract, "f32", exact(z), exact(x)))
    yield Case("multiply", [("f32", z), ("f32", z)], reference(np.multiply, "f32", exact(z), exact(z)))
    c = sample(rng, "bool", 12).reshape(3, 4)
    yield Case("where", [("bool", c), ("f32", x), ("f32", y)], ("f32", np.where(c, x, y)))
    yield Case("add", [("f32", x), ("f32", sample(rng, "f32", 3))], None)


# Views the ops see: reversed, strided, offset, and extreme steps that leave
# one element; each with the shape of input it applies to.
VIEWS = [
    ((40,), [[None, None, -1]]), ((40,), [[1, None, 3]]), ((40,), [[-2, 3, -5]]),
    ((40,), [[None, None, 2**63 - 1]]), ((40,), [[5, None, -(2**63)]]),
    ((6, 7), [[None, None, -2], [3, None, -1]]), ((6, 7), [[1, 5, 1], 2]), ((6, 7), [[None, None, 2**63 - 1], [1, 6, 2]]),
]


def views(rng):
    for shape, index in VIEWS:
        for dtype in ("f32", "i16", "f16"):
            x = sample(rng, dtype, int(np.prod(shape)), -50, 50).reshape(shape)
            v = x[np_index(index)]
            kw = {"view": index}
            yield Case("negative", [(dtype, x)], (dtype, -v), kw=kw)
            yield Case("astype", [(dtype, x)], ("f64", v.astype(np.float64)), kw={**kw, "dtype": "f64"})
            yield Case("add", [(dtype, x), (dtype, np.ascontiguousarray(v))], (dtype, v + v), kw=kw)
            acc = "i64" if dtype in INTS else dtype
            want = np.sum(v.astype(np.float64), axis=-1) if v.ndim else v.astype(np.float64)
            if v.ndim:
                yield Case("sum", [(dtype, x)], (acc, round_to(acc, want) if acc in FLOATS else want.astype(np.int64)),
                           kw={**kw, "axes": [-1]}, tol=1e-3 * 40, check="abs")
                cs = np.cumsum(v.astype(np.float64), axis=-1)
                yield Case("cumulative_sum", [(dtype, x)],
                           (acc, round_to(acc, cs) if acc in FLOATS else cs.astype(np.int64)),
                           kw={**kw, "axis": -1}, tol=1e-3 * 40, check="abs")
                yield Case("sort", [(dtype, x)], (dtype, np.sort(v, axis=-1)), kw={**kw, "axis": -1}, check="sort")
                yield Case("max", [(dtype, x)], (dtype, np.max(v, axis=-1)) if v.shape[-1] else None,
                           kw={**kw, "axes": [-1]})


def axes_reductions(rng):
    """Reductions over some axes of 3-d arrays, with keepdims, and scans
    with their initial zero."""
    x = sample(rng, "i32", 60, -1000, 1000).reshape(3, 4, 5)
    f = sample(rng, "f64", 60, -10, 10).reshape(3, 4, 5)
    p = sample(rng, "i32", 60, -2, 2).reshape(3, 4, 5)
    for axes in ([0], [1], [2], [0, 2], [-1, -3], [], [0, 1, 2]):
        for keepdims in (False, True):
            kw = {"axes": axes, "keepdims": keepdims}
            t = tuple(axes)
            yield Case("sum", [("i32", x)], ("i64", np.sum(x, axis=t, keepdims=keepdims, dtype=np.int64)), kw=kw)
            yield Case("prod", [("i32", p)], ("i64", np.prod(p, axis=t, keepdims=keepdims, dtype=np.int64)), kw=kw)
            yield Case("min", [("i32", x)], ("i32", np.min(x, axis=t, keepdims=keepdims)), kw=kw)
            yield Case("mean", [("f64", f)], ("f64", np.mean(f, axis=t, keepdims=keepdims)), kw=kw, tol=1e-12,
                       check="abs")
            yield Case("var", [("f64", f)], ("f64", np.var(f, axis=t, keepdims=keepdims, ddof=1)),
                       kw={**kw, "correction": 1.0}, tol=1e-11, check="abs")
    for axis in (0, 1, -1):
        for initial in (False, True):
            yield Case("cumulative_sum", [("i32", x)],
                       ("i64", np.cumulative_sum(x, axis=axis, include_initial=initial, dtype=np.int64)),
                       kw={"axis": axis, "include_initial": initial})
        yield Case("argmin", [("i32", x)], ("i64", np.argmin(x, axis=axis)), kw={"axis": axis})
    yield Case("cumulative_sum", [("i32", x)], None, kw={})  # more than one axis needs an axis
    yield Case("sum", [("i32", x)], None, kw={"axes": [0, 0]})


def more_reductions(rng):
    """Scans and reductions beyond sums: products, logsumexp, NaN in arg
    reductions, and float functions of integers."""
    for dtype in ("i8", "i32", "u16", "i64"):
        x = sample(rng, dtype, 40, 0 if dtype[0] == "u" else -3, 3)
        acc = "u64" if dtype[0] == "u" else "i64"
        with np.errstate(all="ignore"):
            yield Case("cumulative_prod", [(dtype, x)], (acc, np.cumulative_prod(x, dtype=CARRIER[acc])), kw={"axis": 0})
            yield Case("prod", [(dtype, x)], (acc, np.prod(x, dtype=CARRIER[acc])))
    for dtype in ("f32", "f64", "f16"):
        x = sample(rng, dtype, 40, -3, 3)
        v = exact(x)
        want = np.cumprod(v)
        yield Case("cumulative_prod", [(dtype, x)], (dtype, round_to(dtype, want)), kw={"axis": 0},
                   tol=np.abs(want) * 40 * 2.0**-23, check="abs")
        for vals in (v, np.array([-math.inf, -math.inf]), np.array([math.inf, 1.0]), np.array([1e30, 1e30, -5.0]),
                     np.array([math.nan, 0.0]), np.array([-1000.0, -1001.0])):
            vals = exact(round_to(dtype, vals))
            m = np.max(vals)
            with np.errstate(all="ignore"):
                lse = m + math.log(math.fsum(np.exp(vals - m))) if np.isfinite(m) else np.log(np.sum(np.exp(vals)))
            yield Case("logsumexp", [(dtype, round_to(dtype, vals))], (dtype, round_to(dtype, lse)), tol=2)
        y = x.copy()
        y[[3, 17]] = np.nan
        for op, fn in (("argmax", np.argmax), ("argmin", np.argmin), ("max", np.max), ("min", np.min)):
            out = "i64" if op.startswith("arg") else dtype
            yield Case(op, [(dtype, y)], (out, fn(y)), note=" (NaN propagates)")
    # Float functions of integers compute in a float dtype.
    for dtype in ("i8", "u8", "i16", "i32", "i64", "bool"):
        x = sample(rng, dtype, 16, 0 if dtype != "bool" else None, 100 if dtype != "bool" else None)
        for op, fn in (("sqrt", np.sqrt), ("divide", np.divide)):
            args = [x] if op == "sqrt" else [x, x[::-1].copy()]
            with np.errstate(all="ignore"):
                want = fn(*args)
            out = next(d for d in DTYPES if CARRIER[d] == want.dtype and d != "bf16")
            if dtype == "bool":
                # Documented difference: float functions refuse bool, as the
                # standard requires a float (NumPy computes in f16); see
                # Domain::Float in crates/anydev-array/src/elementwise.rs.
                yield Case(op, [(dtype, a) for a in args], None, note=" (documented: bool refused)")
                continue
            yield Case(op, [(dtype, a) for a in args], reference(fn, out, *[a.astype(np.float64) for a in args]))


def large_shapes(rng):
    """Many outputs, long strided axes and creation at sizes past 2^16."""
    n = 100_003
    for start, step in ((0, 1), (0.1, 0.1), (-5000.5, 0.25)):
        want = round_to("f32", start + np.arange(n) * step)
        yield Case("arange", [], ("f32", want), kw={"start": start, "stop": start + n * step - step / 2, "step": step,
                                                    "dtype": "f32"}, tol=1)
    yield Case("linspace", [], ("f32", round_to("f32", np.linspace(0, 1, n))),
               kw={"start": 0, "stop": 1, "num": n, "endpoint": True, "dtype": "f32"}, tol=1)
    tall = sample(rng, "i32", 70_000 * 3, -1000, 1000).reshape(70_000, 3)
    wide = np.ascontiguousarray(tall.T)
    for x, axis in ((tall, 0), (tall, 1), (wide, 1), (wide, 0)):
        kw = {"axes": [axis]}
        yield Case("sum", [("i32", x)], ("i64", np.sum(x, axis=axis, dtype=np.int64)), kw=kw)
        yield Case("max", [("i32", x)], ("i32", np.max(x, axis=axis)), kw=kw)
        yield Case("argmin", [("i32", x)], ("i64", np.argmin(x, axis=axis)), kw={"axis": axis})
        yield Case("cumulative_sum", [("i32", x)], ("i64", np.cumulative_sum(x, axis=axis, dtype=np.int64)),
                   kw={"axis": axis})
        yield Case("sort", [("i32", x)], ("i32", np.sort(x, axis=axis)), kw={"axis": axis})
    view = [[None, None, -1], [1, None, 1]]
    v = tall[np_index(view)]
    yield Case("sum", [("i32", tall)], ("i64", np.sum(v, axis=0, dtype=np.int64)), kw={"view": view, "axes": [0]})
    yield Case("sort", [("i32", tall)], ("i32", np.sort(v, axis=0)), kw={"view": view, "axis": 0})
    f = sample(rng, "f64", n)
    view = [[None, None, -3]]
    yield Case("astype", [("f64", f)], ("f16", round_to("f16", f[::-3])), kw={"view": view, "dtype": "f16"})
    yield Case("astype", [("f64", f)], ("bf16", round_to("bf16", f[::-3])), kw={"view": view, "dtype": "bf16"})


SCALARS = [0, 1, -1, 127, 128, 255, 256, -129, 2**31, 2**63 - 1, -(2**63), 2**64 - 1, 0.5, -2.5, 0.1, 65520.0,
           3.5e38, 1e300, 1e-45]


def scalars(rng):
    """Rust scalars as operands: they take the array's dtype (NumPy 2's
    weak scalars); an integer the dtype cannot hold is an error, except in
    comparisons, which are exact."""
    for dtype in INTS + ["f16", "f32", "f64"]:
        x = sample(rng, dtype, 16)
        for value in SCALARS:
            for op, first in (("add", False), ("subtract", True), ("multiply", False), ("maximum", False),
                              ("less", False), ("equal", False)):
                fn = getattr(np, op)
                want = raises(lambda: fn(value, x) if first else fn(x, value))
                if want is not None and want.dtype.kind == "f" and op not in ("less", "equal"):
                    out = next(d for d in DTYPES if CARRIER[d] == want.dtype and d != "bf16")
                    v = exact(round_to(out, value))
                    want = round_to(out, fn(v, exact(x)) if first else fn(exact(x), v))
                out = None if want is None else next(d for d in DTYPES if CARRIER[d] == want.dtype and d != "bf16")
                yield Case(op, [(dtype, x)], None if want is None else (out, want),
                           kw={"scalar": value, "scalar_first": first}, check="nosign")


def empty_axes(rng):
    """Reductions, scans and sorts where some axis is empty."""
    for shape in ((0, 3), (3, 0), (0,), (2, 0, 4)):
        x = np.zeros(shape, np.float32)
        for axis in range(len(shape)):
            kw = {"axes": [axis]}
            yield Case("sum", [("f32", x)], ("f32", np.sum(x, axis=axis)), kw=kw)
            yield Case("prod", [("f32", x)], ("f32", np.prod(x, axis=axis)), kw=kw)
            yield Case("mean", [("f32", x)], ("f32", np.full(np.sum(x, axis=axis).shape, np.nan, np.float32)), kw=kw)
            yield Case("max", [("f32", x)], ("f32", raises(np.max, x, axis)), kw=kw)
            yield Case("argmin", [("f32", x)], ("i64", raises(np.argmin, x, axis)), kw={"axis": axis})
            yield Case("any", [("f32", x)], ("bool", np.any(x, axis=axis)), kw=kw)
            yield Case("cumulative_sum", [("f32", x)], ("f32", np.cumulative_sum(x, axis=axis)), kw={"axis": axis})
            yield Case("sort", [("f32", x)], ("f32", np.sort(x, axis=axis)), kw={"axis": axis})
    hay, needles = np.zeros(0, np.int32), np.array([1, -5, 7], np.int32)
    yield Case("searchsorted", [("i32", hay), ("i32", needles)], ("i64", np.zeros(3, np.int64)))
    yield Case("searchsorted", [("i32", needles[:1]), ("i32", hay)], ("i64", np.zeros(0, np.int64)))
    yield Case("take", [("i32", needles), ("i64", np.zeros(0, np.int64))], ("i32", hay), kw={"axis": 0})
    yield Case("take", [("i32", hay), ("i64", np.zeros(1, np.int64))], None, kw={"axis": 0})


def bf16_nextafter(x, y):
    """nextafter on bf16 values (carried in float32), from the bit patterns."""
    bits = bf16_bits(x).astype(np.int32)
    up = (y > x) == (x >= 0)
    step = np.where(up, bits + 1, bits - 1)
    tiny = np.where(y > 0, 1, 0x8001)
    out = np.where(x == 0, tiny, step)
    out = (out.astype(np.uint32) << 16).view(np.float32)
    return np.where(np.isnan(x) | np.isnan(y), np.float32(np.nan), np.where(x == y, y, out))


def linalg_and_layout(rng):
    """matmul (tile edges, batches, vectors, empty), concat, roll, flip."""
    shapes = [((1, 1), (1, 1)), ((3, 5), (5, 2)), ((33, 65), (65, 17)), ((64, 64), (64, 64)), ((2, 3, 4), (4, 5)),
              ((5,), (5,)), ((5,), (5, 3)), ((3, 5), (5,)), ((0, 3), (3, 4)), ((3, 0), (0, 4)), ((2, 1, 3, 4), (5, 4, 2))]
    for dtype in ("f32", "f64", "f16", "i32"):
        for sa, sb in shapes:
            a = sample(rng, dtype, int(np.prod(sa)), -8, 8).reshape(sa)
            b = sample(rng, dtype, int(np.prod(sb)), -8, 8).reshape(sb)
            if dtype in INTS:
                yield Case("matmul", [(dtype, a), (dtype, b)], (dtype, np.matmul(a, b)))
                continue
            va, vb = exact(a), exact(b)
            k = sa[-1]
            tol = k * 2.0**-24 * np.matmul(np.abs(va), np.abs(vb))
            yield Case("matmul", [(dtype, a), (dtype, b)], (dtype, round_to(dtype, np.matmul(va, vb))), tol=tol,
                       check="abs")
        a = sample(rng, dtype, 30, -8, 8).reshape(5, 6)
        view = [[None, None, -1], [None, None, 2]]
        want = np.matmul(exact(a[np_index(view)]), exact(a[np_index(view)]).T)
        yield Case("matmul", [(dtype, a), (dtype, np.ascontiguousarray(a[np_index(view)].T))],
                   (dtype, round_to(dtype, want) if dtype in FLOATS else want.astype(CARRIER[dtype])),
                   kw={"view": view}, tol=3 * 2.0**-24 * np.abs(want) * 8, check="abs")
    yield Case("matmul", [("f32", np.zeros((3, 4), np.float32)), ("f32", np.zeros((5, 6), np.float32))], None)
    yield Case("matmul", [("f32", np.zeros((), np.float32)), ("f32", np.zeros((2, 2), np.float32))], None)
    a, b, c = sample(rng, "i16", 3), np.zeros(0, np.int16), sample(rng, "i16", 5)
    yield Case("concat", [("i16", a), ("i16", b), ("i16", c)], ("i16", np.concatenate([a, b, c])), kw={"axis": 0})
    m, n = sample(rng, "f32", 6).reshape(2, 3), sample(rng, "f32", 4).reshape(2, 2)
    yield Case("concat", [("f32", m), ("f32", n)], ("f32", np.concatenate([m, n], axis=1)), kw={"axis": -1})
    yield Case("concat", [("f32", m), ("f32", n)], None, kw={"axis": 0})
    yield Case("concat", [("f32", m), ("f32", n)], ("f32", np.concatenate([m, n], axis=None)))
    x = np.arange(10, dtype=np.int32)
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    for shift in (0, 3, -1, 10, 11, -23, 2**62, 2**63 - 1, -(2**63)):
        yield Case("roll", [("i32", x)], ("i32", np.roll(x, shift)), kw={"shifts": [shift], "axes": [0]})
        yield Case("roll", [("i32", m)], ("i32", np.roll(m, (shift, 1), axis=(0, 1))),
                   kw={"shifts": [shift, 1], "axes": [0, 1]})
    yield Case("roll", [("i32", np.zeros(0, np.int32))], ("i32", np.zeros(0, np.int32)), kw={"shifts": [3], "axes": [0]})
    for axes in (None, [0], [-1], [0, 1]):
        yield Case("flip", [("i32", m)], ("i32", np.flip(m, axis=None if axes is None else tuple(axes))),
                   kw={"axes": axes})


def narrow_dtypes(rng):
    """1- and 2-byte elements at odd sizes, offsets and strides: where a
    backend without 8- or 16-bit storage packs several elements per word."""
    for n in (3, 257, 65_537, 100_003):
        for dtype in ("i8", "u8", "bool", "f16", "bf16", "i16"):
            x, y = sample(rng, dtype, n), sample(rng, dtype, n)
            if dtype == "bool":
                yield Case("logical_xor", [(dtype, x), (dtype, y)], (dtype, x ^ y))
            elif dtype in INTS:
                with np.errstate(all="ignore"):
                    yield Case("add", [(dtype, x), (dtype, y)], (dtype, x + y))
            else:
                yield Case("add", [(dtype, x), (dtype, y)], reference(np.add, dtype, exact(x), exact(y)))
            yield Case("less", [(dtype, x), (dtype, y)], ("bool", exact(x) < exact(y)))
            yield Case("astype", [("f32", exact(x).astype(np.float32))], (dtype, cast_reference("f32", dtype,
                       exact(x).astype(np.float32))), kw={"dtype": dtype})
            for view in ([[1, None, 1]], [[2, None, 3]], [[None, None, -1]], [[n - 2, 0, -5]]):
                v = x[np_index(view)]
                yield Case("astype", [(dtype, x)], ("f64", exact(v)), kw={"view": view, "dtype": "f64"})
                if dtype != "bool":
                    yield Case("maximum", [(dtype, x), (dtype, np.ascontiguousarray(v))],
                               (dtype, np.maximum(v, v)), kw={"view": view}, check="nosign")
                yield Case("where", [("bool", (exact(x) > 0)), (dtype, x), (dtype, y)],
                           (dtype, np.where(exact(x) > 0, x, y)))


def huge(rng):
    """Reductions over 65,535 x 256 + 1 elements: one more than a 1-d
    dispatch of 256-thread workgroups reaches (small dtype, small output)."""
    n = 65_535 * 256 + 1
    x = (np.arange(n) % 251).astype(np.uint8)
    x[n - 1] = 255
    yield Case("sum", [("u8", x)], ("u64", np.sum(x, dtype=np.uint64)))
    yield Case("max", [("u8", x)], ("u8", np.max(x)))
    yield Case("argmax", [("u8", x)], ("i64", np.argmax(x)))
    yield Case("any", [("u8", x)], ("bool", np.any(x)), kw={"view": [[n - 2, None, 1]]})


# ---------------------------------------------------------------- checking


def ulp_distance(dtype, got, want):
    """Values of `dtype` between got and want (across zero: -min and +min
    are 2 apart), as uint64."""
    if dtype == "bf16":
        gb, wb = bf16_bits(got).astype(np.uint64), bf16_bits(want).astype(np.uint64)
        width = 16
    else:
        kind, width = BITS[dtype]
        gb = np.array(got, order="C").view(kind).astype(np.uint64)
        wb = np.array(want, order="C").view(kind).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(width - 1)
    gm, wm = gb & ~sign & np.uint64((1 << width) - 1), wb & ~sign & np.uint64((1 << width) - 1)
    same = (gb & sign) == (wb & sign)
    return np.where(same, np.where(gm > wm, gm - wm, wm - gm), gm + wm)


def compare(case, got_dtype, got, device=""):
    """None when `got` matches the case's expectation, else why not."""
    want_dtype, want = case.expect
    want = np.asarray(want, CARRIER[want_dtype])
    if got_dtype != want_dtype:
        return f"dtype {got_dtype}, expected {want_dtype}"
    if case.check == "argsort":
        # Ties may come in any order: compare the values the indices pick.
        x = case.args[0][1]
        if got.shape != want.shape or not np.array_equal(np.sort(got), np.arange(len(x))):
            return f"not a permutation: {got[:8]}"
        got, want, want_dtype = x[got], x[want], case.args[0][0]
    if case.check == "unique":
        # The standard leaves the order unspecified; NumPy 2.3 on returns
        # unique_values unsorted.
        got, want = np.sort(got), np.sort(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if got.size == 0:
        return None
    if case.check == "eigvals":
        got = match_eigenvalues(got, want)
    if want_dtype in COMPLEX:
        return compare_complex(case, want_dtype, got, want, device.startswith("wgpu:"))
    g, w = got.ravel(), want.ravel()
    if want_dtype not in FLOATS:
        bad = g != w
    else:
        gn, wn = np.isnan(g), np.isnan(w)
        special = (gn != wn) | (np.isinf(g) != np.isinf(w)) | (np.isinf(w) & (g != w))
        # Sorting and unique treat -0 and +0 as equal (either may come first or
        # stay); maximum and minimum of -0 and +0 may return either (the standard).
        zero_sign = (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)) & (case.check == "ulps")
        if case.check == "abs":
            tol = np.broadcast_to(np.asarray(case.tol, np.float64), want.shape).ravel()
            with np.errstate(invalid="ignore"):
                err = np.abs(g.astype(np.float64) - w.astype(np.float64))
                # One ulp of the result's own dtype for the final rounding.
                within = (err <= tol) | (ulp_distance(want_dtype, g, w) <= 1)
            bad = special | (~within & ~gn & ~np.isinf(w))
        else:
            dist = ulp_distance(want_dtype, g, w)
            bad = special | zero_sign | ((dist > case.tol) & ~(gn & wn))
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    where = np.unravel_index(i, want.shape) if want.ndim else ()
    inputs = ", ".join(f"{np.asarray(a).ravel()[i]!r}" for _, a in case.args
                       if np.size(a) == want.size and case.check in ("ulps", "nosign"))
    extra = f" at {list(map(int, where))}" + (f" (input {inputs})" if inputs else "")
    if want_dtype in FLOATS and case.check == "ulps" and not special[i]:
        extra += f" ({int(dist[i])} ulps, bound {case.tol})"
    return f"{int(bad.sum())} of {w.size} differ; first{extra}: expected {w[i]!r}, got {g[i]!r}"


# What wgpu promises for c64 (docs/accuracy.md): finite results of finite
# inputs within its measured bounds (at most 4 units of 2^-23 relative,
# pow aside); its special values (infinities, NaNs and zero signs in
# either component) are not promised to be NumPy's.
WGPU_C64_TOL = 4 * 2.0**-23


# Where asinh gives an infinity beside a NaN (asinh(NaN ± ∞j) is ±∞ + NaNj),
# and so asin, the standard leaves the infinity's sign unspecified; NumPy
# 2.2 and 2.4 pick different ones.
UNSIGNED_INFINITY = {"asin", "asinh"}


def compare_complex(case, dtype, got, want, wgpu=False):
    """Complex results: NaN, infinity and (with check "ulps") the sign of a
    zero must match per component; finite components within `case.tol`
    relative to |want| (complex functions are accurate normwise: a small
    component of a large result carries the large one's rounding). On
    wgpu only finite, non-zero results of finite inputs are compared."""
    g, w = got.ravel().astype(np.complex128), want.ravel().astype(np.complex128)
    bad = np.zeros(w.size, bool)
    tol = max(case.tol, WGPU_C64_TOL) if wgpu else case.tol
    scale = np.where(np.isfinite(np.abs(w)), np.abs(w), 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        for gp, wp, other in ((g.real, w.real, w.imag), (g.imag, w.imag, w.real)):
            gn, wn = np.isnan(gp), np.isnan(wp)
            sign_free = (case.op in UNSIGNED_INFINITY) & np.isnan(other)
            special = (gn != wn) | (np.isinf(gp) != np.isinf(wp)) | (np.isinf(wp) & (gp != wp) & ~sign_free)
            finite = ~gn & ~wn & ~np.isinf(wp)
            err = np.abs(gp - wp)
            off = finite & ~(err <= tol * np.maximum(scale, np.finfo(np.float64).tiny))
            # A zero's sign matters where both components are numbers.
            zero_sign = ((gp == 0) & (wp == 0) & (np.signbit(gp) != np.signbit(wp)) & ~np.isnan(w.real)
                         & ~np.isnan(w.imag) & (case.check == "ulps") & (not wgpu))
            bad |= special | off | zero_sign
    if wgpu:
        promised = np.isfinite(w) & (w != 0)
        for _, a in case.args:
            if np.size(a) == w.size and np.iscomplexobj(a):
                promised &= np.isfinite(np.asarray(a).ravel())
        bad &= promised
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    inputs = ", ".join(f"{np.asarray(a).ravel()[i]!r}" for _, a in case.args if np.size(a) == w.size)
    return f"{int(bad.sum())} of {w.size} differ; first at {i} (input {inputs}): expected {w[i]!r}, got {g[i]!r}"


# Complex functions: NumPy's, evaluated in complex128 on the exact inputs.
UNARY_COMPLEX = {
    "negative": np.negative, "square": np.square, "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1,
    "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "reciprocal": np.reciprocal, "sign": np.sign, "round": np.round, "conj": np.conjugate,
}
BINARY_COMPLEX = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                  "pow": np.power}
# Relative (normwise) error allowed: a few units of the component dtype.
COMPLEX_TOL = {"c64": 2e-6, "c128": 4e-15}
# Components of the special-value grid: every pair of these.
COMPLEX_PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-30, -1e30, math.inf, -math.inf, math.nan]


def complex_values(rng, dtype, n):
    """The special-value grid, then `n` random values of moderate and of
    widely spread magnitudes, rounded to `dtype`."""
    grid = np.array([complex(a, b) for a in COMPLEX_PARTS for b in COMPLEX_PARTS])
    mod = rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)
    spread = (np.ldexp(rng.uniform(-1, 1, n), rng.integers(-20, 20, n))
              + 1j * np.ldexp(rng.uniform(-1, 1, n), rng.integers(-20, 20, n)))
    return np.concatenate([grid, mod, spread]).astype(CARRIER[dtype])


def complex_cases(rng, n):
    """Complex64/complex128 elementwise functions, arithmetic, equality and
    reductions against NumPy, special values in either component included."""
    for dtype in COMPLEX:
        tol, real = COMPLEX_TOL[dtype], COMPONENT[dtype]
        x = complex_values(rng, dtype, n)
        v = x.astype(np.complex128)
        for op, fn in UNARY_COMPLEX.items():
            with np.errstate(all="ignore"):
                want = fn(v)
                finite = np.isfinite(v.real) & np.isfinite(v.imag)
                if op == "expm1":
                    # Documented difference: non-finite arguments give
                    # exp(z) - 1 (NumPy's formula gives expm1(inf+0j) = inf+nanj).
                    want = np.where(finite, want, np.exp(v) - 1)
                if op == "sign":
                    # Documented difference (the Array API standard): a NaN
                    # component gives NaN + NaN i even beside an infinity.
                    want = np.where(np.isnan(v.real) | np.isnan(v.imag), complex(np.nan, np.nan), want)
                if op == "acosh":
                    # The standard's acosh(±0 + NaN i) = NaN + pi/2 i (NumPy's
                    # depends on its version and C library).
                    want = np.where((v.real == 0) & np.isnan(v.imag), complex(np.nan, np.pi / 2), want)
                if op == "log1p":
                    # Documented difference: accurate near 0, where NumPy's
                    # log(1 + z) loses the digits of z. Reference: NumPy's in
                    # long double below |z| = 1/2, its series below 1e-3.
                    near0 = finite & (np.abs(v) < 0.5)
                    wide = np.log1p(v.astype(np.clongdouble)).astype(np.complex128)
                    want = np.where(near0, wide, want)
                    series = sum((-1) ** (k + 1) * v**k / k for k in range(6, 0, -1))
                    want = np.where(finite & (np.abs(v) < 1e-3), series, want)
            # Documented difference: log1p keeps the sign of a zero imaginary
            # part (NumPy's 1 + z turns -0 into +0).
            check = "nosign" if op == "log1p" else "ulps"
            yield Case(op, [(dtype, x)], (dtype, want.astype(CARRIER[dtype])), tol=tol, check=check)
        for op, fn in (("abs", np.abs), ("real", np.real), ("imag", np.imag)):
            yield Case(op, [(dtype, x)], reference(fn, real, v), tol=2 if op == "abs" else 0)
        for op, fn in UNARY_PREDICATE.items():
            if op != "signbit":
                yield Case(op, [(dtype, x)], ("bool", fn(v)))
        y = complex_values(rng, dtype, n)[::-1].copy()
        w = y.astype(np.complex128)
        for op, fn in BINARY_COMPLEX.items():
            a, b = (x, y) if op != "pow" else (x[-2 * n:], y[-2 * n:])
            with np.errstate(all="ignore"):
                want = fn(a.astype(np.complex128), b.astype(np.complex128)).astype(CARRIER[dtype])
            yield Case(op, [(dtype, a), (dtype, b)], (dtype, want), tol=tol if op != "pow" else 100 * tol)
        y2 = np.where(rng.random(x.size) < 0.3, x, y)
        for op, fn in (("equal", np.equal), ("not_equal", np.not_equal)):
            yield Case(op, [(dtype, x), (dtype, y2)], ("bool", fn(x, y2)))
        # Reductions of moderate values: error bounded by the sum of |terms|.
        for size in (0, 1, 7, 1000):
            z = (rng.uniform(-2, 2, size) + 1j * rng.uniform(-2, 2, size)).astype(CARRIER[dtype])
            zv = z.astype(np.complex128)
            bound = 8 * size * float(np.finfo(CARRIER[real]).eps) * max(1.0, float(np.sum(np.abs(zv))))
            rel = bound / max(float(np.abs(np.sum(zv))), 1e-300)
            yield Case("sum", [(dtype, z)], (dtype, np.sum(zv).astype(CARRIER[dtype])), tol=max(rel, tol))
            if size:
                yield Case("mean", [(dtype, z)], (dtype, np.mean(zv).astype(CARRIER[dtype])), tol=max(rel, tol))
            if size <= 7:
                yield Case("prod", [(dtype, z)], (dtype, np.prod(zv).astype(CARRIER[dtype])), tol=64 * tol)
                yield Case("cumulative_prod", [(dtype, z)], (dtype, np.cumprod(zv).astype(CARRIER[dtype])),
                           kw={"axis": 0}, tol=64 * tol)
            else:
                yield Case("cumulative_sum", [(dtype, z)], (dtype, np.cumsum(zv).astype(CARRIER[dtype])),
                           kw={"axis": 0}, tol=bound / np.maximum(np.abs(np.cumsum(zv)), 1e-300).min())
        # Casts both ways; complex to a real dtype other than bool is refused
        # (Documented difference: NumPy warns and drops the imaginary part).
        yield Case("astype", [(dtype, x)], ("bool", x != 0), kw={"dtype": "bool"})
        yield Case("astype", [(dtype, x)], None, kw={"dtype": real})
        r = sample(rng, real, n)
        yield Case("astype", [(real, r)], (dtype, r.astype(CARRIER[dtype])), kw={"dtype": dtype})
        # Ordering is refused (Documented difference: NumPy orders complex
        # lexicographically; the standard leaves it unspecified).
        yield Case("sort", [(dtype, x[:8])], None)
        yield Case("max", [(dtype, x[:8])], None)


def indexing(rng):
    """Integer-array and boolean-mask indexing, as NumPy's advanced indexing
    of the leading axes; out-of-range indices and wrong masks are errors."""
    x = sample(rng, "f32", 60).reshape(3, 4, 5)
    for shapes in (((4,),), ((2, 3), (2, 3)), ((2, 1), (1, 3)), ((), (5,)), ((2,), (2,), (2,)), ((0,),)):
        for idt in ("i64", "i32", "u8"):
            idx = [rng.integers(-x.shape[k] if idt != "u8" else 0, x.shape[k], s).astype(CARRIER[idt])
                   for k, s in enumerate(shapes)]
            want = x[tuple(i.astype(np.int64) for i in idx)]
            yield Case("index_arrays", [("f32", x)] + [(idt, i) for i in idx], ("f32", want))
    yield Case("index_arrays", [("f32", x), ("i64", np.array([3]))], None)
    yield Case("index_arrays", [("f32", x), ("i64", np.array([-4]))], None)
    yield Case("index_arrays", [("f32", x), ("i64", np.array([0, 1])), ("i64", np.array([0, 1, 2]))], None)
    for dtype in ("i8", "f64", "bool", "u64"):
        y = sample(rng, dtype, 60).reshape(3, 4, 5)
        for k in (1, 2, 3):
            for p in (0.0, 0.3, 1.0):
                mask = rng.random(y.shape[:k]) < p
                yield Case("index_mask", [(dtype, y), ("bool", mask)], (dtype, y[mask]))
        yield Case("index_mask", [(dtype, y), ("bool", np.array(True))], (dtype, y[np.newaxis]))
        yield Case("index_mask", [(dtype, y), ("bool", np.array(False))], (dtype, y[np.newaxis][:0]))
        yield Case("index_mask", [(dtype, y), ("bool", np.ones(4, bool))], None)
    big = sample(rng, "u8", 100_003)
    mask = rng.random(big.shape) < 0.5
    yield Case("index_mask", [("u8", big), ("bool", mask)], ("u8", big[mask]))
    picks = rng.integers(-100_003, 100_003, 70_000)
    yield Case("index_arrays", [("u8", big), ("i64", picks)], ("u8", big[picks]))


def updates(rng):
    """Writes: x[slices] = value and x[mask] = value, with scalars, broadcast
    arrays, overlapping sources and values that do not fit (errors)."""
    for dtype in ("f32", "i16", "u8", "f64", "bool"):
        x = sample(rng, dtype, 60).reshape(6, 10)
        scalar = None if dtype == "bool" else 7  # the driver's scalars are numbers, never bools
        for index in ([[1, None, 2]], [[None, None, -1], [2, 9, 3]], [3], [[None, None, 1], 4], [[-2, None, 1]]):
            if scalar is not None:
                want = x.copy()
                want[np_index(index)] = scalar
                yield Case("assign_slice", [(dtype, x)], (dtype, want), kw={"index": index, "scalar": scalar})
            target = x[np_index(index)]
            for shape in (target.shape, target.shape[-1:], ()):
                v = sample(rng, dtype, int(np.prod(shape))).reshape(shape)
                want = x.copy()
                want[np_index(index)] = v
                yield Case("assign_slice", [(dtype, x), (dtype, v)], (dtype, want), kw={"index": index})
        for k in (1, 2):
            mask = rng.random(x.shape[:k]) < 0.4
            if scalar is not None:
                want = x.copy()
                want[mask] = scalar
                yield Case("assign_mask", [(dtype, x), ("bool", mask)], (dtype, want), kw={"scalar": scalar})
            v = sample(rng, dtype, int(np.prod(x.shape[k:]))).reshape(x.shape[k:])
            want = x.copy()
            want[mask] = v
            yield Case("assign_mask", [(dtype, x), ("bool", mask), (dtype, v)], (dtype, want))
    # Values that would change the array's dtype are errors, not roundings.
    x = sample(rng, "i16", 8)
    yield Case("assign_slice", [("i16", x)], None, kw={"index": [[None, None, 1]], "scalar": 1.5})
    yield Case("assign_slice", [("i16", x)], None, kw={"index": [[None, None, 1]], "scalar": 70_000})
    yield Case("assign_slice", [("i16", x), ("i32", x.astype(np.int32))], None, kw={"index": [[None, None, 1]]})
    yield Case("assign_mask", [("i16", x), ("bool", x > 0)], None, kw={"scalar": 0.5})


def scatters(rng):
    """x[index_arrays] = value: broadcast indices and values, repeated
    indices (NumPy writes the last of them, in the indices' row-major
    order), and indices out of range or values that do not fit (errors)."""
    for dtype in ("f32", "i16", "u8", "bool"):
        x = sample(rng, dtype, 60).reshape(3, 4, 5)
        for shapes in (((6,),), ((2, 3), (3,)), ((40,), (40,)), ((), (5,)), ((2, 1), (1, 3), (3,)), ((0,),)):
            idx = [rng.integers(-x.shape[k], x.shape[k], s) for k, s in enumerate(shapes)]
            target = x[tuple(idx)]
            for shape in (target.shape, target.shape[-1:], ()):
                v = sample(rng, dtype, int(np.prod(shape))).reshape(shape)
                want = x.copy()
                want[tuple(idx)] = v
                yield Case("assign_arrays", [(dtype, x)] + [("i64", i) for i in idx] + [(dtype, v)], (dtype, want))
    big = sample(rng, "f32", 100_003)
    picks = rng.integers(-100_003, 100_003, 70_000)
    v = sample(rng, "f32", picks.size)
    want = big.copy()
    want[picks] = v
    yield Case("assign_arrays", [("f32", big), ("i64", picks), ("f32", v)], ("f32", want))
    want = big.copy()
    want[picks] = 7
    yield Case("assign_arrays", [("f32", big), ("i64", picks)], ("f32", want), kw={"scalar": 7})
    x = sample(rng, "i16", 8)
    yield Case("assign_arrays", [("i16", x), ("i64", np.array([0, 8]))], None, kw={"scalar": 1})
    yield Case("assign_arrays", [("i16", x), ("i64", np.array([-9]))], None, kw={"scalar": 1})
    yield Case("assign_arrays", [("i16", x), ("i64", np.array([1]))], None, kw={"scalar": 0.5})
    yield Case("assign_arrays", [("i16", x), ("i64", np.array([1])), ("i32", np.array([1], np.int32))], None)


def linalg_ext(rng):
    """diagonal, trace, outer, cross, the vector and matrix norms and
    matrix_power against numpy.linalg (float results within a few ulps of
    the float64 reference: they sum)."""
    for dtype in ("f32", "f64"):
        x = sample(rng, dtype, 60, -10, 10).reshape(3, 4, 5)
        v = exact(x)
        for offset in (-4, -1, 0, 2, 5):
            yield Case("diagonal", [(dtype, x)], (dtype, np.diagonal(v, offset, -2, -1)), kw={"offset": offset})
            yield Case("trace", [(dtype, x)], reference(lambda a: np.trace(a, offset, -2, -1), dtype, v),
                       kw={"offset": offset}, tol=8)
        a, b = sample(rng, dtype, 7, -10, 10), sample(rng, dtype, 5, -10, 10)
        yield Case("outer", [(dtype, a), (dtype, b)], reference(np.outer, dtype, exact(a), exact(b)))
        p, q = sample(rng, dtype, 12, -10, 10).reshape(4, 3), sample(rng, dtype, 3, -10, 10)
        yield Case("cross", [(dtype, p), (dtype, q)], reference(np.cross, dtype, exact(p), exact(q)), tol=4)
        yield Case("cross", [(dtype, p.T.copy()), (dtype, q.reshape(3, 1))],
                   reference(lambda s, t: np.cross(s, t, axis=0), dtype, exact(p.T), exact(q.reshape(3, 1))),
                   kw={"axis": 0}, tol=4)
        for ord in ("2", "1", "inf", "-inf", "0", "3"):
            o = float(ord)
            for axes, keep in ((None, False), ([2], True), ([0, 2], False)):
                want = reference(lambda t: np.linalg.vector_norm(t, axis=None if axes is None else tuple(axes),
                                                                 keepdims=keep, ord=o), dtype, v)
                kw = {"ord": ord, "keepdims": keep} | ({} if axes is None else {"axes": axes})
                yield Case("vector_norm", [(dtype, x)], want, kw=kw, tol=8)
        for ord in ("fro", "1", "-1", "inf", "-inf"):
            o = ord if ord == "fro" else float(ord)
            for keep in (False, True):
                want = reference(lambda t: np.linalg.matrix_norm(t, ord=o, keepdims=keep), dtype, v)
                yield Case("matrix_norm", [(dtype, x)], want, kw={"ord": ord, "keepdims": keep}, tol=8)
    # The fft helpers (NumPy computes fftfreq in float64).
    for n, d in ((1, 1.0), (8, 0.1), (9, 2.5), (1000, 1e-3)):
        yield Case("fftfreq", [], reference(lambda: np.fft.fftfreq(n, d), "f64"), kw={"num": n, "d": d, "dtype": "f64"})
        yield Case("rfftfreq", [], reference(lambda: np.fft.rfftfreq(n, d), "f64"), kw={"num": n, "d": d, "dtype": "f64"})
    yield Case("fftfreq", [], None, kw={"num": 0, "d": 1.0})
    y = sample(rng, "f32", 105).reshape(3, 5, 7)
    for axes in (None, [0], [1, 2], [-1]):
        kw = {} if axes is None else {"axes": axes}
        yield Case("fftshift", [("f32", y)], ("f32", np.fft.fftshift(y, axes)), kw=kw)
        yield Case("ifftshift", [("f32", y)], ("f32", np.fft.ifftshift(y, axes)), kw=kw)
    m = sample(rng, "i32", 18, -3, 3).reshape(2, 3, 3)
    for n in (0, 1, 2, 3, 6):
        yield Case("matrix_power", [("i32", m)], ("i32", np.linalg.matrix_power(m, n)), kw={"n": n})
    yield Case("matrix_norm", [("f32", sample(rng, "f32", 8).reshape(2, 4))], None, kw={"ord": "7"})


def factorizations(rng):
    """The linalg functions built on faer's cpu kernels, against numpy.linalg
    on well-conditioned matrices (absolute error within 1000 eps of the
    result's scale); devices without a kernel refuse them (NoKernel)."""
    n = 4
    for dtype in ("f32", "f64"):
        eps = float(np.finfo(CARRIER[dtype]).eps)
        for batch in ((), (3,)):
            b = rng.uniform(-1, 1, batch + (n, n))
            a = (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(CARRIER[dtype])
            v = exact(a)

            def close(want):
                want = np.asarray(want, np.float64)
                return dict(check="abs", tol=1e3 * eps * max(1.0, float(np.max(np.abs(want)))))

            for op, fn in (("det", np.linalg.det), ("inv", np.linalg.inv), ("eigvalsh", np.linalg.eigvalsh),
                           ("svdvals", np.linalg.svdvals), ("cholesky", np.linalg.cholesky),
                           ("pinv", np.linalg.pinv)):
                want = fn(v)
                yield Case(op, [(dtype, a)], (dtype, round_to(dtype, want)), **close(want))
            sign, log = np.linalg.slogdet(v)
            yield Case("slogdet.sign", [(dtype, a)], (dtype, np.asarray(sign)))
            yield Case("slogdet.logabsdet", [(dtype, a)], (dtype, round_to(dtype, log)), **close(log))
            for rhs_shape in (batch + (n,), batch + (n, 2)):
                if len(rhs_shape) == len(batch) + 1 and batch:
                    continue  # a batched x1 with one vector: NumPy 2 and the standard agree only without a batch
                y = rng.uniform(-1, 1, rhs_shape).astype(CARRIER[dtype])
                want = np.linalg.solve(v, exact(y))
                yield Case("solve", [(dtype, a), (dtype, y)], (dtype, round_to(dtype, want)), **close(want))
        deficient = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], CARRIER[dtype])
        yield Case("matrix_rank", [(dtype, deficient)], ("i64", np.asarray(np.linalg.matrix_rank(exact(deficient)))))
        yield Case("inv", [(dtype, deficient)], None)
    yield Case("inv", [("i32", np.eye(3, dtype=np.int32))], None)


def eigenvalues(rng):
    """eigvals of normal matrices (perfectly conditioned eigenvalues, of
    magnitude 1 to 3), real ones with conjugate pairs and complex ones,
    against numpy.linalg.eigvals in any order (the standard leaves it
    open); complex det, eigvalsh and svdvals."""
    n = 4
    for dtype in ("f32", "f64", "c64", "c128"):
        complex_input = dtype in COMPLEX
        eps = float(np.finfo(CARRIER[dtype]).eps)
        for batch in ((), (3,)):
            shape = batch + (n, n)
            if complex_input:
                q, _ = np.linalg.qr(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                lam = rng.uniform(1, 3, batch + (n,)) * np.exp(1j * rng.uniform(-np.pi, np.pi, batch + (n,)))
                a = (q * lam[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2))
            else:
                q, _ = np.linalg.qr(rng.standard_normal(shape))
                # Rotation-scaling blocks [[x, -y], [y, x]]: eigenvalues x ± iy.
                x, y = rng.uniform(1, 2, batch + (2,)), rng.uniform(0.5, 2, batch + (2,))
                b = np.zeros(shape)
                for k in range(2):
                    b[..., 2 * k, 2 * k] = b[..., 2 * k + 1, 2 * k + 1] = x[..., k]
                    b[..., 2 * k + 1, 2 * k], b[..., 2 * k, 2 * k + 1] = y[..., k], -y[..., k]
                a = q @ b @ np.swapaxes(q, -1, -2)
            a = a.astype(CARRIER[dtype])
            v = a.astype(np.complex128)
            out = dtype if complex_input else {"f32": "c64", "f64": "c128"}[dtype]
            want = np.linalg.eigvals(v).astype(CARRIER[out])
            yield Case("eigvals", [(dtype, a)], (out, want), tol=1e3 * eps, check="eigvals")
            if complex_input:
                yield Case("det", [(dtype, a)], (dtype, np.asarray(np.linalg.det(v)).astype(CARRIER[dtype])),
                           tol=1e3 * eps)
                real = COMPONENT[dtype]
                hermitian = (v + np.conj(np.swapaxes(v, -1, -2))) / 2
                for op, fn, m in (("eigvalsh", np.linalg.eigvalsh, hermitian), ("svdvals", np.linalg.svdvals, v)):
                    want = fn(m)
                    scale = max(1.0, float(np.max(np.abs(want))))
                    yield Case(op, [(dtype, m.astype(CARRIER[dtype]))], (real, round_to(real, want)),
                               tol=1e3 * eps * scale, check="abs")
    yield Case("eigvals", [("f16", np.eye(2, dtype=np.float16))], None)
    yield Case("eigvals", [("f32", np.ones((2, 3), np.float32))], None)


def match_eigenvalues(got, want):
    """`got` reordered so that each of `want` meets its nearest unused
    value, matrix by matrix: the standard leaves eig's order open."""
    out = np.empty_like(got)
    for row in np.ndindex(want.shape[:-1]):
        left = list(got[row])
        for k, w in enumerate(want[row]):
            out[row + (k,)] = left.pop(int(np.argmin([abs(g - w) for g in left])))
    return out


def sets(rng):
    """unique_all, isin, diff, take_along_axis and count_nonzero, with many
    repeats, both zeros and several NaNs."""
    pool = np.array([0.0, -0.0, 1.5, -2.0, np.nan, 3.0, 1e30, 2.0**-140])
    for n, shape in ((0, (0,)), (1, (1,)), (12, (3, 4)), (257, (257,)), (65_536, (256, 256))):
        for dtype in ("i32", "u8", "f32", "f64", "bool"):
            if dtype in FLOATS:
                x = rng.choice(pool, n).astype(CARRIER[dtype])
            elif dtype == "bool":
                x = sample(rng, dtype, n)
            else:
                x = (sample(rng, dtype, n) % 13).astype(CARRIER[dtype])
            x = x.reshape(shape)
            v = exact(x) if dtype in FLOATS else x
            u = np.unique_all(v)
            yield Case("unique_all.values", [(dtype, x)], (dtype, u.values), check="unique")
            yield Case("unique_all.indices", [(dtype, x)], ("i64", u.indices))
            yield Case("unique_all.inverse_indices", [(dtype, x)], ("i64", u.inverse_indices.reshape(shape)))
            yield Case("unique_all.counts", [(dtype, x)], ("i64", u.counts))
            yield Case("count_nonzero", [(dtype, x)], ("i64", np.asarray(np.count_nonzero(x), np.int64)))
            if len(shape) == 2:
                for axis in (0, 1):
                    want = np.count_nonzero(x, axis=axis, keepdims=True).astype(np.int64)
                    yield Case("count_nonzero", [(dtype, x)], ("i64", want), kw={"axes": [axis], "keepdims": True})
            for other in ((dtype,) if dtype == "bool" else (dtype, "f64" if dtype in INTS else "i32")):
                hay = x.ravel()[: max(n // 3, 1)] if n else x.ravel()
                hay = np.concatenate([hay, sample(rng, dtype, 3)]).astype(CARRIER[other])
                hv = exact(hay) if other in FLOATS else hay
                for invert in (False, True):
                    want = np.isin(v, hv, invert=invert)
                    yield Case("isin", [(dtype, x), (other, hay)], ("bool", want), kw={"invert": invert})
    # Differences: in the array's own dtype at every step, as NumPy computes them.
    for dtype in ("i32", "u8", "f32", "f64", "bool"):
        x = sample(rng, dtype, 35).reshape(5, 7)
        for axis in (0, 1, -1):
            for n in (0, 1, 2, 3, 6):
                want = raises(np.diff, x, n, axis)
                yield Case("diff", [(dtype, x)], None if want is None else (dtype, want), kw={"axis": axis, "n": n})
    # Gathers along an axis, with broadcasting, negative and out-of-range indices.
    x = sample(rng, "f32", 20).reshape(4, 5)
    for axis, ishape in ((0, (6, 5)), (1, (4, 9)), (0, (3, 1)), (1, (1, 2)), (-1, (4, 0))):
        length = x.shape[axis]
        for idt in ("i64", "i32"):
            i = rng.integers(-length, length, ishape).astype(CARRIER[idt])
            want = raises(np.take_along_axis, x, i.astype(np.int64), axis)
            yield Case("take_along_axis", [("f32", x), (idt, i)], None if want is None else ("f32", want),
                       kw={"axis": axis})
    bad = np.array([[5]], np.int64)
    yield Case("take_along_axis", [("f32", x), ("i64", bad)], None, kw={"axis": 1})
    yield Case("take_along_axis", [("f32", x), ("i64", np.array([[-6]], np.int64))], None, kw={"axis": 1})


# ---------------------------------------------------------------- driver


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))


def build_driver():
    subprocess.run(["cargo", "build", "--quiet", "--locked", "-p", "anydev-diff", "-p", "anydev-sim"],
                   cwd=ROOT, check=True)
    return os.path.join(target_dir(), "debug", "anydev-diff")


def run_device(driver, cases, device):
    """Outcomes of `cases` on `device`, in order. A crash of the driver
    (an abort) is the outcome of the case it was running; the rest run in
    a new process."""
    outcomes = []
    while len(outcomes) < len(cases):
        start = len(outcomes)
        with tempfile.TemporaryFile("w+") as feed:
            for k in range(start, len(cases)):
                feed.write(json.dumps(cases[k].wire(k, device)) + "\n")
            feed.seek(0)
            proc = subprocess.run([driver], stdin=feed, capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            outcomes.append(json.loads(line))
        if len(outcomes) < len(cases):
            err = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            outcomes.append({"id": len(outcomes), "crash": {"message": err[0]}})
    return outcomes


# A device may refuse what it cannot do (declared in its capabilities):
# a clean refusal is never a wrong number. Counted and printed apart.
REFUSALS = ("Unsupported", "UnsupportedDType", "NoKernel")


def judge(case, outcome, device):
    """None if the outcome is right, else a description."""
    if "array" in outcome:
        if case.expect is None or case.expect[1] is None:
            return f"returned {outcome['array']['dtype']}{outcome['array']['shape']}, expected an error"
        got_dtype, got = decode(outcome["array"])
        return compare(case, got_dtype, got, device)
    if "error" in outcome:
        e = outcome["error"]
        if case.expect is None or case.expect[1] is None or e["kind"] in REFUSALS:
            return None
        return f"error {e['kind']}: {e['message']}"
    kind = next(iter(k for k in outcome if k != "id"))
    return f"{kind}: {outcome[kind]['message']}"


def generate(seed, quick):
    np.seterr(all="ignore")
    warnings.simplefilter("ignore", RuntimeWarning)
    rng = np.random.default_rng(seed)
    n = 64
    # Around the wgpu limits: 65,535 workgroups per dimension of 256
    # threads; radix/bitonic passes at 2^16; an odd prime; 0-d and empty.
    sizes = [0, 1, 2, 255, 257, 65_535, 65_536, 100_003]
    cases = []
    gens = [elementwise(rng, n), special_pairs(), comparisons(rng, 16), casts(rng, n), promotion(rng, 16), views(rng),
            axes_reductions(rng), more_reductions(rng), reductions(rng, sizes), sorting(rng, sizes), slicing(rng), manipulation(rng),
            limits(rng, sizes), large_shapes(rng), scalars(rng),
            empty_axes(rng), linalg_and_layout(rng), narrow_dtypes(rng), sets(rng),
            indexing(rng), updates(rng), linalg_ext(rng), factorizations(rng), complex_cases(rng, 32)]
    if not quick:
        gens.append(huge(rng))
    # Last, so that the cases before them draw what they drew without them.
    gens.append(scatters(rng))
    gens.append(eigenvalues(rng))
    for gen in gens:
        cases.extend(c for c in gen if c is not None)
    return cases


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", action="append", help="device to test (repeatable); default: every device found")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--driver", help="anydev-diff binary (default: build it with cargo)")
    p.add_argument("--quick", action="store_true", help="leave out the cases of 16 million elements")
    p.add_argument("--filter", help="only ops whose name contains this")
    args = p.parse_args()
    driver = args.driver or build_driver()
    # The simulator's devices, as scripts/anydev finds them.
    os.environ.setdefault("ANYDEV_PLUGINS", "sim:" + os.path.join(target_dir(), "debug", "libanydev_sim.so"))
    devices = args.device or subprocess.run([driver, "--devices"], capture_output=True, text=True,
                                            check=True).stdout.split()
    devices = [d for d in devices if d != "sim:1"] if not args.device else devices  # sim:1 is sim:0's library
    cases = generate(args.seed, args.quick)
    if args.filter:
        cases = [c for c in cases if args.filter in c.op]
    with ThreadPoolExecutor(len(devices)) as pool:
        results = dict(zip(devices, pool.map(lambda d: run_device(driver, cases, d), devices)))
    passed = failed = 0
    refused = {}
    for k, case in enumerate(cases):
        kinds = {}
        for device in devices:
            outcome = results[device][k]
            problem = judge(case, outcome, device)
            if "error" in outcome:
                kind = outcome["error"]["kind"]
                if kind not in REFUSALS:
                    kinds[device] = kind  # a refusal says nothing about the input
                elif case.expect is not None and case.expect[1] is not None:
                    # Counted apart: a refused case is neither a pass nor a failure.
                    refused[device] = refused.get(device, 0) + 1
                    continue
            if problem:
                failed += 1
                print(f"FAIL {device} {case.describe()}: {problem}")
            else:
                passed += 1
        if len(set(kinds.values())) > 1:
            failed += 1
            print(f"FAIL devices disagree on the error of {case.describe()}: {kinds}")
    for device, count in sorted(refused.items()):
        print(f"{device} refused {count} cases as unsupported")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
