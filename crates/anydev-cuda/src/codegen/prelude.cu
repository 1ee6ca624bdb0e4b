// anydev CUDA prelude: storage types, exact f16/bf16 conversions, the
// scalar semantics shared with the host kernels (anydev-kernels), launch
// parameter blocks and block-level reduction helpers; complex.cu follows
// it. Every generated module starts with this text; it needs no headers,
// so NVRTC compiles it without a CUDA toolkit installed.

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
// A 16-byte element (c128) as plain bits, for the ops that only move bytes.
struct alignas(16) b128 {
    u64 lo, hi;
};

#define ANYDEV_MAXD 12
#define ANYDEV_BLOCK 256
#define ANYDEV_MAXOPS 5

// ---- f16 / bf16 <-> f32, bit-exact with the `half` crate ----------------

__device__ __forceinline__ float h2f(u16 h) {
    u32 sign = ((u32)(h & 0x8000u)) << 16;
    u32 exp = (h >> 10) & 0x1fu;
    u32 man = h & 0x3ffu;
    if (exp == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0u) {
        float f = (float)man * 5.9604644775390625e-8f;  // man * 2^-24, exact
        return sign ? -f : f;
    }
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
}

__device__ __forceinline__ u16 f2h(float value) {
    u32 x = __float_as_uint(value);
    u32 sign = x & 0x80000000u;
    u32 exp = x & 0x7f800000u;
    u32 man = x & 0x007fffffu;
    if (exp == 0x7f800000u) {
        u32 nan_bit = man == 0u ? 0u : 0x0200u;
        return (u16)((sign >> 16) | 0x7c00u | nan_bit | (man >> 13));
    }
    u32 half_sign = sign >> 16;
    int half_exp = (int)(exp >> 23) - 127 + 15;
    if (half_exp >= 0x1f) return (u16)(half_sign | 0x7c00u);
    if (half_exp <= 0) {
        if (14 - half_exp > 24) return (u16)half_sign;
        u32 m = man | 0x00800000u;
        u32 half_man = m >> (14 - half_exp);
        u32 round_bit = 1u << (13 - half_exp);
        if ((m & round_bit) != 0u && (m & (3u * round_bit - 1u)) != 0u) half_man += 1u;
        return (u16)(half_sign | half_man);
    }
    u32 he = ((u32)half_exp) << 10;
    u32 hm = man >> 13;
    u32 round_bit = 0x00001000u;
    if ((man & round_bit) != 0u && (man & (3u * round_bit - 1u)) != 0u) return (u16)((half_sign | he | hm) + 1u);
    return (u16)(half_sign | he | hm);
}

__device__ __forceinline__ float b2f(u16 b) { return __uint_as_float(((u32)b) << 16); }

__device__ __forceinline__ u16 f2b(float value) {
    u32 x = __float_as_uint(value);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)((x >> 16) | 0x0040u);
    u32 round_bit = 0x00008000u;
    if ((x & round_bit) != 0u && (x & (3u * round_bit - 1u)) != 0u) return (u16)((x >> 16) + 1u);
    return (u16)(x >> 16);
}

// f64 -> f32 rounding to odd, so a further rounding to f16/bf16 rounds once.
__device__ __forceinline__ float f32_odd(double v) {
    float f = __double2float_rn(v);
    if (!(fabsf(f) < __int_as_float(0x7f800000)) || (double)f == v) return f;
    u32 bits = __float_as_uint(f);
    if (fabs((double)f) > fabs(v)) bits -= 1u;
    return __uint_as_float(bits | 1u);
}

// ---- math overloads used by the templates below -------------------------

