// An elementwise op's result at an element depends only on that element's inputs: not on
// its position, the array's length or the buffer's alignment. xtensor's assignment ran an
// unaligned head and a short tail through scalar libm and the rest through xsimd, which
// differ in the last bit for exp/log/tanh/...; and xsimd's AVX-512 negation turned -(+0)
// into +0 inside SIMD batches. Each value here is computed alone (0-d) and at every
// position of arrays of several lengths; all must be bit-identical.
#include <gtest/gtest.h>

#include <cstring>

#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

template <class T>
void check(const char* op, DType dt, std::vector<double> values) {
  auto run = [&](const Array& x) {
    ir::Graph g;
    ir::Value in = g.add_input("x", x.type());
    ir::Value out = ir::unary(op, in);
    rt::Bindings b;
    b.emplace("x", x);
    return rt::compile(g, {out.id}).run(b)[0];
  };
  for (double v : values) {
    const T alone = run(Array::full(Type{dt, {}}, v)).template data<T>()[0];
    for (std::int64_t n : {1, 3, 7, 16, 17, 33, 100}) {
      Array x = Array::full(Type{dt, {n}}, v);
      Array y = run(x);
      for (std::int64_t i = 0; i < n; ++i) {
        const T got = y.template data<T>()[i];
        EXPECT_EQ(std::memcmp(&got, &alone, sizeof(T)), 0)
            << op << "(" << v << ") in " << name_of(dt) << " at " << i << " of " << n << ": " << got << " vs " << alone;
      }
    }
  }
}

TEST(PositionIndependence, TranscendentalsGiveTheSameBitsEverywhere) {
  const std::vector<double> xs{0.1, -0.7, 1.3, 2.9, -3.3, 0.49};
  for (const char* op : {"exp", "tanh", "sigmoid", "sin", "cos", "expm1"}) {
    check<float>(op, f32, xs);
    check<double>(op, f64, xs);
  }
  for (const char* op : {"log", "sqrt", "log1p"}) {
    check<float>(op, f32, {0.1, 1.3, 2.9, 7.5});
    check<double>(op, f64, {0.1, 1.3, 2.9, 7.5});
  }
}

TEST(PositionIndependence, NegKeepsTheSignOfZeroInEveryLane) {
  check<float>("neg", f32, {0.0, -0.0, 1.5});
  check<double>("neg", f64, {0.0, -0.0, 1.5});
}

}  // namespace
}  // namespace mg
