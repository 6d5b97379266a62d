// Shared by the pass tests: running a graph's outputs in the interpreter, bit-exact
// comparison of results, and a generator of random graphs over the op vocabulary the
// passes care about (elementwise chains, broadcasts, `full` scalars, matmuls, reductions
// of shared and of private producers, shared subexpressions and duplicated constants).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg::testing {

inline std::vector<Array> run_outputs(const ir::Graph& g, const rt::Bindings& b) {
  return rt::compile(g, g.outputs).run(b);
}

// Same dtype, shape and bytes (so NaN payloads and the sign of zero count).
inline void expect_bit_equal(const std::vector<Array>& want, const std::vector<Array>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(to_string(want[i].type()), to_string(got[i].type())) << what << " output " << i;
    if (want[i].nbytes() == 0) continue;  // memcmp on the null storage of an empty array is UB
    EXPECT_EQ(std::memcmp(want[i].raw(), got[i].raw(), want[i].nbytes()), 0)
        << what << " output " << i << ":\n want " << to_string(want[i]) << "\n got  " << to_string(got[i]);
  }
}

inline Array randn_f32(Shape s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  Array a(Type{f32, std::move(s)});
  for (float& v : a.span<float>()) v = d(rng);
  return a;
}

// Normal samples of any dtype (i64: floor(4 x), small integers with repeats).
inline Array randn(Type t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d;
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, t.dtype == i64 ? std::floor(4 * d(rng)) : d(rng));
  return a;
}

// Top-level nodes of op `name` ("fused", "add", ...).
inline std::size_t count_op(const ir::Graph& g, std::string_view name) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) n += g.node(id).op_name() == name;
  return n;
}

struct RandomGraph {
  std::unique_ptr<ir::Graph> g = std::make_unique<ir::Graph>();
  rt::Bindings inputs;
};

// A random graph of about `ops` op nodes over f32 or f64 values of shape [rows, cols].
inline RandomGraph random_graph(std::uint64_t seed, int ops = 30, std::int64_t rows = 5, std::int64_t cols = 7) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  RandomGraph r;
  ir::Graph& g = *r.g;
  const DType dt = seed % 2 ? f32 : f64;
  const Shape full_shape{rows, cols};
  std::normal_distribution<double> normal;
  auto data = [&](Shape s) {
    Array a(Type{dt, s});
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, normal(rng));
    return a;
  };
  std::vector<ir::Value> pool;  // values of the full shape
  for (int i = 0; i < 3; ++i) {
    std::string name = "x" + std::to_string(i);
    pool.push_back(g.add_input(name, Type{dt, full_shape}));
    r.inputs[name] = data(full_shape);
  }
  ir::Value bias = g.add_input("b", Type{dt, {cols}});
  r.inputs["b"] = data({cols});
  ir::Value w = g.add_input("w", Type{dt, {cols, cols}});
  r.inputs["w"] = data({cols, cols});
  const char* unary[] = {"neg", "tanh", "sigmoid", "relu", "sin", "square", "abs", "exp"};
  const char* binary[] = {"add", "sub", "mul", "maximum", "minimum"};
  for (int k = 0; k < ops; ++k) {
    ir::Value a = pool[pick(pool.size())], b = pool[pick(pool.size())], v;
    switch (pick(10)) {
      case 0: case 1: v = ir::unary(unary[pick(std::size(unary))], ir::unary("tanh", a)); break;
      case 2: case 3: v = ir::binary(binary[pick(std::size(binary))], a, b); break;
      case 4: v = ir::add(a, ir::broadcast_to(bias, full_shape)); break;
      case 5: v = ir::scale(a, 0.5 + static_cast<double>(pick(4))); break;  // mul by a `full`
      case 6: v = ir::matmul(a, w); break;
      case 7: v = ir::broadcast_to(ir::reduce_sum(a, {1}, true), full_shape); break;
      case 9: {  // a reduction of a value nothing else reads (reduction fusion), broadcast back
        const char* red[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"};
        const I64List axes[] = {{0}, {1}, {0, 1}};
        ir::Value p = ir::binary(binary[pick(std::size(binary))], ir::tanh(a), b);
        v = ir::broadcast_to(ir::reduce(red[pick(std::size(red))], p, axes[pick(std::size(axes))], true), full_shape);
        break;
      }
      case 8: {  // a constant subgraph feeding the chain, sometimes built twice
        ir::Value c = ir::add_scalar(ir::full(g, Type{dt, full_shape}, 0.25), 1.0);
        v = ir::mul(a, ir::exp(c));
        break;
      }
    }
    pool.push_back(v);
    if (pick(4) == 0) pool.push_back(ir::binary(binary[pick(std::size(binary))], a, b));  // a duplicate-prone node
  }
  // Outputs: the last value and a few random ones (so some intermediates are shared).
  g.outputs = {pool.back().id};
  for (int i = 0; i < 3; ++i) g.outputs.push_back(pool[3 + pick(pool.size() - 3)].id);
  return r;
}

}  // namespace mg::testing
