// softmax and log_softmax in the C99 JIT against the interpreter where the vectorised
// passes could differ: a NaN in a slice (the max's NaN flag), a +inf, only -inf, and
// ordinary rows, along the last axis (contiguous) and the first (strided columns).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/shell.hpp"

namespace mg {
namespace {

TEST(C99Softmax, SpecialValuesAgreeWithTheInterpreter) {
  for (DType dt : {f32, f64}) {
    const Type t{dt, {4, 37}};
    Array x = Array::zeros(t);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(0.7 * static_cast<double>(i)) * 5);
    x.set(5, NAN);                                                   // row 0: a NaN mid-row
    x.set(37 + 36, INFINITY);                                        // row 1: +inf last
    for (std::int64_t j = 0; j < 37; ++j) x.set(2 * 37 + j, -INFINITY);  // row 2: only -inf
    ir::Graph g;
    ir::Value v = g.add_input("x", t);
    for (const char* op : {"softmax", "log_softmax"})
      for (std::int64_t axis : {1, 0}) g.outputs.push_back(ir::make_op(g, ir::op(op), {v}, {{"axis", axis}}).id);
    const rt::Bindings in{{"x", x}};
    const auto want = rt::compile(g, g.outputs).run(in);
    const auto got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in);
    ASSERT_EQ(want.size(), got.size());
    const double rtol = dt == f32 ? 16 * 0x1p-23 : 1e-12;
    for (std::size_t o = 0; o < want.size(); ++o)
      for (std::int64_t i = 0; i < want[o].numel(); ++i) {
        const double a = want[o].at(i), b = got[o].at(i);
        const bool ok = std::isnan(a) ? std::isnan(b) : (std::isinf(a) ? a == b : std::fabs(a - b) <= rtol * (1 + std::fabs(a)));
        EXPECT_TRUE(ok) << to_string(t) << " output " << o << " [" << i << "]: interpreter " << a << ", C99 " << b;
      }
    // The cases are what they say: row 0 NaN, row 2 NaN (only -inf), row 3 finite.
    EXPECT_TRUE(std::isnan(got[0].at(0)) && std::isnan(got[0].at(2 * 37)) && std::isfinite(got[0].at(3 * 37)));
  }
}

// f32 rows through the C99 emitter's inlined exp (ir/ops/softmax.cpp): arguments from 0
// down past its -86.5 cut-off (where it returns 0) and rows of 256 (f32 lane sums) and
// 1500 (f64 sum) agree with the interpreter (xsimd's exp) within a few ulp of 1.
TEST(C99Softmax, InlinedExpOverAWideRangeAgreesWithTheInterpreter) {
  for (std::int64_t len : {256, 1500}) {
    const Type t{f32, {6, len}};
    Array x = Array::zeros(t);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, -100.0 * static_cast<double>((i * 7919) % len) / len + (i % len == 3 ? 5 : 0));
    ir::Graph g;
    ir::Value v = g.add_input("x", t);
    for (const char* op : {"softmax", "log_softmax"}) g.outputs.push_back(ir::make_op(g, ir::op(op), {v}, {{"axis", std::int64_t{1}}}).id);
    const rt::Bindings in{{"x", x}};
    const auto want = rt::compile(g, g.outputs).run(in);
    const auto got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in);
    for (std::size_t o = 0; o < want.size(); ++o)
      for (std::int64_t i = 0; i < want[o].numel(); ++i) {
        const double a = want[o].at(i), b = got[o].at(i);
        EXPECT_LE(std::fabs(a - b), 8 * 0x1p-23 * (1 + std::fabs(a))) << "len " << len << " output " << o << " [" << i << "]";
      }
  }
}

// The loops only GCC vectorises (softmax's passes, fused and leading-axis reductions with
// libm in the element) stay warning-free where clang compiles them with OpenMP: clang
// warns of each `omp simd` loop it cannot vectorise (MG_OMP_GCC, runtime/c99/module.cpp).
TEST(C99Softmax, ExportsCompileWithOpenMpWithoutWarnings) {
  mg::testing::ScratchDir dir("mg_c99_softmax_w_");
  ir::Graph g;
  const Shape s{6, 5, 40};
  ir::Value x = g.add_input("x", Type{f32, s});
  g.outputs.push_back(ir::make_op(g, ir::op("softmax"), {x}, {{"axis", std::int64_t{2}}}).id);
  g.outputs.push_back(ir::make_op(g, ir::op("log_softmax"), {x}, {{"axis", std::int64_t{2}}}).id);
  g.outputs.push_back(ir::reduce("reduce_max", x, {0, 1}, false).id);
  g.outputs.push_back(ir::reduce("reduce_sum", ir::unary("tanh", x), {0, 1}, false).id);  // fused: rows
  g.outputs.push_back(ir::reduce("reduce_sum", ir::unary("exp", x), {2}, false).id);      // fused: per output
  auto f = passes::fuse_elementwise(g);
  const rt::c99::Module m = rt::c99::emit_module(*f, f->outputs, {}, {.name = "sm"});
  // What clang would have warned about is there: the max pass and a tanh in a simd loop.
  EXPECT_NE(m.source.find("MG_OMP_GCC(omp simd reduction(max:m)"), std::string::npos) << m.source;
  EXPECT_NE(m.source.find("tanhf("), std::string::npos) << m.source;
  std::ofstream(dir / "sm.h") << m.header;
  std::ofstream(dir / "sm.c") << m.source;
  for (std::string cc : {"gcc", "clang"}) {
    const std::string cmd = cc + " -std=c99 -Wall -Wextra -pedantic -Werror -O3 -march=native -fno-math-errno -fopenmp -c sm.c -o sm.o";
    std::string log;
    EXPECT_EQ(testing::compile_in((dir / "sm.c").parent_path(), cmd, &log), 0) << cmd << "\n" << log;
  }
}

}  // namespace
}  // namespace mg
