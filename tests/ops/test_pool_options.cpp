// Pooling's PyTorch options at their edges (the values themselves are checked against
// PyTorch by test_pool_oracle.cpp): a max window that holds only padding, old text IR
// without the new attributes (defaults), bad values rejected with the op and the line.
// The DSL's options and layers: tests/nn/test_modules.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Graph;
using ir::Value;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// x[1,1,1,3], kernel 1x2 at stride 2, padding 1 column, dilation 3: window 0 reads columns
// -1 and 2, window 1 columns 1 and 4 (only 1 inside); with x[1,1,1,1], window 0 (columns
// -1, 2) holds no input element at all. PyTorch gives
// -inf there (and reads out of bounds for its gradient); here the gradient routes nothing
// and select gives 0, on both executors.
TEST(PoolOptions, MaxWindowOfOnlyPaddingIsMinusInfinity) {
  for (rt::Backend backend : {rt::Backend::interpreter, rt::Backend::c99}) {
    Graph g;
    Value x = g.add_input("x", Type{f64, {1, 1, 1, 1}});
    Value x3 = g.add_input("x3", Type{f64, {1, 1, 1, 3}});
    const ir::MaxPool2dParams p{.kernel_size = {1, 2}, .stride = {1, 2}, .padding = {0, 1}, .dilation = {1, 3},
                                .ceil_mode = true};
    Value y = ir::max_pool2d(x, p);
    ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 1}));
    Value gy = g.add_input("g", y.type());
    Value y3 = ir::max_pool2d(x3, p);
    ASSERT_EQ(y3.shape(), (Shape{1, 1, 1, 2}));
    const std::vector<ir::NodeId> outs{y.id, ir::max_pool2d_grad(x, gy, p).id, ir::max_pool2d_select(x, x, p).id,
                                       y3.id};
    auto r = rt::compile(g, outs, {}, backend)
                 .run({{"x", Array::full(Type{f64, {1, 1, 1, 1}}, 5)},
                       {"x3", Array::from<double>({1, 1, 1, 3}, {7, 8, 9})},
                       {"g", Array::full(y.type(), 2)}});
    EXPECT_EQ(r[0].at(0), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(r[1].at(0), 0.0);
    EXPECT_EQ(r[2].at(0), 0.0);
    EXPECT_EQ(r[3].to_doubles(), (std::vector<double>{9, 8}));
  }
}

TEST(PoolOptions, OldTextWithoutTheNewAttributesGetsTheDefaults) {
  auto g = ir::parse(R"(graph(%x: f64[1,2,5,5]) {
  %1 = max_pool2d(%x) {kernel_size = [2, 2], stride = [2, 2], padding = [0, 0]} : f64[1,2,2,2]
  %2 = avg_pool2d(%x) {kernel_size = [2, 2], stride = [2, 2], padding = [1, 1], count_include_pad = false} : f64[1,2,3,3]
  return %1, %2
})", "old.mgir");
  const ir::Node& mp = g->node(g->outputs[0]);
  EXPECT_EQ(mp.attrs.list("dilation"), (I64List{1, 1}));
  EXPECT_FALSE(mp.attrs.boolean("ceil_mode"));
  const ir::Node& ap = g->node(g->outputs[1]);
  EXPECT_FALSE(ap.attrs.boolean("ceil_mode"));
  EXPECT_FALSE(ap.attrs.boolean("count_include_pad"));
  EXPECT_EQ(ap.attrs.i64("divisor_override"), 0);
  // Printed with every attribute, and read back the same.
  std::ostringstream once, twice;
  ir::print(once, *g);
  ir::print(twice, *ir::parse(once.str(), "printed.mgir"));
  EXPECT_EQ(once.str(), twice.str());
  EXPECT_NE(once.str().find("ceil_mode = false"), std::string::npos) << once.str();
  EXPECT_NE(once.str().find("divisor_override = 0"), std::string::npos) << once.str();
}

TEST(PoolOptions, NewAttributesParseAndShapeTheOutput) {
  // ceil_mode: 5 -> 3 windows of 2 at stride 2; dilation 2 with kernel 3 spans 5 rows.
  auto g = ir::parse(R"(graph(%x: f64[1,1,5,7]) {
  %1 = max_pool2d(%x) {kernel_size = [3, 2], stride = [1, 2], dilation = [2, 1], ceil_mode = true} : f64[1,1,1,4]
  %2 = avg_pool2d(%x) {kernel_size = [2, 2], stride = [2, 2], ceil_mode = true, divisor_override = 3} : f64[1,1,3,4]
  return %1, %2
})", "new.mgir");
  EXPECT_EQ(g->node(g->outputs[1]).attrs.i64("divisor_override"), 3);
}

TEST(PoolOptions, BadValuesAreLocatedErrorsNamingTheOp) {
  auto expect_error = [](const std::string& line, std::vector<std::string> needles) {
    const std::string m = error_of([&] {
      ir::parse("graph(%x: f64[1,1,5,5]) {\n  %1 = " + line + "\n  return %1\n}\n", "bad.mgir");
    });
    ASSERT_FALSE(m.empty()) << "accepted: " << line;
    needles.push_back("bad.mgir:2");
    for (auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "missing '" << n << "' in: " << m;
  };
  expect_error("max_pool2d(%x) {kernel_size = [2, 2], stride = [1, 1], dilation = [0, 1]} : f64[1,1,4,4]",
               {"max_pool2d", "expects dilation >= 1"});
  expect_error("max_pool2d(%x) {kernel_size = [2, 2], stride = [1, 1], dilation = [1]} : f64[1,1,4,4]",
               {"max_pool2d", "dilation as two values"});
  expect_error("max_pool2d(%x) {kernel_size = [2, 2], stride = [1, 1], ceil_mode = 1} : f64[1,1,4,4]",
               {"max_pool2d", "ceil_mode", "true or false"});
  expect_error("avg_pool2d(%x) {kernel_size = [2, 2], stride = [1, 1], dilation = [2, 2]} : f64[1,1,4,4]",
               {"avg_pool2d", "has no attribute 'dilation'"});
  // The dilated kernel (9 rows) is larger than the padded input (5 + 2).
  expect_error("max_pool2d(%x) {kernel_size = [3, 3], stride = [1, 1], padding = [1, 1], dilation = [4, 1]} : f64[1,1,1,5]",
               {"max_pool2d", "positive output size", "dilated kernel"});
  // Padding is checked against the kernel, not the dilated kernel (as PyTorch).
  expect_error("max_pool2d(%x) {kernel_size = [2, 2], stride = [1, 1], padding = [2, 0], dilation = [3, 3]} : f64[1,1,4,4]",
               {"max_pool2d", "padding at most half the kernel size"});
  // ceil_mode's size arithmetic overflows rather than wraps.
  expect_error("max_pool2d(%x) {kernel_size = [2, 2], stride = [9223372036854775807, 1], ceil_mode = true} : f64[1,1,1,4]",
               {"max_pool2d", "overflows"});
  expect_error("max_pool2d(%x) {kernel_size = [3, 2], stride = [1, 1], dilation = [4611686018427387904, 1]} : f64[1,1,1,4]",
               {"max_pool2d", "overflows"});
}

}  // namespace
}  // namespace mg
