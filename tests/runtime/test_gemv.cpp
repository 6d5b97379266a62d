// One-row matmuls (ir/ops/gemv.hpp: batch-1 inference) in both executors against a plain
// f64 triple loop: both layouts of B (rows of B, and B read as a transposed view), batched,
// with k and n that leave lane, row-block and column tails (and a whole 784x128 layer).
// The two executors share the loop nest, so agreeing with each other proves nothing there;
// GemvBits checks that they do agree, bit for bit.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/shell.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using mg::testing::randn;

struct GemvCase {
  std::int64_t batch, n, k;
  bool transposed;  // B = permute(W [batch, n, k]) rather than an input [batch, k, n]
};

class Gemv : public ::testing::TestWithParam<std::tuple<DType, rt::Backend>> {};

TEST_P(Gemv, MatchesAPlainLoop) {
  const auto [dt, backend] = GetParam();
  for (const GemvCase c : {GemvCase{1, 1, 1, false}, {1, 7, 37, true}, {1, 7, 37, false}, {2, 8, 16, true},
                           {2, 9, 17, false}, {1, 130, 33, false}, {1, 130, 33, true}, {1, 128, 784, true},
                           {1, 10, 128, true}, {3, 17, 5, false}, {1, 9, 181, true}, {1, 5, 181, false}}) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " n " + std::to_string(c.n) + " k " + std::to_string(c.k) +
                 (c.transposed ? " B = W^T" : " B"));
    ir::Graph g;
    const Type xt{dt, {c.batch, 1, c.k}};
    const Type wt{dt, c.transposed ? Shape{c.batch, c.n, c.k} : Shape{c.batch, c.k, c.n}};
    ir::Value x = g.add_input("x", xt), w = g.add_input("w", wt);
    ir::Value b = c.transposed ? ir::make_op(g, ir::op("permute"), {w}, {{"perm", std::vector<std::int64_t>{0, 2, 1}}}) : w;
    ir::Value y = ir::make_op(g, ir::op("matmul"), {x, b});
    const Array xv = randn(xt, 1), wv = randn(wt, 2);
    const Array got = rt::compile(g, {y.id}, {}, backend).run({{"x", xv}, {"w", wv}})[0];
    ASSERT_EQ(got.type(), (Type{dt, {c.batch, 1, c.n}}));
    const double eps = dt == f32 ? FLT_EPSILON : DBL_EPSILON;
    for (std::int64_t q = 0; q < c.batch; ++q)
      for (std::int64_t j = 0; j < c.n; ++j) {
        double want = 0, mag = 0;
        for (std::int64_t p = 0; p < c.k; ++p) {
          const double wpj = c.transposed ? wv.at((q * c.n + j) * c.k + p) : wv.at((q * c.k + p) * c.n + j);
          want += xv.at(q * c.k + p) * wpj;
          mag += std::abs(xv.at(q * c.k + p) * wpj);
        }
        // Any summation order is within k ulp of the magnitudes' sum.
        ASSERT_NEAR(got.at(q * c.n + j), want, 2 * static_cast<double>(c.k) * eps * mag + 1e-300) << "j " << j;
      }
  }
}

// The interpreter's kernel and the C99 text sum in one order (gemv.hpp), so a batch-1
// model gives the same bits in both executors, in both layouts of B. k = 181 (f32: a block of 8 vectors, 3 more,
// 5 left; f64: 2 blocks, 6 more, 5 left) and 784 (the MLP's first layer) take every part
// of the dot product; the C99 module calls it with constant k, as a compiled model does.
// Same bits also needs the same multiply-adds: the JIT compiles for this CPU (-march=native),
// so when the library was built for a baseline without FMA (-Dnative=false, as the
// sanitizer build is) each product is rounded once more there, and the two can only agree
// to within that rounding. This file is compiled with the library's flags, so __FMA__ here
// says whether the library's kernel contracts.
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
constexpr bool kLibraryContractsToFma = true;
#else
constexpr bool kLibraryContractsToFma = false;
#endif

