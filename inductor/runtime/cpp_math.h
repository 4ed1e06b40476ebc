// symc C++ kernel math: float exp/log/tanh/erf/sigmoid as branch-free inline functions that gcc
// vectorizes inside `#pragma omp simd` loops (a libm call would keep the loop scalar). Each is a
// range reduction + a polynomial fitted for this file (relative minimax in double, then rounded
// to float; fits: tests/inductor/test_cpp_math.py's docstring), with selects instead of branches
// for inf, NaN, -0 and subnormals. Accuracy against libm in double, rounded (measured by
// tests/inductor/test_cpp_math.py over a dense sweep of all floats): a few ulp at most.
// The double overloads call libm (exact; scalar).
// Why not a library (SLEEF: Debian's libsleef-dev 3.5.1): the README's setup is pip + gcc on a
// fresh machine (no root, no apt; the GPU machines have no network), and SLEEF's vector entry
// points reach gcc's auto-vectorizer only through `declare simd` headers and a link step. These
// inline functions need nothing, inline and fuse into the loop, and vectorize for any -march.

static inline float symc_as_float(int32_t i) { return __builtin_bit_cast(float, i); }
static inline int32_t symc_as_int(float f) { return __builtin_bit_cast(int32_t, f); }
static inline float symc_with_sign(float magnitude, float sign_of) {  // copysign, branch-free
  return symc_as_float(symc_as_int(magnitude) | (symc_as_int(sign_of) & INT32_MIN));
}

// e^x = 2^n e^r, n = rint(x / ln2), |r| <= ln2 / 2. x is clamped to [-104, 89] first: beyond,
// the result is 0 or inf anyway (e^-104 < half the least subnormal; e^89 > FLT_MAX), and 2^n
// is applied as 2^(n/2) 2^(n - n/2), both normal, so subnormal results round once.
static inline float symc_exp(float x) {
  float xc = x > 89.0f ? 89.0f : (x < -104.0f ? -104.0f : x);
  const float shift = 0x1.8p23f;  // adding it rounds to an integer (|x / ln2| < 2^22)
  float n = (xc * 0x1.715476p+0f + shift) - shift;
  float r = xc - n * 0.693359375f;  // ln2 split in two: n * hi is exact
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;  // e^r ~ 1 + r + r^2 p(r)
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = (p * (r * r) + r) + 1.0f;
  int32_t ni = static_cast<int32_t>(n);
  int32_t n1 = ni >> 1, n2 = ni - n1;
  y = y * symc_as_float((n1 + 127) << 23) * symc_as_float((n2 + 127) << 23);
  return x != x ? x : y;
}

// ln x = e ln2 + ln(1 + f), x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); subnormal x are
// scaled by 2^23 first. x < 0 -> NaN, +-0 -> -inf, inf -> inf, NaN -> NaN.
static inline float symc_log(float x) {
  bool tiny = x < 0x1p-126f;
  float xs = tiny ? x * 0x1p23f : x;
  int32_t bits = symc_as_int(xs);
  float e = static_cast<float>(((bits >> 23) & 0xff) - 127 - (tiny ? 23 : 0));
  float m = symc_as_float((bits & 0x7fffff) | 0x3f800000);  // [1, 2)
  bool big = m > 0x1.6a09e6p+0f;  // sqrt(2)
  m = big ? m * 0.5f : m;
  e = big ? e + 1.0f : e;
  float f = m - 1.0f;
  float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = p * f * z + e * -2.12194440e-4f - 0.5f * z;
  y = (f + y) + e * 0.693359375f;
  y = x == INFINITY ? x : y;
  y = x == 0.0f ? -INFINITY : y;
  return (x < 0.0f || x != x) ? NAN : y;
}

// tanh: |x| < 0.625 an odd polynomial, else 1 - 2 / (e^(2|x|) + 1); sign restored by bits.
static inline float symc_tanh(float x) {
  float a = symc_as_float(symc_as_int(x) & INT32_MAX);
  float z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = p * z * a + a;
  float large = 1.0f - 2.0f / (symc_exp(2.0f * a) + 1.0f);
  return symc_with_sign(a < 0.625f ? small : large, x);
}

// erf: |x| < 1: x P(x^2); 1 <= |x| <= 4: 1 - Q(t), Q a degree-14 fit of erfc in
// t = (|x| - 2.5) / 1.5 in [-1, 1] (absolute error < 1e-8, a sixth of an ulp of erf there: no
// exp, no division); |x| > 4 rounds to +-1 (the fit at 4 gives it). Both polynomials are
// evaluated by Estrin's scheme (pairs, then powers t^2, t^4, t^8): a dependency chain of 5
// multiply-adds instead of Horner's 14, so a vector loop keeps the FMA units busy (gelu
// runs ~15% faster). P ends with two Horner steps: its leading terms dominate near 0, where
// Estrin's extra rounding of c0 + c1 z cost an ulp.
static inline float symc_erf(float x) {
  float a = symc_as_float(symc_as_int(x) & INT32_MAX);
  float z = a * a, z2 = z * z;
  float p = (0x1.ce2cf77520a0ep-4f - 0x1.b7f910d606168p-6f * z) +
            z2 * ((0x1.5405d10637a90p-8f - 0x1.a3f7eaa4a6500p-11f * z) + z2 * 0x1.496cc4a5f7c00p-14f);
  p = p * z - 0x1.81273dea5a5c2p-2f;  // the last two steps by Horner: the sum stays exact-ish
  p = p * z + 0x1.20dd74fe499b9p+0f;
  float small = a * p;
  float b = a > 4.0f ? 4.0f : a;
  float t = (b - 2.5f) * (2.0f / 3.0f);  // [1, 4] -> [-1, 1]
  float t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  float q01 = (0x1.aab886p-12f - 0x1.ac3fd6p-9f * t) + t2 * (0x1.917fb4p-7f - 0x1.cdd104p-6f * t);
  float q23 = (0x1.65999ap-5f - 0x1.7c0c28p-5f * t) + t2 * (0x1.0506b8p-5f - 0x1.39908ep-7f * t);
  float q45 = (-0x1.b2262ep-8f + 0x1.549fd8p-7f * t) + t2 * (-0x1.331426p-8f - 0x1.90ef1ap-10f * t);
  float q67 = (0x1.0c2698p-9f - 0x1.9fbec2p-14f * t) + t2 * -0x1.12500cp-12f;
  float q = (q01 + t4 * q23) + t8 * (q45 + t4 * q67);
  return symc_with_sign(a < 1.0f ? small : (a != a ? a : 1.0f - q), x);
}

// sigmoid: e = e^-|x| (never overflows), then 1 / (1 + e) or e / (1 + e) by the sign of x.
static inline float symc_sigmoid(float x) {
  float a = symc_as_float(symc_as_int(x) & INT32_MAX);
  float e = symc_exp(-a);
  float d = 1.0f + e;
  return x >= 0.0f ? 1.0f / d : (x != x ? x : e / d);
}

static inline double symc_exp(double x) { return std::exp(x); }
static inline double symc_log(double x) { return std::log(x); }
static inline double symc_tanh(double x) { return std::tanh(x); }
static inline double symc_erf(double x) { return std::erf(x); }
static inline double symc_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