__device__ __forceinline__ bool m_isnan(float x) { return x != x; }
__device__ __forceinline__ bool m_isnan(double x) { return x != x; }
__device__ __forceinline__ bool m_isinf(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
__device__ __forceinline__ bool m_isinf(double x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ bool m_isfinite(float x) { return fabsf(x) < __int_as_float(0x7f800000); }
__device__ __forceinline__ bool m_isfinite(double x) { return fabs(x) < __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ bool m_signbit(float x) { return (__float_as_uint(x) >> 31) != 0u; }
__device__ __forceinline__ bool m_signbit(double x) { return __double_as_longlong(x) < 0; }
__device__ __forceinline__ float m_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float m_floor(float a) { return floorf(a); }
__device__ __forceinline__ double m_floor(double a) { return floor(a); }
__device__ __forceinline__ float m_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double m_copysign(double a, double b) { return copysign(a, b); }
__device__ __forceinline__ float m_exp(float a) { return expf(a); }
__device__ __forceinline__ double m_exp(double a) { return exp(a); }
__device__ __forceinline__ float m_log1p(float a) { return log1pf(a); }
__device__ __forceinline__ double m_log1p(double a) { return log1p(a); }

// ---- float semantics (NumPy's, as in anydev-kernels' arith.rs) ----------

template <class C>
__device__ __forceinline__ void divmod_c(C a, C b, C& q, C& m) {
    const C zero = (C)0;
    if (b == zero) {
        q = a / b;
        m = m_fmod(a, b);
        return;
    }
    m = m_fmod(a, b);
    C div = (a - m) / b;
    if (m != zero) {
        if ((b < zero) != (m < zero)) {
            m = m + b;
            div = div - (C)1;
        }
    } else {
        m = m_copysign(zero, b);
    }
    if (div != zero) {
        C f = m_floor(div);
        q = (div - f > (C)0.5) ? f + (C)1 : f;
    } else {
        q = m_copysign(zero, a / b);
    }
}

template <class C>
__device__ __forceinline__ C floordiv_c(C a, C b) {
    C q, m;
    divmod_c(a, b, q, m);
    return q;
}

template <class C>
__device__ __forceinline__ C remainder_c(C a, C b) {
    C q, m;
    divmod_c(a, b, q, m);
    return m;
}

template <class C>
__device__ __forceinline__ C sign_c(C x) {
    if (x > (C)0) return (C)1;
    if (x < (C)0) return (C)-1;
    if (x == (C)0) return (C)0;
    return x;
}

template <class C>
__device__ __forceinline__ C logaddexp_c(C x, C y) {
    if (x == y) return x + (C)0.69314718055994530942;
    C d = x - y;
    if (d > (C)0) return x + m_log1p(m_exp(-d));
    if (d <= (C)0) return y + m_log1p(m_exp(d));
    return d;
}

// nextafter on the storage bits `B` of an `nbits`-wide float whose values
// (in the compute type) are x and to.
template <class B, class C>
__device__ __forceinline__ B nextafter_bits(B bx, B bto, C x, C to, int nbits) {
    if (x != x) return bx;
    if (to != to || x == to) return bto;
    B sign = (B)((B)1 << (nbits - 1));
    if ((B)(bx & (B)~sign) == (B)0) return (B)((bto & sign) | (B)1);
    bool away = (x < to) == ((bx & sign) == (B)0);
    return away ? (B)(bx + (B)1) : (B)(bx - (B)1);
}

// ---- integer semantics (NumPy 2: wrapping, x / 0 == 0) ------------------

template <class T>
__device__ __forceinline__ bool is_signed_t() { return (T)(-1) < (T)0; }

// W is the unsigned type arithmetic wraps in (u32 up to 4 bytes, else u64).
template <class T, class W>
__device__ __forceinline__ T ifloordiv(T a, T b) {
    if (b == (T)0) return (T)0;
    if (is_signed_t<T>() && b == (T)(-1)) return (T)((W)0 - (W)a);
    T q = (T)(a / b);
    T r = (T)(a % b);
    if (r != (T)0 && ((a < (T)0) != (b < (T)0))) q = (T)(q - (T)1);
    return q;
}

template <class T, class W>
__device__ __forceinline__ T iremainder(T a, T b) {
    if (b == (T)0) return (T)0;
    if (is_signed_t<T>() && b == (T)(-1)) return (T)0;
    T r = (T)(a % b);
    if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)((W)r + (W)b);
    return r;
}

template <class T, class W>
__device__ __forceinline__ T ipow(T a, T b) {
    // A negative exponent: 1/a^|b| truncated, so 1 for a = 1, -1 or 1 for
    // a = -1 (by the exponent's parity) and 0 otherwise, as PyTorch gives.
    if (b < (T)0) {
        if (a == (T)1) return (T)1;
        if (a == (T)(-1)) return (b & (T)1) ? (T)(-1) : (T)1;
        return (T)0;
    }
    W base = (W)a, r = (W)1;
    u64 e = (u64)b;
    while (e != 0ull) {
        if (e & 1ull) r = (W)(r * base);
        base = (W)(base * base);
        e >>= 1;
    }
    return (T)r;
}

// Shifts by a negative amount or by at least the width give 0 (or -1 for
// the right shift of a negative value). `(u64)b` maps negatives far out of range.
template <class T, class W>
__device__ __forceinline__ T ishl(T a, T b, int bits) {
    if ((u64)b >= (u64)bits) return (T)0;
    return (T)((W)a << (int)b);
}

template <class T>
__device__ __forceinline__ T ishr(T a, T b, int bits) {
    if ((u64)b >= (u64)bits) return a < (T)0 ? (T)(-1) : (T)0;
    return (T)(a >> (int)b);
}

// Float to integer as Rust's `as`: truncate toward zero, saturate, NaN -> 0.
template <class T>
__device__ __forceinline__ T sat_cast(double v, double lo, double hi, T tlo, T thi) {
    if (v != v) return (T)0;
    if (v <= lo) return tlo;
    if (v >= hi) return thi;
    return (T)v;
}

// ---- launch parameter blocks --------------------------------------------

// An elementwise iteration space: `n` elements of `shape` (row-major), and
// per operand (inputs first, the output last) its strides in elements.
struct EwParams {
    u64 n;
    int ndim;
    int pad;
    i64 shape[ANYDEV_MAXD];
    i64 st[ANYDEV_MAXOPS][ANYDEV_MAXD];
};

// One input operand: a pointer, or (when null) a scalar given by its bits.
template <class T>
struct In {
    const T* p;
    u64 bits;
};

// Scalars travel in 64 bits (the plugin ABI's); a 16-byte element's high
// half is zero, which is the only c128 scalar a kernel is given (the zero
// fill of an empty matmul: the array layer passes other c128 scalars as
// arrays).
template <class T>
__device__ __forceinline__ T scalar_of(u64 bits) {
    union {
        u64 b[2];
        T t;
    } u;
    u.b[0] = bits;  // little-endian: the value's bytes are the low bytes
    u.b[1] = 0ull;
    return u.t;
}

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

// Element offsets of linear index i in the operands 0..nops-1.
template <class I>
__device__ __forceinline__ void ew_offsets(const EwParams& p, I i, int nops, i64* off) {
#pragma unroll
    for (int k = 0; k < ANYDEV_MAXOPS; ++k) off[k] = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
        I s = (I)p.shape[d];
        I c = i % s;
        i = i / s;
        for (int k = 0; k < nops; ++k) off[k] += (i64)c * p.st[k][d];
    }
}

__device__ __forceinline__ u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }

