// Known-value tests for the shape ops (ir/ops/shape.cpp): hand-checked results, edge
// shapes (0-d, size-1, empty), non-float dtypes, large arrays against a naive index walk
// (the parallel and tiled paths of strided_copy), and bad attributes -> ShapeError.
#include <gtest/gtest.h>

#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Graph;
using ir::Value;

// 0, 1, 2, ... in `dtype` (bool: i % 2).
Array iota(DType dtype, Shape shape) {
  Array a(Type{dtype, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, dtype == DType::boolean ? i % 2 : i);
  return a;
}

Array eval(Value y, const Array& x) {
  rt::Bindings b;
  b.emplace("x", x);
  std::vector<Value> outs{y};
  return rt::evaluate(outs, b).at(0);
}

Array eval(Value y, const rt::Bindings& b) {
  std::vector<Value> outs{y};
  return rt::evaluate(outs, b).at(0);
}

void expect_array(const Array& a, DType dtype, const Shape& shape, const std::vector<double>& values) {
  EXPECT_EQ(a.dtype(), dtype);
  EXPECT_EQ(a.shape(), shape);
  EXPECT_EQ(a.to_doubles(), values);
}

// The flat row-major index of `idx` in `shape`.
std::int64_t flat(const Shape& shape, const std::vector<std::int64_t>& idx) {
  std::int64_t f = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
  return f;
}
// Increments a multi-index; false after the last one.
bool next(const Shape& shape, std::vector<std::int64_t>& idx) {
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}

TEST(ShapeValues, Reshape) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  expect_array(eval(ir::make_op("reshape", {x}, {{"shape", I64List{3, 2}}}), iota(f64, {2, 3})), f64, {3, 2},
               {0, 1, 2, 3, 4, 5});
  Graph g0;
  Value s = g0.add_input("x", Type{f64, {}});
  expect_array(eval(ir::make_op("reshape", {s}, {{"shape", I64List{1, 1}}}), Array::scalar(f64, 7)), f64, {1, 1},
               {7});
  Graph ge;
  Value e = ge.add_input("x", Type{i64, {0, 3}});
  expect_array(eval(ir::make_op("reshape", {e}, {{"shape", I64List{3, 0, 2}}}), iota(i64, {0, 3})), i64,
               {3, 0, 2}, {});
  EXPECT_THROW(ir::make_op("reshape", {x}, {{"shape", I64List{4, 2}}}), ShapeError);
  EXPECT_THROW(ir::make_op("reshape", {x}, {{"shape", I64List{-1, 6}}}), ShapeError);
  EXPECT_THROW(ir::make_op("reshape", {x}, {{"shape", I64List{-2, -3}}}), ShapeError);
}

