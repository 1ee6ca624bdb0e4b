//! WGSL for the `linalg` factorizations (see [`crate::linalg`]): one
//! invocation factorizes one matrix of the batch, in a workspace buffer
//! the host allocates per call, and reports a status word per matrix.
//!
//! The algorithms are written once over a scalar type `S` (the input's:
//! `f32`, `f64` or `vec2<f32>` for c64) with its component type `R` and
//! the complex type `C = vec2<R>`; a prelude per dtype defines the `s_*`
//! arithmetic (`s_mul`, `s_conj`, ...) for it. They are the textbook
//! ones, chosen for being short and stable rather than fast:
//!
//! - Cholesky by columns; LU with partial pivoting (`inv`, `solve`, `det`,
//!   `slogdet`);
//! - QR by Householder reflections `I - 2 u uᴴ / uᴴu`, Hermitian, so that
//!   `Q` is their product;
//! - `eigh` by cyclic two-sided Jacobi rotations, `svd` by one-sided
//!   (Hestenes) Jacobi on `x` or `xᴴ`, whichever is tall: both converge
//!   to full relative accuracy, a sweep at a time;
//! - `eig` in complex arithmetic for every input: Householder reduction to
//!   Hessenberg form, single-shift QR with Wilkinson shifts to the Schur
//!   form, eigenvectors by back-substitution. For real input the
//!   conjugate pairs are then made exact and put in LAPACK's order.
//!
//! Status words: 0 done, 1 the input has no factorization of this kind
//! (singular, not positive definite), 2 the iteration did not converge,
//! 3 the shader compiler's loop budget ran out.
//!
//! That budget is real: llvmpipe ends every loop of an invocation once
//! the invocation has taken 65,535 loop iterations in all, silently (a
//! guard against shaders that never end), which cuts a factorization
//! short past about 20 x 20. So every kernel ends with a loop whose trip
//! count only the params give (the last word): if it ran short, the
//! results are incomplete and the status says so.

use anydev_ops::DType;

/// The status word for "the matrix has no such factorization".
pub const NO_FACTORIZATION: u32 = 1;
/// The status word for an iteration that did not converge.
pub const NO_CONVERGENCE: u32 = 2;
/// The status word for a kernel whose loops the compiler cut short.
pub const LOOP_LIMIT: u32 = 3;
/// Matrices per workgroup, one per invocation.
pub const WORKGROUP: u32 = 64;
/// The trip count of the final loop that detects [`LOOP_LIMIT`], the last
/// params word.
pub const CANARY_TRIPS: u32 = 2;

/// The arithmetic of `S = R`, a real float.
const REAL: &str = r#"
alias S = R;
fn s_re(a: S) -> R { return a; }
fn s_real(x: R) -> S { return x; }
fn s_zero() -> S { return R(0); }
fn s_one() -> S { return R(1); }
fn s_mul(a: S, b: S) -> S { return a * b; }
fn s_div(a: S, b: S) -> S { return a / b; }
fn s_conj(a: S) -> S { return a; }
fn s_abs2(a: S) -> R { return a * a; }
fn s_abs1(a: S) -> R { return abs(a); }
fn s_abs(a: S) -> R { return abs(a); }
fn s_scale(a: S, x: R) -> S { return a * x; }
fn s_to_c(a: S) -> C { return C(a, R(0)); }
"#;

/// The arithmetic of `S = C`, a complex number.
const COMPLEX: &str = r#"
alias S = C;
fn s_re(a: S) -> R { return a.x; }
fn s_real(x: R) -> S { return C(x, R(0)); }
fn s_zero() -> S { return C(R(0), R(0)); }
fn s_one() -> S { return C(R(1), R(0)); }
fn s_mul(a: S, b: S) -> S { return c_mul(a, b); }
fn s_div(a: S, b: S) -> S { return c_div(a, b); }
fn s_conj(a: S) -> S { return c_conj(a); }
fn s_abs2(a: S) -> R { return dot(a, a); }
fn s_abs1(a: S) -> R { return abs(a.x) + abs(a.y); }
fn s_abs(a: S) -> R { return c_abs(a); }
fn s_scale(a: S, x: R) -> S { return a * x; }
fn s_to_c(a: S) -> C { return a; }
"#;

