// symc C++ kernel prelude: exact helpers shared by every generated kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <omp.h>

// Error flag (codes in inductor/runtime/kernel_errors.py): 1 a gather index out of range (the
// access is masked), 2 an integer // or % by zero (the result is 0), 3 a load/store index
// outside its buffer (SYMC_DEBUG_BOUNDS=1). The Python side reads it after the kernel and
// raises what eager raises; a kernel never traps or touches memory out of bounds instead.
extern "C" { int64_t symc_error = 0; }
static inline bool symc_in_bounds(int64_t index, int64_t extent) {
  if (index >= 0 && index < extent) return true;
  symc_error = 3;
  return false;
}

template <class T> static inline T symc_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b;
}
template <class T> static inline T symc_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b;
}
// NaN-propagating max/min as `omp simd` reductions (one accumulator per vector lane).
#pragma omp declare reduction(symc_fmax : float, double : omp_out = symc_max(omp_out, omp_in)) \
    initializer(omp_priv = -INFINITY)
#pragma omp declare reduction(symc_fmin : float, double : omp_out = symc_min(omp_out, omp_in)) \
    initializer(omp_priv = INFINITY)
// Threads for `work` elements over `items` parallel iterations: one per started `grain` of
// elements (as eager's grain: parallel above one grain), at most one per item and the pool's
// size; 1 (no parallel region) for a small tensor.
static inline int symc_threads(int64_t work, int64_t grain, int64_t items) {
  int64_t t = (work + grain - 1) / grain, m = omp_get_max_threads();
  t = t > m ? m : t;
  t = t > items ? items : t;
  return t < 1 ? 1 : static_cast<int>(t);
}
// This thread's static share [lo, hi) of n iterations (inside a parallel region).
static inline void symc_thread_range(int64_t n, int64_t* lo, int64_t* hi) {
  int64_t t = omp_get_thread_num(), nt = omp_get_num_threads(), q = n / nt, rem = n % nt;
  *lo = t * q + (t < rem ? t : rem);
  *hi = *lo + q + (t < rem ? 1 : 0);
}
// argmax/argmin: does v replace best? NaN counts as the extreme (first NaN wins), ties keep best.
template <class T> static inline bool symc_better(T v, T best, int greater) {
  if constexpr (std::is_floating_point_v<T>) { if (best != best) return false; if (v != v) return true; }
  return greater ? v > best : v < best;
}
template <class T> static inline T symc_floordiv(T a, T b) {
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
template <class T> static inline T symc_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
// Integer floor division and modulo of tensor values: a zero divisor sets the flag instead of
// trapping (SIGFPE), and the minimum divided by -1 wraps as eager does instead of trapping.
template <class T> static inline T symc_int_floordiv(T a, T b) {
  if (b == 0) { symc_error = 2; return 0; }
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) -
                                       static_cast<std::make_unsigned_t<T>>(a));
  }
  return symc_floordiv(a, b);
}
template <class T> static inline T symc_int_mod(T a, T b) {
  if (b == 0) { symc_error = 2; return 0; }
  if constexpr (std::is_signed_v<T>) { if (b == -1) return 0; }
  return symc_mod(a, b);
}
template <class T> static inline T symc_ipow(T a, T b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  T r = 1;
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}
static inline float symc_bf16_to_f32(uint16_t h) {
  uint32_t u = ((uint32_t)h) << 16; float f; std::memcpy(&f, &u, 4); return f;
}
static inline uint16_t symc_f32_to_bf16(float f) {
  uint32_t u; std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static inline float symc_round_bf16(float f) { return symc_bf16_to_f32(symc_f32_to_bf16(f)); }
template <class T> static inline void symc_welford_merge(T& mean, T& m2, T& n, T pm, T pm2, T pn) {
  if (pn == 0) return;
  T nn = n + pn; T d = pm - mean;
  mean += d * pn / nn; m2 += pm2 + d * d * n * pn / nn; n = nn;
}
// prims/random.py's hash, bit for bit (uint32 arithmetic wraps mod 2**32).
static inline uint32_t symc_fmix32(uint32_t h) {
  h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16; return h;
}
static inline float symc_uniform(int64_t seed, int64_t counter, int bits) {
  uint64_t s = (uint64_t)seed, c = (uint64_t)counter;
  uint32_t high = (uint32_t)(s >> 32) ^ (uint32_t)(c >> 32);
  uint32_t key = symc_fmix32((uint32_t)s ^ 0x9E3779B9u ^ (high * 0x85EBCA77u));
  uint32_t h = symc_fmix32(key ^ (uint32_t)c);
  h = symc_fmix32(h ^ (key * 0x27D4EB2Fu));
  return (float)(h >> (32 - bits)) * __builtin_bit_cast(float, (127 - bits) << 23);  // 2^-bits
}