TEST(ShapeValues, SqueezeUnsqueeze) {
  Graph g;
  Value x = g.add_input("x", Type{i64, {2, 1, 3, 1}});
  expect_array(eval(ir::squeeze(x, {1, 3}), iota(i64, {2, 1, 3, 1})), i64, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_THROW(ir::squeeze(x, {0}), ShapeError);   // size 2
  EXPECT_THROW(ir::squeeze(x, {4}), ShapeError);   // out of range
  EXPECT_THROW(ir::squeeze(x, {-1}), ShapeError);  // IR axes are non-negative
  EXPECT_THROW(ir::squeeze(x, {1, 1}), ShapeError);
  EXPECT_EQ(ir::squeeze(x, {}), x);

  Graph g2;
  Value y = g2.add_input("x", Type{boolean, {2, 3}});
  Value u = ir::unsqueeze(y, {0, 3});
  EXPECT_EQ(u.shape(), (Shape{1, 2, 3, 1}));
  expect_array(eval(u, iota(boolean, {2, 3})), boolean, {1, 2, 3, 1}, {0, 1, 0, 1, 0, 1});
  EXPECT_EQ(ir::unsqueeze(y, {1, 2}).shape(), (Shape{2, 1, 1, 3}));
  EXPECT_EQ(ir::unsqueeze(y, {2}).shape(), (Shape{2, 3, 1}));
  EXPECT_THROW(ir::unsqueeze(y, {3}), ShapeError);  // output rank 3: axis 3 out of range
  EXPECT_THROW(ir::unsqueeze(y, {0, 0}), ShapeError);

  Graph g0;
  Value s = g0.add_input("x", Type{f64, {1}});
  Value sq = ir::squeeze(s, {0});
  EXPECT_EQ(sq.shape(), Shape{});
  expect_array(eval(ir::unsqueeze(sq, {0}), Array::from<double>({1}, {2.5})), f64, {1}, {2.5});
}

TEST(ShapeValues, Permute) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  expect_array(eval(ir::permute(x, {1, 0}), iota(f64, {2, 3})), f64, {3, 2}, {0, 3, 1, 4, 2, 5});
  EXPECT_THROW(ir::permute(x, {0, 0}), ShapeError);
  EXPECT_THROW(ir::make_op("permute", {x}, {{"perm", I64List{0}}}), ShapeError);  // (ir::permute skips identities)
  EXPECT_THROW(ir::permute(x, {0, 2}), ShapeError);

  Graph g3;
  Value t = g3.add_input("x", Type{i64, {2, 3, 4}});
  // out[i,j,k] = x[j,k,i]
  expect_array(eval(ir::permute(t, {2, 0, 1}), iota(i64, {2, 3, 4})), i64, {4, 2, 3},
               {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});

  Graph ge;
  Value e = ge.add_input("x", Type{f64, {0, 3}});
  expect_array(eval(ir::permute(e, {1, 0}), iota(f64, {0, 3})), f64, {3, 0}, {});
}

// Large permutes (tiled transpose, parallel rows) against a naive walk, several dtypes.
TEST(ShapeValues, PermuteLarge) {
  struct Case { DType dtype; Shape shape; I64List perm; };
  for (const Case& c : {Case{f64, {67, 45}, {1, 0}}, Case{f32, {300, 500}, {1, 0}},
                        Case{i64, {5, 33, 70}, {2, 0, 1}}, Case{boolean, {40, 3, 50}, {2, 1, 0}},
                        Case{f64, {64, 8, 64}, {0, 2, 1}}}) {
    Graph g;
    Value x = g.add_input("x", Type{c.dtype, c.shape});
    Array in = iota(c.dtype, c.shape);
    Array out = eval(ir::permute(x, c.perm), in);
    ASSERT_EQ(out.numel(), in.numel());
    Shape os;
    for (auto p : c.perm) os.push_back(c.shape[p]);
    std::vector<std::int64_t> idx(os.size(), 0), src(os.size());
    std::int64_t bad = 0;
    do {
      for (std::size_t k = 0; k < os.size(); ++k) src[c.perm[k]] = idx[k];
      bad += out.at(flat(os, idx)) != in.at(flat(c.shape, src));
    } while (next(os, idx));
    EXPECT_EQ(bad, 0) << to_string(c.shape);
  }
}

TEST(ShapeValues, BroadcastTo) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  expect_array(eval(ir::broadcast_to(x, {2, 3}), Array::from<double>({3}, {1, 2, 3})), f64, {2, 3},
               {1, 2, 3, 1, 2, 3});
  EXPECT_THROW(ir::broadcast_to(x, {4}), ShapeError);
  EXPECT_THROW(ir::broadcast_to(x, {3, 2}), ShapeError);
  EXPECT_THROW(ir::make_op("broadcast_to", {x}, {{"shape", I64List{}}}), ShapeError);

  Graph g0;
  Value s = g0.add_input("x", Type{f64, {}});
  expect_array(eval(ir::broadcast_to(s, {2, 2}), Array::scalar(f64, 4)), f64, {2, 2}, {4, 4, 4, 4});

  Graph g1;
  Value c = g1.add_input("x", Type{i64, {2, 1}});
  expect_array(eval(ir::broadcast_to(c, {2, 2, 3}), Array::from<std::int64_t>({2, 1}, {5, 6})), i64, {2, 2, 3},
               {5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6});
  expect_array(eval(ir::broadcast_to(c, {2, 0}), Array::from<std::int64_t>({2, 1}, {5, 6})), i64, {2, 0}, {});

  Graph gb;
  Value b = gb.add_input("x", Type{boolean, {1, 2}});
  expect_array(eval(ir::broadcast_to(b, {3, 2}), Array::from<bool>({1, 2}, {true, false})), boolean, {3, 2},
               {1, 0, 1, 0, 1, 0});
}

