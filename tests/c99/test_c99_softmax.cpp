// softmax and log_softmax in the C99 JIT against the interpreter where the vectorised
// passes could differ: a NaN in a slice (the max's NaN flag), a +inf, only -inf, and
// ordinary rows, along the last axis (contiguous) and the first (strided columns).
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

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

}  // namespace
}  // namespace mg
