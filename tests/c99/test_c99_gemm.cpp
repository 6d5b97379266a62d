// The C99 GEMM (ir/ops/gemm_c99.cpp) on every edge its tiling has, against a naive f64
// product: m, n, k at 1, around each target's MR and NR (AVX-512 8 x 32/16, AVX2 6 x 16/8,
// portable 4 x 8/4), past 2 KC slices with a ragged last one; A and/or B transposed (read
// in place); batched; f32 and f64; under each of the three tile paths the preprocessor can
// pick (-march=native, AVX2 without AVX-512, no AVX at all), through the library's copy a
// JIT module binds, and in the interpreter (that copy, or OpenBLAS, by shape). That gcc and
// clang accept every path with -pedantic -Werror: test_c99_export.cpp. The bound is the textbook one
// for any summation order, |got - ref| <= 2 k eps sum_p |a_ip b_pj|, so a wrong tile, a
// missed edge or a stale accumulator (errors of order |a b|) cannot pass.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include <omp.h>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using mg::testing::randn;

// One product to check: A [batch.., m, k] (stored [.., k, m] when transposed), B likewise.
struct Product {
  std::int64_t batch, m, k, n;
  bool ta, tb;
};

struct Gemms {
  ir::Graph g;
  rt::Bindings in;
  std::vector<Product> products;
  std::vector<std::pair<std::string, std::string>> operands;  // input names of each product
};

void build(Gemms& c, DType dt, const std::vector<Product>& ps) {
  std::uint64_t seed = 1;
  for (const Product& p : ps) {
    const std::string i = std::to_string(c.products.size());
    auto shape = [&](std::int64_t r, std::int64_t s) { return p.batch ? Shape{p.batch, r, s} : Shape{r, s}; };
    const Type ta{dt, p.ta ? shape(p.k, p.m) : shape(p.m, p.k)}, tb{dt, p.tb ? shape(p.n, p.k) : shape(p.k, p.n)};
    c.in["a" + i] = randn(ta, seed++);
    c.in["b" + i] = randn(tb, seed++);
    ir::Value a = c.g.add_input("a" + i, ta), b = c.g.add_input("b" + i, tb);
    c.g.outputs.push_back(ir::matmul(p.ta ? ir::transpose_last2(a) : a, p.tb ? ir::transpose_last2(b) : b).id);
    c.products.push_back(p);
    c.operands.emplace_back("a" + i, "b" + i);
  }
}

struct Path {
  const char* name;
  rt::Backend backend;
  // MG_CC for the JIT (which adds -march=native after it; explicit -mno-* still win): the
  // kernels' text compiled for that target. Null: MG_CC unset, and the module calls the
  // library's compiled kernels (ir/ops/c_kernels.hpp), as a user's JIT module does.
  const char* cc;
};
void PrintTo(const Path& p, std::ostream* os) { *os << p.name; }

// Runs the products on `path` and checks each element.
void check(DType dt, const std::vector<Product>& ps, const Path& path) {
  Gemms c;
  build(c, dt, ps);
  if (path.cc) setenv("MG_CC", path.cc, 1);
  const auto got = rt::compile(c.g, c.g.outputs, {}, path.backend).run(c.in);
  unsetenv("MG_CC");
  const std::string cc = path.name;
  const double eps = dt == f32 ? FLT_EPSILON : DBL_EPSILON;
  ASSERT_EQ(got.size(), ps.size());
  for (std::size_t q = 0; q < ps.size(); ++q) {
    const Product& p = ps[q];
    const Array& a = c.in.at(c.operands[q].first);
    const Array& b = c.in.at(c.operands[q].second);
    const std::int64_t nb = p.batch ? p.batch : 1;
    for (std::int64_t z = 0; z < nb; ++z)
      for (std::int64_t i = 0; i < p.m; ++i)
        for (std::int64_t j = 0; j < p.n; ++j) {
          double ref = 0, mag = 0;
          for (std::int64_t l = 0; l < p.k; ++l) {
            const double x = a.at(z * p.m * p.k + (p.ta ? l * p.m + i : i * p.k + l));
            const double y = b.at(z * p.k * p.n + (p.tb ? j * p.k + l : l * p.n + j));
            ref += x * y;
            mag += std::abs(x * y);
          }
          const double v = got[q].at(z * p.m * p.n + i * p.n + j);
          ASSERT_LE(std::abs(v - ref), 2 * double(p.k) * eps * mag + 1e-300)
              << cc << ": " << name_of(dt) << " product " << q << " (batch " << p.batch << ", m " << p.m << ", k "
              << p.k << ", n " << p.n << (p.ta ? ", A transposed" : "") << (p.tb ? ", B transposed" : "")
              << ") element [" << z << "," << i << "," << j << "]";
        }
  }
}

