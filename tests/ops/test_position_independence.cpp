// An elementwise op's result at an element depends only on that element's inputs: not on
// its position, the array's length or the buffer's alignment. xtensor's assignment ran an
// unaligned head and a short tail through scalar libm and the rest through xsimd, which
// differ in the last bit for exp/log/tanh/...; and xsimd's AVX-512 negation turned -(+0)
// into +0 inside SIMD batches. Each value here is computed alone (0-d) and at every
// position of arrays of several lengths; all must be bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
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

// OpDef::span_kernel (the window form fused bodies call) computes what the op's kernel
// does, bit for bit, for a window of any length at any offset: every op that has one, on
// random operands (ties, zeros and NaN included), against the interpreter's whole-array
// kernel, in every dtype the op takes; casts from each dtype to every dtype.
TEST(PositionIndependence, WindowKernelsMatchTheKernel) {
  int checked = 0;
  for (const ir::OpDef* op : ir::all_ops()) {
    if (!op->span_kernel) continue;
    const std::size_t arity = op->name == "cast" ? 1 : static_cast<std::size_t>(op->arity);
    for (DType dt : {f32, f64, i64, DType::boolean}) {
      for (DType to : op->name == "cast" ? std::vector<DType>{f32, f64, i64, DType::boolean} : std::vector<DType>{dt}) {
        constexpr std::int64_t n = 1000;
        std::mt19937 gen(7);
        std::normal_distribution<double> normal(0.0, 2.0);
        ir::Graph g;
        rt::Bindings b;
        std::vector<ir::Value> in;
        std::vector<Array> xs;
        for (std::size_t k = 0; k < arity; ++k) {
          Array x(Type{dt, {n}});
          for (std::int64_t i = 0; i < n; ++i)
            x.set(i, i % 97 == 0 ? 0.0 : i % 89 == 0 && is_float(dt) ? std::nan("") : std::round(normal(gen) * 4) / 4);
          const std::string name = "x" + std::to_string(k);
          in.push_back(g.add_input(name, x.type()));
          b.emplace(name, x);
          xs.push_back(x);
        }
        Attrs attrs;
        if (op->name == "cast") attrs = {{"dtype", to}};
        ir::Value out;
        try {
          out = ir::make_op(g, *op, in, attrs);
        } catch (const std::exception&) {
          continue;  // a dtype the op does not take
        }
        const DType od = g.node(out.id).type.dtype;
        const Array whole = rt::compile(g, {out.id}).run(b)[0];
        const std::size_t es = size_of(od);
        for (auto [off, len] : {std::pair<std::int64_t, std::int64_t>{0, n}, {5, 1}, {3, 17}, {16, 301}, {999, 1}}) {
          Array got(Type{od, {len}});
          std::vector<const void*> ptrs;
          for (const Array& x : xs) ptrs.push_back(static_cast<const std::byte*>(x.raw()) + off * static_cast<std::int64_t>(size_of(dt)));
          if (!op->span_kernel(ir::SpanArgs{od, dt, got.raw(), ptrs, len})) continue;
          ++checked;
          EXPECT_EQ(std::memcmp(got.raw(), static_cast<const std::byte*>(whole.raw()) + off * static_cast<std::int64_t>(es),
                                static_cast<std::size_t>(len) * es),
                    0)
              << op->name << " " << name_of(dt) << " -> " << name_of(od) << ", window [" << off << ", " << off + len << ")";
        }
      }
    }
  }
  EXPECT_GT(checked, 50);  // the families that have window kernels were all reached
}

}  // namespace
}  // namespace mg