TEST(ShapeValues, BroadcastLarge) {  // parallel rows, stride-0 inner and outer axes
  Graph g;
  Value x = g.add_input("x", Type{f32, {700, 1}});
  Array in = iota(f32, {700, 1});
  Array out = eval(ir::broadcast_to(x, {3, 700, 900}), in);
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < out.numel(); ++i) bad += out.at(i) != static_cast<double>((i / 900) % 700);
  EXPECT_EQ(bad, 0);
}

TEST(ShapeValues, Slice) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {5, 4}});
  Value y = ir::slice(x, {1, 0}, {5, 3}, {2, 1});  // rows 1, 3; cols 0..2
  expect_array(eval(y, iota(f64, {5, 4})), f64, {2, 3}, {4, 5, 6, 12, 13, 14});
  Value z = ir::slice(x, {0, 3}, {5, 4}, {3, 1});  // rows 0, 3; col 3
  expect_array(eval(z, iota(f64, {5, 4})), f64, {2, 1}, {3, 15});
  Value empty = ir::slice(x, {2, 4}, {2, 4}, {1, 1});
  expect_array(eval(empty, iota(f64, {5, 4})), f64, {0, 0}, {});
  EXPECT_EQ(ir::slice(x, {0, 0}, {5, 4}, {1, 1}), x);

  EXPECT_THROW(ir::slice(x, {3, 0}, {2, 4}, {1, 1}), ShapeError);  // start > stop
  EXPECT_THROW(ir::slice(x, {0, 0}, {6, 4}, {1, 1}), ShapeError);  // stop > dim
  EXPECT_THROW(ir::slice(x, {0, 0}, {5, 4}, {0, 1}), ShapeError);  // step 0
  EXPECT_THROW(ir::slice(x, {0, 0}, {5, 4}, {-1, 1}), ShapeError);
  EXPECT_THROW(ir::slice(x, {-1, 0}, {5, 4}, {1, 1}), ShapeError);
  EXPECT_THROW(ir::slice(x, {0}, {5}, {1}), ShapeError);  // one entry per axis

  Graph gi;
  Value v = gi.add_input("x", Type{i64, {7}});
  expect_array(eval(ir::slice(v, {1}, {7}, {3}), iota(i64, {7})), i64, {2}, {1, 4});
  expect_array(eval(ir::slice(v, {1}, {6}, {5}), iota(i64, {7})), i64, {1}, {1});
}

TEST(ShapeValues, Pad) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  // rows: [pad, x0, interior, x1]; cols: [a, i, b, i, c, pad, pad]
  Value y = ir::pad(x, {1, 0}, {0, 2}, {1, 1}, 0.5);
  const double p = 0.5;
  expect_array(eval(y, Array::from<double>({2, 3}, {1, 2, 3, 4, 5, 6})), f64, {4, 7},
               {p, p, p, p, p, p, p,  //
                1, p, 2, p, 3, p, p,  //
                p, p, p, p, p, p, p,  //
                4, p, 5, p, 6, p, p});
  EXPECT_EQ(ir::pad(x, {0, 0}, {0, 0}, {0, 0}), x);
  EXPECT_THROW(ir::pad(x, {-1, 0}, {0, 0}, {0, 0}), ShapeError);
  EXPECT_THROW(ir::pad(x, {0, 0}, {0, 0}, {0, -1}), ShapeError);
  EXPECT_THROW(ir::pad(x, {0}, {0}, {0}), ShapeError);

  Graph ge;
  Value e = ge.add_input("x", Type{i64, {0}});
  expect_array(eval(ir::pad(e, {1}, {2}, {3}, 7), iota(i64, {0})), i64, {3}, {7, 7, 7});

  Graph gb;
  Value b = gb.add_input("x", Type{boolean, {2}});
  expect_array(eval(ir::pad(b, {1}, {0}, {2}, 1), Array::from<bool>({2}, {false, false})), boolean, {5},
               {1, 0, 1, 1, 0});

  Graph g0;
  Value s = g0.add_input("x", Type{f64, {}});
  expect_array(eval(ir::make_op("pad", {s}, {{"low", I64List{}}, {"high", I64List{}}, {"interior", I64List{}}}),
                    Array::scalar(f64, 3)),
               f64, {}, {3});
}