// Every (m, n) pair; k and the transposes rotate over their lists, so each value of each
// meets many of the others. m < 8 goes to the few-rows GEMM, the rest to the packed one.
std::vector<Product> edge_products() {
  const std::vector<std::int64_t> ms{1, 3, 5, 7, 8, 9, 13, 17, 67};
  const std::vector<std::int64_t> ns{1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65};
  const std::vector<std::int64_t> ks{1, 2, 63, 64, 65, 131, 256, 257, 515};
  std::vector<Product> ps;
  std::size_t r = 0;
  for (std::int64_t m : ms)
    for (std::int64_t n : ns) {
      ps.push_back({0, m, ks[r % ks.size()], n, (r / 2) % 2 == 1, r % 2 == 1});
      ++r;
    }
  // Batched (rank 3), transposes included; one large enough for threads and NC blocks.
  ps.push_back({3, 9, 70, 33, false, false});
  ps.push_back({2, 17, 515, 40, true, false});
  ps.push_back({2, 8, 300, 65, false, true});
  ps.push_back({2, 70, 257, 1100, true, true});
  // Threads over a batch of small products, one column panel (A read in place, edge rows packed).
  ps.push_back({16, 20, 64, 16, true, false});
  return ps;
}

class C99Gemm : public ::testing::TestWithParam<std::tuple<DType, Path>> {};

TEST_P(C99Gemm, EdgeShapesMatchANaiveF64Product) {
  const auto [dt, path] = GetParam();
  // The JIT's own cache, as every other C99 test: its key is the exact command and source, so
  // a re-run loads the module this command compiled from this text (cc was most of the suite's
  // CPU: 6 modules at -O3 compiled on every run into a scratch cache).
  check(dt, edge_products(), path);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, C99Gemm,
    ::testing::Combine(::testing::Values(f32, f64),
                       ::testing::Values(Path{"library", rt::Backend::c99, nullptr},
                                         Path{"native", rt::Backend::c99, "cc"},
                                         Path{"avx2", rt::Backend::c99, "cc -mno-avx512f"},
                                         Path{"portable", rt::Backend::c99, "cc -mno-avx -mno-avx2 -mno-fma -mno-avx512f"},
                                         Path{"interpreter", rt::Backend::interpreter, nullptr})),
    [](const auto& info) {
      return std::string(name_of(std::get<0>(info.param))) + "_" + std::get<1>(info.param).name;
    });

// The threads split C into row blocks (a B slice each: the interpreter passes one per
// thread, a C99 module plans four) and, past the slices, column chunks (gemm_c99.cpp):
// every element is still the same sum in the same order, so any thread count gives the
// 1-thread result bit for bit, in both executors. Shapes large enough to thread
// (m n k >= 262144), with ragged row blocks and panels, both transposes.
TEST(C99Gemm, ThreadCountsGiveTheSameBits) {
  const int threads = omp_get_max_threads();
  for (rt::Backend backend : {rt::Backend::interpreter, rt::Backend::c99})
    for (DType dt : {f32, f64}) {
      Gemms c;
      build(c, dt, {{0, 130, 300, 100, false, false}, {0, 9, 900, 33, true, false}, {0, 64, 784, 128, false, true},
                    {0, 17, 515, 257, true, true}, {2, 70, 257, 90, false, false}});
      const rt::Executable exe = rt::compile(c.g, c.g.outputs, {}, backend);
      omp_set_num_threads(1);
      const std::vector<Array> one = exe.run(c.in);
      for (int t : {2, 3, 4, 5, 8}) {
        omp_set_num_threads(t);
        const std::vector<Array> got = exe.run(c.in);
        for (std::size_t q = 0; q < got.size(); ++q)
          EXPECT_EQ(std::memcmp(got[q].raw(), one[q].raw(), one[q].nbytes()), 0)
              << (backend == rt::Backend::c99 ? "c99 " : "interpreter ") << name_of(dt) << " product " << q << " at "
              << t << " threads";
      }
    }
  omp_set_num_threads(threads);
}

}  // namespace
}  // namespace mg
