// ulp sweep of the kernel math (runtime/cpp_math.h) against libm in double, rounded to float.
// Built by tests/inductor/test_cpp_math.py after the prelude and the math; prints per function:
// name, max ulp, the input where it occurs (hex), and how many zero results had the wrong sign.
#include <cstdio>
#include <vector>
#include <cfloat>
static int64_t ordered(float f) {
  int32_t i = symc_as_int(f);
  return i < 0 ? -(int64_t)(i & INT32_MAX) : (int64_t)i;
}
template <class F, class R> static void check(const char* name, F f, R ref, const std::vector<float>& xs) {
  std::vector<float> out(xs.size());
  const float* __restrict__ in = xs.data();
  float* __restrict__ o = out.data();
  int64_t n = xs.size();
  #pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = f(in[i]);
  int64_t worst = 0, bad_special = 0; float worst_x = 0;
  for (int64_t i = 0; i < n; ++i) {
    float want = static_cast<float>(ref(static_cast<double>(xs[i])));
    float got = o[i];
    int64_t d;
    if (want != want || got != got) d = (want != want && got != got) ? 0 : INT64_MAX / 2;
    else if (std::isinf(want) || std::isinf(got)) d = want == got ? 0 : INT64_MAX / 2;
    else d = ordered(got) > ordered(want) ? ordered(got) - ordered(want) : ordered(want) - ordered(got);
    if (want == 0 && got == 0 && std::signbit(want) != std::signbit(got)) bad_special++;
    if (d > worst) { worst = d; worst_x = xs[i]; }
  }
  printf("%s %lld %a %lld\n", name, (long long)worst, worst_x, (long long)bad_special);
}
int main(int argc, char** argv) {
  int64_t stride = argc > 1 ? atoll(argv[1]) : 257;
  std::vector<float> xs;
  for (int64_t b = 0; b < (int64_t)1 << 32; b += stride) xs.push_back(symc_as_float((int32_t)(uint32_t)b));
  float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
                      FLT_TRUE_MIN, -FLT_TRUE_MIN, 0x1.fffffcp-127f, -0x1.fffffcp-127f, 1.0f, -1.0f,
                      88.72283f, 88.72284f, 89.0f, -87.33654f, -103.97208f, -103.2789f, -104.0f,
                      0.625f, -0.625f, 0.62499994f, 4.0f, -4.0f, 3.9999998f, 0.99999994f, 1.0000001f,
                      0x1.6a09e6p+0f, 0x1.6a09e8p+0f, 0.5f, 2.0f, 1e-30f, -1e-30f, 9.0f, -9.0f};
  for (float s : specials) xs.push_back(s);
  for (int32_t k = -2000; k <= 2000; ++k) {  // dense around 0.., the range ends and thresholds
    xs.push_back(k * 0.001f); xs.push_back(88.0f + k * 0.0005f); xs.push_back(-103.0f - k * 0.0005f);
    xs.push_back(1.0f + k * 1e-6f); xs.push_back(4.0f + k * 1e-6f); xs.push_back(0.625f + k * 1e-7f);
  }
  for (int32_t k = -20000; k <= 20000; ++k) {  // erf's fit on [1, 4], densely
    xs.push_back(2.5f + k * 7.5e-5f); xs.push_back(-2.5f - k * 7.5e-5f);
  }
  check("exp", [](float x) { return symc_exp(x); }, [](double x) { return std::exp(x); }, xs);
  check("log", [](float x) { return symc_log(x); }, [](double x) { return std::log(x); }, xs);
  check("tanh", [](float x) { return symc_tanh(x); }, [](double x) { return std::tanh(x); }, xs);
  check("erf", [](float x) { return symc_erf(x); }, [](double x) { return std::erf(x); }, xs);
  check("sigmoid", [](float x) { return symc_sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); }, xs);
  return 0;
}
