// The C99 max pooling of 2x2 stride-2 windows (its gradient and select make the
// interpreter's picks along a row pair: ir/ops/nn_pool.cpp) routes exactly as the interpreter:
// ties (relu's zeros: the first maximum), NaN (it wins, the first of two), -inf windows,
// and an odd plane whose last row and column no window covers. f32 and f64, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

class C99Pool : public ::testing::TestWithParam<DType> {};

TEST_P(C99Pool, TwoByTwoWindowsRouteAsTheInterpreter) {
  const DType dt = GetParam();
  const Shape xs{2, 3, 7, 9}, ys{2, 3, 3, 4};
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<double> xv(2 * 3 * 7 * 9), gv(2 * 3 * 3 * 4), dv(xv.size());
  for (std::size_t e = 0; e < xv.size(); ++e) xv[e] = (e * 7919 % 11 < 4) ? 0.0 : static_cast<double>(e * 31 % 17) - 8;
  xv[0] = xv[1] = xv[9] = xv[10] = 0;      // a window of ties
  xv[2] = nan, xv[12] = nan;               // two NaNs in one window: the first wins
  xv[4] = xv[5] = xv[13] = xv[14] = -inf;  // an all -inf window
  xv[24] = -0.0, xv[25] = 0.0;             // signed zeros tie
  for (std::size_t e = 0; e < gv.size(); ++e) gv[e] = static_cast<double>(e % 5) - 2 + 0.25;
  gv[3] = -0.0;
  for (std::size_t e = 0; e < dv.size(); ++e) dv[e] = static_cast<double>(e % 13) * 0.5 - 3;
  const Array x = Array::from_vector<double>(xs, xv).cast(dt), g = Array::from_vector<double>(ys, gv).cast(dt),
              d = Array::from_vector<double>(xs, dv).cast(dt);

  ir::Graph gr;
  const ir::MaxPool2dParams p{.kernel_size = {2, 2}, .stride = {2, 2}};
  ir::Value X = gr.add_input("x", Type{dt, xs}), G = gr.add_input("g", Type{dt, ys}), D = gr.add_input("d", Type{dt, xs});
  gr.outputs = {ir::max_pool2d(X, p).id, ir::max_pool2d_grad(X, G, p).id, ir::max_pool2d_select(X, D, p).id};
  const rt::Bindings in{{"x", x}, {"g", g}, {"d", d}};
  const auto want = rt::compile(gr, gr.outputs).run(in);
  const auto got = rt::compile(gr, gr.outputs, {}, rt::Backend::c99).run(in);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].nbytes(), got[o].nbytes());
    EXPECT_EQ(std::memcmp(want[o].raw(), got[o].raw(), want[o].nbytes()), 0) << "output " << o;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, C99Pool, ::testing::Values(f32, f64),
                         [](const auto& info) { return std::string(name_of(info.param)); });

}  // namespace
}  // namespace mg