// ---- warp and block reductions ------------------------------------------

__device__ __forceinline__ float shfl_down(float v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ double shfl_down(double v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ int shfl_down(int v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u32 shfl_down(u32 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i64 shfl_down(i64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u64 shfl_down(u64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ float shfl_up(float v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
__device__ __forceinline__ double shfl_up(double v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
__device__ __forceinline__ int shfl_up(int v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u32 shfl_up(u32 v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i64 shfl_up(i64 v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u64 shfl_up(u64 v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }

// Block-wide reduction of R's accumulator (blockDim.x a multiple of 32, at
// most 1024); the result is valid in thread 0.
template <class R>
__device__ __forceinline__ typename R::Acc block_reduce(typename R::Acc acc) {
    __shared__ typename R::Acc warp_acc[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = R::combine(acc, R::shfl(acc, o));
    if (lane == 0) warp_acc[warp] = acc;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    if (warp == 0) {
        acc = lane < warps ? warp_acc[lane] : R::init();
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc = R::combine(acc, R::shfl(acc, o));
    }
    __syncthreads();
    return acc;
}

// Block-wide inclusive scan with an associative `op` (0 = add, 1 = mul);
// `total` receives the block's combined value in every thread.
template <class A, int OP>
__device__ __forceinline__ A block_scan(A v, A identity, A* total) {
    __shared__ A warp_tot[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        A u = shfl_up(v, o);
        if (lane >= o) v = OP == 0 ? (A)(v + u) : (A)(v * u);
    }
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    if (warp == 0) {
        A w = lane < warps ? warp_tot[lane] : identity;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            A u = shfl_up(w, o);
            if (lane >= o) w = OP == 0 ? (A)(w + u) : (A)(w * u);
        }
        warp_tot[lane] = w;
    }
    __syncthreads();
    if (warp > 0) {
        A before = warp_tot[warp - 1];
        v = OP == 0 ? (A)(before + v) : (A)(before * v);
    }
    *total = warp_tot[warps - 1];
    __syncthreads();
    return v;
}

// ---- reductions ---------------------------------------------------------

// Kept dims (one output each) and reduced dims of a reduction, with x's and
// out's strides in elements.
struct RedParams {
    u64 n_out;
    u64 n_red;
    u64 chunk;
    int splits;
    int kdim;
    int rdim;
    int pad;
    i64 kshape[ANYDEV_MAXD];
    i64 kst_x[ANYDEV_MAXD];
    i64 kst_o[ANYDEV_MAXD];
    i64 rshape[ANYDEV_MAXD];
    i64 rst[ANYDEV_MAXD];
};

__device__ __forceinline__ void kept_offsets(const RedParams& p, u64 o, i64& ox, i64& oo) {
    ox = 0;
    oo = 0;
    for (int d = p.kdim - 1; d >= 0; --d) {
        u64 s = (u64)p.kshape[d];
        i64 c = (i64)(o % s);
        o /= s;
        ox += c * p.kst_x[d];
        oo += c * p.kst_o[d];
    }
}

__device__ __forceinline__ i64 red_offset(const RedParams& p, u64 r) {
    i64 off = 0;
    for (int d = p.rdim - 1; d >= 0; --d) {
        u64 s = (u64)p.rshape[d];
        off += (i64)(r % s) * p.rst[d];
        r /= s;
    }
    return off;
}

template <class C>
struct ArgAcc {
    C v;
    i64 i;
};

// Folds one thread's values into a reducer's accumulator. Sums of inexact
// dtypes (R::tiered) fold 16 values into one partial, 16 of those into the
// next, and so on for three tiers before the total, so the thread's
// rounding error grows with 48 + n / 4096 rather than with its n values
// (a thread adding a column of 2e6 copies of 0.1f32 one after another is
// off by about 1%).
template <class R>
struct Fold {
    typename R::Acc total, b0, b1, b2;
    u32 n;
    __device__ __forceinline__ Fold() : total(R::init()), b0(R::init()), b1(R::init()), b2(R::init()), n(0) {}
    template <class T>
    __device__ __forceinline__ void add(T x, i64 i) {
        if (!R::tiered) {
            total = R::step(total, x, i);
            return;
        }
        b0 = R::step(b0, x, i);
        carry();
    }
    // Another thread's accumulator, as one value of the same tiers (a
    // split's partial in the pass that combines the splits).
    __device__ __forceinline__ void merge(typename R::Acc a) {
        if (!R::tiered) {
            total = R::combine(total, a);
            return;
        }
        b0 = R::combine(b0, a);
        carry();
    }
    // Counts the value just folded into b0 and moves each full tier up.
    __device__ __forceinline__ void carry() {
        if ((++n & 15u) != 0u) return;
        b1 = R::combine(b1, b0);
        b0 = R::init();
        if ((n & 255u) != 0u) return;
        b2 = R::combine(b2, b1);
        b1 = R::init();
        if ((n & 4095u) != 0u) return;
        total = R::combine(total, b2);
        b2 = R::init();
    }
    __device__ __forceinline__ typename R::Acc result() const {
        return R::tiered ? R::combine(total, R::combine(b2, R::combine(b1, b0))) : total;
    }
};

// Folds the reduced elements first, first + step, ... below end of the
// output at `ox` into `f`. Along one reduced dim, four loads are in flight
// before their adds.
template <class R, class T>
__device__ __forceinline__ void fold_range(Fold<R>& f, const RedParams& p, const T* __restrict__ x, i64 ox,
                                           u64 first, u64 end, u64 step) {
    if (p.rdim != 1) {
        for (u64 r = first; r < end; r += step) f.add(x[ox + red_offset(p, r)], (i64)r);
        return;
    }
    const i64 st = p.rst[0];
    u64 r = first;
    for (; r + 3 * step < end; r += 4 * step) {
        const T v0 = x[ox + (i64)r * st];
        const T v1 = x[ox + (i64)(r + step) * st];
        const T v2 = x[ox + (i64)(r + 2 * step) * st];
        const T v3 = x[ox + (i64)(r + 3 * step) * st];
        f.add(v0, (i64)r);
        f.add(v1, (i64)(r + step));
        f.add(v2, (i64)(r + 2 * step));
        f.add(v3, (i64)(r + 3 * step));
    }
    for (; r < end; r += step) f.add(x[ox + (i64)r * st], (i64)r);
}

// One thread per output, folding split `blockIdx.y` of its reduced range:
// short reductions, or outputs adjacent in memory (a column sum of a
// row-major matrix, whose threads read neighbouring addresses). With
// several splits each thread's partial goes to `ws[split][output]`, which
// `reduce_columns_final` combines; splitting gives long columns enough
// threads to keep the memory system busy.
template <class R, class T>
__device__ __forceinline__ void reduce_thread(const RedParams& p, const T* __restrict__ x,
                                              typename R::Out* __restrict__ out, typename R::Acc* __restrict__ ws) {
    const u64 start = (u64)blockIdx.y * p.chunk;
    const u64 end = start + p.chunk < p.n_red ? start + p.chunk : p.n_red;
    for (u64 o = global_thread(); o < p.n_out; o += grid_threads()) {
        i64 ox, oo;
        kept_offsets(p, o, ox, oo);
        Fold<R> f;
        fold_range(f, p, x, ox, start, end, 1);
        if (p.splits == 1) {
            out[oo] = R::finish(f.result());
        } else {
            ws[(u64)blockIdx.y * p.n_out + o] = f.result();
        }
    }
}

// One thread per output over the splits `reduce_thread` left in `ws`.
template <class R>
__device__ __forceinline__ void reduce_columns_final(const RedParams& p, const typename R::Acc* __restrict__ ws,
                                                     typename R::Out* __restrict__ out) {
    for (u64 o = global_thread(); o < p.n_out; o += grid_threads()) {
        i64 ox, oo;
        kept_offsets(p, o, ox, oo);
        Fold<R> f;
        int s = 0;
        // Four loads in flight before their merges, as in `fold_range`.
        for (; s + 3 < p.splits; s += 4) {
            typename R::Acc a0 = ws[(u64)s * p.n_out + o];
            typename R::Acc a1 = ws[(u64)(s + 1) * p.n_out + o];
            typename R::Acc a2 = ws[(u64)(s + 2) * p.n_out + o];
            typename R::Acc a3 = ws[(u64)(s + 3) * p.n_out + o];
            f.merge(a0);
            f.merge(a1);
            f.merge(a2);
            f.merge(a3);
        }
        for (; s < p.splits; ++s) f.merge(ws[(u64)s * p.n_out + o]);
        out[oo] = R::finish(f.result());
    }
}

// A warp per output: outputs folding a run of moderate length each along
// contiguous reduced dims (a row sum of a row-major matrix). The lanes read
// neighbouring elements and combine by shuffles, with none of
// `reduce_block`'s barriers; a block holds several outputs.
template <class R, class T>
__device__ __forceinline__ void reduce_warp(const RedParams& p, const T* __restrict__ x,
                                            typename R::Out* __restrict__ out) {
    const u64 lane = threadIdx.x & 31;
    const u64 warps = grid_threads() >> 5;
    // The same `o` for the 32 lanes of a warp, so the shuffles see them all.
    for (u64 o = global_thread() >> 5; o < p.n_out; o += warps) {
        i64 ox, oo;
        kept_offsets(p, o, ox, oo);
        Fold<R> f;
        fold_range(f, p, x, ox, lane, p.n_red, 32);
        typename R::Acc acc = f.result();
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) acc = R::combine(acc, R::shfl(acc, d));
        if (lane == 0) out[oo] = R::finish(acc);
    }
}

// One block per (output, split of the reduced range); with several splits
// the partial accumulators go to `ws` and `reduce_final` combines them.
template <class R, class T>
__device__ __forceinline__ void reduce_block(const RedParams& p, const T* __restrict__ x,
                                             typename R::Out* __restrict__ out, typename R::Acc* __restrict__ ws) {
    const u64 o = blockIdx.x;
    const int split = blockIdx.y;
    i64 ox, oo;
    kept_offsets(p, o, ox, oo);
    const u64 start = (u64)split * p.chunk;
    const u64 end = start + p.chunk < p.n_red ? start + p.chunk : p.n_red;
    Fold<R> f;
    fold_range(f, p, x, ox, start + threadIdx.x, end, blockDim.x);
    typename R::Acc acc = block_reduce<R>(f.result());
    if (threadIdx.x == 0) {
        if (p.splits == 1) {
            out[oo] = R::finish(acc);
        } else {
            ws[o * (u64)p.splits + (u64)split] = acc;
        }
    }
}

template <class R>
__device__ __forceinline__ void reduce_final(const RedParams& p, const typename R::Acc* __restrict__ ws,
                                             typename R::Out* __restrict__ out) {
    const u64 o = blockIdx.x;
    i64 ox, oo;
    kept_offsets(p, o, ox, oo);
    typename R::Acc acc = R::init();
    for (int s = threadIdx.x; s < p.splits; s += blockDim.x) acc = R::combine(acc, ws[o * (u64)p.splits + (u64)s]);
    acc = block_reduce<R>(acc);
    if (threadIdx.x == 0) out[oo] = R::finish(acc);
}

// ---- lines (scans, sorts) -----------------------------------------------

// `lines` lines of `len` elements along one axis; the other dims (`lshape`)
// with x's and out's strides, and both strides along the axis.
struct LineParams {
    u64 lines;
    u64 len;
    int ldim;
    int pad;
    i64 lshape[ANYDEV_MAXD];
    i64 lst_x[ANYDEV_MAXD];
    i64 lst_o[ANYDEV_MAXD];
    i64 ax_x;
    i64 ax_o;
};

__device__ __forceinline__ void line_offsets(const LineParams& p, u64 l, i64& ox, i64& oo) {
    ox = 0;
    oo = 0;
    for (int d = p.ldim - 1; d >= 0; --d) {
        u64 s = (u64)p.lshape[d];
        i64 c = (i64)(l % s);
        l /= s;
        ox += c * p.lst_x[d];
        oo += c * p.lst_o[d];
    }
}

// ---- Philox4x32-10, as anydev-kernels' philox.rs -------------------------

__device__ __forceinline__ void philox4x32_10(u32* c, u32 k0, u32 k1) {
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u32 hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
        u32 hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
        u32 n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
}

__device__ __forceinline__ void philox_block(u64 seed, u64 counter, u64 i, u32* w) {
    u64 c = counter + i;
    w[0] = (u32)c;
    w[1] = (u32)(c >> 32);
    w[2] = 0u;
    w[3] = 0u;
    philox4x32_10(w, (u32)seed, (u32)(seed >> 32));
}

// 53 random bits from two words, as a double in [0, 1).
__device__ __forceinline__ double philox_unit(u32 hi, u32 lo) {
    u64 bits = (((u64)hi) << 21) | (((u64)lo) >> 11);
    return (double)bits * (1.0 / 9007199254740992.0);
}