TEST(ShapeValues, Concat) {
  Graph g;
  Value a = g.add_input("a", Type{f64, {2, 1}});
  Value b = g.add_input("b", Type{f64, {2, 3}});
  Value c = g.add_input("c", Type{f64, {2, 2}});
  Value e = g.add_input("e", Type{f64, {2, 0}});
  rt::Bindings in{{"a", Array::from<double>({2, 1}, {1, 2})},
                  {"b", Array::from<double>({2, 3}, {3, 4, 5, 6, 7, 8})},
                  {"c", Array::from<double>({2, 2}, {9, 10, 11, 12})},
                  {"e", iota(f64, {2, 0})}};
  expect_array(eval(ir::concat({a, b, e, c}, 1), in), f64, {2, 6}, {1, 3, 4, 5, 9, 10, 2, 6, 7, 8, 11, 12});
  EXPECT_THROW(ir::concat({a, b}, 0), ShapeError);
  EXPECT_THROW(ir::concat({a, b}, 2), ShapeError);

  Graph gi;
  Value p = gi.add_input("p", Type{i64, {1, 2}});
  Value q = gi.add_input("q", Type{i64, {2, 2}});
  Value r = gi.add_input("r", Type{f64, {1, 2}});
  expect_array(eval(ir::concat({p, q, p}, 0), rt::Bindings{{"p", Array::from<std::int64_t>({1, 2}, {1, 2})},
                                                         {"q", Array::from<std::int64_t>({2, 2}, {3, 4, 5, 6})}}),
               i64, {4, 2}, {1, 2, 3, 4, 5, 6, 1, 2});
  EXPECT_THROW(ir::concat({p, r}, 0), ShapeError);  // dtypes differ

  Graph g0;
  Value s = g0.add_input("s", Type{f64, {}});
  EXPECT_THROW(ir::concat({s, s}, 0), ShapeError);  // 0-d cannot be joined
}

TEST(ShapeValues, Flip) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  expect_array(eval(ir::flip(x, {1}), iota(f64, {2, 3})), f64, {2, 3}, {2, 1, 0, 5, 4, 3});
  expect_array(eval(ir::flip(x, {0}), iota(f64, {2, 3})), f64, {2, 3}, {3, 4, 5, 0, 1, 2});
  expect_array(eval(ir::flip(x, {0, 1}), iota(f64, {2, 3})), f64, {2, 3}, {5, 4, 3, 2, 1, 0});
  EXPECT_EQ(ir::flip(x, {}), x);
  EXPECT_THROW(ir::flip(x, {2}), ShapeError);
  EXPECT_THROW(ir::flip(x, {-1}), ShapeError);
  EXPECT_THROW(ir::flip(x, {1, 1}), ShapeError);

  Graph gb;
  Value b = gb.add_input("x", Type{boolean, {3, 1}});
  expect_array(eval(ir::flip(b, {0, 1}), Array::from<bool>({3, 1}, {true, true, false})), boolean, {3, 1},
               {0, 1, 1});
  Graph ge;
  Value e = ge.add_input("x", Type{i64, {0, 2}});
  expect_array(eval(ir::flip(e, {0, 1}), iota(i64, {0, 2})), i64, {0, 2}, {});
}

}  // namespace
}  // namespace mg
