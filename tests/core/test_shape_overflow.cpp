// Shape arithmetic never wraps: sizes computed from user-controlled shapes and attributes
// that overflow int64 are ShapeErrors at build (or parse) time, located and naming the op —
// before this, pad's inferred type wrapped to f64[1] and the interpreter wrote past a buffer.
#include <gtest/gtest.h>

#include <string>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/ir/parser.hpp"

namespace mg::ir {
namespace {

// Parsing `text` must fail with a located error (the parser's wrapping of the builder's
// ShapeError) mentioning every needle.
void expect_shape_error(const std::string& text, std::vector<std::string> needles) {
  needles.push_back("overflow.mgir:");
  try {
    parse(text, "overflow.mgir");
    FAIL() << "accepted:\n" << text;
  } catch (const UserError& e) {
    const std::string m = e.what();
    for (auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "missing '" << n << "' in: " << m;
  } catch (const std::exception& e) {
    FAIL() << "not a ShapeError: " << e.what();
  }
}

TEST(ShapeOverflow, PadAttributesThatWrapAreRejected) {
  // low + high + d wraps to 1 in two's complement: the old rule inferred f64[1].
  expect_shape_error(R"(graph(%x: f64[2]) {
  %1 = pad(%x) {low = [9223372036854775807], high = [9223372036854775807], interior = [0]} : f64[1]
  return %1
})", {"'pad'", "overflows"});
  expect_shape_error(R"(graph(%x: f64[3]) {
  %1 = pad(%x) {low = [0], high = [0], interior = [4611686018427387904]} : f64[1]
  return %1
})", {"'pad'", "overflows"});
}

TEST(ShapeOverflow, HugeInputsAndReshapesAreRejected) {
  expect_shape_error(R"(graph(%x: f32[4294967296,4294967296]) {
  return %x
})", {"too many elements"});
  expect_shape_error(R"(graph(%x: f32[2]) {
  %1 = reshape(%x) {shape = [4294967296, 4294967296, 0]} : f32[4294967296,4294967296,0]
  return %1
})", {"too many elements"});
  // Past the parser, the builder checks every type it makes (count and bytes representable).
  Graph g;
  EXPECT_THROW(g.add_input("x", Type{f64, {2305843009213693952}}), ShapeError);  // 2^61 * 8 bytes
  EXPECT_THROW(g.add_input("y", Type{f32, {4294967296, 4294967296, 0}}), ShapeError);
  EXPECT_THROW(g.add_input("z", Type{f32, {2, -1}}), ShapeError);
}

TEST(ShapeOverflow, SliceWithAHugeStepIsRejected) {
  expect_shape_error(R"(graph(%x: f64[4]) {
  %1 = slice(%x) {starts = [1], stops = [4], steps = [9223372036854775807]} : f64[1]
  return %1
})", {"'slice'", "overflows"});
}

TEST(ShapeOverflow, ConvAndPoolGeometryThatWrapsIsRejected) {
  expect_shape_error(R"(graph(%x: f32[1,1,4,4], %w: f32[1,1,2,2]) {
  %2 = conv2d(%x, %w) {stride = [1, 1], padding = [4611686018427387904, 0], dilation = [1, 1], groups = 1} : f32[1,1,1,1]
  return %2
})", {"'conv2d'", "overflows"});
  expect_shape_error(R"(graph(%x: f32[1,1,4,4], %w: f32[1,1,3,3]) {
  %2 = conv2d(%x, %w) {stride = [1, 1], padding = [0, 0], dilation = [4611686018427387904, 1], groups = 1} : f32[1,1,1,1]
  return %2
})", {"'conv2d'", "overflows"});
  expect_shape_error(R"(graph(%x: f32[1,1,4,4]) {
  %1 = max_pool2d(%x) {kernel_size = [9223372036854775807, 2], stride = [1, 1], padding = [4611686018427387903, 0]} : f32[1,1,1,3]
  return %1
})", {"'max_pool2d'", "overflows"});
}

TEST(ShapeOverflow, OrdinaryShapesStillWork) {
  auto g = parse(R"(graph(%x: f64[2]) {
  %1 = pad(%x) {low = [1], high = [2], interior = [1]} : f64[6]
  return %1
})", "ok.mgir");
  EXPECT_EQ(g->node(g->outputs[0]).type.shape, (Shape{6}));
}

}  // namespace
}  // namespace mg::ir