/// Complex arithmetic over `R`, and what both preludes share.
const COMMON: &str = r#"
alias C = vec2<R>;
fn c_mul(a: C, b: C) -> C { return C(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn c_conj(a: C) -> C { return C(a.x, -a.y); }
// |a| without overflow or underflow in the squares.
fn c_abs(a: C) -> R {
  let m = max(abs(a.x), abs(a.y));
  if (m == R(0)) { return R(0); }
  let x = a.x / m;
  let y = a.y / m;
  return m * sqrt(x * x + y * y);
}
// Smith's algorithm: the larger component of b divides.
fn c_div(a: C, b: C) -> C {
  if (abs(b.x) >= abs(b.y)) {
    let r = b.y / b.x;
    let d = b.x + b.y * r;
    return C((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  let r = b.x / b.y;
  let d = b.y + b.x * r;
  return C((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
// The principal square root.
fn c_sqrt(a: C) -> C {
  let m = c_abs(a);
  if (m == R(0)) { return C(R(0), R(0)); }
  let t = sqrt((m + abs(a.x)) * R(0.5));
  if (a.x >= R(0)) { return C(t, a.y / (R(2) * t)); }
  return C(abs(a.y) / (R(2) * t), select(t, -t, a.y < R(0)));
}
// a / |a|, and 1 for 0: the phase that Householder reflections and
// Jacobi rotations take out.
fn s_unit(a: S) -> S {
  let m = s_abs(a);
  if (m == R(0)) { return s_one(); }
  return s_scale(a, R(1) / m);
}
// The factor that 2-norms scale a vector by, against overflow and
// underflow of the squares, from its largest magnitude: its reciprocal,
// or 1 where that would not be finite (such entries are negligible).
fn norm_scale(big: R) -> R { return select(R(1), R(1) / big, big >= safe_min()); }
// The smaller root t of t^2 + 2 theta t - 1 = 0, the tangent of a Jacobi
// rotation angle; t ~ 1 / (2 theta) where theta^2 would overflow.
fn jacobi_tangent(theta: R) -> R {
  let a = abs(theta);
  let t = select(R(1) / (a + sqrt(R(1) + a * a)), R(0.5) / a, a > R(1.0e15));
  return select(t, -t, theta < R(0));
}
// ln x for finite x > 0: the exponent times ln 2 plus ln m, m in
// [sqrt(1/2), sqrt(2)), from 2 atanh((m - 1) / (m + 1)) by its series.
fn r_ln(x: R) -> R {
  let parts = r_split(x);
  let m = parts.x;
  let s = (m - R(1)) / (m + R(1));
  let s2 = s * s;
  var term = s;
  var sum = R(0);
  for (var k = 1u; k < 40u; k += 2u) {
    sum += term / R(f32(k));
    term *= s2;
  }
  return R(2) * sum + parts.y * r_ln2();
}
"#;

/// `R = f32`: its constants and the exponent split of [`COMMON`]'s `r_ln`.
const F32: &str = r#"
alias R = f32;
fn eps() -> R { return 1.1920929e-7f; }
fn safe_min() -> R { return 1.1754944e-38f; }
fn r_ln2() -> R { return 0.6931471805599453f; }
fn r_neg_inf() -> R { return bitcast<f32>(0xff800000u); }
// (m, e) with x = m 2^e, m in [sqrt(1/2), sqrt(2)).
fn r_split(v: R) -> vec2<R> {
  var x = v;
  var e = 0.0f;
  if (x < safe_min()) { x *= 16777216.0f; e = -24.0f; }
  let bits = bitcast<u32>(x);
  e += f32(i32((bits >> 23u) & 0xffu) - 127);
  var m = bitcast<f32>((bits & 0x7fffffu) | 0x3f800000u);
  if (m > 1.4142135f) { m *= 0.5f; e += 1.0f; }
  return vec2<f32>(m, e);
}
"#;

/// `R = f64`, its constants written as bit patterns.
const F64: &str = r#"
alias R = f64;
fn eps() -> R { return bitcast<f64>(0x3cb0000000000000lu); }
fn safe_min() -> R { return bitcast<f64>(0x0010000000000000lu); }
fn r_ln2() -> R { return bitcast<f64>(0x3fe62e42fefa39eflu); }
fn r_neg_inf() -> R { return bitcast<f64>(0xfff0000000000000lu); }
fn r_split(v: R) -> vec2<R> {
  var x = v;
  var e = f64(0);
  if (x < safe_min()) { x *= bitcast<f64>(0x4350000000000000lu); e = f64(-54); }
  let bits = bitcast<u64>(x);
  e += f64(i32((bits >> 52u) & 0x7fflu) - 1023);
  var m = bitcast<f64>((bits & 0xffffffffffffflu) | 0x3ff0000000000000lu);
  if (m > bitcast<f64>(0x3ff6a09e667f3bcdlu)) { m *= f64(0.5); e += f64(1); }
  return vec2<f64>(m, e);
}
"#;

/// The entry point: one invocation per matrix `b` of the `count` (params
/// word 0), its status cleared before the op's `factorize` runs.
/// Neighbouring invocations take neighbouring matrices of the same size,
/// so a workgroup's lanes mostly run the same loops together.
const ENTRY: &str = r#"
@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let b = id.x + id.y * groups.x * WORKGROUP;
  let count = p[0];
  if (b >= count) { return; }
  idx[b] = 0u;
  factorize(b, count);
  let trips = p[arrayLength(&p) - 1u];
  var ran = 0u;
  for (var i = 0u; i < trips; i++) { ran += 1u; }
  if (ran != trips) { idx[b] = LOOP_LIMIT; }
}
"#;

/// LU with partial pivoting of the `n x n` matrix at `work[w..]`, in
/// place; row `k`'s pivot row at `idx[pv + k]`. Zero pivots are left in
/// place (a singular matrix has a determinant, of 0). Returns whether the
/// permutation is odd.
const LU: &str = r#"
fn lu_factor(w: u32, pv: u32, n: u32) -> bool {
  var odd = false;
  for (var k = 0u; k < n; k++) {
    var piv = k;
    var best = s_abs1(work[w + k * n + k]);
    for (var i = k + 1u; i < n; i++) {
      let v = s_abs1(work[w + i * n + k]);
      if (v > best) { best = v; piv = i; }
    }
    idx[pv + k] = piv;
    if (piv != k) {
      odd = !odd;
      for (var j = 0u; j < n; j++) {
        let t = work[w + k * n + j];
        work[w + k * n + j] = work[w + piv * n + j];
        work[w + piv * n + j] = t;
      }
    }
    let d = work[w + k * n + k];
    if (s_abs2(d) == R(0)) { continue; }
    for (var i = k + 1u; i < n; i++) {
      let l = s_div(work[w + i * n + k], d);
      work[w + i * n + k] = l;
      for (var j = k + 1u; j < n; j++) {
        work[w + i * n + j] -= s_mul(l, work[w + k * n + j]);
      }
    }
  }
  return odd;
}
fn lu_singular(w: u32, n: u32) -> bool {
  for (var k = 0u; k < n; k++) {
    if (s_abs2(work[w + k * n + k]) == R(0)) { return true; }
  }
  return false;
}
// Solves in place for column j of the n x k matrix at out0[o..], which
// holds the right-hand side already permuted.
fn lu_solve_column(w: u32, n: u32, o: u32, k: u32, j: u32) {
  for (var i = 0u; i < n; i++) {
    var s = out0[o + i * k + j];
    for (var p = 0u; p < i; p++) { s -= s_mul(work[w + i * n + p], out0[o + p * k + j]); }
    out0[o + i * k + j] = s;
  }
  for (var ii = n; ii > 0u; ii--) {
    let i = ii - 1u;
    var s = out0[o + i * k + j];
    for (var p = i + 1u; p < n; p++) { s -= s_mul(work[w + i * n + p], out0[o + p * k + j]); }
    out0[o + i * k + j] = s_div(s, work[w + i * n + i]);
  }
}
// Applies the row swaps of the factorization to the n x k matrix at out0[o..].
fn lu_permute(pv: u32, n: u32, o: u32, k: u32) {
  for (var r = 0u; r < n; r++) {
    let piv = idx[pv + r];
    if (piv == r) { continue; }
    for (var j = 0u; j < k; j++) {
      let t = out0[o + r * k + j];
      out0[o + r * k + j] = out0[o + piv * k + j];
      out0[o + piv * k + j] = t;
    }
  }
}
// Overwrites the n x k right-hand sides of matrix b in out0 with the
// solutions, or reports the matrix singular.
fn lu_solve(b: u32, count: u32, n: u32, k: u32) {
  let w = lu_copy_in(b, n);
  let pv = count + b * n;
  lu_factor(w, pv, n);
  if (lu_singular(w, n)) { idx[b] = NO_FACTORIZATION; return; }
  let o = b * n * k;
  lu_permute(pv, n, o, k);
  for (var j = 0u; j < k; j++) { lu_solve_column(w, n, o, k, j); }
}
fn lu_copy_in(b: u32, n: u32) -> u32 {
  let w = b * n * n;
  for (var e = 0u; e < n * n; e++) { work[w + e] = in0[w + e]; }
  return w;
}
"#;

const CHOLESKY: &str = r#"
// p: count, n, upper. L from x's lower triangle, by columns, in out0.
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let o = b * n * n;
  for (var j = 0u; j < n; j++) {
    var d = s_re(in0[o + j * n + j]);
    for (var k = 0u; k < j; k++) { d -= s_abs2(out0[o + j * n + k]); }
    if (!(d > R(0))) { idx[b] = NO_FACTORIZATION; return; }
    let l = sqrt(d);
    out0[o + j * n + j] = s_real(l);
    for (var i = 0u; i < j; i++) { out0[o + i * n + j] = s_zero(); }
    for (var i = j + 1u; i < n; i++) {
      var s = in0[o + i * n + j];
      for (var k = 0u; k < j; k++) { s -= s_mul(out0[o + i * n + k], s_conj(out0[o + j * n + k])); }
      out0[o + i * n + j] = s_scale(s, R(1) / l);
    }
  }
  if (p[2] != 0u) {
    for (var i = 0u; i < n; i++) {
      for (var j = 0u; j < i; j++) {
        out0[o + j * n + i] = s_conj(out0[o + i * n + j]);
        out0[o + i * n + j] = s_zero();
      }
    }
  }
}
"#;

const INV: &str = r#"
// p: count, n. idx: status per matrix, then n pivots per matrix.
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let o = b * n * n;
  for (var e = 0u; e < n * n; e++) { out0[o + e] = select(s_zero(), s_one(), e % (n + 1u) == 0u); }
  lu_solve(b, count, n, n);
}
"#;

const SOLVE: &str = r#"
// p: count, n, k (right-hand sides per matrix).
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let k = p[2];
  let o = b * n * k;
  for (var e = 0u; e < n * k; e++) { out0[o + e] = in1[o + e]; }
  lu_solve(b, count, n, k);
}
"#;

const DET: &str = r#"
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let w = lu_copy_in(b, n);
  let odd = lu_factor(w, count + b * n, n);
  var d = select(s_one(), -s_one(), odd);
  for (var k = 0u; k < n; k++) { d = s_mul(d, work[w + k * n + k]); }
  out0[b] = d;
}
"#;

const SLOGDET: &str = r#"
// The sign from the pivots' phases, the log from their product kept as
// a mantissa and a binary exponent, so that neither over- nor underflows.
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let w = lu_copy_in(b, n);
  let odd = lu_factor(w, count + b * n, n);
  var sign = select(s_one(), -s_one(), odd);
  var mantissa = R(1);
  var exponent = R(0);
  for (var k = 0u; k < n; k++) {
    let d = work[w + k * n + k];
    let m = s_abs(d);
    if (m == R(0)) {
      out0[b] = s_zero();
      out1[b] = r_neg_inf();
      return;
    }
    sign = s_mul(sign, s_unit(d));
    let parts = r_split(mantissa * r_split(m).x);
    mantissa = parts.x;
    exponent += parts.y + r_split(m).y;
  }
  out0[b] = s_unit(sign);
  out1[b] = r_ln(mantissa) + exponent * r_ln2();
}
"#;

const QR: &str = r#"
// p: count, m, n, k (columns of Q). work: the m x n factorization, then
// per reflection its first entry u0 and 2 / uᴴu.
fn factorize(b: u32, count: u32) {
  let m = p[1];
  let n = p[2];
  let k = p[3];
  let reflections = min(m, n);
  let a = b * (m * n + 2u * reflections);
  let u0 = a + m * n;
  let taus = u0 + reflections;
  for (var e = 0u; e < m * n; e++) { work[a + e] = in0[b * m * n + e]; }
  for (var j = 0u; j < reflections; j++) {
    var big = R(0);
    for (var i = j; i < m; i++) { big = max(big, s_abs(work[a + i * n + j])); }
    if (big < safe_min()) { work[taus + j] = s_zero(); continue; }
    var sq = R(0);
    for (var i = j; i < m; i++) { sq += s_abs2(s_scale(work[a + i * n + j], R(1) / big)); }
    let norm = big * sqrt(sq);
    let alpha = work[a + j * n + j];
    let beta = -s_scale(s_unit(alpha), norm);
    // The reflector u is kept divided by big, so that 2 / uᴴu neither
    // overflows nor underflows (big² would for entries below 1e-154).
    let inv = R(1) / big;
    let first = s_scale(alpha - beta, inv);
    var uu = s_abs2(first);
    for (var i = j + 1u; i < m; i++) {
      work[a + i * n + j] = s_scale(work[a + i * n + j], inv);
      uu += s_abs2(work[a + i * n + j]);
    }
    let tau = R(2) / uu;
    work[u0 + j] = first;
    work[taus + j] = s_real(tau);
    work[a + j * n + j] = beta;
    for (var c = j + 1u; c < n; c++) {
      var d = s_mul(s_conj(first), work[a + j * n + c]);
      for (var i = j + 1u; i < m; i++) { d += s_mul(s_conj(work[a + i * n + j]), work[a + i * n + c]); }
      let f = s_scale(d, tau);
      work[a + j * n + c] -= s_mul(first, f);
      for (var i = j + 1u; i < m; i++) { work[a + i * n + c] -= s_mul(work[a + i * n + j], f); }
    }
  }
  // R: the upper triangle, k x n.
  let r = b * k * n;
  for (var i = 0u; i < k; i++) {
    for (var c = 0u; c < n; c++) {
      var v = s_zero();
      if (c >= i && i < m) { v = work[a + i * n + c]; }
      out1[r + i * n + c] = v;
    }
  }
  // Q e_j for each of its k columns: the reflections applied last to first.
  let q = b * m * k;
  for (var j = 0u; j < k; j++) {
    for (var i = 0u; i < m; i++) { out0[q + i * k + j] = select(s_zero(), s_one(), i == j); }
    for (var tt = reflections; tt > 0u; tt--) {
      let t = tt - 1u;
      let tau = s_re(work[taus + t]);
      if (tau == R(0)) { continue; }
      var d = s_mul(s_conj(work[u0 + t]), out0[q + t * k + j]);
      for (var i = t + 1u; i < m; i++) { d += s_mul(s_conj(work[a + i * n + t]), out0[q + i * k + j]); }
      let f = s_scale(d, tau);
      out0[q + t * k + j] -= s_mul(work[u0 + t], f);
      for (var i = t + 1u; i < m; i++) { out0[q + i * k + j] -= s_mul(work[a + i * n + t], f); }
    }
  }
}
"#;

/// The Jacobi rotation shared by `eigh` and `svd`: given the (real,
/// non-negative) off-diagonal `r` of a Hermitian 2 x 2 block and its
/// diagonal `app`, `aqq`, the cosine and sine that zero it.
const JACOBI: &str = r#"
fn jacobi_rotation(app: R, aqq: R, r: R) -> vec2<R> {
  let t = jacobi_tangent((aqq - app) / (R(2) * r));
  let c = R(1) / sqrt(R(1) + t * t);
  return vec2<R>(c, t * c);
}
"#;

const EIGH: &str = r#"
// p: count, n. work: the full Hermitian matrix, built from x's lower
// triangle; out1 accumulates the rotations.
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let a = b * n * n;
  // Scaled to a largest magnitude of 1, as the SVD is: the convergence
  // test multiplies diagonal entries, which would overflow or underflow.
  var largest = R(0);
  for (var i = 0u; i < n; i++) {
    for (var j = 0u; j <= i; j++) { largest = max(largest, s_abs(in0[a + i * n + j])); }
  }
  let wscale = norm_scale(largest);
  for (var i = 0u; i < n; i++) {
    for (var j = 0u; j <= i; j++) {
      let v = s_scale(in0[a + i * n + j], wscale);
      work[a + i * n + j] = select(v, s_real(s_re(v)), i == j);
      work[a + j * n + i] = select(s_conj(v), s_real(s_re(v)), i == j);
      out1[a + i * n + j] = select(s_zero(), s_one(), i == j);
      out1[a + j * n + i] = select(s_zero(), s_one(), i == j);
    }
  }
  var converged = false;
  for (var sweep = 0u; sweep < 60u && !converged; sweep++) {
    converged = true;
    for (var pp = 0u; pp < n; pp++) {
      for (var q = pp + 1u; q < n; q++) {
        let apq = work[a + pp * n + q];
        let r = s_abs(apq);
        let app = s_re(work[a + pp * n + pp]);
        let aqq = s_re(work[a + q * n + q]);
        if (r <= R(0.5) * eps() * sqrt(abs(app) * abs(aqq)) || r < safe_min()) { continue; }
        converged = false;
        // Column q times conj(phase), row q times phase: apq becomes r.
        let ph = s_unit(apq);
        for (var k = 0u; k < n; k++) {
          work[a + k * n + q] = s_mul(work[a + k * n + q], s_conj(ph));
          out1[a + k * n + q] = s_mul(out1[a + k * n + q], s_conj(ph));
        }
        for (var k = 0u; k < n; k++) { work[a + q * n + k] = s_mul(work[a + q * n + k], ph); }
        let cs = jacobi_rotation(app, aqq, r);
        let c = cs.x;
        let s = cs.y;
        for (var k = 0u; k < n; k++) {
          let kp = work[a + k * n + pp];
          let kq = work[a + k * n + q];
          work[a + k * n + pp] = s_scale(kp, c) - s_scale(kq, s);
          work[a + k * n + q] = s_scale(kp, s) + s_scale(kq, c);
          let vp = out1[a + k * n + pp];
          let vq = out1[a + k * n + q];
          out1[a + k * n + pp] = s_scale(vp, c) - s_scale(vq, s);
          out1[a + k * n + q] = s_scale(vp, s) + s_scale(vq, c);
        }
        for (var k = 0u; k < n; k++) {
          let pk = work[a + pp * n + k];
          let qk = work[a + q * n + k];
          work[a + pp * n + k] = s_scale(pk, c) - s_scale(qk, s);
          work[a + q * n + k] = s_scale(pk, s) + s_scale(qk, c);
        }
        work[a + pp * n + q] = s_zero();
        work[a + q * n + pp] = s_zero();
        work[a + pp * n + pp] = s_real(s_re(work[a + pp * n + pp]));
        work[a + q * n + q] = s_real(s_re(work[a + q * n + q]));
      }
    }
  }
  if (!converged) { idx[b] = NO_CONVERGENCE; return; }
  // Ascending, eigenvectors along.
  let v = b * n;
  for (var i = 0u; i < n; i++) { out0[v + i] = s_re(work[a + i * n + i]) / wscale; }
  for (var i = 0u; i < n; i++) {
    var low = i;
    for (var j = i + 1u; j < n; j++) { if (out0[v + j] < out0[v + low]) { low = j; } }
    if (low == i) { continue; }
    let t = out0[v + i];
    out0[v + i] = out0[v + low];
    out0[v + low] = t;
    for (var k = 0u; k < n; k++) {
      let e = out1[a + k * n + i];
      out1[a + k * n + i] = out1[a + k * n + low];
      out1[a + k * n + low] = e;
    }
  }
}
"#;

const SVD: &str = r#"
// p: count, m, n, full. With tall = x (m >= n) or xᴴ (m < n), M x N,
// N = min(m, n): tall V = W is orthogonalized by rotations that V
// accumulates; then W = L diag(s), L completed to M x M when full.
// work: W (M x N), V (N x N), L (M x lc).
fn factorize(b: u32, count: u32) {
  let m = p[1];
  let n = p[2];
  let full = p[3] != 0u;
  let flip = m < n;
  let big_m = max(m, n);
  let big_n = min(m, n);
  let lc = select(big_n, big_m, full);
  let wb = b * (big_m * big_n + big_n * big_n + big_m * lc);
  let vb = wb + big_m * big_n;
  let lb = vb + big_n * big_n;
  let x = b * m * n;
  // W is x scaled to a largest magnitude of 1, so that the column sums of
  // squares below neither underflow nor overflow; the singular values are
  // scaled back at the end.
  var largest = R(0);
  for (var e = 0u; e < m * n; e++) { largest = max(largest, s_abs(in0[x + e])); }
  let wscale = norm_scale(largest);
  for (var i = 0u; i < big_m; i++) {
    for (var j = 0u; j < big_n; j++) {
      if (flip) {
        work[wb + i * big_n + j] = s_scale(s_conj(in0[x + j * n + i]), wscale);
      } else {
        work[wb + i * big_n + j] = s_scale(in0[x + i * n + j], wscale);
      }
    }
  }
  for (var e = 0u; e < big_n * big_n; e++) { work[vb + e] = select(s_zero(), s_one(), e % (big_n + 1u) == 0u); }
  let tol = R(f32(big_m)) * eps();
  var converged = false;
  for (var sweep = 0u; sweep < 60u && !converged; sweep++) {
    converged = true;
    for (var i = 0u; i < big_n; i++) {
      for (var j = i + 1u; j < big_n; j++) {
        var alpha = R(0);
        var beta = R(0);
        var g = s_zero();
        for (var r = 0u; r < big_m; r++) {
          let wi = work[wb + r * big_n + i];
          let wj = work[wb + r * big_n + j];
          alpha += s_abs2(wi);
          beta += s_abs2(wj);
          g += s_mul(s_conj(wi), wj);
        }
        let gm = s_abs(g);
        if (gm <= tol * sqrt(alpha) * sqrt(beta) || gm < safe_min()) { continue; }
        converged = false;
        let ph = s_conj(s_unit(g));
        let cs = jacobi_rotation(alpha, beta, gm);
        let c = cs.x;
        let s = cs.y;
        for (var r = 0u; r < big_m; r++) {
          let wi = work[wb + r * big_n + i];
          let wj = s_mul(work[wb + r * big_n + j], ph);
          work[wb + r * big_n + i] = s_scale(wi, c) - s_scale(wj, s);
          work[wb + r * big_n + j] = s_scale(wi, s) + s_scale(wj, c);
        }
        for (var r = 0u; r < big_n; r++) {
          let vi = work[vb + r * big_n + i];
          let vj = s_mul(work[vb + r * big_n + j], ph);
          work[vb + r * big_n + i] = s_scale(vi, c) - s_scale(vj, s);
          work[vb + r * big_n + j] = s_scale(vi, s) + s_scale(vj, c);
        }
      }
    }
  }
  if (!converged) { idx[b] = NO_CONVERGENCE; return; }
  // Singular values, descending, columns of W and V along.
  let sv = b * big_n;
  for (var j = 0u; j < big_n; j++) {
    var big = R(0);
    for (var r = 0u; r < big_m; r++) { big = max(big, s_abs(work[wb + r * big_n + j])); }
    let scale = norm_scale(big);
    var sq = R(0);
    for (var r = 0u; r < big_m; r++) { sq += s_abs2(s_scale(work[wb + r * big_n + j], scale)); }
    out1[sv + j] = sqrt(sq) / scale;
  }
  for (var i = 0u; i < big_n; i++) {
    var top = i;
    for (var j = i + 1u; j < big_n; j++) { if (out1[sv + j] > out1[sv + top]) { top = j; } }
    if (top == i) { continue; }
    let t = out1[sv + i];
    out1[sv + i] = out1[sv + top];
    out1[sv + top] = t;
    for (var r = 0u; r < big_m; r++) {
      let e = work[wb + r * big_n + i];
      work[wb + r * big_n + i] = work[wb + r * big_n + top];
      work[wb + r * big_n + top] = e;
    }
    for (var r = 0u; r < big_n; r++) {
      let e = work[vb + r * big_n + i];
      work[vb + r * big_n + i] = work[vb + r * big_n + top];
      work[vb + r * big_n + top] = e;
    }
  }
  // L: the normalized columns of W whose singular value is not lost in
  // rounding, then orthonormal completions for the rest.
  let small = select(out1[sv] * tol, R(0), big_n == 0u);
  for (var j = 0u; j < lc; j++) {
    let keep = j < big_n && out1[sv + j] > small && out1[sv + j] > R(0);
    if (keep) {
      let inv = R(1) / out1[sv + j];
      for (var r = 0u; r < big_m; r++) { work[lb + r * lc + j] = s_scale(work[wb + r * big_n + j], inv); }
      continue;
    }
    // The unit vector least covered by columns 0..j, made orthogonal to
    // them (twice, for rounding) and normalized.
    var pick = 0u;
    var most = R(-1);
    for (var t = 0u; t < big_m; t++) {
      var covered = R(0);
      for (var c = 0u; c < j; c++) { covered += s_abs2(work[lb + t * lc + c]); }
      if (R(1) - covered > most) { most = R(1) - covered; pick = t; }
    }
    for (var r = 0u; r < big_m; r++) { work[lb + r * lc + j] = select(s_zero(), s_one(), r == pick); }
    for (var twice = 0u; twice < 2u; twice++) {
      for (var c = 0u; c < j; c++) {
        var d = s_zero();
        for (var r = 0u; r < big_m; r++) { d += s_mul(s_conj(work[lb + r * lc + c]), work[lb + r * lc + j]); }
        for (var r = 0u; r < big_m; r++) { work[lb + r * lc + j] -= s_mul(work[lb + r * lc + c], d); }
      }
    }
    var sq = R(0);
    for (var r = 0u; r < big_m; r++) { sq += s_abs2(work[lb + r * lc + j]); }
    let inv = R(1) / sqrt(sq);
    for (var r = 0u; r < big_m; r++) { work[lb + r * lc + j] = s_scale(work[lb + r * lc + j], inv); }
  }
  for (var j = 0u; j < big_n; j++) { out1[sv + j] /= wscale; }
  // x = L S Vᴴ: U = L, Vh = Vᴴ; xᴴ = L S Vᴴ: U = V, Vh = Lᴴ.
  let uc = select(big_n, m, full);
  let vr = select(big_n, n, full);
  let ub = b * m * uc;
  let hb = b * vr * n;
  for (var i = 0u; i < m; i++) {
    for (var j = 0u; j < uc; j++) {
      if (flip) {
        out0[ub + i * uc + j] = work[vb + i * big_n + j];
      } else {
        out0[ub + i * uc + j] = work[lb + i * lc + j];
      }
    }
  }
  for (var i = 0u; i < vr; i++) {
    for (var j = 0u; j < n; j++) {
      if (flip) {
        out2[hb + i * n + j] = s_conj(work[lb + j * lc + i]);
      } else {
        out2[hb + i * n + j] = s_conj(work[vb + j * big_n + i]);
      }
    }
  }
}
"#;

const EIG: &str = r#"
// p: count, n. work (complex): H, Z, X (n x n each), then n rotation
// sines and n cosines. idx: statuses, then n words per matrix for the
// pairing of real input's eigenvalues.
fn h_at(h: u32, n: u32, i: u32, j: u32) -> u32 { return h + i * n + j; }
fn c_abs1(a: C) -> R { return abs(a.x) + abs(a.y); }
fn factorize(b: u32, count: u32) {
  let n = p[1];
  let h = b * (3u * n * n + 2u * n);
  let z = h + n * n;
  let xb = z + n * n;
  let sines = xb + n * n;
  let cosines = sines + n;
  let zero = C(R(0), R(0));
  let one = C(R(1), R(0));
  var norm = R(0);
  for (var e = 0u; e < n * n; e++) { norm = max(norm, c_abs(s_to_c(in0[b * n * n + e]))); }
  // Scaled to a largest magnitude of 1, as eigh and the SVD are: the
  // reflections square entries, which overflow from about 1e19 in f32.
  // The eigenvalues are scaled back; the unit eigenvectors need not be.
  let wscale = norm_scale(norm);
  norm *= wscale;
  for (var e = 0u; e < n * n; e++) {
    work[h + e] = s_to_c(in0[b * n * n + e]) * wscale;
    work[z + e] = select(zero, one, e % (n + 1u) == 0u);
  }
  // Hessenberg form: a reflection per column zeroes it below the
  // subdiagonal, applied on both sides of H and to Z. The reflection's
  // vector sits in X's first column.
  for (var j = 0u; j + 2u < n; j++) {
    var big = R(0);
    for (var i = j + 1u; i < n; i++) { big = max(big, c_abs(work[h_at(h, n, i, j)])); }
    if (big < safe_min()) { continue; }
    var sq = R(0);
    for (var i = j + 1u; i < n; i++) { let v = work[h_at(h, n, i, j)] / big; sq += dot(v, v); }
    let norm_x = big * sqrt(sq);
    let alpha = work[h_at(h, n, j + 1u, j)];
    let ma = c_abs(alpha);
    let ph = select(alpha / ma, one, ma == R(0));
    let beta = -ph * norm_x;
    var uu = R(0);
    for (var i = j + 1u; i < n; i++) {
      let u = select(work[h_at(h, n, i, j)], alpha - beta, i == j + 1u);
      work[xb + i] = u;
      let us = u / big;
      uu += dot(us, us);
    }
    let tau = R(2) / (uu * big * big);
    for (var c = j; c < n; c++) {
      var d = zero;
      for (var i = j + 1u; i < n; i++) { d += c_mul(c_conj(work[xb + i]), work[h_at(h, n, i, c)]); }
      d *= tau;
      for (var i = j + 1u; i < n; i++) { work[h_at(h, n, i, c)] -= c_mul(work[xb + i], d); }
    }
    for (var r = 0u; r < n; r++) {
      var d = zero;
      var dz = zero;
      for (var i = j + 1u; i < n; i++) {
        d += c_mul(work[h_at(h, n, r, i)], work[xb + i]);
        dz += c_mul(work[h_at(z, n, r, i)], work[xb + i]);
      }
      d *= tau;
      dz *= tau;
      for (var i = j + 1u; i < n; i++) {
        work[h_at(h, n, r, i)] -= c_mul(d, c_conj(work[xb + i]));
        work[h_at(z, n, r, i)] -= c_mul(dz, c_conj(work[xb + i]));
      }
    }
    work[h_at(h, n, j + 1u, j)] = beta;
    for (var i = j + 2u; i < n; i++) { work[h_at(h, n, i, j)] = zero; }
  }
  // Shifted QR on the active block lo..hi until every subdiagonal entry
  // is negligible: H becomes the Schur form T = Zᴴ x Z.
  var hi = i32(n) - 1;
  var iterations = 0u;
  var total = 0u;
  while (hi > 0) {
    var lo = hi;
    while (lo > 0) {
      let sub = c_abs1(work[h_at(h, n, u32(lo), u32(lo - 1))]);
      var scale = c_abs1(work[h_at(h, n, u32(lo - 1), u32(lo - 1))]) + c_abs1(work[h_at(h, n, u32(lo), u32(lo))]);
      if (scale == R(0)) { scale = norm; }
      if (sub <= eps() * scale || sub < safe_min()) {
        work[h_at(h, n, u32(lo), u32(lo - 1))] = zero;
        break;
      }
      lo -= 1;
    }
    if (lo == hi) {
      hi -= 1;
      iterations = 0u;
      continue;
    }
    iterations += 1u;
    total += 1u;
    if (total > 30u * n) { idx[b] = NO_CONVERGENCE; return; }
    let l = u32(lo);
    let e = u32(hi);
    // The eigenvalue of the trailing 2 x 2 block nearer its last entry,
    // or an exceptional shift after 10 and 20 fruitless iterations.
    let a11 = work[h_at(h, n, e - 1u, e - 1u)];
    let a12 = work[h_at(h, n, e - 1u, e)];
    let a21 = work[h_at(h, n, e, e - 1u)];
    let a22 = work[h_at(h, n, e, e)];
    var mu: C;
    if (iterations % 10u == 0u) {
      mu = a22 + C(R(0.75) * c_abs(a21), R(0));
    } else {
      let half = (a11 - a22) * R(0.5);
      let root = c_sqrt(c_mul(half, half) + c_mul(a12, a21));
      let m1 = a22 + half + root;
      let m2 = a22 + half - root;
      mu = select(m2, m1, c_abs(m1 - a22) < c_abs(m2 - a22));
    }
    for (var k = l; k <= e; k++) { work[h_at(h, n, k, k)] -= mu; }
    // H - mu I = G R: rotations from the left, rows k and k + 1.
    for (var k = l; k < e; k++) {
      let x = work[h_at(h, n, k, k)];
      let y = work[h_at(h, n, k + 1u, k)];
      let mx = c_abs(x);
      let my = c_abs(y);
      let big = max(mx, my);
      var c = R(1);
      var s = zero;
      if (big > R(0)) {
        let nu = big * sqrt((mx / big) * (mx / big) + (my / big) * (my / big));
        if (mx == R(0)) {
          c = R(0);
          s = one;
        } else {
          c = mx / nu;
          s = c_mul(x / mx, c_conj(y)) / nu;
        }
      }
      work[cosines + k] = C(c, R(0));
      work[sines + k] = s;
      for (var j = k; j < n; j++) {
        let h1 = work[h_at(h, n, k, j)];
        let h2 = work[h_at(h, n, k + 1u, j)];
        work[h_at(h, n, k, j)] = h1 * c + c_mul(s, h2);
        work[h_at(h, n, k + 1u, j)] = -c_mul(c_conj(s), h1) + h2 * c;
      }
    }
    // R Gᴴ + mu I, and Z Gᴴ.
    for (var k = l; k < e; k++) {
      let c = work[cosines + k].x;
      let s = work[sines + k];
      for (var r = 0u; r <= min(k + 2u, e); r++) {
        let m1 = work[h_at(h, n, r, k)];
        let m2 = work[h_at(h, n, r, k + 1u)];
        work[h_at(h, n, r, k)] = m1 * c + c_mul(m2, c_conj(s));
        work[h_at(h, n, r, k + 1u)] = -c_mul(m1, s) + m2 * c;
      }
      for (var r = 0u; r < n; r++) {
        let m1 = work[h_at(z, n, r, k)];
        let m2 = work[h_at(z, n, r, k + 1u)];
        work[h_at(z, n, r, k)] = m1 * c + c_mul(m2, c_conj(s));
        work[h_at(z, n, r, k + 1u)] = -c_mul(m1, s) + m2 * c;
      }
    }
    for (var k = l; k <= e; k++) { work[h_at(h, n, k, k)] += mu; }
  }
  // Eigenvectors of T by back-substitution (X upper triangular), then
  // V = Z X, each column scaled to unit norm, into out1.
  let smin = max(eps() * norm, safe_min());
  for (var k = 0u; k < n; k++) {
    let lambda = work[h_at(h, n, k, k)];
    for (var i = 0u; i < n; i++) { work[h_at(xb, n, i, k)] = select(zero, one, i == k); }
    for (var ii = k; ii > 0u; ii--) {
      let i = ii - 1u;
      var s = zero;
      for (var j = i + 1u; j <= k; j++) { s += c_mul(work[h_at(h, n, i, j)], work[h_at(xb, n, j, k)]); }
      var d = work[h_at(h, n, i, i)] - lambda;
      if (c_abs(d) < smin) { d = C(smin, R(0)); }
      work[h_at(xb, n, i, k)] = -c_div(s, d);
    }
  }
  let vo = b * n * n;
  for (var k = 0u; k < n; k++) {
    var big = R(0);
    for (var r = 0u; r < n; r++) {
      var v = zero;
      for (var j = 0u; j <= k; j++) { v += c_mul(work[h_at(z, n, r, j)], work[h_at(xb, n, j, k)]); }
      out1[vo + r * n + k] = v;
      big = max(big, c_abs(v));
    }
    var sq = R(0);
    for (var r = 0u; r < n; r++) { let v = out1[vo + r * n + k] / big; sq += dot(v, v); }
    let inv = R(1) / (big * sqrt(sq));
    for (var r = 0u; r < n; r++) { out1[vo + r * n + k] *= inv; }
  }
  let lo_out = b * n;
  // The eigenvalues scaled back, in H too, where the pairing reads them.
  for (var k = 0u; k < n; k++) {
    let l = work[h_at(h, n, k, k)] / wscale;
    work[h_at(h, n, k, k)] = l;
    out0[lo_out + k] = l;
  }
  if (p[2] != 0u) { pair_conjugates(b, n, count + b * n, h, xb); }
}
// For real input: an eigenvalue whose own conjugate is nearer to it than
// to any other is real (its imaginary part and its eigenvector's are
// rounding: both are made real); the others pair with the eigenvalue
// nearest their conjugate, as λ, conj(λ) (positive imaginary part
// first) with eigenvectors v, conj(v). The eigenvalues are read from
// T's diagonal, the eigenvectors from a copy in X, which is free by now.
fn pair_conjugates(b: u32, n: u32, taken: u32, h: u32, xb: u32) {
  let lo = b * n;
  let vo = b * n * n;
  for (var k = 0u; k < n; k++) { idx[taken + k] = 0u; }
  for (var e = 0u; e < n * n; e++) { work[xb + e] = out1[vo + e]; }
  var at = 0u;
  for (var i = 0u; i < n; i++) {
    if (idx[taken + i] != 0u) { continue; }
    idx[taken + i] = 1u;
    let li = work[h_at(h, n, i, i)];
    var partner = n;
    var nearest = R(2) * abs(li.y);
    for (var j = 0u; j < n; j++) {
      if (idx[taken + j] != 0u) { continue; }
      let d = c_abs(work[h_at(h, n, j, j)] - c_conj(li));
      if (d < nearest) { nearest = d; partner = j; }
    }
    if (partner == n) {
      out0[lo + at] = C(li.x, R(0));
      // v times the conjugate phase of its largest component, then real.
      var top = 0u;
      var best = R(-1);
      for (var r = 0u; r < n; r++) {
        let m = c_abs(work[xb + r * n + i]);
        if (m > best) { best = m; top = r; }
      }
      let ph = c_conj(work[xb + top * n + i] / max(best, safe_min()));
      var sq = R(0);
      for (var r = 0u; r < n; r++) {
        let v = c_mul(work[xb + r * n + i], ph).x;
        out1[vo + r * n + at] = C(v, R(0));
        sq += v * v;
      }
      let inv = R(1) / sqrt(sq);
      for (var r = 0u; r < n; r++) { out1[vo + r * n + at] *= inv; }
      at += 1u;
      continue;
    }
    idx[taken + partner] = 1u;
    let lj = work[h_at(h, n, partner, partner)];
    let first = select(partner, i, li.y > R(0));
    let mean = C((li.x + lj.x) * R(0.5), abs(li.y - lj.y) * R(0.5));
    out0[lo + at] = mean;
    out0[lo + at + 1u] = c_conj(mean);
    for (var r = 0u; r < n; r++) {
      let v = work[xb + r * n + first];
      out1[vo + r * n + at] = v;
      out1[vo + r * n + at + 1u] = c_conj(v);
    }
    at += 2u;
  }
}
"#;

/// A storage binding of the kernel's interface.
struct Binding {
    name: &'static str,
    ty: &'static str,
    write: bool,
}

/// The bindings after the params (binding 0): inputs, outputs, the
/// workspace (for all but Cholesky) and the index words, with their
/// element types.
fn bindings(op: &str) -> Option<Vec<Binding>> {
    let b = |name, ty, write| Binding { name, ty, write };

    let mut list = match op {
        "cholesky" => vec![b("in0", "S", false), b("out0", "S", true)],
        "inv" | "det" => vec![b("in0", "S", false), b("out0", "S", true)],
        "solve" => vec![b("in0", "S", false), b("in1", "S", false), b("out0", "S", true)],
        "slogdet" => vec![b("in0", "S", false), b("out0", "S", true), b("out1", "R", true)],
        "qr" => vec![b("in0", "S", false), b("out0", "S", true), b("out1", "S", true)],
        "eigh" => vec![b("in0", "S", false), b("out0", "R", true), b("out1", "S", true)],
        "svd" => vec![
            b("in0", "S", false),
            b("out0", "S", true),
            b("out1", "R", true),
            b("out2", "S", true),
        ],
        "eig" => vec![b("in0", "S", false), b("out0", "C", true), b("out1", "C", true)],
        _ => return None,
    };
    // Cholesky works in its output.
    match op {
        "cholesky" => {}
        "eig" => list.push(b("work", "C", true)),
        _ => list.push(b("work", "S", true)),
    }
    list.push(b("idx", "u32", true));
    Some(list)
}

/// The WGSL of factorization `op` (its name under `linalg::`) for input of
/// `dtype` (f32, f64 or c64), or `None` for another op or dtype.
pub fn source(op: &str, dtype: DType) -> Option<String> {
    let (real, scalar) = match dtype {
        DType::F32 => (F32, REAL),
        DType::F64 => (F64, REAL),
        DType::C64 => (F32, COMPLEX),
        _ => return None,
    };
    let body = match op {
        "cholesky" => CHOLESKY.to_owned(),
        "inv" => format!("{LU}{INV}"),
        "solve" => format!("{LU}{SOLVE}"),
        "det" => format!("{LU}{DET}"),
        "slogdet" => format!("{LU}{SLOGDET}"),
        "qr" => QR.to_owned(),
        "eigh" => format!("{JACOBI}{EIGH}"),
        "svd" => format!("{JACOBI}{SVD}"),
        "eig" => EIG.to_owned(),
        _ => return None,
    };
    let mut wgsl = String::new();
    wgsl.push_str(real);
    wgsl.push_str(COMMON);
    wgsl.push_str(scalar);
    wgsl.push_str(ENTRY);
    wgsl.push_str(&format!(
        "const NO_FACTORIZATION: u32 = {NO_FACTORIZATION}u;\nconst NO_CONVERGENCE: u32 = {NO_CONVERGENCE}u;\n\
         const LOOP_LIMIT: u32 = {LOOP_LIMIT}u;\nconst WORKGROUP: u32 = {WORKGROUP}u;\n"
    ));
    wgsl.push_str("@group(0) @binding(0) var<storage, read> p: array<u32>;\n");
    for (slot, binding) in bindings(op)?.iter().enumerate() {
        let access = if binding.write { "read_write" } else { "read" };
        wgsl.push_str(&format!(
            "@group(0) @binding({}) var<storage, {access}> {}: array<{}>;\n",
            slot + 1,
            binding.name,
            binding.ty
        ));
    }
    wgsl.push_str(&body);
    Some(wgsl)
}