TEST(GemvBits, InterpreterAndC99Agree) {
  for (const DType dt : {f32, f64})
    for (const std::int64_t k : {181, 784})
      for (const bool transposed : {true, false}) {  // B = W^T (dot products), B (rows scaled)
        SCOPED_TRACE(to_string(Type{dt, {k}}) + (transposed ? " B = W^T" : " B"));
        ir::Graph g;
        const Type xt{dt, {1, k}}, wt{dt, transposed ? Shape{33, k} : Shape{k, 33}};
        ir::Value x = g.add_input("x", xt), w = g.add_input("w", wt);
        ir::Value b = transposed ? ir::make_op(g, ir::op("permute"), {w}, {{"perm", std::vector<std::int64_t>{1, 0}}}) : w;
        ir::Value y = ir::make_op(g, ir::op("matmul"), {x, b});
        const rt::Bindings in{{"x", randn(xt, 3)}, {"w", randn(wt, 4)}};
        const Array interp = rt::compile(g, {y.id}).run(in)[0];
        const Array c99 = rt::compile(g, {y.id}, {}, rt::Backend::c99).run(in)[0];
        ASSERT_EQ(interp.nbytes(), c99.nbytes());
        const Array &xv = in.at("x"), &wv = in.at("w");
        const double eps = dt == f32 ? FLT_EPSILON : DBL_EPSILON;
        for (std::int64_t j = 0; j < 33; ++j) {
          if (kLibraryContractsToFma) {
            EXPECT_EQ(interp.at(j), c99.at(j)) << "output " << j;
            continue;
          }
          // One extra rounding per product, in the same order: each result is within
          // gamma_k ~ k u of the exact sum (u = eps / 2) times sum |x w|, so they differ by
          // less than 2 k u sum |x w|; the bound allows twice that.
          double mag = 0;
          for (std::int64_t p = 0; p < k; ++p) mag += std::abs(xv.at(p) * wv.at(transposed ? j * k + p : p * 33 + j));
          EXPECT_NEAR(interp.at(j), c99.at(j), 2 * static_cast<double>(k) * eps * mag) << "output " << j;
        }
      }
}

INSTANTIATE_TEST_SUITE_P(Executors, Gemv,
                         ::testing::Combine(::testing::Values(f32, f64),
                                            ::testing::Values(rt::Backend::interpreter, rt::Backend::c99)));

// The GEMV's C text in a standalone export: warning-free (-Werror) for gcc and clang, with
// vector extensions (-march=native, -O3 as the JIT) and without, and on a Cortex-M4 (the
// plain loops) when arm-none-eabi-gcc is installed.
TEST(GemvC, CompilesWarningFreeForEveryTarget) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {1, 37}}), w = g.add_input("w", Type{f32, {7, 37}});
  ir::Value b = g.add_input("b", Type{f32, {37, 20}});
  ir::Value xd = g.add_input("xd", Type{f64, {1, 37}}), wd = g.add_input("wd", Type{f64, {9, 37}});
  const auto t = [&](ir::Value v) { return ir::make_op(g, ir::op("permute"), {v}, {{"perm", std::vector<std::int64_t>{1, 0}}}); };
  const std::vector<ir::NodeId> outs{ir::make_op(g, ir::op("matmul"), {x, t(w)}).id,
                                     ir::make_op(g, ir::op("matmul"), {x, b}).id,
                                     ir::make_op(g, ir::op("matmul"), {xd, t(wd)}).id};
  rt::c99::Options o;
  o.name = "gemv";
  const rt::c99::Module m = rt::c99::emit_module(g, outs, {}, o);
  ASSERT_NE(m.source.find("mg_gemv_f32("), std::string::npos);
  ASSERT_NE(m.source.find("mg_gemv_f64("), std::string::npos);
  testing::ScratchDir dir("mg_gemv_c_");
  std::ofstream(dir / "gemv.h") << m.header;
  std::ofstream(dir / "gemv.c") << m.source;
  std::vector<std::string> commands;
  for (std::string cc : {"gcc", "clang"})
    for (std::string flags : {"-O3 -march=native", "-O2 -march=native", "-O2"})
      commands.push_back(cc + " -std=c99 -Wall -Wextra -pedantic -Werror " + flags + " -c gemv.c -o gemv.o");
  if (testing::have("arm-none-eabi-gcc"))
    commands.push_back("arm-none-eabi-gcc -std=c99 -Wall -Wextra -pedantic -Werror -O2 -mcpu=cortex-m4 -mthumb "
                       "-mfloat-abi=hard -mfpu=fpv4-sp-d16 -c gemv.c -o gemv.o");
  for (const std::string& cmd : commands) {
    std::string log;
    EXPECT_EQ(testing::compile_in(dir / "", cmd, &log), 0) << cmd << "\n" << log;
  }
}

}  // namespace
}  // namespace mg
